"""Model decoding: per-word tag probabilities to spans, with the decoder's named passes.

Two levels, so that a name whose words the model splits between patient and third party
("Sam"/PERSON "Bentley"/PERSON_THIRD_PARTY) is still one span:

* **extent** — each word takes the likeliest of O, B-group, I-group, where a coarse group's
  probability is the sum over its categories (BIO with repair: an ``I-`` after ``O`` or after
  another group starts a span); a span's score is the lowest group probability of its words;
  the ``boundary`` passes end spans where the text says a span cannot go on;
* **category** — the group's category with the most probability summed over the span's words,
  summed again over every span of the document with the same text (one name, one label:
  "Patient: Okello" and "Okello was seen" cannot part ways); a span is kept at or above its
  category's threshold.

Between the two, the ``reading`` and ``readings`` passes trim, drop and join spans; the
``votes`` pass pools name roles; the ``spans`` pass joins names after the thresholds
(:mod:`polydeid.detect.tagger.decoder_passes`, switchable by id).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from polydeid.core.spans import Span
from polydeid.core.taxonomy import COARSE_GROUP, Category
from polydeid.detect.passes import SpanPass, Stage, check_known, passes_version, select
from polydeid.detect.tagger._reading import (
    GROUPS,
    Cut,
    DecodeContext,
    Open,
    Reading,
    word_tag,
)
from polydeid.detect.tagger.decoder_passes import DECODER_PASSES, pool
from polydeid.detect.tagger.windows import OUTSIDE
from polydeid.locales.names import NameWords

#: Changes whenever :func:`decode` reads the same probabilities differently: a digest of the
#: decoder passes' ids and versions (history: CHANGELOG.md).
DECODER_VERSION = passes_version(DECODER_PASSES)


def decoder_passes(disabled: Collection[str] = ()) -> tuple[SpanPass, ...]:
    """The decoder's passes without those named in ``disabled`` (an unknown id raises)."""
    check_known(disabled, DECODER_PASSES)
    return select(DECODER_PASSES, disabled)


def decode(
    text: str,
    grid: Sequence[tuple[int, int]],
    probabilities: Sequence[Sequence[float] | None],
    thresholds: Mapping[Category, float],
    *,
    default_threshold: float = 0.5,
    source: str = "tagger",
    names: NameWords | None = None,
    passes: Sequence[SpanPass] = DECODER_PASSES,
) -> list[Span]:
    """Spans from per-word tag probabilities (``None`` for words no window decided), sorted;
    ``names``: the language's name words (:func:`polydeid.locales.names.name_words`), without
    which no pass trims titles or openers; ``passes``: the decoder passes to run."""
    ctx = DecodeContext(text, grid, probabilities, names)
    staged: dict[Stage, list[SpanPass]] = {}
    for p in passes:
        staged.setdefault(p.stage, []).append(p)
    readings = _read(ctx, _extent(ctx, staged.get(Stage.BOUNDARY, ())), staged)
    for p in staged.get(Stage.READINGS, ()):
        readings = p.run(ctx, readings)
    spans = _vote(ctx, readings, staged, thresholds, default_threshold, source)
    for p in staged.get(Stage.SPANS, ()):
        spans = p.run(ctx, spans)
    return spans


def _extent(ctx: DecodeContext, boundaries: Sequence[SpanPass]) -> list[Open]:
    """The spans the words' tags make (BIO with repair at the level of coarse groups), cut
    where a boundary pass says so."""
    found: list[Open] = []
    current: Open | None = None
    for i, probs in enumerate(ctx.probabilities):
        tag = word_tag(probs) if probs is not None else None
        skip = False
        for boundary in boundaries:
            cut = boundary.run(ctx, i, current, tag)
            if cut is None:
                continue
            if current is not None:
                found.append(current)
                current = None
            if cut is Cut.SKIP:
                skip = True
                break
        if skip or probs is None or tag is None or tag.prefix == OUTSIDE:
            if current is not None:
                found.append(current)
                current = None
            continue
        if not (tag.prefix == "I" and current is not None and current.group == tag.group):
            if current is not None:
                found.append(current)
            current = Open(tag.group, i, i, tag.total, {c: 0.0 for c, _, _ in GROUPS[tag.group]})
        current.last, current.score = i, min(current.score, tag.total)
        if tag.kind is not None:
            current.kind = tag.kind
        for category, bi, ii in GROUPS[tag.group]:
            current.mass[category] += probs[bi] + probs[ii]
    if current is not None:
        found.append(current)
    return found


def _read(
    ctx: DecodeContext, spans: Sequence[Open], staged: Mapping[Stage, Sequence[SpanPass]]
) -> list[Reading]:
    """Each span through the ``reading`` passes in text order; a span a pass drops leaves its
    words free for the next one (the floor stays where it was)."""
    passes = staged.get(Stage.READING, ())
    out: list[Reading] = []
    floor = 0  # words before it belong to an earlier span
    for span in spans:
        reading: Reading | None = Reading(
            span.group, span.first, span.last, span.score, span.mass, floor, span.last + 1
        )
        for p in passes:
            reading = p.run(ctx, reading)
            if reading is None:
                break
        if reading is None:
            continue
        floor = reading.floor_after
        out.append(reading)
    return out


def _vote(
    ctx: DecodeContext,
    readings: Sequence[Reading],
    staged: Mapping[Stage, Sequence[SpanPass]],
    thresholds: Mapping[Category, float],
    default_threshold: float,
    source: str,
) -> list[Span]:
    """The category of each reading by its text's votes, kept at or above its threshold."""
    text, grid = ctx.text, ctx.grid
    placed = [(r, r.start_char(grid), r.end_char(grid)) for r in readings]
    votes: dict[str, dict[Category, float]] = {}
    for r, start, end in placed:
        pool(votes.setdefault(text[start:end], {}), r.mass)
    groups = {t: COARSE_GROUP[max(v, key=v.__getitem__)] for t, v in votes.items()}
    named = {text[start:end] for r, start, end in placed if r.cued}
    named.update(t for t, group in groups.items() if group == "NAME")
    tallies: Mapping[str, Mapping[Category, float]] = {t: votes[t] for t in named}
    for p in staged.get(Stage.VOTES, ()):
        tallies = p.run(ctx, tallies)
    spans = []
    for r, start, end in placed:
        written = text[start:end]
        tally: Mapping[Category, float] = votes[written]
        # an honorific said person: the votes choose only the role
        group = "NAME" if r.cued else groups[written]
        if group == "NAME":
            tally = tallies.get(written, tally)
        category = max((c for c in tally if COARSE_GROUP[c] == group), key=tally.__getitem__)
        score = round(r.score, 4)  # the score a span reports is the one its threshold judged
        if score >= thresholds.get(category, default_threshold):
            spans.append(Span(start, end, category, source, score))
    return spans
