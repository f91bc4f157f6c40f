"""A name found once in a segment is the name wherever else the segment writes it.

A model reads each mention of a name from its context, and a mention in a weaker context
("Koyoo wacho ni …", "Marin est pâle", "Echo ya MATOVU") can be missed where another in a
stronger one ("Jaod bura ma Muhoroni James Onyango Koyoo owacho") was found. After resolution,
every word of a resolved name span (``PERSON``, ``PERSON_THIRD_PARTY``) is therefore looked
for in the rest of the segment, and each whole-word occurrence that no span covers becomes a
name span of the same label (source :data:`SOURCE`), joined to a name span it stands next to
("James Onyango" + "Koyoo"). Fail closed: the cost is the occasional word a model wrongly
took for a name being redacted again.

Only words that look like names on their own are carried: three letters or more, starting
with a capital (in scripts without case a word cannot be told from a name this way, so none is
carried), not a title of the segment's language or English ("Dr", "Mrs"), and not written in
lower case anywhere in the segment ("Césarienne" at a sentence's start, "césarienne" later: a
word, not a name). Matching is case-sensitive and on whole words; protected clinical facts
("enfermedad de Parkinson") and every other span are never touched.
"""

from __future__ import annotations

from collections.abc import Sequence

from polydeid.core.resolve import DEFAULT_POLICY, ResolvePolicy, resolve
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.detect.roles import NAME_ROLES, NAME_WORD
from polydeid.locales import folded_titles

SOURCE = "propagate.name"
#: Shortest word carried.
MIN_LETTERS = 3


def _carried(word: str, titles: frozenset[str]) -> bool:
    first = word[0]
    return (
        len(word) >= MIN_LETTERS
        and first.isupper()
        and word.casefold() not in titles
        and word.lower() != word
    )


def propagate_names(
    text: str,
    spans: Sequence[Span],
    facts: Sequence[Span] = (),
    lang: str | None = None,
    policy: ResolvePolicy = DEFAULT_POLICY,
) -> tuple[Span, ...]:
    """``spans`` (resolved) plus a name span at every uncovered occurrence of a word of one
    of their names (see the module docstring); ``facts`` are protected. Unchanged when there
    is none."""
    names = [s for s in spans if s.label in NAME_ROLES]
    if not names:
        return tuple(spans)
    titles = folded_titles(lang or "en", "en")
    carried: dict[str, Category] = {}
    for span in names:
        for word in NAME_WORD.finditer(text, span.start, span.end):
            if _carried(word.group(), titles):
                carried.setdefault(word.group(), span.label)  # type: ignore[arg-type]
    if not carried:
        return tuple(spans)
    words = list(NAME_WORD.finditer(text))
    lower = {w.group() for w in words if w.group().islower()}
    n = len(text)
    covered = bytearray(n)
    for s in (*spans, *facts):
        covered[s.start : s.end] = b"\x01" * (s.end - s.start)
    added: list[Span] = []
    for word in words:
        label = carried.get(word.group())
        if label is None or word.group().lower() in lower:
            continue
        start, end = word.span()
        if (start and text[start - 1].isalnum()) or (end < n and text[end].isalnum()):
            continue  # "Okello2": part of a token
        if covered.find(1, start, end) != -1:
            continue
        added.append(Span(start, end, label, SOURCE, 0.5))
    if not added:
        return tuple(spans)
    # The facts are passed again only to keep protecting them; resolve returns no fact.
    return resolve([*spans, *added, *facts], text, policy)
