"""factRuEval-2016 standoff: ``book_N.txt`` with its ``.spans`` and ``.objects`` files.

``.spans``: ``id type start length first_token n_tokens # token-ids token-texts``, character
(code point) offsets into the ``.txt`` file read as UTF-8. ``.objects``: ``id type span-ids… #
text``: a Person, Org, Location, LocOrg or Project made of spans of several types.

A document's gold spans are its objects' **names**: the name, surname, patronymic and nickname
spans of a Person, the ``org_name`` of an Org, the ``loc_name`` of a Location and either of a
LocOrg, the ``prj_name`` of a Project. Descriptors (``org_descr``, ``loc_descr``, ``job``,
``prj_descr``) and ``geo_adj`` are not identifiers and stay out. An object's name spans that
only spaces separate are one span ("Юрия Лужкова"); its label is the object type mapped by the
scheme (``factrueval2016``). A name two objects share (a city that is a Location and a
LocOrg) is one span, labelled by the first object listed; a span overlapping one already
taken is left out and counted in ``meta["dropped"]``.

A document with a malformed line, an offset past the end of its text or an object type the
scheme does not know is left out and reported as a :class:`ReadFailure` at ``file:line``;
each span's recorded text is compared with the ``.txt`` slice, and mismatches are counted in
``meta["text_mismatches"]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from polydeid.core import taxonomy
from polydeid.core.errors import InputError, PolydeidError, RecordError
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Scheme
from polydeid.corpora.document import AnnotatedDocument, Corpus, ReadFailure
from polydeid.formats.text import decode_utf8
from polydeid.locales import canonical_language

#: The span types that name each object type (the others describe it).
NAME_TYPES: dict[str, frozenset[str]] = {
    "Person": frozenset({"name", "surname", "patronymic", "nickname"}),
    "Org": frozenset({"org_name"}),
    "Location": frozenset({"loc_name"}),
    "LocOrg": frozenset({"loc_name", "org_name"}),
    "Project": frozenset({"prj_name"}),
}


@dataclass(frozen=True, slots=True)
class _RawSpan:
    type: str
    start: int
    end: int
    text_matches: bool


def read_factrueval(
    path: str | Path,
    *,
    scheme: str | None = "factrueval2016",
    lang: str | None = "ru",
    name: str | None = None,
) -> Corpus:
    """Read one document (any of its files, or its path without suffix) or a directory."""
    mapping = taxonomy.scheme(scheme or "factrueval2016")
    language = canonical_language(lang or "ru")
    root = Path(path)
    if root.is_dir():
        stems = sorted({p.with_suffix("") for p in root.iterdir() if p.suffix == ".objects"})
    elif root.with_suffix(".objects").is_file():
        stems = [root.with_suffix("")]
    else:
        raise InputError("no factRuEval document (.objects file) here", location=str(root))
    documents: list[AnnotatedDocument] = []
    failures: list[ReadFailure] = []
    for stem in stems:
        try:
            documents.append(read_document(stem, mapping, language))
        except PolydeidError as exc:
            failures.append(ReadFailure(str(stem), exc))
    return Corpus(name or root.name, tuple(documents), tuple(failures))


def read_document(stem: Path, mapping: Scheme, lang: str) -> AnnotatedDocument:
    """One document from ``stem.txt``, ``stem.spans`` and ``stem.objects``."""
    files = {s: stem.with_suffix(s) for s in (".txt", ".spans", ".objects")}
    for file in files.values():
        if not file.is_file():
            raise InputError("missing file of a factRuEval document", location=str(file))
    text = decode_utf8(files[".txt"].read_bytes(), source=str(files[".txt"]))
    raw = _spans(files[".spans"], text)
    taken: list[Span] = []
    dropped = objects = 0
    for line, kind, span_ids in _objects(files[".objects"]):
        objects += 1
        try:
            category = mapping.map(kind)
        except PolydeidError as exc:
            raise exc.at(f"{files['.objects']}:{line}") from None
        names = NAME_TYPES.get(kind, frozenset())
        parts = []
        for span_id in span_ids:
            found = raw.get(span_id)
            if found is None:
                raise RecordError(
                    "an object names a span the .spans file lacks",
                    location=f"{files['.objects']}:{line}",
                )
            if found.type in names:
                parts.append((found.start, found.end))
        if category is None:
            continue
        for start, end in _joined(sorted(parts), text):
            span = Span(start, end, category, f"gold:{kind}")
            if any(t.start == start and t.end == end for t in taken):
                continue
            if any(t.start < end and start < t.end for t in taken):
                dropped += 1
                continue
            taken.append(span)
    mismatches = sum(not s.text_matches for s in raw.values())
    meta = {
        "annotations": objects,
        "dropped": dropped,
        "text_mismatches": mismatches,
    }
    return AnnotatedDocument(
        id=stem.name,
        text=text,
        lang=lang,
        spans=tuple(sorted(taken, key=lambda s: (s.start, s.end))),
        source=str(files[".objects"]),
        meta=MappingProxyType(meta),
    )


def _joined(parts: list[tuple[int, int]], text: str) -> list[tuple[int, int]]:
    """``parts`` (sorted) with those only spaces separate joined into one."""
    out: list[tuple[int, int]] = []
    for start, end in parts:
        if out and (start <= out[-1][1] or not text[out[-1][1] : start].strip()):
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _spans(file: Path, text: str) -> dict[str, _RawSpan]:
    spans: dict[str, _RawSpan] = {}
    content = decode_utf8(file.read_bytes(), source=str(file))
    for number, line in enumerate(content.splitlines(), start=1):
        if not line.strip():
            continue
        head, _, comment = line.partition("#")
        fields = head.split()
        if len(fields) < 6 or not all(f.isdigit() for f in fields[2:6]):
            raise RecordError("malformed span line", location=f"{file}:{number}")
        start, length = int(fields[2]), int(fields[3])
        if start + length > len(text):
            raise RecordError("span past the end of the text", location=f"{file}:{number}")
        recorded = " ".join(comment.split()[int(fields[5]) :])
        covered = " ".join(text[start : start + length].split())
        spans[fields[0]] = _RawSpan(fields[1], start, start + length, recorded == covered)
    return spans


def _objects(file: Path) -> list[tuple[int, str, list[str]]]:
    out = []
    content = decode_utf8(file.read_bytes(), source=str(file))
    for number, line in enumerate(content.splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.partition("#")[0].split()
        if len(fields) < 3:
            raise RecordError("malformed object line", location=f"{file}:{number}")
        out.append((number, fields[1], fields[2:]))
    return out
