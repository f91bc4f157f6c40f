"""Corpus validation: structure, offsets, label plausibility, language, duplicates, diversity.

``validate_jsonl(path)`` checks synthetic (or any) JSONL records line by line, so every problem
is located at ``file:line``; ``validate_corpus(corpus)`` checks what any corpus reader returned,
located by document id. Both return a :class:`ValidationReport`; no message ever contains
document or span text — spans are named by index, offsets and label.

Checks, with their codes (E: error, W: warning):

* structure — ``BAD_UTF8``, ``BAD_JSON``, ``NOT_OBJECT``, ``MISSING_FIELD``, ``BAD_TYPE``,
  ``UNKNOWN_LANGUAGE``, ``UNKNOWN_LABEL``, ``UNKNOWN_FACT_KIND``, ``BAD_OFFSETS``,
  ``OFFSET_OUT_OF_RANGE``, ``DUPLICATE_SPAN``, ``DUPLICATE_ID``, ``BAD_META`` (E);
  ``OVERLAPPING_SPANS``, ``UNKNOWN_META`` (W); ``READ_FAILURE`` (E, corpus reader failures);
* offsets — ``SPAN_TEXT_MISMATCH`` (E); ``SPAN_BOUNDARY_SPACE``, ``SPAN_BOUNDARY_PUNCT`` (W);
* labels — ``FACT_LABELLED_IDENTIFIER`` (a dose, lab value or vital found by
  :class:`ClinicalFactRule`, or a declared fact, under an ID, DATE or name span),
  ``IDENTIFIER_OVERLAPS_FACT`` (any identifier over a declared fact), ``TIME_LABELLED``,
  ``TITLE_ALONE``, ``AGE_NO_NUMBER``, ``PHONE_TOO_FEW_DIGITS``, ``EMAIL_NO_AT``,
  ``DATE_NO_DIGIT_OR_MONTH`` (E);
* language — ``LANG_MISMATCH`` (E, the identifier is confident), ``LANG_UNCERTAIN`` (W);
  languages the offline identifier (py3langid) does not know, and texts too short to judge,
  are counted as unverifiable, never reported as errors; documents with the edge case
  ``code_mixed`` are tolerated;
* duplicates — ``EXACT_DUPLICATE``, ``NEAR_DUPLICATE`` (E), reported at the later document.

Near duplicates: every identifier span is replaced by ``<LABEL>`` before shingling, so two
fillings of one template that differ only in their identifiers ARE near duplicates (they teach
a model nothing new), while fillings whose surrounding text (wording, facts, order) differs
are not. Documents are compared by the Jaccard similarity of their word 5-gram sets; candidate
pairs come from MinHash (128 hashes) with LSH banding (16 bands of 8 at the default threshold
0.9; wider bands for lower thresholds), and each candidate is confirmed by its exact Jaccard,
so the cost grows with the number of documents, not with the number of pairs. A new document
is compared with at most 50 earlier documents per LSH bucket.
"""

from __future__ import annotations

import json
import unicodedata
import zlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import regex

from polydeid.core.errors import DetectorUnavailableError, PolydeidError
from polydeid.core.segments import Segment
from polydeid.core.taxonomy import Category, Fact
from polydeid.corpora._files import corpus_files
from polydeid.corpora.document import Corpus
from polydeid.detect.rules.clinical_facts import ClinicalFactRule
from polydeid.locales import canonical_language
from polydeid.locales.ages import age_words
from polydeid.locales.contacts import contact_words
from polydeid.locales.dates import language_dates
from polydeid.locales.names import name_format
from polydeid.text.patterns import ContextLexicon, compile_pattern

SUFFIXES = frozenset({".jsonl", ".ndjson"})

#: Meta axes a synthetic record may carry, with the JSON type of each.
META_AXES: Mapping[str, type] = MappingProxyType(
    {
        "document_type": str,
        "text_format": str,
        "length": str,
        "edge_cases": list,
        "template": str,
        "templates": list,
        "country": str,
    }
)
#: Axes summarised in the diversity report.
REPORTED_AXES = ("document_type", "text_format", "length", "edge_cases")
CODE_MIXED = "code_mixed"

NAME_CATEGORIES = frozenset({Category.PERSON, Category.PERSON_THIRD_PARTY, Category.PERSON_CLAN})
#: Categories a clinical fact, a time of day or a bare title must never carry.
GUARDED_CATEGORIES = frozenset(
    {Category.ID_NATIONAL, Category.ID_RECORD, Category.ID_OTHER, Category.DATE, *NAME_CATEGORIES}
)
GUARDED_FACTS = frozenset({Fact.DOSE, Fact.LAB_VALUE, Fact.VITAL})

#: Language identification: least letters to judge, least probability for an error.
LANG_MIN_LETTERS = 40
LANG_CONFIDENT = 0.9

NEAR_DUPLICATE_THRESHOLD = 0.9
SHINGLE = 5
_HASHES = 128
#: LSH banding (bands, rows per band), most selective first; see :func:`_banding`.
_BANDINGS = ((16, 8), (32, 4), (64, 2), (128, 1))
_PRIME = 4294967311  # the first prime above 2**32

#: A time of day written as digits: 14:30, 14:30 h, 14h30, 8 am, 8:15 p.m. (notation, not words).
_TIME = compile_pattern(
    r"(?:[01]?\d|2[0-4])(?:(?::|h)[0-5]\d(?::[0-5]\d)?(?:\s*h)?"
    r"(?:\s*(?:[ap]\.?\s?m\.?))?|\s*(?:[ap]\.?\s?m\.?|h))",
    regex.IGNORECASE,
)
_TOKEN = compile_pattern(r"<[A-Z_]+>|\p{Han}|[\p{L}\p{M}\p{N}]+")
_SENTENCE_END = compile_pattern(r"(?<=[.!?。！？؟।።])\s+|\n+")
_DIGIT = compile_pattern(r"\d")
_LETTER = compile_pattern(r"\p{L}")
_FILE_LINE = compile_pattern(r"(.*?):(\d+)(?::|$)")
_URL = compile_pattern(r"://|^www\.|\bwww\.", regex.IGNORECASE)


# --------------------------------------------------------------------------------------------
# Report values


@dataclass(frozen=True, slots=True)
class Issue:
    """One problem: where (``file:line`` or ``doc <id>``), a stable code, a text-free message."""

    location: str
    code: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"location": self.location, "code": self.code, "message": self.message}


@dataclass(frozen=True, slots=True)
class LanguageCheck:
    """Outcome of language identification over one language's documents."""

    verified: int = 0
    mismatched: int = 0
    uncertain: int = 0
    code_mixed: int = 0
    unverifiable: int = 0


@dataclass(frozen=True, slots=True)
class Diversity:
    """Diversity figures of one language's documents."""

    lang: str
    documents: int
    spans: Mapping[str, int]
    facts: Mapping[str, int]
    templates: int
    sentences: int
    sentence_shapes: int
    distinct_n: tuple[float, float, float]
    name_tokens: int
    distinct_name_tokens: int
    axes: Mapping[str, Mapping[str, int]]
    language: LanguageCheck

    def to_dict(self) -> dict[str, Any]:
        return {
            "lang": self.lang,
            "documents": self.documents,
            "spans": dict(self.spans),
            "facts": dict(self.facts),
            "templates": self.templates,
            "sentences": self.sentences,
            "sentence_shapes": self.sentence_shapes,
            "distinct_1": round(self.distinct_n[0], 4),
            "distinct_2": round(self.distinct_n[1], 4),
            "distinct_3": round(self.distinct_n[2], 4),
            "name_tokens": self.name_tokens,
            "distinct_name_tokens": self.distinct_name_tokens,
            "axes": {k: dict(v) for k, v in self.axes.items()},
            "language_check": {
                "verified": self.language.verified,
                "mismatched": self.language.mismatched,
                "uncertain": self.language.uncertain,
                "code_mixed": self.language.code_mixed,
                "unverifiable": self.language.unverifiable,
            },
        }


@dataclass(frozen=True, slots=True)
class ValidationReport:
    """Errors, warnings and per-language diversity of a corpus; ``ok`` when there is no error."""

    name: str
    documents: int
    errors: tuple[Issue, ...]
    warnings: tuple[Issue, ...]
    diversity: Mapping[str, Diversity] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def ok(self) -> bool:
        return not self.errors

    def __repr__(self) -> str:
        return (
            f"ValidationReport({self.name!r}, documents={self.documents}, "
            f"errors={len(self.errors)}, warnings={len(self.warnings)})"
        )

    def codes(self) -> Counter[str]:
        """How often each error and warning code occurs."""
        return Counter(i.code for i in (*self.errors, *self.warnings))

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "ok": self.ok,
            "documents": self.documents,
            "errors": [i.to_dict() for i in self.errors],
            "warnings": [i.to_dict() for i in self.warnings],
            "diversity": {k: v.to_dict() for k, v in sorted(self.diversity.items())},
        }

    def to_markdown(self) -> str:
        """The summary and the diversity tables per language, as Markdown."""
        return _markdown(self)


# --------------------------------------------------------------------------------------------
# Records: the common form of a JSONL line and of a reader's document


@dataclass(frozen=True, slots=True)
class _GoldSpan:
    index: int
    start: int
    end: int
    label: Category | Fact

    def where(self, field_name: str = "spans") -> str:
        return f"{field_name}[{self.index}] {self.start}:{self.end} {self.label.value}"


@dataclass(frozen=True, slots=True)
class _Record:
    location: str
    text: str = field(repr=False)  # may hold identifier text
    lang: str
    spans: tuple[_GoldSpan, ...]
    facts: tuple[_GoldSpan, ...]
    meta: Mapping[str, Any]


class _Issues:
    """Collects errors and warnings in order."""

    def __init__(self) -> None:
        self.errors: list[Issue] = []
        self.warnings: list[Issue] = []

    def error(self, location: str, code: str, message: str) -> None:
        self.errors.append(Issue(location, code, message))

    def warn(self, location: str, code: str, message: str) -> None:
        self.warnings.append(Issue(location, code, message))


# --------------------------------------------------------------------------------------------
# Entry points


def validate_jsonl(
    path: str | Path,
    *,
    axes: Mapping[str, Iterable[str]] | None = None,
    near_duplicate_threshold: float = NEAR_DUPLICATE_THRESHOLD,
    check_language: bool = True,
) -> ValidationReport:
    """Validate one JSONL file, or every ``.jsonl``/``.ndjson`` file of a directory.

    ``axes`` optionally lists the allowed values of meta axes (``{"length": ["short", …]}``);
    a value outside them is an error.
    """
    root = Path(path)
    issues = _Issues()
    allowed = {k: frozenset(v) for k, v in (axes or {}).items()}
    records: list[_Record] = []
    seen_ids: dict[str, str] = {}
    for file in corpus_files(root, suffixes=SUFFIXES):
        for number, raw in enumerate(file.read_bytes().split(b"\n"), start=1):
            if not raw.strip():
                continue
            location = f"{file}:{number}"
            record = _parse_line(raw.rstrip(b"\r"), location, issues, allowed, seen_ids)
            if record is not None:
                records.append(record)
    return _finish(root.name, records, issues, near_duplicate_threshold, check_language)


def validate_corpus(
    corpus: Corpus,
    *,
    near_duplicate_threshold: float = NEAR_DUPLICATE_THRESHOLD,
    check_language: bool = True,
) -> ValidationReport:
    """Validate what a corpus reader returned; documents are located as ``doc <id>``."""
    issues = _Issues()
    for failure in corpus.failures:
        err = failure.error
        issues.error(err.location or failure.file, "READ_FAILURE", f"[{err.code}] {err.message}")
    records: list[_Record] = []
    seen_ids: dict[str, str] = {}
    for number, document in enumerate(corpus.documents):
        location = f"doc {document.id}"
        if document.id in seen_ids:
            issues.error(location, "DUPLICATE_ID", f"document #{number} repeats an earlier id")
        seen_ids.setdefault(document.id, location)
        spans = tuple(_GoldSpan(i, s.start, s.end, s.label) for i, s in enumerate(document.spans))
        facts = tuple(_GoldSpan(i, s.start, s.end, s.label) for i, s in enumerate(document.facts))
        record = _Record(location, document.text, document.lang, spans, facts, document.meta)
        _check_span_set(record, issues)
        records.append(record)
    return _finish(corpus.name, records, issues, near_duplicate_threshold, check_language)


def _finish(
    name: str,
    records: Sequence[_Record],
    issues: _Issues,
    threshold: float,
    check_language: bool,
) -> ValidationReport:
    """Run the content checks over parsed records and assemble the report."""
    for record in records:
        _check_labels(record, issues)
    language = _check_languages(records, issues) if check_language else {}
    _check_duplicates(records, issues, threshold)
    diversity = _diversity(records, language)
    return ValidationReport(
        name=name,
        documents=len(records),
        errors=tuple(sorted(issues.errors, key=_issue_order)),
        warnings=tuple(sorted(issues.warnings, key=_issue_order)),
        diversity=MappingProxyType(diversity),
    )


def _issue_order(issue: Issue) -> tuple[str, int]:
    """Issues by file and line number (``file:12`` before ``file:100``), stable otherwise."""
    located = _FILE_LINE.match(issue.location)
    return (located[1], int(located[2])) if located else (issue.location, -1)


# --------------------------------------------------------------------------------------------
# Structure and offsets (JSONL)


def _parse_line(
    raw: bytes,
    location: str,
    issues: _Issues,
    allowed: Mapping[str, frozenset[str]],
    seen_ids: dict[str, str],
) -> _Record | None:
    """One line as a record, reporting every structural problem; None when unusable."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        issues.error(location, "BAD_UTF8", f"invalid UTF-8 at byte {exc.start}")
        return None
    except json.JSONDecodeError as exc:
        issues.error(location, "BAD_JSON", f"malformed JSON ({exc.msg} at column {exc.colno})")
        return None
    if not isinstance(data, dict):
        issues.error(location, "NOT_OBJECT", f"a record must be an object, not {_kind(data)}")
        return None
    text, lang = data.get("text"), _record_lang(data, location, issues)
    _check_id(data, location, issues, seen_ids)
    if not isinstance(text, str):
        _missing_or_type(data, "text", "a string", location, issues)
        return None
    spans = _parse_spans(data, "spans", text, location, issues, required=True)
    facts = _parse_spans(data, "facts", text, location, issues, required=False)
    meta = _parse_meta(data, location, issues, allowed)
    if lang is None:
        return None
    record = _Record(location, text, lang, spans, facts, meta)
    _check_span_set(record, issues)
    return record


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _missing_or_type(
    data: Mapping[str, Any], key: str, expected: str, location: str, issues: _Issues
) -> None:
    if key not in data:
        issues.error(location, "MISSING_FIELD", f'no "{key}" field')
    else:
        issues.error(location, "BAD_TYPE", f'"{key}" must be {expected}, not {_kind(data[key])}')


def _check_id(
    data: Mapping[str, Any], location: str, issues: _Issues, seen: dict[str, str]
) -> None:
    value = data.get("id")
    if not isinstance(value, str | int) or isinstance(value, bool):
        _missing_or_type(data, "id", "a string or an integer", location, issues)
        return
    key = str(value)
    if key in seen:
        issues.error(location, "DUPLICATE_ID", f"the id of {seen[key]} again")
    else:
        seen[key] = location


def _record_lang(data: Mapping[str, Any], location: str, issues: _Issues) -> str | None:
    value = data.get("lang")
    if not isinstance(value, str):
        _missing_or_type(data, "lang", "a string", location, issues)
        return None
    try:
        return canonical_language(value)
    except PolydeidError:
        issues.error(location, "UNKNOWN_LANGUAGE", f"unknown language {value[:12]!r}")
        return None


def _parse_spans(
    data: Mapping[str, Any],
    key: str,
    text: str,
    location: str,
    issues: _Issues,
    *,
    required: bool,
) -> tuple[_GoldSpan, ...]:
    raw_spans = data.get(key, None if required else [])
    if not isinstance(raw_spans, list):
        _missing_or_type(data, key, "a list", location, issues)
        return ()
    found = (_parse_span(raw, i, key, text, location, issues) for i, raw in enumerate(raw_spans))
    return tuple(s for s in found if s is not None)


def _parse_span(
    raw: Any, index: int, key: str, text: str, location: str, issues: _Issues
) -> _GoldSpan | None:
    where = f"{key}[{index}]"
    if not isinstance(raw, dict):
        issues.error(location, "BAD_TYPE", f"{where} must be an object, not {_kind(raw)}")
        return None
    start, end = raw.get("start"), raw.get("end")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)):
        issues.error(location, "BAD_OFFSETS", f'{where} needs integer "start" and "end"')
        return None
    assert isinstance(start, int) and isinstance(end, int)
    label = _parse_label(raw, where, key, location, issues)
    if not start < end:
        issues.error(location, "BAD_OFFSETS", f"{where} {start}:{end}: start must be below end")
        return None
    if start < 0 or end > len(text):
        issues.error(
            location,
            "OFFSET_OUT_OF_RANGE",
            f"{where} {start}:{end} outside the text (length {len(text)})",
        )
        return None
    if label is None:
        return None
    span = _GoldSpan(index, start, end, label)
    _check_span_text(raw, span, key, text, location, issues)
    return span


def _parse_label(
    raw: Mapping[str, Any], where: str, key: str, location: str, issues: _Issues
) -> Category | Fact | None:
    field_name, enum = ("kind", Fact) if key == "facts" else ("label", Category)
    value = raw.get(field_name)
    if not isinstance(value, str):
        issues.error(location, "BAD_TYPE", f'{where} needs a string "{field_name}"')
        return None
    if value in enum.__members__:
        return enum[value]
    code = "UNKNOWN_FACT_KIND" if key == "facts" else "UNKNOWN_LABEL"
    shown = repr(value) if regex.fullmatch(r"[A-Za-z][A-Za-z0-9_]{0,39}", value) else "(not shown)"
    issues.error(location, code, f"{where}: unknown {field_name} {shown}")
    return None


def _check_span_text(
    raw: Mapping[str, Any], span: _GoldSpan, key: str, text: str, location: str, issues: _Issues
) -> None:
    if "text" in raw and raw["text"] != text[span.start : span.end]:
        issues.error(
            location,
            "SPAN_TEXT_MISMATCH",
            f'{span.where(key)}: "text" differs from the text at those offsets',
        )
    covered = text[span.start : span.end]
    if covered[0].isspace() or covered[-1].isspace():
        issues.warn(location, "SPAN_BOUNDARY_SPACE", f"{span.where(key)} starts or ends in space")
    elif _loose_punct(covered):
        issues.warn(
            location, "SPAN_BOUNDARY_PUNCT", f"{span.where(key)} starts or ends in punctuation"
        )


def _is_punct(ch: str) -> bool:
    return unicodedata.category(ch).startswith("P")


_PAIRS = {"(": ")", "[": "]", "{": "}", "«": "»", "“": "”", "„": "“", "‘": "’", "「": "」"}
#: Punctuation that ends a value by itself: "6,9 %", "T°"; a dot ends "p.o." and initials.
_VALUE_END = frozenset("%‰°'’")
#: Abbreviations that end names of organisations and people with a dot ("Acme Inc.").
_ABBREVIATIONS = frozenset(
    [
        "inc",
        "ltd",
        "co",
        "corp",
        "plc",
        "llc",
        "bros",
        "jr",
        "sr",
        "st",
        "mt",
        "cie",
        "ste",
        "hosp",
        "dept",
        "univ",
        "assn",
    ]
)


def _loose_punct(covered: str) -> bool:
    """Whether a span starts or ends in punctuation that is not part of the value.

    Brackets closed or opened inside the span ("infarto (STEMI)", "(0772) 123456") and value
    symbols at the end ("6,9 %", "p.o.") belong to it.
    """
    first, last = covered[0], covered[-1]
    opens_inside = first in _PAIRS and _PAIRS[first] in covered[1:]
    if _is_punct(first) and not opens_inside and first not in "¿¡#+":
        return True
    if _is_punct(last):
        closes_inside = any(last == c and o in covered[:-1] for o, c in _PAIRS.items())
        lone_letter = covered[-2:-1].isalpha() and not covered[-3:-2].isalpha()
        abbreviation = covered[:-1].rsplit(None, 1)[-1].lower() in _ABBREVIATIONS
        initial = last == "." and (covered.count(".") > 1 or lone_letter or abbreviation)
        value_end = last in _VALUE_END and last != "." and len(covered) > 1
        if not (closes_inside or initial or value_end):
            return True
    return False


def _parse_meta(
    data: Mapping[str, Any], location: str, issues: _Issues, allowed: Mapping[str, frozenset[str]]
) -> Mapping[str, Any]:
    meta = data.get("meta", {})
    if not isinstance(meta, dict):
        issues.error(location, "BAD_META", f'"meta" must be an object, not {_kind(meta)}')
        return {}
    clean: dict[str, Any] = {}
    for key, value in meta.items():
        expected = META_AXES.get(key)
        if expected is None:
            shown = repr(key) if regex.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,39}", key) else "(?)"
            issues.warn(location, "UNKNOWN_META", f"meta key {shown} is not a known axis")
            continue
        values = value if isinstance(value, list) else [value]
        if not isinstance(value, expected) or not all(isinstance(v, str) for v in values):
            issues.error(location, "BAD_META", f"meta.{key} has the wrong type ({_kind(value)})")
            continue
        unknown = [v for v in values if key in allowed and v not in allowed[key]]
        if unknown:
            issues.error(location, "BAD_META", f"meta.{key}: {len(unknown)} value(s) not allowed")
            continue
        clean[key] = value
    return MappingProxyType(clean)


def _check_span_set(record: _Record, issues: _Issues) -> None:
    """Duplicate spans (errors) and overlapping spans (warnings) among identifier spans."""
    ordered = sorted(record.spans, key=lambda s: (s.start, s.end, s.index))
    seen: dict[tuple[int, int, str], int] = {}
    for span in ordered:
        key = (span.start, span.end, span.label.value)
        if key in seen:
            issues.error(
                record.location, "DUPLICATE_SPAN", f"{span.where()} repeats spans[{seen[key]}]"
            )
        else:
            seen[key] = span.index
    active: list[_GoldSpan] = []
    for span in ordered:
        active = [a for a in active if a.end > span.start]
        for other in active:
            if (other.start, other.end, other.label) != (span.start, span.end, span.label):
                issues.warn(
                    record.location,
                    "OVERLAPPING_SPANS",
                    f"{span.where()} overlaps spans[{other.index}]",
                )
        active.append(span)


# --------------------------------------------------------------------------------------------
# Per-label plausibility


@dataclass(frozen=True, slots=True)
class _Words:
    """Language words the label checks need (the language's and English)."""

    calendar: ContextLexicon  # month and weekday names
    numbers: ContextLexicon
    compound_numbers: tuple[str, ...]  # number words of languages that write compounds together
    at: ContextLexicon
    dot: ContextLexicon
    webmail: tuple[str, ...]
    titles: frozenset[str]


def _norm_title(word: str) -> str:
    return word.strip().rstrip(".").strip().lower()


@cache
def _words(lang: str) -> _Words:
    """Month, weekday, number, e-mail and title words of ``lang`` and English (cached)."""
    langs = (lang, "en") if lang != "en" else ("en",)
    calendar, numbers, at, dot, webmail, titles = [], [], [], [], [], set()
    compounds: list[str] = []
    for code in langs:
        dates = language_dates(code)
        for form in (*dates.month_forms.values(), *dates.weekday_forms.values()):
            calendar.extend(form.names)
        calendar.extend(dates.month_variants)
        calendar.extend(dates.weekday_variants)
        figures = age_words(code).numbers
        if figures is not None:
            for group in (figures.words, figures.tens, figures.hundreds):
                numbers.extend(group)
                if "" in figures.joiners:
                    compounds.extend(w.lower() for w in group if len(w) >= 3)
        contacts = contact_words(code)
        at.extend(contacts.at)
        dot.extend(contacts.dot)
        webmail.extend(contacts.webmail_domains)
        titles.update(_norm_title(t) for t in name_format(code).titles)
    return _Words(
        calendar=ContextLexicon(calendar),
        numbers=ContextLexicon(numbers),
        compound_numbers=tuple(sorted(set(compounds))),
        at=ContextLexicon(at),
        dot=ContextLexicon(dot),
        webmail=tuple(sorted({w.lower() for w in webmail})),
        titles=frozenset(titles),
    )


@cache
def _fact_rule() -> ClinicalFactRule:
    return ClinicalFactRule()


def _check_labels(record: _Record, issues: _Issues) -> None:
    """Label plausibility of every identifier span of ``record``."""
    words = _words(record.lang)
    facts = _guarded_fact_spans(record)
    for span in record.spans:
        covered = record.text[span.start : span.end]
        for problem in _label_problems(span, covered, words):
            issues.error(record.location, problem[0], f"{span.where()}: {problem[1]}")
        _check_fact_overlap(record, span, facts, issues)


def _guarded_fact_spans(record: _Record) -> list[tuple[int, int, Fact, bool]]:
    """Rule-found doses, lab values and vitals, and every declared fact (flag: declared)."""
    segment = Segment(record.text, lang=record.lang)
    found = [
        (s.start, s.end, s.label, False)
        for s in _fact_rule().detect(segment)
        if s.label in GUARDED_FACTS
    ]
    declared = [(f.start, f.end, f.label, True) for f in record.facts]
    return [(a, b, k, d) for a, b, k, d in (*found, *declared) if isinstance(k, Fact)]


def _check_fact_overlap(
    record: _Record,
    span: _GoldSpan,
    facts: Sequence[tuple[int, int, Fact, bool]],
    issues: _Issues,
) -> None:
    for start, end, kind, declared in facts:
        if not (span.start < end and start < span.end):
            continue
        if span.label in GUARDED_CATEGORIES:
            how = "a declared" if declared else "a detected"
            issues.error(
                record.location,
                "FACT_LABELLED_IDENTIFIER",
                f"{span.where()} covers {how} {kind.value} at {start}:{end}",
            )
            return
        if declared:
            issues.error(
                record.location,
                "IDENTIFIER_OVERLAPS_FACT",
                f"{span.where()} overlaps the declared {kind.value} at {start}:{end}",
            )
            return


def _label_problems(span: _GoldSpan, covered: str, words: _Words) -> Iterator[tuple[str, str]]:
    """(code, message) for each way ``covered`` does not fit ``span.label``."""
    label, stripped = span.label, covered.strip()
    if label in GUARDED_CATEGORIES and _TIME.fullmatch(stripped):
        yield "TIME_LABELLED", "a time of day is not an identifier or a date"
    if label in GUARDED_CATEGORIES and _norm_title(stripped) in words.titles:
        yield "TITLE_ALONE", "a title alone is not a name, ID or date"
    has_digit = _DIGIT.search(covered) is not None
    if label is Category.AGE and not has_digit and not _has_number_word(covered, words):
        yield "AGE_NO_NUMBER", "an age needs a digit or a number word"
    if label is Category.CONTACT_PHONE and len(_DIGIT.findall(covered)) < 7:
        yield "PHONE_TOO_FEW_DIGITS", "a phone number needs at least 7 digits"
    if label is Category.CONTACT_OTHER and _email_without_at(covered, words):
        yield "EMAIL_NO_AT", "an e-mail address needs an @ or a word for it"
    if label is Category.DATE and not has_digit and not words.calendar.search(covered):
        yield "DATE_NO_DIGIT_OR_MONTH", "a date needs a digit, a month or a weekday name"


def _has_number_word(covered: str, words: _Words) -> bool:
    """A number word as a whole word, or inside a compound ("zweiundvierzig")."""
    if words.numbers.search(covered):
        return True
    lowered = covered.lower()
    return any(word in lowered for word in words.compound_numbers)


def _email_without_at(covered: str, words: _Words) -> bool:
    """An e-mail-looking span (webmail domain or an obfuscated "dot") without "@" or "at"."""
    if "@" in covered or "＠" in covered or _URL.search(covered):
        return False
    lowered = covered.lower()
    looks_email = any(d in lowered for d in words.webmail) or words.dot.search(covered)
    return bool(looks_email) and not words.at.search(covered)


# --------------------------------------------------------------------------------------------
# Language identification


def _load_identifier() -> Any:
    """A fresh py3langid model (its data ships in the package: no download)."""
    try:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier
    except ImportError:
        raise DetectorUnavailableError(
            "language check needs py3langid; install it or pass check_language=False"
        ) from None
    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


@cache
def _identifier() -> Any:
    """The py3langid model over all its languages (loaded once)."""
    return _load_identifier()


@cache
def _restricted_identifier(langs: tuple[str, ...]) -> Any:
    """The identifier restricted to ``langs`` (the packs' languages it knows)."""
    identifier = _load_identifier()
    identifier.set_languages(list(langs))
    return identifier


def identifiable_languages() -> frozenset[str]:
    """Canonical codes of the packs' languages that the offline identifier knows."""
    from polydeid.locales import languages

    known = set(_identifier().labels)
    return frozenset(code for code in languages() if code in known)


def _check_languages(records: Sequence[_Record], issues: _Issues) -> dict[str, LanguageCheck]:
    """Compare each document's identified language with its declared one."""
    known = tuple(sorted(identifiable_languages()))
    identifier = _restricted_identifier(known)
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for record in records:
        outcome = _language_outcome(record, identifier, frozenset(known), issues)
        counts[record.lang][outcome] += 1
    return {lang: LanguageCheck(**dict(c)) for lang, c in counts.items()}


def _language_outcome(
    record: _Record, identifier: Any, known: frozenset[str], issues: _Issues
) -> str:
    text = _masked(record, blank=True)
    if record.lang not in known or len(_LETTER.findall(text)) < LANG_MIN_LETTERS:
        return "unverifiable"
    detected, probability = identifier.classify(text)
    if detected == record.lang:
        return "verified"
    if CODE_MIXED in _edge_cases(record):
        return "code_mixed"
    message = f"declared {record.lang!r}, identified {detected!r} (p={probability:.2f})"
    if probability >= LANG_CONFIDENT:
        issues.error(record.location, "LANG_MISMATCH", message)
        return "mismatched"
    issues.warn(record.location, "LANG_UNCERTAIN", message)
    return "uncertain"


def _edge_cases(record: _Record) -> list[str]:
    cases = record.meta.get("edge_cases", [])
    return [c for c in cases if isinstance(c, str)] if isinstance(cases, list) else []


# --------------------------------------------------------------------------------------------
# Masking, tokens, shingles


def _masked(record: _Record, *, blank: bool = False) -> str:
    """The text with each identifier span replaced by ``<LABEL>`` (or a space when ``blank``)."""
    return mask_spans(record.text, record.spans, blank=blank)


def mask_spans(text: str, spans: Iterable[Any], *, blank: bool = False) -> str:
    """``text`` with each span replaced by ``<LABEL>`` (or a space when ``blank``)."""
    parts, last = [], 0
    for span in sorted(spans, key=lambda s: (s.start, -s.end)):
        if span.start < last:
            continue
        parts.append(text[last : span.start])
        parts.append(" " if blank else f" <{span.label.value}> ")
        last = span.end
    parts.append(text[last:])
    return "".join(parts)


def confident_mismatch(
    text: str, lang: str, spans: Iterable[Any], edge_cases: Sequence[str] = ()
) -> bool:
    """Whether the language check would report ``LANG_MISMATCH`` for this document."""
    known = identifiable_languages()
    if lang not in known or CODE_MIXED in edge_cases:
        return False
    blanked = mask_spans(text, spans, blank=True)
    if len(_LETTER.findall(blanked)) < LANG_MIN_LETTERS:
        return False
    detected, probability = _restricted_identifier(tuple(sorted(known))).classify(blanked)
    return detected != lang and probability >= LANG_CONFIDENT


def _tokens(text: str) -> list[str]:
    return [t if t.startswith("<") else t.lower() for t in _TOKEN.findall(text)]


def _shingles(tokens: Sequence[str]) -> set[int]:
    """Hashes of the word 5-grams (the whole token list when it is shorter)."""
    if len(tokens) < SHINGLE:
        return {zlib.crc32("\x1f".join(tokens).encode("utf-8"))}
    return {
        zlib.crc32("\x1f".join(tokens[i : i + SHINGLE]).encode("utf-8"))
        for i in range(len(tokens) - SHINGLE + 1)
    }


@cache
def _permutations() -> tuple[np.ndarray, np.ndarray]:
    """Fixed MinHash coefficients (a < 2**31 so that a*x + b stays inside 64 bits)."""
    rng = np.random.default_rng(20261130)
    size = _HASHES
    a = rng.integers(1, 2**31, size=size, dtype=np.uint64)
    b = rng.integers(0, 2**31, size=size, dtype=np.uint64)
    return a, b


def _minhash(shingles: set[int]) -> np.ndarray:
    a, b = _permutations()
    values = np.fromiter(shingles, dtype=np.uint64, count=len(shingles))
    return ((np.outer(values, a) + b) % np.uint64(_PRIME)).min(axis=0)


def _jaccard(a: set[int], b: set[int]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


# --------------------------------------------------------------------------------------------
# Duplicates


#: At most this many earlier documents of one LSH bucket are compared with a new one.
_BUCKET_CANDIDATES = 50


def _banding(threshold: float) -> tuple[int, int]:
    """The most selective banding whose LSH threshold (1/b)^(1/r) is at most ``threshold - 0.15``.

    At 0.9 that is 16 bands of 8 rows (S-curve midpoint 0.71): a pair at Jaccard 0.9 becomes a
    candidate with probability 0.9999, a pair at 0.5 with probability 0.06.
    """
    for bands, rows in _BANDINGS:
        if (1 / bands) ** (1 / rows) <= threshold - 0.15:
            return bands, rows
    return _BANDINGS[-1]


def _check_duplicates(records: Sequence[_Record], issues: _Issues, threshold: float) -> None:
    """Exact duplicates (same text), then near duplicates by masked 5-gram Jaccard via LSH."""
    first_of_text: dict[str, int] = {}
    buckets: dict[tuple[int, bytes], list[int]] = defaultdict(list)
    shingle_sets: dict[int, set[int]] = {}
    bands, rows = _banding(threshold)
    for i, record in enumerate(records):
        earlier = first_of_text.setdefault(record.text, i)
        if earlier != i:
            issues.error(
                record.location, "EXACT_DUPLICATE", f"same text as {records[earlier].location}"
            )
            continue
        shingles = _shingles(_tokens(_masked(record)))
        shingle_sets[i] = shingles
        signature = _minhash(shingles)
        keys = [
            (band, signature[band * rows : (band + 1) * rows].tobytes()) for band in range(bands)
        ]
        match = _near_match(i, keys, buckets, shingle_sets, threshold)
        if match is not None:
            j, similarity = match
            issues.error(
                record.location,
                "NEAR_DUPLICATE",
                f"near duplicate of {records[j].location} "
                f"(Jaccard {similarity:.2f} on masked word 5-grams)",
            )
        for key in keys:
            buckets[key].append(i)


def _near_match(
    i: int,
    keys: Sequence[tuple[int, bytes]],
    buckets: Mapping[tuple[int, bytes], list[int]],
    shingle_sets: Mapping[int, set[int]],
    threshold: float,
) -> tuple[int, float] | None:
    """The earliest earlier document at or above ``threshold`` among the LSH candidates."""
    candidates = sorted({j for key in keys for j in buckets.get(key, ())[:_BUCKET_CANDIDATES]})
    for j in candidates:
        similarity = _jaccard(shingle_sets[i], shingle_sets[j])
        if similarity >= threshold:
            return j, similarity
    return None


# --------------------------------------------------------------------------------------------
# Diversity


def _sentences(masked: str) -> list[str]:
    """Sentence shapes: digits normalised to 0, whitespace collapsed."""
    shapes = []
    for sentence in _SENTENCE_END.split(masked):
        shape = " ".join(_DIGIT.sub("0", sentence).split())
        if shape:
            shapes.append(shape)
    return shapes


class _NgramCounter:
    """Distinct/total word 1-, 2- and 3-grams, counted as integer codes with numpy."""

    #: Token ids below 2**21 keep a trigram code inside 63 bits (ids wrap beyond that).
    _BASE = 1 << 21

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.codes: list[list[np.ndarray]] = [[], [], []]

    def add(self, tokens: Sequence[str]) -> None:
        ids = np.fromiter(
            (self.ids.setdefault(t, len(self.ids)) % self._BASE for t in tokens),
            dtype=np.int64,
            count=len(tokens),
        )
        codes = ids
        for n in range(3):
            if n:
                codes = codes[:-1] * self._BASE + ids[n:]
            self.codes[n].append(codes)

    def ratios(self) -> tuple[float, float, float]:
        found = []
        for arrays in self.codes:
            joined = np.concatenate(arrays) if arrays else np.empty(0, dtype=np.int64)
            found.append(len(np.unique(joined)) / len(joined) if len(joined) else 0.0)
        return found[0], found[1], found[2]


def _diversity(
    records: Sequence[_Record], language: Mapping[str, LanguageCheck]
) -> dict[str, Diversity]:
    by_lang: dict[str, list[_Record]] = defaultdict(list)
    for record in records:
        by_lang[record.lang].append(record)
    return {
        lang: _language_diversity(lang, group, language.get(lang, LanguageCheck()))
        for lang, group in sorted(by_lang.items())
    }


def _language_diversity(lang: str, records: Sequence[_Record], check: LanguageCheck) -> Diversity:
    spans: Counter[str] = Counter()
    facts: Counter[str] = Counter()
    templates: set[str] = set()
    shapes: Counter[str] = Counter()
    ngrams = _NgramCounter()
    names: Counter[str] = Counter()
    axes: dict[str, Counter[str]] = {axis: Counter() for axis in REPORTED_AXES}
    for record in records:
        spans.update(s.label.value for s in record.spans)
        facts.update(f.label.value for f in record.facts)
        # Distinct sentence templates (``templates``), else distinct document templates.
        listed = record.meta.get("templates")
        if isinstance(listed, list):
            templates.update(t for t in listed if isinstance(t, str))
        elif isinstance(record.meta.get("template"), str):
            templates.add(record.meta["template"])
        masked = _masked(record)
        shapes.update(_sentences(masked))
        ngrams.add(_tokens(masked))
        for span in record.spans:
            if span.label in NAME_CATEGORIES:
                names.update(_tokens(record.text[span.start : span.end]))
        _count_axes(record.meta, axes)
    return Diversity(
        lang=lang,
        documents=len(records),
        spans=MappingProxyType(dict(spans.most_common())),
        facts=MappingProxyType(dict(facts.most_common())),
        templates=len(templates),
        sentences=sum(shapes.values()),
        sentence_shapes=len(shapes),
        distinct_n=ngrams.ratios(),
        name_tokens=sum(names.values()),
        distinct_name_tokens=len(names),
        axes=MappingProxyType(
            {k: MappingProxyType(dict(v.most_common())) for k, v in axes.items() if v}
        ),
        language=check,
    )


def _count_axes(meta: Mapping[str, Any], axes: dict[str, Counter[str]]) -> None:
    for axis, counter in axes.items():
        value = meta.get(axis)
        values = value if isinstance(value, list) else [value]
        counter.update(v for v in values if isinstance(v, str))


# --------------------------------------------------------------------------------------------
# Markdown


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines.extend("| " + " | ".join(row) + " |" for row in rows)
    return lines


def _summary_row(d: Diversity) -> list[str]:
    c = d.language
    lang_check = (
        f"{c.verified} ok, {c.mismatched} wrong, {c.uncertain} unsure, "
        f"{c.code_mixed} mixed, {c.unverifiable} unverifiable"
    )
    return [
        d.lang,
        str(d.documents),
        str(sum(d.spans.values())),
        str(d.templates),
        f"{d.sentence_shapes}/{d.sentences}",
        *(f"{r:.3f}" for r in d.distinct_n),
        f"{d.distinct_name_tokens}/{d.name_tokens}",
        lang_check,
    ]


def _markdown(report: ValidationReport) -> str:
    lines = [
        f"# Corpus validation: {report.name}",
        "",
        f"{report.documents} documents; {len(report.errors)} errors, "
        f"{len(report.warnings)} warnings; {'OK' if report.ok else 'NOT OK'}.",
        "",
    ]
    codes = report.codes()
    if codes:
        lines += _table(["code", "count"], ([c, str(n)] for c, n in sorted(codes.items())))
        lines.append("")
    lines += [
        "## Diversity per language",
        "",
        "Sentence shapes: sentences with identifiers replaced by their labels and digits "
        "by 0, distinct/total. Distinct-n: distinct/total word n-grams of the masked text. "
        "Name tokens: distinct/total tokens inside name spans.",
        "",
    ]
    lines += _table(
        [
            "lang",
            "docs",
            "spans",
            "templates",
            "sentence shapes",
            "distinct-1",
            "distinct-2",
            "distinct-3",
            "name tokens",
            "language check",
        ],
        (_summary_row(d) for _, d in sorted(report.diversity.items())),
    )
    for lang, d in sorted(report.diversity.items()):
        lines += ["", f"### {lang}", ""]
        labels = sorted(d.spans.items()) or [("(none)", 0)]
        lines += _table(["label", "spans"], ([k, str(v)] for k, v in labels))
        if d.facts:
            rows = ([k, str(v)] for k, v in sorted(d.facts.items()))
            lines += ["", *_table(["fact", "spans"], rows)]
        for axis, counts in d.axes.items():
            rows = ([k, str(v)] for k, v in sorted(counts.items()))
            lines += ["", *_table([axis, "documents"], rows)]
    return "\n".join(lines) + "\n"
