"""Delimited tables: the RFC 4180 scanner, the delimiter sniffer, and tables pasted into text.

The CSV reader (:mod:`polydeid.formats.csv`) reads files with these; the detectors' label
roles (:mod:`polydeid.detect.roles`) read a table pasted into a note with the same scanner
and judge its columns by their headers as the reader does.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from polydeid.core.errors import ConfigError, InputError
from polydeid.core.taxonomy import Category
from polydeid.lexicon.fields import RoleKind, role_for_name

#: Delimiters the sniffer chooses among, in order of preference on a tie.
SNIFF_DELIMITERS = (",", ";", "\t", "|")
SNIFF_RECORDS = 50
SNIFF_CHARS = 65_536
QUOTE = '"'


@dataclass(frozen=True, slots=True)
class Cell:
    """One cell: the raw range of its content (inside the quotes when quoted)."""

    start: int
    end: int
    value: str
    quoted: bool
    line: int
    offsets: tuple[int, ...] | None = None

    def __repr__(self) -> str:  # never show the value
        return f"Cell({self.start}:{self.end} line={self.line} quoted={self.quoted})"


@dataclass(frozen=True, slots=True)
class Record:
    """One record (spreadsheet row) and the line where it starts."""

    row: int
    line: int
    cells: tuple[Cell, ...]

    @property
    def blank(self) -> bool:
        return len(self.cells) == 1 and not self.cells[0].value.strip()


def _breaks(text: str, start: int = 0, end: int | None = None) -> int:
    """Line breaks (``\\r\\n``, ``\\n`` or a lone ``\\r``) in ``text[start:end]``."""
    piece = text[start:end]
    return piece.count("\n") + piece.count("\r") - piece.count("\r\n")


def _location(text: str, pos: int, source: str) -> str:
    line = _breaks(text, 0, pos) + 1
    last = max(text.rfind("\n", 0, pos), text.rfind("\r", 0, pos))
    return f"{source}:{line}:{pos - last}"


def check_delimiter(delimiter: str) -> None:
    """Raise :class:`ConfigError` unless ``delimiter`` is one character other than a quote or
    a line end."""
    if delimiter in (QUOTE, "\r", "\n") or len(delimiter) != 1:
        raise ConfigError("the delimiter must be one character other than a quote or line end")


def scan(text: str, delimiter: str, *, source: str) -> Iterator[Record]:
    """The records of ``text`` (a leading BOM skipped), every cell with its raw range.

    Raises a located :class:`InputError` for an unterminated quoted field or text after a
    closing quote (records before it have been yielded).
    """
    check_delimiter(delimiter)
    unquoted = re.compile(f"[^{re.escape(delimiter)}\r\n]*")
    n = len(text)
    pos = 1 if text.startswith("\ufeff") else 0
    line = 1
    row = 0
    while pos < n:
        row += 1
        record_line = line
        cells: list[Cell] = []
        while True:
            if pos < n and text[pos] == QUOTE:
                cell, pos = _quoted(text, pos, line, delimiter, source)
                line += _breaks(text, cell.start, cell.end)
            else:
                end = unquoted.match(text, pos).end()  # type: ignore[union-attr]
                cell = Cell(pos, end, text[pos:end], False, line)
                pos = end
            cells.append(cell)
            if pos >= n:
                break
            if text[pos] == delimiter:
                pos += 1
                continue
            pos += 2 if text.startswith("\r\n", pos) else 1
            line += 1
            break
        yield Record(row, record_line, tuple(cells))


def _quoted(text: str, pos: int, line: int, delimiter: str, source: str) -> tuple[Cell, int]:
    """The quoted cell opening at ``pos`` and the position after its closing quote."""
    start = pos + 1
    search = start
    escaped = False
    while True:
        close = text.find(QUOTE, search)
        if close < 0:
            raise InputError("quoted field is never closed", location=_location(text, pos, source))
        if text.startswith('""', close):
            escaped = True
            search = close + 2
            continue
        break
    after = close + 1
    if after < len(text) and text[after] not in (delimiter, "\r", "\n"):
        raise InputError(
            "unexpected character after the closing quote of a field",
            location=_location(text, after, source),
        )
    raw = text[start:close]
    if not escaped:
        return Cell(start, close, raw, True, line), after
    value: list[str] = []
    offsets: list[int] = []
    i = 0
    while i < len(raw):
        value.append(raw[i])
        offsets.append(start + i)
        i += 2 if raw[i] == QUOTE else 1
    offsets.append(close)
    return Cell(start, close, "".join(value), True, line, tuple(offsets)), after


def sniff_delimiter(text: str, *, candidates: Sequence[str] = SNIFF_DELIMITERS) -> str:
    """The delimiter of ``text`` among ``candidates``: each parses the first records (at most
    :data:`SNIFF_CHARS`); the one whose first record has the modal field count wins, then the
    one with most records of that count, fewer cells opening with a space, more fields, and the
    candidates' order; the first candidate where none gives two fields or more."""
    sample = text[:SNIFF_CHARS]
    best: tuple[tuple[bool, float, float, int, int], str] | None = None
    for rank, delimiter in enumerate(candidates):
        truncated = len(text) > len(sample)
        counts: list[int] = []
        spaced_cells: list[int] = []
        try:
            for record in scan(sample, delimiter, source="<sniff>"):
                if not record.blank:
                    counts.append(len(record.cells))
                    spaced_cells.append(
                        sum(c.value[:1] == " " and not c.quoted for c in record.cells[1:])
                    )
                if len(counts) > SNIFF_RECORDS:
                    break
        except InputError:
            truncated = True  # a quoted field cut by the sample's end
        if truncated and len(counts) > 1:
            counts.pop()  # the last record may be cut short
            spaced_cells.pop()
        if not counts:
            continue
        modal = max(Counter(counts).items(), key=lambda item: (item[1], item[0]))[0]
        if modal < 2:
            continue
        spaced = sum(spaced_cells) / max(1, sum(c - 1 for c in counts))
        score = (counts[0] == modal, counts.count(modal) / len(counts), -spaced, modal, -rank)
        if best is None or score > best[0]:
            best = (score, delimiter)
    return best[1] if best else candidates[0]


#: A table pasted into text: its header has at least this many columns (a sentence with a
#: comma or two is no table), among these delimiters.
_PASTED_MIN_COLUMNS = 3
_PASTED_DELIMITERS = (",", ";", "\t")
#: Where a paragraph ends: a blank line.
_PARAGRAPH_END = re.compile(r"(?:\r\n|\r|\n)[ \t]*(?:\r\n|\r|\n)")
_LINE = re.compile(r"[^\r\n]*")


def pasted_column_categories(text: str) -> list[tuple[int, int, Category]]:
    """The cells of value columns in the tables pasted into ``text`` (a CSV or TSV export in a
    note, a ticket or a log), each ``(start, end, category)``: a paragraph whose first line is a
    header of at least :data:`_PASTED_MIN_COLUMNS` cells without digits, one of them naming a
    value category through :func:`polydeid.lexicon.fields.role_for_name` ("Amazina
    y'umurwayi": PERSON, "Umuntu wa hafi": PERSON_THIRD_PARTY), and the rows after it with as
    many cells, as the CSV reader judges a column by its header. Malformed quoting ends the
    table where it stands."""
    out: list[tuple[int, int, Category]] = []
    starts = [0, *(m.end() for m in _PARAGRAPH_END.finditer(text))]
    for k, start in enumerate(starts):
        end = len(text) if k + 1 == len(starts) else starts[k + 1]
        first_line = _LINE.match(text, start, end).group()  # type: ignore[union-attr]
        if any(ch.isdigit() for ch in first_line):
            continue
        delimiters = [
            d for d in _PASTED_DELIMITERS if first_line.count(d) >= _PASTED_MIN_COLUMNS - 1
        ]
        if not delimiters:
            continue
        block = text[start:end]
        records = scan(block, sniff_delimiter(block, candidates=delimiters), source="<text>")
        try:
            header = next(records)
            width = len(header.cells)
            columns = {
                j: role.category
                for j, cell in enumerate(header.cells)
                if (role := role_for_name(cell.value)).kind is RoleKind.VALUE
                and role.category is not None
            }
            if width < _PASTED_MIN_COLUMNS or not columns:
                continue
            for record in records:
                if len(record.cells) != width:
                    break
                for j, category in columns.items():
                    cell = record.cells[j]
                    if cell.value.strip():
                        out.append((start + cell.start, start + cell.end, category))
        except (InputError, StopIteration):
            continue
    return out
