"""Named passes: the steps after detection, each a documented unit that can be switched off.

A :class:`SpanPass` has a stable id (``names.carry``), the stage it runs at and a one-line
summary. The pipeline runs the segment passes (:data:`SEGMENT_PASSES`, stage
:attr:`Stage.SEGMENT`) in order after resolution; the tagger's decoder runs its own
(:mod:`polydeid.detect.tagger.decoder_passes`) around model decoding. Any pass is switched off
by id (``Deidentifier(disabled_passes=…)``, ``benchmarks/quality.py --ablate``); an unknown id
is an error that lists the known ones. ``ARCHITECTURE.md`` lists every pass in order.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from polydeid.core.errors import ConfigError
from polydeid.core.resolve import ResolvePolicy
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.detect.kinship import drop_kinship_mentions
from polydeid.detect.places import grow_to_heads
from polydeid.detect.propagate import propagate_names
from polydeid.detect.roles import assign_label_roles, grow_to_values
from polydeid.detect.vocabulary import drop_common_words
from polydeid.lexicon.shapes import fits, has_label


class Stage(StrEnum):
    """Where a pass runs, and so what it is called with.

    The tagger's decoder: ``boundary`` (``ctx, word, open reading, word tag`` → a cut or None,
    while the model's word tags are read into spans), ``reading`` (``ctx, reading`` → the
    reading or None to drop it, each span as read, in text order), ``readings`` (``ctx,
    readings`` → readings, before the category votes), ``votes`` (``ctx, name tallies`` →
    tallies), ``spans`` (``ctx, spans`` → spans, after the thresholds). The pipeline:
    ``segment`` (``ctx, spans`` → spans, after resolution)."""

    BOUNDARY = "boundary"
    READING = "reading"
    READINGS = "readings"
    VOTES = "votes"
    SPANS = "spans"
    SEGMENT = "segment"


@dataclass(frozen=True, slots=True)
class SpanPass:
    """One named step; ``version`` changes whenever it reads the same input differently."""

    id: str
    stage: Stage
    run: Callable[..., Any] = field(repr=False, compare=False)
    summary: str = field(repr=False)
    version: int = 1


def select(passes: Iterable[SpanPass], disabled: Collection[str]) -> tuple[SpanPass, ...]:
    """``passes`` in order without those whose id is in ``disabled``."""
    return tuple(p for p in passes if p.id not in disabled)


def check_known(disabled: Collection[str], known: Iterable[SpanPass]) -> None:
    """Raise :class:`ConfigError` for an id in ``disabled`` that names none of ``known``."""
    ids = {p.id for p in known}
    unknown = sorted(set(disabled) - ids)
    if unknown:
        raise ConfigError(f"unknown pass {', '.join(unknown)}; known: {', '.join(sorted(ids))}")


def passes_version(passes: Iterable[SpanPass]) -> str:
    """A short digest of the passes' ids and versions, in order: it changes whenever the list
    reads the same input differently (caches of decoded spans key on it)."""
    listed = ";".join(f"{p.stage}:{p.id}.v{p.version}" for p in passes)
    return hashlib.sha256(listed.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True, slots=True)
class SegmentContext:
    """What a segment pass reads besides the spans: the segment's text and canonical language,
    the protected facts the detectors found, and the resolution policy."""

    text: str = field(repr=False)
    lang: str
    facts: tuple[Span, ...] = field(repr=False)
    policy: ResolvePolicy = field(repr=False)


def _minimal_shapes(ctx: SegmentContext, spans: tuple[Span, ...]) -> tuple[Span, ...]:
    return tuple(s for s in spans if not isinstance(s.label, Category) or _shaped(ctx.text, s))


def _shaped(text: str, s: Span) -> bool:
    """``fits`` with the span's label read only where it decides: a look-alike (a clock range,
    vitals) that fits only if labelled."""
    assert isinstance(s.label, Category)
    written = text[s.start : s.end]
    return fits(s.label, written) or (
        fits(s.label, written, labelled=True) and has_label(s.label, text, s.start)
    )


def _heads(ctx: SegmentContext, spans: tuple[Span, ...]) -> tuple[Span, ...]:
    return grow_to_heads(ctx.text, spans, ctx.lang)


def _kinship(ctx: SegmentContext, spans: tuple[Span, ...]) -> tuple[Span, ...]:
    return drop_kinship_mentions(ctx.text, spans, ctx.lang)


def _common_word(ctx: SegmentContext, spans: tuple[Span, ...]) -> tuple[Span, ...]:
    return drop_common_words(ctx.text, spans, ctx.lang)


def _carry(ctx: SegmentContext, spans: tuple[Span, ...]) -> tuple[Span, ...]:
    return propagate_names(ctx.text, spans, ctx.facts, ctx.lang, ctx.policy)


def _label_values(ctx: SegmentContext, spans: tuple[Span, ...]) -> tuple[Span, ...]:
    return tuple(grow_to_values(ctx.text, spans, ctx.lang))


def _label_roles(ctx: SegmentContext, spans: tuple[Span, ...]) -> tuple[Span, ...]:
    return assign_label_roles(ctx.text, spans)


#: The pipeline's passes after resolution, in order.
SEGMENT_PASSES: tuple[SpanPass, ...] = (
    SpanPass(
        "shapes.minimal",
        Stage.SEGMENT,
        _minimal_shapes,
        "a span of any detector that lacks its category's minimal shape (lexicon/data/"
        "shapes.toml: an ID with no digit, a phone shorter than any plan, an unlabelled clock "
        "range) goes",
    ),
    SpanPass(
        "places.administrative_head",
        Stage.SEGMENT,
        _heads,
        "a place span grows over the administrative unit written right before it",
    ),
    SpanPass(
        "names.kinship",
        Stage.SEGMENT,
        _kinship,
        "a name made only of kinship and role words, forms of address and their articles "
        "('his wife', 'the patient', 'Sehr geehrte Frau Kollegin') is a kinship mention, no "
        "identifier",
    ),
    SpanPass(
        "names.common_word",
        Stage.SEGMENT,
        _common_word,
        "a model's name whose every word is vocabulary (a common word below a confident score, "
        "a clinical word or drug name at any score) is no name ('Leber', 'aline', 'Olanzapine')",
    ),
    SpanPass(
        "names.carry",
        Stage.SEGMENT,
        _carry,
        "a name found once is a name wherever else the segment writes it",
    ),
    SpanPass(
        "roles.label_values",
        Stage.SEGMENT,
        _label_values,
        "a name span inside a name label's value grows to the whole value",
    ),
    SpanPass(
        "roles.labels",
        Stage.SEGMENT,
        _label_roles,
        "a name after a patient or clinician label (or in a pasted HL7 field or CSV column) "
        "takes that role, and so do its other mentions",
    ),
)
