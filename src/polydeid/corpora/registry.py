"""Corpus formats by name, and one entry point: ``read_corpus(path, format, scheme=, lang=)``.

==================  ======================================  =================  ========
format              reader                                  default scheme     lang
==================  ======================================  =================  ========
brat                :func:`brat.read_brat`                  (required)         required
conll               :func:`conll.read_conll`                conll              required
germeval2014        :func:`conll.read_germeval`             germeval2014       de
hipe2022            :func:`conll.read_hipe`                 hipe2022           required
factrueval2016      :func:`factrueval.read_factrueval`      factrueval2016     ru
jsonl               :func:`jsonl.read_jsonl_corpus`         polydeid           record
uima_cas_json       :func:`uima.read_uima_json`             polydeid           CAS
physionet           :func:`physionet.read_physionet`        physionet_deid     en
valuetags           :func:`valuetags.read_value_tags`       asq_phi            en
presidio_research   :func:`presidio_research....`           presidio_research  en
==================  ======================================  =================  ========

Reader-specific options (``fragments=``, ``token_column=``, ``offsets=``, ``untyped_category=``,
…) pass through ``read_corpus`` as keyword arguments.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol

from polydeid.core.errors import ConfigError
from polydeid.corpora.brat import read_brat
from polydeid.corpora.conll import read_conll, read_germeval, read_hipe
from polydeid.corpora.document import Corpus
from polydeid.corpora.factrueval import read_factrueval
from polydeid.corpora.jsonl import read_jsonl_corpus
from polydeid.corpora.physionet import read_physionet
from polydeid.corpora.presidio_research import read_presidio_research
from polydeid.corpora.uima import read_uima_json
from polydeid.corpora.valuetags import read_value_tags


class Reader(Protocol):
    """A corpus reader: a path (file or directory) in, a :class:`Corpus` out."""

    def __call__(
        self, path: str | Path, *, scheme: str | None = ..., lang: str | None = ..., **options: Any
    ) -> Corpus: ...


READERS: Mapping[str, Reader] = MappingProxyType(
    {
        "brat": read_brat,
        "conll": read_conll,
        "germeval2014": read_germeval,
        "hipe2022": read_hipe,
        "factrueval2016": read_factrueval,
        "jsonl": read_jsonl_corpus,
        "uima_cas_json": read_uima_json,
        "physionet": read_physionet,
        "valuetags": read_value_tags,
        "presidio_research": read_presidio_research,
    }
)

#: Integer ``meta`` counters that :func:`corpus_counts` adds up over documents.
COUNTED_META = (
    "annotations",
    "dropped",
    "text_mismatches",
    "unlocated_count",
    "honorifics_dropped",
    "kinship",
)


def formats() -> tuple[str, ...]:
    """Names of every corpus format."""
    return tuple(sorted(READERS))


def read_corpus(
    path: str | Path,
    format: str,
    *,
    scheme: str | None = None,
    lang: str | None = None,
    **options: Any,
) -> Corpus:
    """Read ``path`` with the reader for ``format``; unknown formats raise with the known ones."""
    reader = READERS.get(format)
    if reader is None:
        raise ConfigError(f"unknown corpus format {format[:40]!r}; known: {', '.join(formats())}")
    kwargs: dict[str, Any] = dict(options)
    if scheme is not None:
        kwargs["scheme"] = scheme
    if lang is not None:
        kwargs["lang"] = lang
    try:
        inspect.signature(reader).bind(path, **kwargs)
    except TypeError:
        accepted = [p for p in inspect.signature(reader).parameters if p != "path"]
        unknown = sorted(set(kwargs) - set(accepted))
        raise ConfigError(
            f"format {format!r} takes no option(s) {', '.join(unknown)}; "
            f"it takes: {', '.join(accepted)}"
        ) from None
    corpus = reader(path, **kwargs)
    if corpus.scheme is None:
        default = inspect.signature(reader).parameters.get("scheme")
        used = kwargs.get("scheme") or (default.default if default is not None else None)
        if isinstance(used, str):
            corpus = dataclasses.replace(corpus, scheme=used)
    return corpus


def corpus_counts(corpus: Corpus) -> dict[str, int]:
    """Documents, spans, failures and the summed ``meta`` counters (mismatches, unlocated …)."""
    counts: Counter[str] = Counter(
        documents=len(corpus.documents),
        spans=sum(len(d.spans) for d in corpus.documents),
        failures=len(corpus.failures),
    )
    for document in corpus.documents:
        for key in COUNTED_META:
            value = document.meta.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                counts[key] += value
    return dict(counts)
