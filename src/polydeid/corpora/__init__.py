"""Corpus readers: annotated documents with gold spans mapped to canonical categories."""

from polydeid.corpora.document import AnnotatedDocument, Corpus, ReadFailure
from polydeid.corpora.registry import corpus_counts, formats, read_corpus

__all__ = ["AnnotatedDocument", "Corpus", "ReadFailure", "corpus_counts", "formats", "read_corpus"]
