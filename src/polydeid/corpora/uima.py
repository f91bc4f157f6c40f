"""UIMA CAS JSON (draft specification 0.4, as INCEpTION and DKPro Cassis export it).

One CAS per file: ``%FEATURE_STRUCTURES`` (a list of objects with ``%ID`` and ``%TYPE``, or an
object keyed by ID), ``%VIEWS`` (``{"_InitialView": {"%SOFA": id, "%MEMBERS": [...]}}``) and an
optional ``%HEADER``. The text is the view's ``uima.cas.Sofa`` ``sofaString``; the gold spans
are the view's members of the annotation types given (default DKPro's ``NamedEntity``), with
``begin``/``end`` (or ``^begin``/``^end``) offsets and the label in ``label_feature``
(default ``value``). A missing ``begin`` is 0, the UIMA default for an integer feature.

Offsets. UIMA's Java SDK, INCEpTION and Cassis count offsets in UTF-16 code units (Java string
indices), which differ from Python's code points after any character outside the Basic
Multilingual Plane (emoji, some CJK). The draft leaves the encoding open and proposes a header
key for it, so ``offsets="auto"`` reads an offset-encoding entry from ``%HEADER`` or the view
(``%OFFSET_ENCODING``, ``offsetEncoding`` or ``_offset_encoding``; values ``UTF-16``, ``UTF-8``,
``UTF-32``/``code-points``) and otherwise assumes UTF-16, the Java default. ``offsets=`` forces
one. An offset inside a surrogate pair or a UTF-8 sequence is an error.

The language comes from the view's ``uima.tcas.DocumentAnnotation`` ``language`` unless it is
``x-unspecified``; else from ``lang=``. A file that cannot be read is one located failure.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from polydeid.core import taxonomy
from polydeid.core.errors import ConfigError, PolydeidError, RecordError
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Scheme
from polydeid.corpora._files import corpus_files, load_json
from polydeid.corpora.document import AnnotatedDocument, Corpus, ReadFailure
from polydeid.locales import canonical_language

NAMED_ENTITY = "de.tudarmstadt.ukp.dkpro.core.api.ner.type.NamedEntity"
SOFA = "uima.cas.Sofa"
DOCUMENT_ANNOTATION = "uima.tcas.DocumentAnnotation"
DEFAULT_VIEW = "_InitialView"
Offsets = Literal["auto", "utf-16", "utf-8", "code-points"]
_ENCODING_KEYS = ("%OFFSET_ENCODING", "offsetEncoding", "_offset_encoding")
_ENCODINGS: dict[str, Offsets] = {
    "UTF16": "utf-16",
    "UTF8": "utf-8",
    "UTF32": "code-points",
    "CODEPOINTS": "code-points",
    "CODEPOINT": "code-points",
}
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
OffsetMap = Callable[[int, str], int]


def read_uima_json(
    path: str | Path,
    *,
    scheme: str | None = "polydeid",
    lang: str | None = None,
    types: Sequence[str] = (NAMED_ENTITY,),
    label_feature: str = "value",
    offsets: Offsets = "auto",
    view: str = DEFAULT_VIEW,
    name: str | None = None,
) -> Corpus:
    """Read one CAS JSON file, or every ``.json`` file of a directory (sorted by name)."""
    if offsets not in ("auto", "utf-16", "utf-8", "code-points"):
        raise ConfigError(f"offsets must be auto, utf-16, utf-8 or code-points, not {offsets!r}")
    mapping = taxonomy.scheme(scheme or "polydeid")
    options = _Options(frozenset(types), label_feature, offsets, view, lang)
    root = Path(path)
    documents: list[AnnotatedDocument] = []
    failures: list[ReadFailure] = []
    for file in corpus_files(root, suffixes={".json"}):
        try:
            documents.append(read_cas_file(file, mapping, options))
        except PolydeidError as exc:
            failures.append(ReadFailure(str(file), exc))
    return Corpus(name or root.name, tuple(documents), tuple(failures))


@dataclass(frozen=True, slots=True)
class _Options:
    """What to read from each CAS."""

    types: frozenset[str]
    label_feature: str
    offsets: Offsets
    view: str
    lang: str | None


def read_cas_file(file: Path, mapping: Scheme, options: _Options) -> AnnotatedDocument:
    """One CAS JSON file as a document; raises a located error when it cannot be used."""
    source = str(file)
    cas = load_json(file)
    if not isinstance(cas, dict):
        raise RecordError("a CAS must be a JSON object", location=source)
    structures = _structures(cas, source)
    view = cas.get("%VIEWS", {}).get(options.view) if isinstance(cas.get("%VIEWS"), dict) else None
    sofa_id = _sofa_id(structures, view, options.view, source)
    text = structures[sofa_id].get("sofaString")
    if not isinstance(text, str):
        raise RecordError(f"sofa {sofa_id} has no sofaString", location=source)
    members = _members(structures, view, sofa_id)
    to_python = _offset_map(text, _encoding(cas, view, options.offsets, source))
    spans = []
    for fs in members:
        if fs["%TYPE"] in options.types:
            span = _span(fs, text, mapping, options.label_feature, to_python, source)
            if span is not None:
                spans.append(span)
    lang = _language(members, options.lang, source)
    return AnnotatedDocument(
        id=file.stem,
        text=text,
        lang=lang,
        spans=tuple(sorted(spans, key=lambda s: (s.start, s.end, s.label.value))),
        source=source,
        meta=MappingProxyType({"view": options.view}),
    )


def _structures(cas: Mapping[str, Any], source: str) -> dict[int, dict[str, Any]]:
    raw = cas.get("%FEATURE_STRUCTURES")
    items: Iterable[tuple[Any, Any]]
    if isinstance(raw, list):
        items = ((fs.get("%ID") if isinstance(fs, dict) else None, fs) for fs in raw)
    elif isinstance(raw, dict):
        items = raw.items()
    else:
        raise RecordError("no %FEATURE_STRUCTURES list or object", location=source)
    structures: dict[int, dict[str, Any]] = {}
    for key, fs in items:
        try:
            fs_id = int(key)
        except (TypeError, ValueError):
            message = "a feature structure without an integer %ID"
            raise RecordError(message, location=source) from None
        if not isinstance(fs, dict) or not isinstance(fs.get("%TYPE"), str):
            raise RecordError(f"feature structure {fs_id} has no %TYPE", location=source)
        structures[fs_id] = fs
    return structures


def _sofa_id(
    structures: Mapping[int, dict[str, Any]], view: Any, view_name: str, source: str
) -> int:
    if isinstance(view, dict) and "%SOFA" in view:
        sofa = view["%SOFA"]
        if isinstance(sofa, int) and structures.get(sofa, {}).get("%TYPE") == SOFA:
            return sofa
        raise RecordError(f"view {view_name!r} points to no sofa", location=source)
    for fs_id, fs in structures.items():
        if fs["%TYPE"] == SOFA and fs.get("sofaID", DEFAULT_VIEW) == view_name:
            return fs_id
    raise RecordError(f"no sofa for view {view_name!r}", location=source)


def _members(
    structures: Mapping[int, dict[str, Any]], view: Any, sofa_id: int
) -> list[dict[str, Any]]:
    """The view's member structures, or every structure on its sofa when no list is given."""
    if isinstance(view, dict) and isinstance(view.get("%MEMBERS"), list):
        return [structures[m] | {"%ID": m} for m in view["%MEMBERS"] if m in structures]
    return [fs | {"%ID": i} for i, fs in structures.items() if fs.get("@sofa", sofa_id) == sofa_id]


def _encoding(cas: Mapping[str, Any], view: Any, forced: Offsets, source: str) -> Offsets:
    if forced != "auto":
        return forced
    for table in (cas.get("%HEADER"), view):
        if not isinstance(table, dict):
            continue
        for key in _ENCODING_KEYS:
            if key in table:
                value = str(table[key]).upper().replace("-", "").replace("_", "")
                if value not in _ENCODINGS:
                    raise RecordError("unknown offset encoding in the CAS header", location=source)
                return _ENCODINGS[value]
    return "utf-16"


def _offset_map(text: str, encoding: Offsets) -> OffsetMap | None:
    """A function from external offsets to code points; ``None`` when they coincide."""
    if encoding == "code-points" or (encoding == "utf-8" and text.isascii()):
        return None
    if encoding == "utf-16":
        astral = [m.start() for m in _ASTRAL.finditer(text)]
        if not astral:
            return None
        starts = [cp + j for j, cp in enumerate(astral)]  # UTF-16 index of each astral char

        def from_utf16(offset: int, where: str) -> int:
            k = bisect_left(starts, offset)
            if k and starts[k - 1] + 1 == offset:
                raise RecordError(f"offset {offset} splits a surrogate pair", location=where)
            return offset - k

        return from_utf16
    bounds = {b: i for i, b in enumerate(accumulate((len(c.encode()) for c in text), initial=0))}

    def from_utf8(offset: int, where: str) -> int:
        if offset not in bounds:
            raise RecordError(
                f"offset {offset} is not on a UTF-8 character boundary", location=where
            )
        return bounds[offset]

    return from_utf8


def _span(
    fs: Mapping[str, Any],
    text: str,
    mapping: Scheme,
    label_feature: str,
    to_python: OffsetMap | None,
    source: str,
) -> Span | None:
    where = f"{source}:fs[{fs['%ID']}]"
    begin = fs.get("begin", fs.get("^begin", 0))
    end = fs.get("end", fs.get("^end"))
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (begin, end)):
        raise RecordError("annotation needs integer begin and end", location=where)
    if to_python is not None:
        begin, end = to_python(begin, where), to_python(end, where)
    if not 0 <= begin < end <= len(text):
        raise RecordError(
            f"annotation {begin}:{end} outside the text (length {len(text)})", location=where
        )
    label = fs.get(label_feature)
    if not isinstance(label, str) or not label:
        raise RecordError(f"annotation has no {label_feature!r} label", location=where)
    try:
        category = mapping.map(label)
    except PolydeidError as exc:
        raise exc.at(where) from None
    return None if category is None else Span(begin, end, category, f"gold:{label}")


def _language(members: Iterable[Mapping[str, Any]], fallback: str | None, source: str) -> str:
    for fs in members:
        if fs["%TYPE"] == DOCUMENT_ANNOTATION:
            declared = fs.get("language")
            if isinstance(declared, str) and declared and declared != "x-unspecified":
                return canonical_language(declared)
    if fallback is None:
        raise RecordError("the CAS declares no language and no lang= was given", location=source)
    return canonical_language(fallback)
