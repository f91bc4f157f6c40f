"""Value tags without offsets (ASQ-PHI): each query followed by the PHI values it contains.

::

    ===QUERY===
    <query text, one or more lines>
    ===PHI_TAGS===
    {"identifier_type": "NAME", "value": "..."}
    ...

The query text is the lines between the two markers joined by newlines. Each value is placed at
its **first unused occurrence**: the first exact (case-sensitive) match in the query that does
not overlap a span already placed for an earlier tag of the same query, so a value listed twice
takes its first and second occurrences. A value that cannot be placed is not guessed: it is
counted in ``meta["unlocated_count"]`` and listed in ``meta["unlocated"]`` by its tag line and
type (never its value), and the query is still read. A malformed block or tag line leaves that
query out, reported at ``file:line``. Scheme ``asq_phi``; language ``en`` unless told.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from polydeid.core import taxonomy
from polydeid.core.errors import InputError, PolydeidError, RecordError
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Scheme
from polydeid.corpora.document import AnnotatedDocument, Corpus, ReadFailure
from polydeid.formats.text import decode_utf8
from polydeid.locales import canonical_language

QUERY_MARK = "===QUERY==="
TAGS_MARK = "===PHI_TAGS==="


@dataclass(frozen=True, slots=True)
class Block:
    """One query block: its index in the file, the text, and its raw tag lines."""

    index: int
    line: int
    text: str = field(repr=False)  # may hold identifier text
    tags: tuple[tuple[int, str], ...]
    well_formed: bool = True


@dataclass(frozen=True, slots=True)
class Tag:
    """A PHI tag: its line, type and value (the value is for locating only; never shown)."""

    line: int
    label: str
    value: str = field(repr=False)  # may hold identifier text


def read_value_tags(
    path: str | Path,
    *,
    scheme: str | None = "asq_phi",
    lang: str | None = "en",
    name: str | None = None,
) -> Corpus:
    """Read one value-tag file as one document per query."""
    mapping = taxonomy.scheme(scheme or "asq_phi")
    language = canonical_language(lang or "en")
    file = Path(path)
    if not file.is_file():
        raise InputError("no such file", location=str(file))
    source = str(file)
    documents: list[AnnotatedDocument] = []
    failures: list[ReadFailure] = []
    try:
        blocks = split_blocks(decode_utf8(file.read_bytes(), source=source), source=source)
    except PolydeidError as exc:
        return Corpus(name or file.name, (), (ReadFailure(source, exc),))
    for block in blocks:
        try:
            documents.append(block_document(block, mapping, language, file=file))
        except PolydeidError as exc:
            failures.append(ReadFailure(source, exc))
    return Corpus(name or file.name, tuple(documents), tuple(failures))


def split_blocks(data: str, *, source: str) -> list[Block]:
    """The file's query blocks; raises at the first line outside any block."""
    blocks: list[Block] = []
    lines = [line.removesuffix("\r") for line in data.split("\n")]
    starts = [i for i, line in enumerate(lines) if line.strip() == QUERY_MARK]
    leading = [i for i in range(starts[0] if starts else len(lines)) if lines[i].strip()]
    if leading:
        where = f"{source}:{leading[0] + 1}"
        raise RecordError("text before the first query marker", location=where)
    for index, (start, stop) in enumerate(zip(starts, [*starts[1:], len(lines)], strict=True)):
        body = lines[start + 1 : stop]
        marks = [i for i, line in enumerate(body) if line.strip() == TAGS_MARK]
        if len(marks) != 1:
            blocks.append(Block(index, start + 1, "", (), well_formed=False))
            continue
        text = "\n".join(body[: marks[0]]).strip("\n")
        tags = tuple(
            (start + 2 + marks[0] + k, line)
            for k, line in enumerate(body[marks[0] + 1 :], start=1)
            if line.strip()
        )
        blocks.append(Block(index, start + 1, text, tags))
    return blocks


def _parse_tag(number: int, raw: str, *, source: str) -> Tag:
    where = f"{source}:{number}"
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise RecordError(f"malformed JSON tag ({exc.msg})", location=where) from None
    if not isinstance(data, dict):
        raise RecordError("a tag must be a JSON object", location=where)
    label, value = data.get("identifier_type"), data.get("value")
    if not isinstance(label, str) or not isinstance(value, str) or not value:
        raise RecordError('a tag needs string "identifier_type" and "value"', location=where)
    return Tag(number, label, value)


def block_document(block: Block, mapping: Scheme, lang: str, *, file: Path) -> AnnotatedDocument:
    """One query with its located tags; raises on a malformed tag line."""
    source = str(file)
    if not block.well_formed:
        where = f"{source}:{block.line}"
        raise RecordError("a query block needs exactly one tags marker", location=where)
    tags = [_parse_tag(number, raw, source=source) for number, raw in block.tags]
    placed: list[tuple[int, int]] = []
    spans: list[Span] = []
    unlocated: list[MappingProxyType[str, object]] = []
    for tag in tags:
        try:
            category = mapping.map(tag.label)
        except PolydeidError as exc:
            raise exc.at(f"{source}:{tag.line}") from None
        where = first_unused(block.text, tag.value, placed)
        if where is None:
            unlocated.append(MappingProxyType({"line": tag.line, "label": tag.label}))
            continue
        placed.append(where)
        if category is not None:
            spans.append(Span(where[0], where[1], category, f"gold:{tag.label}"))
    meta = {
        "query_index": block.index,
        "tags": len(tags),
        "unlocated_count": len(unlocated),
        "unlocated": tuple(unlocated),
    }
    return AnnotatedDocument(
        id=f"{file.stem}:{block.index}",
        text=block.text,
        lang=lang,
        spans=tuple(sorted(spans, key=lambda s: (s.start, s.end, s.label.value))),
        source=f"{source}:{block.line}",
        meta=MappingProxyType(meta),
    )


def first_unused(text: str, value: str, placed: list[tuple[int, int]]) -> tuple[int, int] | None:
    """The first occurrence of ``value`` in ``text`` overlapping no ``placed`` range."""
    at = text.find(value)
    while at != -1:
        end = at + len(value)
        if not any(at < e and s < end for s, e in placed):
            return at, end
        at = text.find(value, at + 1)
    return None
