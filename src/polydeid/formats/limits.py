"""Parse limits for JSON input, in one place for every reader (JSONL, JSON, FHIR, the service).

A JSON value may nest at most :data:`MAX_DEPTH` arrays and objects, and one number token may
have at most :data:`MAX_NUMBER_CHARS` characters. Input past either limit is refused with an
:class:`~polydeid.core.errors.InputLimitError` that names the limit, never the content, before
Python's recursive parser could raise ``RecursionError`` or its integer conversion
``ValueError``. Both checks run in time linear in the input.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

from polydeid.core.errors import InputLimitError

#: Arrays and objects nested in one another, at most (a FHIR Bundle nests about 12).
MAX_DEPTH = 200
#: Characters of one number token, at most (Python converts at most 4300 digits to an int).
MAX_NUMBER_CHARS = 1000

# A JSON string (unrolled, so linear; an unterminated one runs to the end of the text, so that
# no later quote starts another scan), and what is not a bracket.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def check_depth(text: str, *, location: str | None = None, max_depth: int = MAX_DEPTH) -> None:
    """Raise :class:`InputLimitError` when ``text`` nests JSON deeper than ``max_depth``
    (brackets inside strings do not count)."""
    if text.count("[") + text.count("{") <= max_depth:
        return
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    if max(accumulate(map(_DEPTH_STEP.__getitem__, brackets)), default=0) > max_depth:
        raise InputLimitError(f"JSON nested deeper than {max_depth} levels", location=location)


def number_too_long(
    location: str | None = None, max_chars: int = MAX_NUMBER_CHARS
) -> InputLimitError:
    """The error for a number token longer than ``max_chars``."""
    return InputLimitError(f"a JSON number longer than {max_chars} characters", location=location)


def loads(
    text: str | bytes,
    *,
    location: str | None = None,
    max_depth: int = MAX_DEPTH,
    max_number_chars: int = MAX_NUMBER_CHARS,
) -> Any:
    """``json.loads`` within the limits (a caller may set stricter ones, as the service does):
    raises :class:`InputLimitError` past them and lets ``json.JSONDecodeError`` (and
    ``UnicodeDecodeError`` for bytes) through otherwise."""
    if isinstance(text, bytes | bytearray):
        text = bytes(text).decode(json.detect_encoding(text), "surrogatepass")
    check_depth(text, location=location, max_depth=max_depth)

    def parse_int(token: str) -> int:
        if len(token) > max_number_chars:
            raise number_too_long(location, max_number_chars)
        return int(token)

    def parse_float(token: str) -> float:
        if len(token) > max_number_chars:
            raise number_too_long(location, max_number_chars)
        return float(token)

    try:
        return json.loads(text, parse_int=parse_int, parse_float=parse_float)
    except RecursionError:  # deeper than this interpreter's stack allows, within the limit
        raise InputLimitError("JSON nested too deeply", location=location) from None
