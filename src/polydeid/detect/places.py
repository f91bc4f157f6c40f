"""An administrative unit written before a place's name belongs to the place span.

Dholuo names Kenya's administrative units head first, joined by "ma" (of): "County ma Siaya"
is Siaya County and "Sub County ma Nyakach" is Nyakach Sub-County, the names that English
writes "Siaya County" and that the tagger reads whole in that order. In head-first order the
model mostly reads only "Siaya". After resolution, a place span (``LOCATION_*``) right after
one of its language's heads (``locales/languages/<code>/places.toml``, ``[heads] before``;
any case, any run of spaces between the head's words) therefore grows over the head. A place
span lying wholly inside the head (the model's "Sub County") is absorbed; a span of any other
kind there, or one reaching across the head's start, leaves the place as it was.

A place span that ends in a conjunction of its language (``[words] conjunctions``: Dholuo
"gi", "kod") loses it: the model ran "county ma Kisumu gi" (and) towards the next place.

Languages without a ``places.toml`` are unchanged; so is a head that ends a line before the
name (a line is a field).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import regex

from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.locales import language_data

PLACES: frozenset[Category] = frozenset(
    {Category.LOCATION_ADDRESS, Category.LOCATION_VILLAGE, Category.LOCATION_FACILITY}
)
#: How far before a place its head is looked for (characters).
_REACH = 60


@cache
def _head_pattern(lang: str) -> regex.Pattern[str] | None:
    heads = language_data(lang, "places").get("heads", {}).get("before", ())
    if not heads:
        return None
    words = sorted((h.split() for h in heads), key=len, reverse=True)
    alternatives = "|".join(r"[ \t]+".join(regex.escape(w) for w in ws) for ws in words)
    return regex.compile(rf"(?i)(?<!\w)(?:{alternatives})[ \t]+\Z")


@cache
def _conjunctions(lang: str) -> frozenset[str]:
    words = language_data(lang, "places").get("words", {}).get("conjunctions", ())
    return frozenset(w.casefold() for w in words)


def _without_conjunction(text: str, span: Span, conjunctions: frozenset[str]) -> Span:
    """``span`` less a conjunction it ends with ("county ma kisumu gi" → "county ma kisumu")."""
    head, sep, last = text[span.start : span.end].rpartition(" ")
    if sep and head.strip() and last.casefold() in conjunctions:
        return Span(span.start, span.start + len(head.rstrip()), span.label, span.source,
                    span.score)  # fmt: skip
    return span


def grow_place_heads(text: str, spans: Sequence[Span], lang: str) -> tuple[Span, ...]:
    """``spans`` (resolved, sorted) with each place span grown over the administrative head
    written right before it (see the module docstring), less a conjunction it ends with."""
    pattern, conjunctions = _head_pattern(lang), _conjunctions(lang)
    if (pattern is None and not conjunctions) or not any(s.label in PLACES for s in spans):
        return tuple(spans)
    trimmed = [
        _without_conjunction(text, s, conjunctions) if s.label in PLACES else s for s in spans
    ]
    changed = trimmed != list(spans)
    out: list[Span | None] = list(trimmed)
    for i, span in enumerate(out):
        if pattern is None or span is None or span.label not in PLACES:
            continue
        window = max(0, span.start - _REACH)
        match = pattern.search(text, window, span.start)
        if match is None:
            continue
        start = match.start()
        inside = [
            j
            for j, other in enumerate(out)
            if j != i and other is not None and other.start < span.start and other.end > start
        ]
        if any(
            o is not None and (o.label not in PLACES or o.start < start)
            for o in (out[j] for j in inside)
        ):
            continue
        for j in inside:
            out[j] = None
        out[i] = Span(start, span.end, span.label, span.source, span.score)
        changed = True
    if not changed:
        return tuple(spans)
    return tuple(s for s in out if s is not None)
