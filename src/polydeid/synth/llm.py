"""Second generation mode: documents written by a chat model, annotated by construction.

The model never decides what is an identifier. For each document, :func:`plan_document` samples
the axes (language, document type, format, length, edge cases) and draws every identifier and
clinical fact with the same fillers as the template generator; the prompt (built from those
axes: dynamic prompting) asks the model to write the document using each value verbatim and no
other identifier. The reply is then annotated by locating each value, and rejected when

* a value is missing (``missing_value``),
* the rule layer finds an identifier that no planned value covers (``extra_identifier``: the
  model invented a phone, date or ID we have no gold span for),
* it is empty or the endpoint fails (``empty``, ``endpoint_error``).

Accepted documents go through the same validator as the template corpus
(:func:`polydeid.synth.validate.validate_corpus`).

The endpoint is any OpenAI-compatible ``/chat/completions`` URL (a local llama.cpp, vLLM or
Ollama server); nothing else is contacted, and the API key is read from the environment
(``POLYDEID_LLM_API_KEY``) so that it never lands in a command line or log.
"""

from __future__ import annotations

import logging
import urllib.error
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from types import MappingProxyType

from polydeid.core.errors import ChatEndpointError
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.corpora.document import AnnotatedDocument
from polydeid.detect.backends.chat_client import API_KEY_ENV, ChatEndpoint
from polydeid.detect.pipeline import Pipeline
from polydeid.detect.profiles import profile_detectors
from polydeid.locales import language_info
from polydeid.synth.formats import label_for
from polydeid.synth.generate import SOURCE, DocumentPlan, plan_document

log = logging.getLogger(__name__)

LLM_SOURCE = f"{SOURCE}.llm"

__all__ = [  # the client lives in polydeid.detect.backends.chat_client; re-exported here
    "API_KEY_ENV",
    "LLM_SOURCE",
    "ChatEndpoint",
    "LlmReport",
    "annotate",
    "build_messages",
    "generate_llm",
]

#: What a failed request raises: the shared client's error, and whatever a custom endpoint
#: object (anything with ``complete``) lets through.
_ENDPOINT_FAILURES = (
    ChatEndpointError,
    OSError,
    urllib.error.URLError,
    KeyError,
    ValueError,
    TypeError,
)

_FORMAT_WORDS = MappingProxyType(
    {
        "prose": "running prose in paragraphs",
        "soap": "a SOAP note with S:, O:, A: and P: sections",
        "bullets": "bullet points",
        "key_value": "a form with one 'Label: value' line per field",
        "chat": "a chat transcript, one 'speaker: message' turn per line",
    }
)
_LENGTH_WORDS = MappingProxyType(
    {"short": "2 to 4 sentences", "medium": "6 to 12 sentences", "long": "at least 30 sentences"}
)


@dataclass(slots=True)
class LlmReport:
    """Counts of one LLM run: requested, accepted, and rejected by reason."""

    requested: int = 0
    accepted: int = 0
    rejected: Counter[str] = field(default_factory=Counter)

    def __repr__(self) -> str:
        return f"LlmReport(requested={self.requested}, accepted={self.accepted})"


def build_messages(plan: DocumentPlan) -> list[dict[str, str]]:
    """The system and user messages for ``plan`` (the dynamic prompt)."""
    language = language_info(plan.lang).name
    title = label_for(plan.document_type, plan.lang)
    lines = [
        f"Write one synthetic {plan.document_type.replace('_', ' ')} (title: {title}) in "
        f"{language}, as a clinician in country {plan.country} would write it.",
        f"Layout: {_FORMAT_WORDS.get(plan.text_format, plan.text_format)}. "
        f"Length: {_LENGTH_WORDS.get(plan.length, plan.length)}.",
        "Use every value below exactly as written (same spelling, case and punctuation), "
        "each at least once:",
    ]
    for value in plan.values:
        kind = value.label.value if value.label is not None else value.slot
        lines.append(f"- {value.slot} ({kind}): {value.text}")
    lines += [
        "Do not write any other person name, phone number, e-mail, ID number, date, age, "
        "address, village or facility name than those listed.",
        "Reply with the document text only.",
    ]
    return [
        {
            "role": "system",
            "content": "You write realistic synthetic clinical documents for testing "
            "de-identification software. Everything you write is fictitious.",
        },
        {"role": "user", "content": "\n".join(lines)},
    ]


def annotate(text: str, plan: DocumentPlan) -> tuple[tuple[Span, ...], tuple[Span, ...]] | str:
    """Spans and facts of every planned value in ``text``, or the reason to reject it."""
    spans: list[Span] = []
    facts: list[Span] = []
    taken: list[tuple[int, int]] = []
    # Longest values first, so that a value inside another one is not annotated twice.
    for value in sorted(plan.values, key=lambda v: -len(v.text)):
        if value.label is None:
            continue
        found = _occurrences(text, value.text, taken)
        if not found:
            return "missing_value"
        for start in found:
            span = Span(start, start + len(value.text), value.label, LLM_SOURCE)
            (facts if isinstance(value.label, Fact) else spans).append(span)
            taken.append((span.start, span.end))
    return tuple(sorted(spans, key=_position)), tuple(sorted(facts, key=_position))


def _position(span: Span) -> tuple[int, int]:
    return span.start, span.end


def _occurrences(text: str, value: str, taken: Sequence[tuple[int, int]]) -> list[int]:
    found, start = [], text.find(value)
    while start >= 0:
        end = start + len(value)
        inside_word = (start > 0 and text[start - 1].isalnum() and value[0].isalnum()) or (
            end < len(text) and text[end].isalnum() and value[-1].isalnum()
        )
        if not inside_word and not any(a < end and start < b for a, b in taken):
            found.append(start)
        start = text.find(value, start + 1)
    return found


def _extra_identifiers(text: str, lang: str, spans: Sequence[Span]) -> bool:
    """Whether the rule layer finds an identifier that no annotated span overlaps."""
    found = _rules().detect(Segment(text, lang=lang))
    return any(
        not any(s.start < f.end and f.start < s.end for s in spans)
        for f in found
        if isinstance(f.label, Category)
    )


@cache
def _rules() -> Pipeline:
    return Pipeline(profile_detectors("rules"))


def generate_llm(
    endpoint: ChatEndpoint,
    *,
    per_language: int,
    seed: int,
    langs: Sequence[str],
    name_split: str = "train",
    report: LlmReport | None = None,
) -> Iterator[AnnotatedDocument]:
    """Documents written by ``endpoint``; rejected replies are counted in ``report``."""
    report = report if report is not None else LlmReport()
    for index in range(per_language):
        for lang in langs:
            plan = plan_document(lang, index, seed=seed, name_split=name_split)
            report.requested += 1
            try:
                text = endpoint.complete(build_messages(plan), seed=seed * 1_000_003 + index)
            except _ENDPOINT_FAILURES as exc:
                log.warning("LLM endpoint failed for document %d (%s)", index, type(exc).__name__)
                report.rejected["endpoint_error"] += 1
                continue
            text = text.strip()
            if not text:
                report.rejected["empty"] += 1
                continue
            annotated = annotate(text, plan)
            if isinstance(annotated, str):
                report.rejected[annotated] += 1
                continue
            spans, facts = annotated
            if _extra_identifiers(text, plan.lang, spans):
                report.rejected["extra_identifier"] += 1
                continue
            report.accepted += 1
            yield AnnotatedDocument(
                id=f"synth-llm-{seed}-{plan.lang}-{index:06d}",
                text=text,
                lang=plan.lang,
                spans=spans,
                facts=facts,
                source=LLM_SOURCE,
                meta=MappingProxyType(
                    {
                        "document_type": plan.document_type,
                        "text_format": plan.text_format,
                        "length": plan.length,
                        "edge_cases": list(plan.edge_cases),
                        "country": plan.country,
                        "template": "llm",
                    }
                ),
            )
