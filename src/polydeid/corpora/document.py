"""Annotated documents, the value every corpus reader returns and every scorer consumes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from polydeid.core.errors import PolydeidError
from polydeid.core.spans import Span


@dataclass(frozen=True, slots=True)
class AnnotatedDocument:
    """A document's text with its gold spans.

    ``spans`` are identifier spans with canonical categories, sorted by start; each span's
    ``source`` is ``"gold:<original label>"`` so the external label stays inspectable.
    ``facts`` are clinical-fact spans where a corpus annotates them (for "facts changed").
    Labels an external scheme maps to "not an identifier" are left out of ``spans``.
    """

    id: str
    text: str
    lang: str
    spans: tuple[Span, ...]
    facts: tuple[Span, ...] = ()
    source: str = ""
    meta: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        for span in (*self.spans, *self.facts):
            if span.end > len(self.text):
                raise ValueError(f"gold span {span!r} past the end of document {self.id!r}")

    def __repr__(self) -> str:
        size = f"chars={len(self.text)}, spans={len(self.spans)}"
        return f"AnnotatedDocument(id={self.id!r}, lang={self.lang}, {size})"


@dataclass(frozen=True, slots=True)
class ReadFailure:
    """A file (or record) a reader could not read, with the located error; never its text."""

    file: str
    error: PolydeidError


@dataclass(frozen=True, slots=True)
class Corpus:
    """What a reader returns: the documents it read and the files it could not read.

    ``scheme`` names the label scheme the gold spans were mapped from (set by
    :func:`polydeid.corpora.read_corpus`); evaluation scores only the categories it can mark.
    """

    name: str
    documents: tuple[AnnotatedDocument, ...]
    failures: tuple[ReadFailure, ...] = ()
    scheme: str | None = None

    def __repr__(self) -> str:
        return (
            f"Corpus({self.name!r}, documents={len(self.documents)}, failures={len(self.failures)})"
        )
