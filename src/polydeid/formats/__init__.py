"""Formats: readers that produce segments and writers that put results back."""
