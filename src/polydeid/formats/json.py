"""JSON documents of any shape, read by a position-tracking scanner.

The scanner is iterative (no recursion) and keeps the parse limits of
:mod:`polydeid.formats.limits` (nesting depth, number length); it yields
every string and number with its raw range and its key path, so a replacement rewrites
exactly the characters of one value and the rest of the file — whitespace, key order, escapes,
number formatting — is written back as it was. Fields are produced lazily: a huge document is
scanned again instead of being held as a tree.

Roles come from the key path (:func:`polydeid.lexicon.fields.role_for_name` on the parent key
and the leaf key): a value under ``family``, ``phone``, ``birthDate`` or ``mrn`` is an
identifier as a whole; a string under any other key is scanned as text with the key as
context; a number is a field only under an identifying key (or, as text, when it has at
least six digits and its key is not a known clinical or code key). Object keys are structure
and never changed. A number replaced by a non-numeric value (a tag) becomes a JSON string;
that is the one type change de-identification may make.

``JsonlReader``-style input (one JSON value per line) is read with ``lines=True``: the path of
each value starts with its line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from polydeid.core.errors import InputError, InputLimitError
from polydeid.formats.base import Document, Field, column_of, line_of, located
from polydeid.formats.limits import MAX_DEPTH, MAX_NUMBER_CHARS, number_too_long
from polydeid.formats.text import decode_utf8
from polydeid.lexicon.fields import SKIP, Role, RoleKind, role_for_name

# Whitespace patterns here match at every position (possibly empty), so their ``.match()`` is
# never None: typeshed's ``Match | None`` cannot know that, hence ``# type: ignore[union-attr]``
# where one is read (a cast would cost a call in the scanner's inner loop).
_WS = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"')
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_LITERALS = ("true", "false", "null")
_SIMPLE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_MIN_TEXT_DIGITS = 6

PathKey = str | int


@dataclass(frozen=True, slots=True)
class Scalar:
    """A string or number token: raw range (content only, without quotes), decoded value."""

    start: int
    end: int
    value: str
    offsets: tuple[int, ...] | None
    is_string: bool
    path: tuple[PathKey, ...]
    line: int


def decode_string(text: str, start: int, end: int) -> tuple[str, tuple[int, ...] | None]:
    """The decoded content of the JSON string whose content is ``text[start:end]``, with
    raw offsets when escapes make them differ (None when the content is verbatim)."""
    raw = text[start:end]
    if "\\" not in raw:
        return raw, None
    chars: list[str] = []
    offsets: list[int] = []
    i = 0
    n = len(raw)
    while i < n:
        ch = raw[i]
        if ch != "\\":
            chars.append(ch)
            offsets.append(start + i)
            i += 1
            continue
        kind = raw[i + 1]
        if kind != "u":
            chars.append(_ESCAPES[kind])
            offsets.append(start + i)
            i += 2
            continue
        code = int(raw[i + 2 : i + 6], 16)
        width = 6
        if 0xD800 <= code < 0xDC00 and raw.startswith("\\u", i + 6):
            low = int(raw[i + 8 : i + 12], 16)
            if 0xDC00 <= low < 0xE000:
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                width = 12
        chars.append(chr(code))
        offsets.append(start + i)
        i += width
    offsets.append(end)
    return "".join(chars), tuple(offsets)


def encode_string(value: str) -> str:
    """``value`` escaped for the inside of a JSON string."""
    return json.dumps(value, ensure_ascii=False)[1:-1]


def encode_number(value: str) -> str:
    """A replacement for a number token: the number when it is one, else a JSON string."""
    if _NUMBER.fullmatch(value):
        return value
    return json.dumps(value, ensure_ascii=False)


def path_text(path: tuple[PathKey, ...]) -> str:
    """``entry[2].resource.name[0].family`` (keys that are not simple names are quoted)."""
    out: list[str] = []
    for key in path:
        if isinstance(key, int):
            out.append(f"[{key}]")
        elif _SIMPLE_KEY.match(key):
            out.append(f".{key}" if out else key)
        else:
            out.append(f"[{json.dumps(key, ensure_ascii=False)}]")
    return "".join(out) or "$"


def scan(text: str, *, source: str, lines: bool = False) -> Iterator[Scalar]:
    """Every string value and number of ``text`` (one JSON value, or one per line with
    ``lines``), in order; raises :class:`InputError` at ``source:line:column`` when the
    text is not valid JSON (nothing is yielded past the error)."""
    pos = 1 if text.startswith("\ufeff") else 0
    n = len(text)
    line_no = 0
    counter = _LineCounter(text)
    while True:
        pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
        if pos >= n:
            if line_no == 0 and not lines:
                raise located("empty document: no JSON value", source=source, text=text, pos=pos)
            return
        line_no += 1
        prefix: tuple[PathKey, ...] = (f"line {counter.at(pos)}",) if lines else ()
        pos = yield from _scan_value(text, pos, source, prefix, counter)
        if not lines:
            end = _WS.match(text, pos).end()  # type: ignore[union-attr]
            if end < n:
                raise located(
                    "unexpected data after the JSON value", source=source, text=text, pos=end
                )
            return
        rest = re.compile(r"[ \t\r]*").match(text, pos).end()  # type: ignore[union-attr]
        if rest < n and text[rest] != "\n":
            raise located("expected one JSON value per line", source=source, text=text, pos=rest)
        pos = rest


def _scan_value(
    text: str, pos: int, source: str, prefix: tuple[PathKey, ...], lines: _LineCounter
) -> Generator[Scalar, None, int]:
    """Scan one JSON value starting at ``pos`` (iteratively); returns the end position.

    The key path is kept as a stack of [is_object, current key or index] and only turned
    into a tuple for a yielded scalar, so deep nesting costs linear time."""
    stack: list[list[Any]] = []
    n = len(text)
    expect_value = True

    def fail(message: str, at: int) -> InputError:
        return located(message, source=source, text=text, pos=at)

    def path() -> tuple[PathKey, ...]:
        return prefix + tuple(entry[1] for entry in stack)

    def where(at: int) -> str:
        return f"{source}:{line_of(text, at)}:{column_of(text, at)}"

    while True:
        if not expect_value and not stack:
            return pos
        pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
        if pos >= n:
            raise fail("unexpected end of input (truncated JSON?)", pos)
        ch = text[pos]
        if expect_value:
            if ch == "{" or ch == "[":
                is_object = ch == "{"
                stack.append([is_object, None if is_object else 0])
                if len(stack) > MAX_DEPTH:
                    raise InputLimitError(
                        f"JSON nested deeper than {MAX_DEPTH} levels", location=where(pos)
                    )
                pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
                if pos < n and text[pos] == ("}" if is_object else "]"):
                    stack.pop()
                    pos += 1
                    expect_value = False
                elif is_object:
                    pos = _read_key(text, pos, stack, fail)
                continue
            if ch == '"':
                m = _STRING.match(text, pos)
                if m is None:
                    raise fail(_string_problem(text, pos), pos)
                value, offsets = decode_string(text, pos + 1, m.end() - 1)
                line = lines.at(pos + 1)
                yield Scalar(pos + 1, m.end() - 1, value, offsets, True, path(), line)
                pos = m.end()
            elif ch == "-" or ch.isdigit():
                m = _NUMBER.match(text, pos)
                if m is None:
                    raise fail("invalid number", pos)
                if m.end() - pos > MAX_NUMBER_CHARS:
                    raise number_too_long(where(pos))
                yield Scalar(pos, m.end(), m.group(), None, False, path(), lines.at(pos))
                pos = m.end()
            else:
                for literal in _LITERALS:
                    if text.startswith(literal, pos):
                        pos += len(literal)
                        break
                else:
                    raise fail("expected a JSON value", pos)
            expect_value = False
            continue
        # after a value: a comma or a closing bracket
        top = stack[-1]
        if ch == ",":
            pos += 1
            if top[0]:
                pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
                pos = _read_key(text, pos, stack, fail)
            else:
                top[1] += 1
            expect_value = True
            continue
        if ch == ("}" if top[0] else "]"):
            stack.pop()
            pos += 1
            continue
        raise fail("expected ',' or '" + ("}" if top[0] else "]") + "'", pos)


class _LineCounter:
    """Line numbers of increasing positions, counted incrementally (linear overall)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.line = 1

    def at(self, pos: int) -> int:
        if pos < self.pos:
            self.pos, self.line = 0, 1
        self.line += self.text.count("\n", self.pos, pos)
        self.pos = pos
        return self.line


def _read_key(
    text: str, pos: int, stack: list[list[Any]], fail: Callable[[str, int], InputError]
) -> int:
    """Read ``"key" :`` at ``pos`` into the top object's current key; returns the position
    after the colon."""
    if pos >= len(text):
        raise fail("unexpected end of input (truncated JSON?)", pos)
    if text[pos] != '"':
        raise fail("expected a string key", pos)
    m = _STRING.match(text, pos)
    if m is None:
        raise fail(_string_problem(text, pos), pos)
    key, _ = decode_string(text, pos + 1, m.end() - 1)
    stack[-1][1] = key
    pos = _WS.match(text, m.end()).end()  # type: ignore[union-attr]
    if pos >= len(text) or text[pos] != ":":
        raise fail("expected ':' after a key", pos)
    return pos + 1


def _string_problem(text: str, pos: int) -> str:
    end = text.find('"', pos + 1)
    newline = text.find("\n", pos + 1)
    if end < 0:
        return "unterminated string (truncated JSON?)"
    if 0 <= newline < end:
        return "unterminated string or raw line break inside a string"
    return "invalid escape or control character in a string"


def keys_of(path: tuple[PathKey, ...]) -> tuple[str, ...]:
    """The object keys of a path (array indices and line prefixes dropped)."""
    return tuple(k for k in path if isinstance(k, str) and not k.startswith("line "))


@cache
def generic_role(parent: str, leaf: str) -> Role:
    return role_for_name(parent, leaf) if parent else role_for_name(leaf)


def default_role(scalar: Scalar) -> Role | None:
    """The role of a scalar from its two innermost keys; None: not a field."""
    keys = keys_of(scalar.path)
    if not keys:
        return SKIP if not scalar.is_string else generic_role("", "text")
    role = generic_role(keys[-2] if len(keys) > 1 else "", keys[-1])
    if scalar.is_string or role.kind is RoleKind.VALUE:
        return role
    digits = sum(ch.isdigit() for ch in scalar.value)
    if role.kind is RoleKind.TEXT and digits >= _MIN_TEXT_DIGITS and "." not in scalar.value:
        return role
    return None


RoleFunction = Callable[[Scalar], "Role | None"]


def field_of(scalar: Scalar, role: Role, text: str) -> Field:
    return Field(
        start=scalar.start,
        end=scalar.end,
        value=scalar.value,
        path=path_text(scalar.path),
        role=role,
        line=scalar.line,
        offsets=scalar.offsets,
        encode=encode_string if scalar.is_string else encode_number,
    )


class LazyFields:
    """The fields of a JSON text, produced by scanning it again on every iteration."""

    def __init__(
        self, text: str, source: str, role_of: RoleFunction, *, lines: bool = False
    ) -> None:
        self._text = text
        self._source = source
        self._role_of = role_of
        self._lines = lines

    def __iter__(self) -> Iterator[Field]:
        for scalar in scan(self._text, source=self._source, lines=self._lines):
            role = self._role_of(scalar)
            if role is not None and role.kind is not RoleKind.SKIP:
                yield field_of(scalar, role, self._text)


class JsonReader:
    """Any JSON document (``lines=True``: one JSON value per line)."""

    name = "json"

    def __init__(self, *, lines: bool = False) -> None:
        self.lines = lines

    def decode(self, data: bytes, *, source: str) -> tuple[str, str]:
        return decode_utf8(data, source=source), "utf-8"

    def read(self, text: str, *, source: str) -> Document:
        validate(text, source=source, lines=self.lines)
        return Document(text, LazyFields(text, source, default_role, lines=self.lines), "json")


def validate(text: str, *, source: str, lines: bool = False) -> None:
    """Scan the whole text once so a malformed document fails before anything is written."""
    for _ in scan(text, source=source, lines=lines):
        pass
