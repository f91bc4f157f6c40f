"""Structured documents: fields located in the source text, each judged by its role.

Every structured format (JSON, FHIR, XML/CDA, CSV, HL7 v2, chat, code) is read the same way:
a reader decodes the input to text and returns a :class:`Document`, the list of
:class:`Field` values it holds, each with

- its **raw range** ``[start, end)`` in the document text (the characters that encode the
  value: a JSON string's content without the quotes, an XML text node, a CSV cell, an HL7
  component);
- its **decoded value** (escapes resolved) and, where they differ, ``offsets``: the raw
  position of every decoded character plus one for the end, so a replacement inside the
  value is written back at exactly the right raw range and every other byte stays as it was;
- a **path** that locates it without quoting any value (``entry[2].resource.name[0].family``,
  ``PID-5.1``, ``row 12, column 3``);
- a **role**: ``text`` (scan it with the detectors, the field's label put before it as
  context), ``value`` (the whole value is an identifier of one category, e.g. a FHIR
  ``birthDate`` or HL7 PID-5) or ``skip`` (never identifying: codes, system URLs, resource ids).

:mod:`polydeid.engine` then detects and replaces across all fields of a document at
once and splices the results back; readers never touch detection.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from polydeid.core.errors import InputError
from polydeid.lexicon.fields import Role, RoleKind

Encoder = Callable[[str], str]


def identity(text: str) -> str:
    return text


@dataclass(frozen=True, slots=True)
class Field:
    """One value of a document (see the module docstring). Never log ``value``."""

    start: int
    end: int
    value: str = field(repr=False)
    path: str
    role: Role
    line: int | None = None
    offsets: tuple[int, ...] | None = field(default=None, repr=False)
    encode: Encoder = field(default=identity, repr=False)
    #: The record the field belongs to (a CSV row, an HL7 message); identifiers found in the
    #: value fields of a record are also searched for in its text fields. None: the document.
    group: str | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.start <= self.end:
            raise ValueError(f"invalid field range {self.start}:{self.end}")
        if self.offsets is not None and len(self.offsets) != len(self.value) + 1:
            raise ValueError("a field's offsets need one entry per character plus the end")
        if self.offsets is None and self.end - self.start != len(self.value):
            raise ValueError("a field without offsets must have its value verbatim in the text")

    def raw(self, start: int, end: int) -> tuple[int, int]:
        """The document range that encodes the value's characters ``[start, end)``. Characters
        decoded from one raw escape (an HL7 ``\\X3132\\``) share its position in ``offsets``
        and are replaced together: a range that ends inside them covers the whole escape."""
        if self.offsets is None:
            return self.start + start, self.start + end
        offsets = self.offsets
        while 0 < end < len(offsets) - 1 and offsets[end] == offsets[end - 1]:
            end += 1
        return offsets[start], offsets[end]

    @property
    def where(self) -> str:
        line = f"line {self.line}, " if self.line is not None else ""
        return f"{line}{self.path}"


@dataclass(slots=True)
class Document:
    """A decoded document and its fields (sorted by start, non-overlapping; a list, or any
    iterable that yields them afresh on every iteration, for documents too large to hold
    their fields at once).

    ``encoding`` is the character encoding to write it back in (readers that sniff encodings
    set it; ``utf-8-sig`` keeps a byte-order mark). ``patient`` names the patient the
    document belongs to where the format says so (e.g. a FHIR Patient id), so date shifts and
    surrogates are shared by all its fields.
    """

    text: str = field(repr=False)
    fields: Iterable[Field]
    format: str
    encoding: str = "utf-8"
    patient: str | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        return f"Document({self.format}, {len(self.text)} chars)"

    def check(self) -> None:
        """Raise if fields overlap or leave the text (a reader bug, never user error)."""
        previous_end = 0
        for f in sorted(self.fields, key=lambda f: f.start):
            if f.start < previous_end or f.end > len(self.text):
                raise ValueError(f"field {f.path} overlaps another or leaves the text")
            previous_end = f.end


class FormatReader(Protocol):
    """A structured format: decode bytes, then read the document's fields.

    ``read`` raises :class:`InputError` (or a subclass) whose location names the source and
    the line/column/path of the problem, never the offending text.
    """

    name: str

    def decode(self, data: bytes, *, source: str) -> tuple[str, str]:
        """(text, encoding) of ``data``."""
        ...

    def read(self, text: str, *, source: str) -> Document: ...


def line_of(text: str, pos: int) -> int:
    """1-based line number of character ``pos`` of ``text``."""
    return text.count("\n", 0, pos) + 1


def column_of(text: str, pos: int) -> int:
    """1-based column of character ``pos`` of ``text``."""
    return pos - (text.rfind("\n", 0, pos) + 1) + 1


def located(message: str, *, source: str, text: str, pos: int) -> InputError:
    """An :class:`InputError` at ``source:line:column`` for character ``pos``."""
    return InputError(message, location=f"{source}:{line_of(text, pos)}:{column_of(text, pos)}")


def splice(text: str, edits: Sequence[tuple[int, int, str]]) -> str:
    """``text`` with each ``(start, end, new)`` range replaced. Ranges that overlap (two
    replacements inside one raw escape, see :meth:`Field.raw`) become one range replaced by
    both texts in order."""
    merged: list[tuple[int, int, str]] = []
    for start, end, new in sorted(edits):
        if merged and start < merged[-1][1]:
            last = merged[-1]
            merged[-1] = (last[0], max(last[1], end), last[2] + new)
        else:
            merged.append((start, end, new))
    parts: list[str] = []
    pos = 0
    for start, end, new in merged:
        parts.append(text[pos:start])
        parts.append(new)
        pos = end
    parts.append(text[pos:])
    return "".join(parts)


def sample_text(doc: Document, limit: int = 4000) -> str:
    """The document's text-field values joined (for language identification)."""
    pieces: list[str] = []
    size = 0
    for f in doc.fields:
        if f.role.kind is RoleKind.TEXT and f.value.strip():
            pieces.append(f.value)
            size += len(f.value) + 1
            if size >= limit:
                break
    return "\n".join(pieces)[:limit]
