"""Synthetic clinical corpora: generation, validation and export."""
