"""An administrative unit written before a place's name belongs to the place span.

Dholuo names Kenya's administrative units head first, joined by "ma" (of): "County ma Siaya"
is Siaya County and "Sub County ma Nyakach" is Nyakach Sub-County, the names that English
writes "Siaya County" and that the tagger reads whole in that order. In head-first order the
model mostly reads only "Siaya". After resolution, a place span (``LOCATION_*``) right after
one of its language's heads (``locales/languages/<code>/places.toml``, ``[heads] before``;
any case, any run of spaces between the head's words) therefore grows over the head. A place
span lying wholly inside the head (the model's "Sub County") is absorbed; a span of any other
kind there, or one reaching across the head's start, leaves the place as it was.

Languages without a ``places.toml`` are unchanged; so is a head that ends a line before the
name (a line is a field).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import regex

from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.locales.place_words import place_words

PLACES: frozenset[Category] = frozenset(
    {Category.LOCATION_ADDRESS, Category.LOCATION_VILLAGE, Category.LOCATION_FACILITY}
)
#: How far before a place its head is looked for (characters).
_REACH = 60


@cache
def _head_pattern(lang: str) -> regex.Pattern[str] | None:
    heads = place_words(lang).heads_before
    if not heads:
        return None
    words = sorted((h.split() for h in heads), key=len, reverse=True)
    alternatives = "|".join(r"[ \t]+".join(regex.escape(w) for w in ws) for ws in words)
    return regex.compile(rf"(?i)(?<!\w)(?:{alternatives})[ \t]+\Z")


def grow_to_heads(text: str, spans: Sequence[Span], lang: str) -> tuple[Span, ...]:
    """``spans`` (resolved) with each place span grown over the administrative head of
    ``lang`` written right before it, absorbing the place spans that lie on that head."""
    pattern = _head_pattern(lang)
    if pattern is None or not any(s.label in PLACES for s in spans):
        return tuple(spans)
    out: list[Span] = []
    for span in spans:
        match = (
            pattern.search(text, max(0, span.start - _REACH), span.start)
            if span.label in PLACES
            else None
        )
        first = len(out)  # the spans before this one that lie on its head
        while match is not None and first > 0 and out[first - 1].end > match.start():
            first -= 1
        if match is not None and all(
            o.label in PLACES and o.start >= match.start() for o in out[first:]
        ):
            del out[first:]
            out.append(Span(match.start(), span.end, span.label, span.source, span.score))
        else:
            out.append(span)
    return tuple(out)
