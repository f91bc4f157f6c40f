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
least six digits and its key is not a known clinical or code key). A number is replaced
whole, by the first replacement found in it (a phone found in ``-1000000`` takes the sign
too, so the output stays JSON); a number replaced by a non-numeric value (a tag) becomes a
JSON string, the one type change de-identification may make.

**Keys.** An object key may be data (an export keyed by patient name, phone number or record
number), so a key is scanned as text, with its parent key as context, unless it is a known field
name (``phone``, ``Date of birth``: the names :func:`polydeid.lexicon.fields.role_for_words` knows)
or written like a program identifier (an ASCII lower-case letter or ``_`` first, then letters,
digits and ``_``, at most two digits: ``resourceType``, ``items``, ``dose_mg``), which are
structure. (A person's name written in lower case as a key, ``{"okello": …}``, is therefore not
scanned.) A replaced key stays unique in its object: a replacement that one of the object's keys
already received is written with ``#2``, ``#3`` … after it, so the output parses into objects with
as many members as the input's. Paths show a key only when it is a simple name (letters, digits and
``_``, fewer than six digits) or a known field name; any other key is written ``[…]``, so that a
path (in ``detect`` output or an error) never carries a key's text.

``JsonlReader``-style input (one JSON value per line) is read with ``lines=True``: the path of
each value starts with its line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from typing import Any

from polydeid.core.errors import InputError, InputLimitError
from polydeid.formats.base import Document, Encoder, Field, column_of, line_of, located
from polydeid.formats.limits import MAX_DEPTH, MAX_NUMBER_CHARS, number_too_long
from polydeid.formats.text import decode_utf8
from polydeid.lexicon.fields import (
    SKIP,
    Role,
    RoleKind,
    normalise_name,
    role_for_name,
    role_for_words,
    text_role,
)

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
_CODE_KEY = re.compile(r"[a-z_][A-Za-z0-9_]*\Z")
_MAX_CODE_KEY_DIGITS = 2
_LINE_KEY = re.compile(r"line [0-9]{1,9}")

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
    #: An object key (``path`` ends with the key itself), not a value.
    is_key: bool = False


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
    """``entry[2].resource.name[0].family`` (a known field name that is not a simple name is
    quoted, ``["Date of birth"]``; any other key that is not a simple name is ``[…]``)."""
    out: list[str] = []
    for key in path:
        if isinstance(key, int):
            out.append(f"[{key}]")
        elif _SIMPLE_KEY.match(key) and _digits(key) < _MIN_TEXT_DIGITS:
            out.append(f".{key}" if out else key)
        elif (_LINE_KEY.fullmatch(key) and not out) or _known_key(key):
            out.append(f"[{json.dumps(key, ensure_ascii=False)}]")
        else:
            out.append("[…]")
    return "".join(out) or "$"


def _digits(value: str) -> int:
    return sum(ch.isdigit() for ch in value)


@cache
def _known_key(key: str) -> bool:
    """Whether ``key`` names a field the lexicon knows (and so is structure, not data)."""
    return role_for_words(normalise_name(key)) is not None


def scan(
    text: str,
    *,
    source: str,
    lines: bool = False,
    keys: Callable[[str], bool] | None = None,
) -> Iterator[Scalar]:
    """Every string value and number of ``text`` (one JSON value, or one per line with
    ``lines``), and every object key for which ``keys`` is true (``is_key``), in order; raises
    :class:`InputError` at ``source:line:column`` when the text is not valid JSON (nothing
    is yielded past the error)."""
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
        pos = yield from _scan_value(text, pos, source, prefix, counter, keys)
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
    text: str,
    pos: int,
    source: str,
    prefix: tuple[PathKey, ...],
    lines: _LineCounter,
    keys: Callable[[str], bool] | None = None,
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
                    if keys is not None and keys(stack[-1][1]):
                        yield _key_scalar(text, stack, path(), lines)
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
                if keys is not None and keys(stack[-1][1]):
                    yield _key_scalar(text, stack, path(), lines)
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


def _key_scalar(
    text: str, stack: list[list[Any]], path: tuple[PathKey, ...], lines: _LineCounter
) -> Scalar:
    """The key just read into the top object (its raw range kept there by :func:`_read_key`)."""
    start, end, offsets = stack[-1][2:5]
    return Scalar(start, end, stack[-1][1], offsets, True, path, lines.at(start), is_key=True)


def _read_key(
    text: str, pos: int, stack: list[list[Any]], fail: Callable[[str, int], InputError]
) -> int:
    """Read ``"key" :`` at ``pos`` into the top object's current key (and its raw range and
    offsets after it); returns the position after the colon."""
    if pos >= len(text):
        raise fail("unexpected end of input (truncated JSON?)", pos)
    if text[pos] != '"':
        raise fail("expected a string key", pos)
    m = _STRING.match(text, pos)
    if m is None:
        raise fail(_string_problem(text, pos), pos)
    key, offsets = decode_string(text, pos + 1, m.end() - 1)
    stack[-1][1:] = [key, pos + 1, m.end() - 1, offsets]
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


@lru_cache(maxsize=4096)
def is_data_key(key: str) -> bool:
    """Whether an object key may be data, and is scanned (see the module docstring)."""
    if _CODE_KEY.match(key) and _digits(key) <= _MAX_CODE_KEY_DIGITS:
        return False
    return any(ch.isalnum() for ch in key) and not _known_key(key)


def key_role(scalar: Scalar) -> Role:
    """The role of an object key that :func:`is_data_key` (text, its parent key as context)."""
    parents = keys_of(scalar.path[:-1])
    return text_role(" ".join(normalise_name(parents[-1])) if parents else "")


def unique_key_encoder(seen: dict[tuple[Any, str], int], obj: tuple[PathKey, ...]) -> Encoder:
    """An encoder for replacements in the keys of the object at ``obj``: a replacement the
    object's keys already received (counted in ``seen``) gets ``#n`` after it."""

    def encode(replacement: str) -> str:
        n = seen[obj, replacement] = seen.get((obj, replacement), 0) + 1
        return encode_string(replacement if n == 1 else f"{replacement}#{n}")

    return encode


RoleFunction = Callable[[Scalar], "Role | None"]


def _whole_number() -> Encoder:
    """The encoder of one number token: the first replacement becomes the token (every
    character of the token shares its start in the field's offsets, so any replacement covers
    it all), and any other replacement in the same token is dropped."""
    used = False

    def encode(replacement: str) -> str:
        nonlocal used
        if used:
            return ""
        used = True
        return encode_number(replacement)

    return encode


def field_of(scalar: Scalar, role: Role, text: str) -> Field:
    encode: Encoder
    if scalar.is_string:
        offsets, encode = scalar.offsets, encode_string
    else:
        offsets = (scalar.start,) * len(scalar.value) + (scalar.end,)
        encode = _whole_number()
    return Field(
        start=scalar.start,
        end=scalar.end,
        value=scalar.value,
        path=path_text(scalar.path),
        role=role,
        line=scalar.line,
        offsets=offsets,
        encode=encode,
    )


class LazyFields:
    """The fields of a JSON text, produced by scanning it again on every iteration (values
    judged by ``role_of``, keys by :func:`key_role`)."""

    def __init__(
        self, text: str, source: str, role_of: RoleFunction, *, lines: bool = False
    ) -> None:
        self._text = text
        self._source = source
        self._role_of = role_of
        self._lines = lines

    def __iter__(self) -> Iterator[Field]:
        seen: dict[tuple[Any, str], int] = {}
        text, source = self._text, self._source
        for scalar in scan(text, source=source, lines=self._lines, keys=is_data_key):
            if scalar.is_key:
                f = field_of(scalar, key_role(scalar), text)
                encode = unique_key_encoder(seen, scalar.path[:-1])
                yield replace(f, path=f"{f.path} (key)", encode=encode)
                continue
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
