"""Corpus readers: annotated documents with gold spans mapped to canonical categories."""
