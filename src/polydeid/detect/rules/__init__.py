"""The rule layer: fixed-format identifiers with validators and whole-word context."""
