"""BRAT standoff: a ``.txt`` document beside a ``.ann`` file of ``T`` (text-bound) annotations.

``T1<TAB>LABEL start end<TAB>covered text``; a discontinuous annotation lists its fragments as
``start end;start end``. Offsets are character (code point) offsets into the ``.txt`` file,
read as UTF-8 without newline translation. ``#`` notes and ``R``/``A``/``E``/``N``/``M``/``*``
lines are ignored. Each annotation's covered text is compared with the ``.txt`` slice (fragment
slices joined by one space, as brat writes them); mismatches are counted in the document's
``meta["text_mismatches"]`` (with their ``.ann`` line numbers in ``meta["mismatch_lines"]``),
and the offsets are kept, since they are what scorers use.

Discontinuous annotations become one span per fragment by default (``fragments="each"``), or
one span from the first fragment's start to the last one's end (``fragments="hull"``).

MEDDOCAN refinement (its scheme file's advice): an all-digit ``TERRITORIO`` span is a postal
code, so it becomes ``LOCATION_ADDRESS`` instead of the label's ``LOCATION_VILLAGE``. An
annotation of one of the scheme's ``kinship_labels`` (MEDDOCAN's relatives) made only of the
language's kinship words ("su madre", "hijo": :func:`polydeid.detect.kinship.is_kinship_mention`,
the test the pipeline's ``names.kinship`` pass makes) is a :attr:`~Fact.KINSHIP` fact of the
document, not an identifier span; ``meta["kinship"]`` counts them.

A document whose ``.ann`` has a malformed line, an offset past the end of the text or a label
unknown to the scheme is left out and reported as a :class:`ReadFailure` at ``file:line``;
the other documents are still read.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Literal

from polydeid.core import taxonomy
from polydeid.core.errors import ConfigError, InputError, PolydeidError, RecordError
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact, Scheme
from polydeid.corpora.document import AnnotatedDocument, Corpus, ReadFailure
from polydeid.detect.kinship import is_kinship_mention
from polydeid.formats.text import decode_utf8
from polydeid.locales import canonical_language

Fragments = Literal["each", "hull"]
_IGNORED_PREFIXES = ("#", "R", "A", "E", "N", "M", "*")


@dataclass(frozen=True, slots=True)
class BratAnnotation:
    """One ``T`` line: its label, fragments and line number (the covered text is not kept)."""

    line: int
    label: str
    fragments: tuple[tuple[int, int], ...]
    matches_text: bool


def read_brat(
    path: str | Path,
    *,
    scheme: str | None = None,
    lang: str | None = None,
    fragments: Fragments = "each",
    name: str | None = None,
) -> Corpus:
    """Read a ``.txt``/``.ann`` pair, or every pair in a directory (sorted by name)."""
    if scheme is None or lang is None:
        raise ConfigError("the brat reader needs scheme= and lang= (e.g. 'meddocan', 'es')")
    mapping, language = taxonomy.scheme(scheme), canonical_language(lang)
    root = Path(path)
    documents: list[AnnotatedDocument] = []
    failures: list[ReadFailure] = []
    for txt, ann in _pairs(root, failures):
        try:
            documents.append(read_brat_pair(txt, ann, mapping, language, fragments=fragments))
        except PolydeidError as exc:
            failures.append(ReadFailure(str(ann), exc))
    return Corpus(name or root.name, tuple(documents), tuple(failures))


def _pairs(root: Path, failures: list[ReadFailure]) -> Iterator[tuple[Path, Path]]:
    if root.is_file():
        stems = [root.with_suffix("")]
    elif root.is_dir():
        stems = sorted({p.with_suffix("") for p in root.iterdir() if p.suffix in {".txt", ".ann"}})
    else:
        raise InputError("no such file or directory", location=str(root))
    for stem in stems:
        txt, ann = stem.with_suffix(".txt"), stem.with_suffix(".ann")
        if not txt.is_file() or not ann.is_file():
            missing = txt if not txt.is_file() else ann
            failures.append(
                ReadFailure(
                    str(missing),
                    InputError("missing half of a .txt/.ann pair", location=str(missing)),
                )
            )
            continue
        yield txt, ann


def read_brat_pair(
    txt: Path,
    ann: Path,
    mapping: Scheme,
    lang: str,
    *,
    fragments: Fragments = "each",
) -> AnnotatedDocument:
    """One document from its ``.txt`` and ``.ann`` files; raises a located error if malformed."""
    text = decode_utf8(txt.read_bytes(), source=str(txt))
    annotations = parse_ann(decode_utf8(ann.read_bytes(), source=str(ann)), text, source=str(ann))
    spans: list[Span] = []
    facts: list[Span] = []
    dropped = 0
    for a in annotations:
        try:
            category = _category(mapping, a, text)
        except PolydeidError as exc:
            raise exc.at(f"{ann}:{a.line}") from None
        if category is None:
            dropped += 1
            continue
        parts = a.fragments if fragments == "each" else ((a.fragments[0][0], a.fragments[-1][1]),)
        label: Category | Fact = category
        if a.label in mapping.kinship_labels and is_kinship_mention(_covered(text, a), lang):
            label = Fact.KINSHIP
        (facts if label is Fact.KINSHIP else spans).extend(
            Span(s, e, label, f"gold:{a.label}") for s, e in parts
        )
    mismatches = tuple(a.line for a in annotations if not a.matches_text)
    meta = {
        "annotations": len(annotations),
        "dropped": dropped,
        "kinship": len(facts),
        "text_mismatches": len(mismatches),
        "mismatch_lines": mismatches,
    }
    return AnnotatedDocument(
        id=txt.stem,
        text=text,
        lang=lang,
        spans=tuple(sorted(spans, key=lambda s: (s.start, s.end, s.label.value))),
        facts=tuple(sorted(facts, key=lambda s: (s.start, s.end))),
        source=str(txt),
        meta=MappingProxyType(meta),
    )


def _covered(text: str, a: BratAnnotation) -> str:
    """The text an annotation covers, its fragments joined by one space (as brat writes it)."""
    return " ".join(text[s:e] for s, e in a.fragments)


def _category(mapping: Scheme, a: BratAnnotation, text: str) -> Category | None:
    category = mapping.map(a.label)
    if mapping.name == "meddocan" and a.label == "TERRITORIO":
        start, end = a.fragments[0][0], a.fragments[-1][1]
        if text[start:end].isdigit():
            return Category.LOCATION_ADDRESS
    return category


def parse_ann(data: str, text: str, *, source: str) -> list[BratAnnotation]:
    """The ``T`` annotations of an ``.ann`` file checked against ``text``; raises if malformed."""
    annotations = []
    for number, raw in enumerate(data.split("\n"), start=1):
        line = raw.removesuffix("\r")
        if not line.strip() or line.startswith(_IGNORED_PREFIXES):
            continue
        if not line.startswith("T"):
            raise RecordError("unknown annotation line kind", location=f"{source}:{number}")
        annotations.append(_parse_t_line(line, text, location=f"{source}:{number}", number=number))
    return annotations


def _parse_t_line(line: str, text: str, *, location: str, number: int) -> BratAnnotation:
    fields = line.split("\t")
    if len(fields) < 2:
        raise RecordError("a T line needs a tab-separated label and offsets", location=location)
    label, _, offsets = fields[1].partition(" ")
    if not label or not offsets:
        raise RecordError("a T line needs 'LABEL start end'", location=location)
    spans = []
    for fragment in offsets.split(";"):
        bounds = fragment.split()
        if len(bounds) != 2 or not all(b.isdigit() for b in bounds):
            raise RecordError("offsets must be 'start end' integers", location=location)
        start, end = int(bounds[0]), int(bounds[1])
        if not start < end <= len(text):
            raise RecordError(
                f"fragment {start}:{end} outside the text (length {len(text)})", location=location
            )
        spans.append((start, end))
    covered = " ".join(text[s:e] for s, e in spans)
    matches = len(fields) < 3 or fields[2] == covered
    return BratAnnotation(number, label, tuple(spans), matches)
