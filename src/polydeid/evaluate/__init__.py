"""Evaluation: scores, unseen-name rewrites and reports over annotated corpora."""
