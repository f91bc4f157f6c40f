"""Reading an extraction model's reply, and finding its values in the source text.

A model asked for "a JSON list of ``{label, value}`` objects" answers in many shapes;
:func:`parse_reply` accepts, in this order of preference:

* the JSON itself, or inside a Markdown code fence (```` ```json … ``` ````), with any prose
  before or after it;
* a list of objects, a single object, or an object that wraps the list (``{"entities": […]}``
  or any object with exactly one list of objects among its values);
* objects whose keys are other common names: the label under ``type``/``entity_type``/
  ``category``/``tag``/``class``/``entity``, the value under ``text``/``span``/``word``/
  ``string``/``match``/``entity`` — taken only where unambiguous (one distinct label and one
  distinct value); with a label set, also ``{"human_name": "…"}``, ``{"human_name": […]}``
  and ``["human_name", "…"]``;
* a list cut off by the token limit: every complete object before the cut is salvaged and the
  reply is marked ``truncated``;
* after a reasoning model's ``<think>…</think>`` block (which is skipped).

A reply from which no object at all can be read raises :class:`ReplyFormatError` (the caller
asks again once, then fails closed). Objects that cannot be read are counted, not guessed at.

:func:`locate` finds **every** occurrence of a value: exactly, whole-word where the value starts
or ends with a word character (letters, digits, marks, ``_``; not checked next to Han, kana,
Thai, Lao, Khmer or Myanmar characters, scripts written without spaces between words), and
then, for a value with whitespace inside, whitespace-normalised (any run of whitespace in the
value matches any run in the text: a name broken over two lines, a double space the model
collapsed), adding the places the exact search missed. Case is not normalised. A value found
nowhere is the model's copying error: callers count it and never turn it into a span.

Nothing here puts reply or document text into an error message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import regex

from polydeid.core.errors import ReplyFormatError
from polydeid.text.scripts import UNSPACED

#: Keys that name the label / the value in an extraction object, most specific first.
LABEL_KEYS = ("label", "type", "entity_type", "entity_group", "category", "tag", "class")
VALUE_KEYS = ("value", "text", "span", "word", "string", "match", "mention")
#: ``entity`` is the label in ``{"entity": "date", "text": …}`` and the value in
#: ``{"type": "date", "entity": …}``: it fills whichever of the two is missing.
EITHER_KEY = "entity"
#: Keys under which an object wraps the list of extractions.
LIST_KEYS = ("entities", "identifiers", "items", "results", "pii", "spans", "annotations", "data")

_FENCE = re.compile(r"```[A-Za-z0-9_+-]*[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
_MAX_STARTS = 200  # candidate JSON starts tried in one reply
_WORD = regex.compile(r"[\p{L}\p{N}\p{M}_\u200c\u200d]")


@dataclass(frozen=True, slots=True)
class Extraction:
    """One ``{label, value}`` the model reported (value text: never log it)."""

    label: str
    value: str

    def __repr__(self) -> str:
        return f"Extraction(label=<{len(self.label)} chars>, value=<{len(self.value)} chars>)"

    __str__ = __repr__


@dataclass(frozen=True, slots=True)
class ParsedReply:
    """What :func:`parse_reply` read: the extractions, whether the list was cut off and
    salvaged, and how many objects could not be read as a label and a value."""

    items: tuple[Extraction, ...]
    truncated: bool = False
    malformed: int = 0


def parse_reply(text: str, labels: Iterable[str] = ()) -> ParsedReply:
    """The extractions in a model's ``text``; raises :class:`ReplyFormatError` if none can be read.

    ``labels`` (the label set asked for) enables the label-keyed shapes
    (``{"date": ["…"]}``); matching is case-insensitive.
    """
    known = {label_key(label) for label in labels}
    for candidate in _candidates(text):
        parsed = _scan(candidate, known)
        if parsed is not None:
            return parsed
    raise ReplyFormatError("the model's reply is not a JSON list of {label, value} objects")


def label_key(label: str) -> str:
    return re.sub(r"[\s\-]+", "_", label.strip()).lower()


def _candidates(text: str) -> list[str]:
    """Fenced blocks first (a fence left open by a cut-off reply runs to the end), then the
    whole reply; a reasoning model's ``<think>…</think>`` block is dropped first (its drafts
    are not the answer), and a reply still inside one has no answer."""
    text = _THINK.sub("", text)
    if _THINK_OPEN.search(text):
        return []
    blocks = [m.group(1) for m in _FENCE.finditer(text) if m.group(1).strip()]
    return [*blocks, text]


def _scan(text: str, known: set[str]) -> ParsedReply | None:
    """The first extraction list in ``text``: at each ``[`` or ``{`` in turn (prose around the
    JSON is skipped), a complete JSON value that reads as extractions, or else, at a ``[``,
    the complete objects of a list that was cut off."""
    decoder = json.JSONDecoder()
    index = _next_start(text, 0)
    tried = 0
    while index >= 0 and tried < _MAX_STARTS:
        tried += 1
        try:
            value, end = decoder.raw_decode(text, index)
        except ValueError:
            if text[index] == "[":
                salvaged = _salvage(text, index, known)
                if salvaged is not None:
                    return salvaged
            index = _next_start(text, index + 1)
            continue
        parsed = _interpret(value, known)
        if parsed is not None:
            return parsed
        index = _next_start(text, end)
    return None


def _next_start(text: str, start: int) -> int:
    brackets = [i for i in (text.find("[", start), text.find("{", start)) if i >= 0]
    return min(brackets) if brackets else -1


def _interpret(value: Any, known: set[str]) -> ParsedReply | None:
    """A reply from a parsed JSON value, or None when it is not an extraction list."""
    elements = _elements(value, known)
    if elements is None:
        return None
    items: list[Extraction] = []
    malformed = 0
    for element in elements:
        read = _read_element(element, known)
        if read is None:
            malformed += 1
        else:
            items.extend(read)
    if elements and not items:
        return None  # a list of something else (numbers, unrelated objects)
    return ParsedReply(tuple(items), truncated=False, malformed=malformed)


def _elements(value: Any, known: set[str]) -> list[Any] | None:
    if isinstance(value, list):
        return value
    if not isinstance(value, dict):
        return None
    lowered = {str(k).lower(): v for k, v in value.items()}
    for key in LIST_KEYS:
        if isinstance(lowered.get(key), list):
            return lowered[key]
    lists = [v for v in value.values() if isinstance(v, list) and v and _all_dicts(v)]
    if len(lists) == 1 and not _read_element(value, known):
        return lists[0]
    if known and value and all(label_key(str(k)) in known for k in value):
        return [{k: v} for k, v in value.items()]  # {"human_name": [...], "date": "..."}
    return [value]  # a single object


def _all_dicts(values: Sequence[Any]) -> bool:
    return all(isinstance(v, dict) for v in values)


def _scalar(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)  # an ID number written as a JSON number
    return None


def _read_element(element: Any, known: set[str]) -> list[Extraction] | None:
    """The extractions in one list element, or None when it cannot be read unambiguously."""
    if isinstance(element, list) and len(element) == 2 and known:
        label, value = element
        if isinstance(label, str) and label_key(label) in known and _scalar(value) is not None:
            return [Extraction(label, str(_scalar(value)))]
        return None
    if not isinstance(element, dict):
        return None
    fields = {str(k).strip().lower(): v for k, v in element.items()}
    labels = {_scalar(fields[k]) for k in LABEL_KEYS if k in fields}
    values_raw = [fields[k] for k in VALUE_KEYS if k in fields]
    either = fields.get(EITHER_KEY)
    if len(element) == 1 and known:
        ((key, raw),) = element.items()
        if label_key(str(key)) in known:
            return _with_values(str(key), raw)
    if None in labels or len(labels) > 1:
        return None
    if not labels and isinstance(either, str):
        labels = {either}
    elif not values_raw and either is not None:
        values_raw = [either]
    if len(labels) != 1 or not values_raw:
        return None
    (label,) = labels
    out: list[Extraction] = []
    for raw in values_raw:
        read = _with_values(str(label), raw)
        if read is None:
            return None
        out.extend(read)
    distinct = {item.value for item in out}
    if len(values_raw) > 1 and len(distinct) > 1:
        return None  # {"value": "…", "text": "…"} that disagree: ambiguous
    return list({item.value: item for item in out}.values())


def _with_values(label: str, raw: Any) -> list[Extraction] | None:
    if isinstance(raw, list):
        values = [_scalar(v) for v in raw]
        if not values or any(v is None for v in values):
            return None
        return [Extraction(label, str(v)) for v in values]
    value = _scalar(raw)
    return None if value is None else [Extraction(label, value)]


def _salvage(text: str, start: int, known: set[str]) -> ParsedReply | None:
    """The complete objects of the list opening at ``text[start]`` that was cut off, or None
    when none of them reads as an extraction."""
    items: list[Extraction] = []
    malformed = 0
    for obj in _complete_objects(text, start):
        read = _read_element(obj, known)
        if read is None:
            malformed += 1
        else:
            items.extend(read)
    if not items:
        return None
    return ParsedReply(tuple(items), truncated=True, malformed=malformed)


def _complete_objects(text: str, start: int) -> Iterator[Any]:
    """The objects directly inside the array opening at ``text[start]`` that are complete
    (closed and valid JSON), up to where the array ends or the text stops."""
    depth = 0
    in_string = escaped = False
    object_start = -1
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if char == "{" and depth == 2:
                object_start = index
        elif char in "]}":
            depth -= 1
            if char == "}" and depth == 1 and object_start >= 0:
                parsed = _loads(text[object_start : index + 1])
                if parsed is not _INVALID:
                    yield parsed
                object_start = -1
            if depth <= 0:
                return


_INVALID = object()


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return _INVALID


# --- value location -------------------------------------------------------------------------


def _is_word(char: str) -> bool:
    return bool(_WORD.match(char))


def _joined(left: str, right: str) -> bool:
    """Whether ``left`` followed by ``right`` is inside one word (so a match may not end
    between them)."""
    return (
        _is_word(left) and _is_word(right) and not (UNSPACED.match(left) or UNSPACED.match(right))
    )


def _whole_word(text: str, start: int, end: int) -> bool:
    if start > 0 and _joined(text[start - 1], text[start]):
        return False
    return not (end < len(text) and _joined(text[end - 1], text[end]))


def locate(text: str, value: str) -> list[tuple[int, int]]:
    """Every ``(start, end)`` of ``value`` in ``text``, in order (see the module docstring);
    ``[]`` when the value is blank or not there (a copied-value error)."""
    value = value.strip()
    if not value:
        return []
    found = []
    start = text.find(value)
    while start >= 0:
        end = start + len(value)
        if _whole_word(text, start, end):
            found.append((start, end))
        start = text.find(value, start + 1)
    parts = value.split()
    if len(parts) > 1:
        # Whitespace-normalised: "Amina Njeri" also where the text breaks the line between
        # the two words, or the model collapsed a double space. Added to the exact matches
        # (all occurrences are wanted), never overlapping them.
        pattern = re.compile(r"\s+".join(re.escape(p) for p in parts))
        for match in pattern.finditer(text):
            a, b = match.span()
            if _whole_word(text, a, b) and not any(a < y and x < b for x, y in found):
                found.append((a, b))
        found.sort()
    return found
