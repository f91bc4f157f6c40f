"""Span resolution: one documented policy turning overlapping candidates into one answer.

The policy, used by de-identification and evaluation alike:

1. **Facts protect.** A candidate identifier that overlaps a protected clinical-fact span
   (dose, lab value, vital, duration, quantity) is dropped — unless its source is listed in
   ``ResolvePolicy.overrides_facts``: self-delimiting or validated formats (e-mail, URL,
   checksum-valid IDs) and labelled or structured ID and record numbers, which a fact rule can
   only touch by mistake ("MRN: 61087905 empeke 2").
2. **Greedy by rank.** Remaining candidates are ranked by source priority (higher first),
   then score (higher first), then length (longer first), then start (leftmost first), then
   label name (for determinism). Each is accepted if it overlaps no accepted span.
   A nested span therefore loses to its container unless its source has a higher priority.
   Candidates from a model (``ResolvePolicy.split_on_overlap``: taggers, backends) are not
   dropped when they overlap a protected fact or an accepted span: the parts outside it are
   kept (trimmed of spaces and punctuation, when they still hold a letter or digit), so a
   name the model ran into a rule's age span ("Ochieng, higni 52") is still redacted.
3. **Adjacent merge.** Two accepted spans with the same label that are separated only by
   spaces or tabs (no newline, no punctuation) are merged into one span; the merged span keeps
   the higher-priority source and the lower score (conservative for thresholds). Not two
   spans of one model (``split_on_overlap`` sources) with a space between: the model ended
   one and began the next, so a street and its postcode ("C/ Limón, 5 28015") stay two
   (on MEDDOCAN dev such pairs were two gold spans 93 times, one 20 times). Nor a span of a
   self-delimiting source (``ResolvePolicy.self_delimiting``: e-mail, URL), which is whole.

Source priority is matched by the longest prefix of ``Span.source`` in
``ResolvePolicy.priorities``; sources with no matching prefix get priority 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from polydeid.core.intervals import DisjointRanges, merged, union_overlaps, union_within
from polydeid.core.spans import Span

DEFAULT_PRIORITIES: Mapping[str, int] = {
    "rule.": 20,
    # A number right after an ID or record label is that identifier, even where it also
    # reads as a phone number ("ID No: 0712345678").
    "rule.id.": 25,
    "rule.record.prefix": 25,
    "rule.checksum.": 30,
    "rule.contact.email": 30,
    "rule.contact.url": 30,
    "hint.": 40,
    # A value a record's own identifying field holds (the patient's name in HL7 PID-5, a JSON
    # "patient_name", a CSV name column), found again in that record's free text
    # (polydeid.engine): its field says what it is, so it outranks a model's reading of the
    # same words (the patient's surname called a village, the patient called a relative).
    "field.known": 15,
    # A name read from a name label's value ("Patient name: …", rules.names.v1) fills in where
    # no model found a name; where one did, the model's reading (its role: a mother is the
    # patient of a birth record; its category) stands, and the value's whole extent comes
    # from polydeid.detect.roles.
    "rule.name.": 5,
    # A place known by name (rules.places.v1) fills in where nothing else found one; where a
    # model or a name label reads the same words (an organisation, a person), that stands.
    "rule.place.": 4,
    "tagger.": 10,
    "backend.": 10,
}


@dataclass(frozen=True, slots=True)
class ResolvePolicy:
    """Knobs of the resolution policy (see module docstring)."""

    priorities: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_PRIORITIES))
    overrides_facts: tuple[str, ...] = (
        "rule.contact.email",
        "rule.contact.url",
        "rule.checksum.",
        "rule.id.",
        "rule.record.",
        "hint.",
    )
    merge_adjacent: bool = True
    split_on_overlap: tuple[str, ...] = ("tagger.", "backend.")
    #: Sources whose every span is one whole identifier: never merged with a neighbour
    #: ("a@x.es b@y.es" is two addresses).
    self_delimiting: tuple[str, ...] = ("rule.contact.email", "rule.contact.url")

    def priority(self, source: str) -> int:
        best_len, best = -1, 0
        for prefix, value in self.priorities.items():
            if source.startswith(prefix) and len(prefix) > best_len:
                best_len, best = len(prefix), value
        return best


DEFAULT_POLICY = ResolvePolicy()


def resolve(
    spans: Iterable[Span], text: str = "", policy: ResolvePolicy = DEFAULT_POLICY
) -> tuple[Span, ...]:
    """Resolve candidate spans to non-overlapping identifier spans sorted by start.

    ``text`` is needed only for the adjacent merge (to check the gap); without it no merge
    happens. Fact spans are consumed as protections and are not returned. O(n log n) in the
    number of spans: the facts are asked as one sorted union, the accepted spans through
    :class:`~polydeid.core.intervals.DisjointRanges`.
    """
    facts: list[Span] = []
    candidates: list[Span] = []
    for span in spans:
        (facts if span.is_fact else candidates).append(span)
    if facts:
        protected = merged((f.start, f.end) for f in facts)
        kept: list[Span] = []
        for s in candidates:
            if s.source.startswith(policy.overrides_facts) or not union_overlaps(
                protected, s.start, s.end
            ):
                kept.append(s)
            elif s.source.startswith(policy.split_on_overlap):
                kept.extend(_cut(s, union_within(protected, s.start, s.end), text))
        candidates = kept
    if not candidates:
        return ()
    priorities: dict[str, int] = {}

    def rank(s: Span) -> tuple[int, float, int, int, str]:
        priority = priorities.get(s.source)
        if priority is None:
            priority = priorities[s.source] = policy.priority(s.source)
        return (-priority, -s.score, -s.length, s.start, s.label.name)

    ranked = sorted(set(candidates), key=rank)
    taken = DisjointRanges(max(s.end for s in ranked))
    accepted: list[Span] = []
    for span in ranked:
        if not taken.meets(span.start, span.end):
            accepted.append(span)
            taken.add(span.start, span.end)
        elif span.source.startswith(policy.split_on_overlap):
            for piece in _cut(span, taken.overlapping(span.start, span.end), text):
                accepted.append(piece)
                taken.add(piece.start, piece.end)
    accepted.sort(key=lambda s: s.start)
    if policy.merge_adjacent and text:
        accepted = _merge_adjacent(accepted, text, policy)
    return tuple(accepted)


_TRIM = " \t\r\n,;:.!?()[]{}\"'«»“”-–—/"


def _cut(span: Span, blockers: Sequence[tuple[int, int]], text: str) -> list[Span]:
    """The parts of ``span`` outside every blocker, trimmed; only parts with a letter or digit.

    ``blockers`` are the ranges that overlap ``span``, sorted by start."""
    pieces: list[tuple[int, int]] = []
    pos = span.start
    for b_start, b_end in blockers:
        if b_start > pos:
            pieces.append((pos, min(b_start, span.end)))
        pos = max(pos, b_end)
        if pos >= span.end:
            break
    if pos < span.end:
        pieces.append((pos, span.end))
    out = []
    for start, end in pieces:
        if text:
            while start < end and text[start] in _TRIM:
                start += 1
            while end > start and text[end - 1] in _TRIM:
                end -= 1
            if not any(c.isalnum() for c in text[start:end]):
                continue
        if start < end:
            out.append(Span(start, end, span.label, span.source, span.score))
    return out


def _merge_adjacent(spans: list[Span], text: str, policy: ResolvePolicy) -> list[Span]:
    merged: list[Span] = []
    for span in spans:
        if merged:
            prev = merged[-1]
            gap = text[prev.end : span.start]
            # a model that ended one span and began the next after a space meant two
            # ("C/ Limón, 5" "28015"); touching pieces ("E-" "18012") are one
            one_model = (
                gap != ""
                and prev.source == span.source
                and span.source.startswith(policy.split_on_overlap)
            )
            whole = prev.source.startswith(policy.self_delimiting) or span.source.startswith(
                policy.self_delimiting
            )
            if (
                prev.label == span.label
                and gap.strip(" \t") == ""
                and len(gap) <= 3
                and not one_model
                and not whole
            ):
                prev_first = policy.priority(prev.source) >= policy.priority(span.source)
                keep = prev if prev_first else span
                merged[-1] = Span(
                    prev.start, span.end, prev.label, keep.source, min(prev.score, span.score)
                )
                continue
        merged.append(span)
    return merged


def merge_adjacent(
    spans: Sequence[Span], text: str, policy: ResolvePolicy = DEFAULT_POLICY
) -> tuple[Span, ...]:
    """The adjacent merge of :func:`resolve` alone, for identifier spans sorted by start that
    do not overlap (for them :func:`resolve` gives the same)."""
    if policy.merge_adjacent and text:
        return tuple(_merge_adjacent(list(spans), text, policy))
    return tuple(spans)


def facts_only(spans: Iterable[Span]) -> tuple[Span, ...]:
    """The fact spans among ``spans``, sorted by start."""
    return tuple(sorted((s for s in spans if s.is_fact), key=lambda s: (s.start, s.end)))
