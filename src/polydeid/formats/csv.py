"""CSV and TSV tables (Excel and EHR exports): every data cell is a field judged by its column.

**Dialect.** Fields are separated by one delimiter character and quoted with ``"`` as in
RFC 4180: a quoted field may hold the delimiter, ``""`` (one quote) and line breaks; a quote
inside an unquoted field is an ordinary character (as Python's :mod:`csv` reads it). Records
end at ``\\r\\n``, ``\\n`` or a lone ``\\r``; line ends are kept as they are. A line that holds
nothing but spaces is a blank row and is skipped (it still counts as a row). Malformed input
raises :class:`~polydeid.core.errors.InputError` located at ``source:line:column``: a quoted
field that is never closed, or anything but a delimiter or line end right after a closing
quote. :class:`CsvReader` sniffs the delimiter among ``,`` ``;`` ``\\t`` ``|`` (option
``delimiter=`` overrides): each candidate parses the first 50 records (at most 64 KiB) and
the one whose first record has the modal field count wins, then the one with the most
records of that count, then the one that starts fewer cells with a space (``Otieno, Amina``
in a ``;`` file), then the one with more fields, then the order just given; with no
candidate giving two fields or more, ``,``. :class:`TsvReader` uses ``\\t``.

**Encoding** (deterministic, in this order): a UTF-16 byte-order mark (``FF FE`` or ``FE FF``)
means UTF-16 little- or big-endian; otherwise the data is UTF-8 if it decodes as UTF-8
(with or without a BOM), else Windows-1252 (cp1252, Excel's "CSV" on Western Windows); data
that is neither raises a located :class:`~polydeid.core.errors.DecodingError`. A BOM is kept
as the text's first character, so writing the output in the returned encoding reproduces it;
every byte outside a replacement comes out as it went in. A replacement that a cp1252
document cannot hold is written with its accents dropped, and ``?`` for what remains.

**Rows and columns.** With ``header=True`` (the default) the first non-blank record is the
header: its cells name the columns and are never fields. Rows are numbered like spreadsheet
rows (the first record is row 1, blank rows count, a record with line breaks inside quotes
is one row); columns from 1. A cell's path is ``row 12, column 3 (Phone)`` (the header, not a
value, is quoted), its line is the physical line where it starts. A row with more or fewer
cells than the header (or, without a header, than the first row) raises an ``InputError``
at ``source:line`` unless ``ragged="allow"``. Empty cells are not fields, nor are cells of
``skip`` columns.

**Column roles**, first rule that applies:

1. ``columns=`` (a dict: header name or 1-based column number → ``"text"``, ``"skip"`` or a
   category name such as ``"PERSON"``) — a header is matched exactly, then ignoring case; a
   key that names no column raises :class:`~polydeid.core.errors.ConfigError`.
2. The header, through :func:`polydeid.lexicon.fields.role_for_name`, when it contains a
   known phrase: a ``value`` role (``DOB``, ``Telefon``: every non-empty cell is replaced
   whole), ``skip`` (``Dose``) or ``text`` (``Notes``).
3. Otherwise (an unknown header, or no header) the column's first 200 non-empty, non-null
   values are sampled. Each gets a label: the category of an identifier span covering the
   whole value (found by ``sampler``; the document engine, :func:`polydeid.engine.read_document`,
   passes the rule layer for English; without a sampler, shape alone decides), a clinical
   fact covering it (``500 mg``, ``5.6 mmol/L``), or by shape — a plain reading (``37.2``,
   ``72,5``, ``98 %``, ``120/80``: at most 4 integer digits, no leading zero) is a clinical
   quantity, a single token of letters, digits, ``-`` and ``/`` holding five digits or more is
   a record number (``ID_RECORD``). If identifier categories label at least 80 % of the
   sample, the column is a value column of the most frequent one (fail closed: every
   non-empty cell is replaced, the other 20 % too); if every sampled value is a clinical
   quantity, the column is skipped; otherwise it is free text.

Text cells are scanned with the header as context. ``sampler=`` takes a callable
``value -> Category | Fact | None``; :func:`polydeid.engine.rule_sampler` (another language)
and :meth:`polydeid.api.Deidentifier.column_sampler` (its own detectors, e.g. its tagger for
columns of bare names) build one.

**Writing replacements.** Inside a quoted cell a replacement has its ``"`` doubled. An
unquoted cell cannot grow quotes (the engine rewrites only the replaced span, not the
whole cell), so a replacement written into one has each line break and each delimiter
(with the spaces around it) turned into one space (``_`` when the delimiter is a space) and
``"`` into ``'``: the output always parses into the same rows and columns as the input.
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from polydeid.core.errors import ConfigError, DecodingError, InputError
from polydeid.core.taxonomy import Category, Fact
from polydeid.formats.base import Document, Field
from polydeid.lexicon.fields import (
    NULL_VALUES,
    SKIP,
    Role,
    RoleKind,
    normalise_name,
    role_for_name,
    role_for_words,
    text_role,
    value_role,
)
from polydeid.lexicon.tables import QUOTE, Record, check_delimiter, scan, sniff_delimiter

#: A sampler labels one cell value: the identifier category or clinical fact covering all of
#: it, or None.
Sampler = Callable[[str], Category | Fact | None]

#: Values sampled per column whose header says nothing.
SAMPLE_VALUES = 200
#: Share of sampled values identifier categories must label to make a value column.
VALUE_SHARE = 0.8

_BREAK = re.compile(r"\r\n|\r|\n")
_CLINICAL_NUMBER = re.compile(
    r"(?:[<>≤≥]=?\s*)?[-+]?(?!0\d)\d{1,4}(?:[.,]\d{1,4})?(?:\s*%)?|\d{2,3}/\d{2,3}"
)
_ID_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[-/][A-Za-z0-9]+)*")
_ID_MIN_DIGITS = 5
_HEADER_SHOWN = 40


# --------------------------------------------------------------------------------------------
# Decoding


def decode_table(data: bytes, *, source: str) -> tuple[str, str]:
    """(text, encoding) of CSV bytes: UTF-16 by BOM, else UTF-8, else cp1252 (BOM kept)."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding = "utf-16-le" if data.startswith(codecs.BOM_UTF16_LE) else "utf-16-be"
        try:
            return data.decode(encoding), encoding
        except UnicodeDecodeError as exc:
            raise DecodingError(
                f"invalid UTF-16 at byte offset {exc.start} ({exc.reason})", location=source
            ) from None
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("cp1252"), "cp1252"
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise DecodingError(
            f"neither UTF-8 nor Windows-1252: byte column {column} is undefined in both",
            location=f"{source}:{line}",
        ) from None


# --------------------------------------------------------------------------------------------
# Sampling


def _no_sample(value: str) -> None:
    """Without a sampler, a value is judged by its shape alone (:func:`shape_label`)."""
    return None


def shape_label(value: str) -> Category | Fact | None:
    """The label of a value by its shape alone (clinical reading, record number) or None."""
    stripped = value.strip()
    if _CLINICAL_NUMBER.fullmatch(stripped):
        return Fact.QUANTITY
    if _ID_TOKEN.fullmatch(stripped) and sum(c.isdigit() for c in stripped) >= _ID_MIN_DIGITS:
        return Category.ID_RECORD
    return None


def column_role(values: Sequence[str], sampler: Sampler, *, context: str = "") -> Role:
    """The role of a column whose header says nothing, from a sample of its values."""
    sample = [v for v in values if v.strip().casefold() not in NULL_VALUES][:SAMPLE_VALUES]
    if not sample:
        return text_role(context)
    labels = [sampler(v) or shape_label(v) for v in sample]
    categories = Counter(label for label in labels if isinstance(label, Category))
    if categories and sum(categories.values()) >= VALUE_SHARE * len(sample):
        category = max(categories.items(), key=lambda item: (item[1], item[0].value))[0]
        return value_role(category, context=context)
    if all(isinstance(label, Fact) for label in labels):
        return SKIP
    return text_role(context)


# --------------------------------------------------------------------------------------------
# Writing


def _quoted_encoder(replacement: str) -> str:
    return replacement.replace(QUOTE, '""')


def _plain_encoder(delimiter: str) -> Callable[[str], str]:
    fill = "_" if delimiter == " " else " "
    spaced = re.compile(rf"[ \t]*{re.escape(delimiter)}[ \t]*")

    def encode(replacement: str) -> str:
        out = _BREAK.sub(" ", replacement).replace(QUOTE, "'")
        return out.replace(" ", fill) if delimiter == " " else spaced.sub(fill, out)

    return encode


def _fit(encoder: Callable[[str], str], encoding: str | None) -> Callable[[str], str]:
    """``encoder`` followed by folding what ``encoding`` cannot hold (cp1252 documents)."""
    if encoding is None or not encoding.startswith("cp"):
        return encoder

    def encode(replacement: str) -> str:
        out = encoder(replacement)
        try:
            out.encode(encoding)
            return out
        except UnicodeEncodeError:
            pass
        folded = []
        for ch in out:
            try:
                ch.encode(encoding)
                folded.append(ch)
            except UnicodeEncodeError:
                base = "".join(
                    c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c)
                )
                folded.append(base.encode(encoding, "replace").decode(encoding) or "?")
        return "".join(folded)

    return encode


# --------------------------------------------------------------------------------------------
# Readers


def _role_option(value: str) -> Role:
    name = value.strip().casefold()
    if name == "text":
        return text_role()
    if name == "skip":
        return SKIP
    return value_role(Category.parse(value))


def _plain_header(header: str) -> str:
    return " ".join(header.replace("\ufeff", "").split())


def _clean_header(header: str) -> str:
    shown = _plain_header(header)
    return shown if len(shown) <= _HEADER_SHOWN else shown[: _HEADER_SHOWN - 1] + "…"


class CsvReader:
    """Comma- (or sniffed-) separated values; see the module docstring for the options."""

    name = "csv"
    default_delimiter: str | None = None

    def __init__(
        self,
        *,
        delimiter: str | None = None,
        header: bool = True,
        columns: Mapping[str | int, str] | None = None,
        ragged: str = "error",
        sampler: Sampler | None = None,
    ) -> None:
        if delimiter is not None:
            check_delimiter(delimiter)
        if ragged not in ("error", "allow"):
            raise ConfigError(f"ragged must be 'error' or 'allow', not {ragged!r}")
        self.delimiter = delimiter if delimiter is not None else self.default_delimiter
        self.header = header
        self.columns = {key: _role_option(value) for key, value in (columns or {}).items()}
        self.ragged = ragged
        self.sampler = sampler
        self._encoding: str | None = None

    def decode(self, data: bytes, *, source: str) -> tuple[str, str]:
        text, encoding = decode_table(data, source=source)
        self._encoding = encoding
        return text, encoding

    def read(self, text: str, *, source: str) -> Document:
        delimiter = self.delimiter or sniff_delimiter(text)
        records = [r for r in scan(text, delimiter, source=source) if not r.blank]
        headers: list[str] | None = None
        if self.header and records:
            headers = [c.value for c in records[0].cells]
            records = records[1:]
        self._check_widths(records, headers, source)
        width = max([len(r.cells) for r in records] + [len(headers or ())])
        names = [_clean_header(h) for h in headers or ()]
        roles = self._roles(records, headers, names, width)
        quoted = _fit(_quoted_encoder, self._encoding)
        plain = _fit(_plain_encoder(delimiter), self._encoding)
        fields: list[Field] = []
        for record in records:
            for j, cell in enumerate(record.cells):
                role = roles[j]
                if role.kind is RoleKind.SKIP or not cell.value:
                    continue
                label = f" ({names[j]})" if j < len(names) and names[j] else ""
                fields.append(
                    Field(
                        cell.start,
                        cell.end,
                        cell.value,
                        f"row {record.row}, column {j + 1}{label}",
                        role,
                        line=cell.line,
                        offsets=cell.offsets,
                        encode=quoted if cell.quoted else plain,
                        group=f"row {record.row}",
                    )
                )
        return Document(text, fields, self.name, encoding=self._encoding or "utf-8")

    def _check_widths(
        self, records: Sequence[Record], headers: Sequence[str] | None, source: str
    ) -> None:
        if self.ragged == "allow" or not records:
            return
        if headers is not None:
            expected, what = len(headers), "the header has"
        else:
            expected, what = len(records[0].cells), f"row {records[0].row} has"
        for record in records:
            if len(record.cells) != expected:
                raise InputError(
                    f"row {record.row} has {len(record.cells)} fields, {what} {expected}",
                    location=f"{source}:{record.line}",
                )

    def _roles(
        self,
        records: Sequence[Record],
        headers: Sequence[str] | None,
        names: Sequence[str],
        width: int,
    ) -> list[Role]:
        overrides = self._overrides(headers, width)
        sampler = self.sampler or _no_sample
        roles: list[Role] = []
        for j in range(width):
            context = names[j] if j < len(names) else ""
            if j in overrides:
                role = overrides[j]
                roles.append(role.with_context(context) if role.kind is RoleKind.TEXT else role)
                continue
            header = headers[j] if headers is not None and j < len(headers) else ""
            if role_for_words(normalise_name(header)) is not None:
                role = role_for_name(header)
                roles.append(role.with_context(context))
                continue
            values = self._column_values(records, j)
            roles.append(column_role(values, sampler, context=context))
        return roles

    @staticmethod
    def _column_values(records: Sequence[Record], j: int) -> list[str]:
        values: list[str] = []
        for record in records:
            if j < len(record.cells):
                value = record.cells[j].value
                if value.strip() and value.strip().casefold() not in NULL_VALUES:
                    values.append(value)
                    if len(values) >= SAMPLE_VALUES:
                        break
        return values

    def _overrides(self, headers: Sequence[str] | None, width: int) -> dict[int, Role]:
        out: dict[int, Role] = {}
        names = [_plain_header(h) for h in headers] if headers is not None else None
        for key, role in self.columns.items():
            found = self._column_keys(key, names, width)
            if not found:
                raise ConfigError(f"the columns option names no column of this table: {key!r}")
            for j in found:
                out[j] = role
        return out

    @staticmethod
    def _column_keys(key: Any, names: Sequence[str] | None, width: int) -> list[int]:
        """Indices of the columns ``key`` names (a header, or a 1-based column number)."""
        if isinstance(key, bool):
            return []
        if isinstance(key, str) and names is not None:
            wanted = " ".join(key.split())
            exact = [j for j, name in enumerate(names) if name == wanted]
            if exact:
                return exact
            folded = [j for j, name in enumerate(names) if name.casefold() == wanted.casefold()]
            if folded:
                return folded
        if isinstance(key, str) and key.strip().isdigit():
            key = int(key.strip())
        if isinstance(key, int) and 1 <= key <= width:
            return [key - 1]
        return []


class TsvReader(CsvReader):
    """Tab-separated values (same rules as :class:`CsvReader`, delimiter ``\\t``)."""

    name = "tsv"
    default_delimiter = "\t"
