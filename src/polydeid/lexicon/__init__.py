"""The shared vocabulary of readers and detectors: what field names, form labels, HL7 fields
and tables pasted into text say about their values.

Below both :mod:`polydeid.formats` (which reads documents) and :mod:`polydeid.detect` (which
reads text), so that neither imports the other.
"""
