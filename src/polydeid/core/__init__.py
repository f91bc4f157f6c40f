"""Core value types shared by every stage: spans, segments, categories, errors, resolution."""
