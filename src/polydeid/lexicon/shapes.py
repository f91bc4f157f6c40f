"""Minimal shapes: what a span of each identifier category must at least look like.

The table (``lexicon/data/shapes.toml``) gives, per category, the least number of letters and
digits, the structures a contact needs (``@``, ``://``, a domain), and the whole-span shapes
that are never an identifier of that category (a clock time, a shift range ``1900-0700``, a
list of vital signs, a fluid balance ``+4701``). :func:`fits` judges one span's text by it;
the segment pass ``shapes.minimal`` (:mod:`polydeid.detect.passes`) drops every span of any
detector that does not fit. Those look-alikes exclude only a span with no label: an ID or a
phone written right after a label of its kind (:func:`has_label`: "MRN: 2011-0934", "Phone:
2210-1234", "NHS number 123-456") is one whatever its shape. Phone lengths come from the
``phonenumbers`` metadata (the shortest and longest possible number of any region) and
calendar words from the language packs' month and weekday names.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from polydeid.core.errors import ConfigError
from polydeid.core.taxonomy import Category
from polydeid.lexicon.fields import RoleKind, normalise_name, role_for_words
from polydeid.locales import check_data, countries, languages
from polydeid.locales.ages import age_languages, age_words
from polydeid.locales.contacts import contact_words
from polydeid.locales.dates import language_dates, name_key
from polydeid.locales.identifiers import identifier_words
from polydeid.locales.ids import country_ids
from polydeid.text.scripts import UNSPACED

#: A country calling code has at most this many digits.
_COUNTRY_CODE_DIGITS = 3
#: The value of ``min_digits``/``max_digits`` that stands for the phone plans' lengths.
_PHONE_PLAN = "phone_plan"
_WORD = re.compile(r"[^\W\d_]+(?:\.)?")
#: The categories a label vouches for: an ID label for every ID category, a phone label for
#: a phone.
_LABEL_GROUPS = (
    frozenset({Category.ID_NATIONAL, Category.ID_RECORD, Category.ID_OTHER}),
    frozenset({Category.CONTACT_PHONE}),
)
#: The tables of ``identifiers.toml`` that label an ID (a postal code's label does not).
_ID_LABELS = ("national_id", "record", "passport", "insurance", "licence")
#: How far before a span its label is looked for (on the span's line), and its most words.
_LABEL_REACH = 80
_LABEL_WORDS = 8
#: Filler words read between a label and its value ("MRN no.", "Nummer ist"), at most.
_LABEL_FILLERS = 3
_LINE_BREAK = re.compile(r"[\n\r;|]")


@dataclass(frozen=True, slots=True)
class Shape:
    """The least a span of ``category`` must be (see the table's header for each field)."""

    category: Category
    min_alnum: int = 0
    min_letters: int = 0
    min_digits: int = 0
    max_digits: int | None = None
    calendar_word: bool = False
    age_word: bool = False
    structure: tuple[re.Pattern[str], ...] = ()
    excluded: tuple[re.Pattern[str], ...] = ()


@cache
def phone_plan_lengths() -> tuple[int, int]:
    """The fewest and most digits of a number in any region's plan (``phonenumbers``
    metadata: the general description's possible lengths), the most with a country code."""
    from phonenumbers import PhoneMetadata
    from phonenumbers.phonenumberutil import SUPPORTED_REGIONS

    lengths = [
        n
        for region in SUPPORTED_REGIONS
        if (meta := PhoneMetadata.metadata_for_region(region)) is not None
        and meta.general_desc is not None
        for n in meta.general_desc.possible_length
    ]
    return min(lengths), max(lengths) + _COUNTRY_CODE_DIGITS


def _digits_bound(raw: object, where: str, index: int) -> int | None:
    if raw is None:
        return None
    if raw == _PHONE_PLAN:
        return phone_plan_lengths()[index]
    if isinstance(raw, int) and not isinstance(raw, bool) and raw >= 0:
        return raw
    raise ConfigError(f"{where}: expected a count or {_PHONE_PLAN!r}", location="shapes.toml")


def _patterns(
    names: Any, table: Mapping[str, re.Pattern[str]], where: str
) -> tuple[re.Pattern[str], ...]:
    if not isinstance(names, list):
        raise ConfigError(f"{where}: expected a list of names", location="shapes.toml")
    unknown = [n for n in names if n not in table]
    if unknown:
        raise ConfigError(
            f"{where}: unknown {', '.join(map(str, unknown))}; known: {', '.join(table)}",
            location="shapes.toml",
        )
    return tuple(table[n] for n in names)


@cache
def _at_words() -> str:
    """An alternation of the words written for "@" in every language pack, longest first."""
    words = {w.lower() for code in languages() for w in contact_words(code).at}
    return "|".join(re.escape(w) for w in sorted(words, key=lambda w: (-len(w), w)))


def _compiled(raw: Any, where: str) -> dict[str, re.Pattern[str]]:
    try:
        return {
            name: re.compile(p.replace("{at}", _at_words()) if "{at}" in p else p)
            for name, p in dict(raw).items()
        }
    except re.error as exc:
        raise ConfigError(f"{where}: {exc}", location="shapes.toml") from None


_KNOWN_KEYS = frozenset(
    {
        "min_alnum",
        "min_letters",
        "min_digits",
        "max_digits",
        "calendar_word",
        "age_word",
        "structure",
        "not",
    }
)


@cache
def shapes() -> Mapping[Category, Shape]:
    """Every category's minimal shape; raises :class:`ConfigError` for a malformed table or a
    category the table leaves out."""
    raw = check_data(
        tomllib.loads(
            (resources.files("polydeid.lexicon") / "data" / "shapes.toml").read_text("utf-8")
        ),
        "lexicon/data/shapes.toml",
    )
    excluded = _compiled(raw.get("excluded", {}), "[excluded]")
    structures = _compiled(raw.get("structures", {}), "[structures]")
    table: dict[Category, Shape] = {}
    for name, spec in raw.get("category", {}).items():
        where = f"[category.{name}]"
        category = Category.parse(name)
        unknown = set(spec) - _KNOWN_KEYS
        if unknown:
            raise ConfigError(f"{where}: unknown key {', '.join(sorted(unknown))}")
        table[category] = Shape(
            category,
            min_alnum=int(spec.get("min_alnum", 0)),
            min_letters=int(spec.get("min_letters", 0)),
            min_digits=_digits_bound(spec.get("min_digits", 0), where, 0) or 0,
            max_digits=_digits_bound(spec.get("max_digits"), where, 1),
            calendar_word=bool(spec.get("calendar_word", False)),
            age_word=bool(spec.get("age_word", False)),
            structure=_patterns(spec.get("structure", []), structures, where),
            excluded=_patterns(spec.get("not", []), excluded, where),
        )
    missing = [c.name for c in Category if c not in table]
    if missing:
        raise ConfigError(f"shapes.toml lists no shape for {', '.join(missing)}")
    return table


@cache
def calendar_words() -> frozenset[str]:
    """Month and weekday names (all forms and variants, :func:`name_key` form, without a final
    dot) of every language pack."""
    words: set[str] = set()
    for code in languages():
        pack = language_dates(code)
        for forms in (pack.month_forms, pack.weekday_forms):
            for form in forms.values():
                words.update(name_key(n).rstrip(".") for n in form.names)
        words.update(k.rstrip(".") for k in pack.month_variants)
        words.update(k.rstrip(".") for k in pack.weekday_variants)
    return frozenset(w for w in words if w)


@cache
def age_words_any() -> frozenset[str]:
    """Number words and age unit words (:func:`name_key` form, each word of a phrase) of every
    language pack's age table (polydeid.locales.ages)."""
    words: set[str] = set()
    for code in age_languages():
        table = age_words(code)
        phrases: list[str] = []
        for unit in table.units.values():
            phrases += [*unit.after, *unit.age_only, *unit.before]
        if table.numbers is not None:
            numbers = table.numbers
            phrases += [*numbers.units, *numbers.words, *numbers.tens, *numbers.hundreds]
        for phrase in phrases:
            words.update(name_key(w.group()).rstrip(".") for w in _WORD.finditer(phrase))
    return frozenset(w for w in words if w)


@cache
def _unspaced(known: frozenset[str]) -> tuple[str, ...]:
    """The words of ``known`` in a script written without spaces (looked for inside a run)."""
    return tuple(w for w in known if UNSPACED.search(w))


def _has_word(text: str, known: frozenset[str]) -> bool:
    key = name_key(text)
    if key.rstrip(".") in known:
        return True
    if any(name_key(w.group()).rstrip(".") in known for w in _WORD.finditer(text)):
        return True
    return bool(UNSPACED.search(key)) and any(w in key for w in _unspaced(known))


@cache
def _label_phrases() -> Mapping[tuple[str, ...], frozenset[Category]]:
    """Label phrases (as :func:`normalise_name` words) → the categories they vouch for: every
    language pack's identifier labels (``identifiers.toml``: national ID, record, passport,
    insurance, licence), its phone words (``contacts.toml``) and every country's ID formats'
    labels (``countries/XX/ids.toml``: "NHS number")."""
    ids, phones = _LABEL_GROUPS
    table: dict[tuple[str, ...], frozenset[Category]] = {}
    for code in languages():
        labels = identifier_words(code)
        for kind in _ID_LABELS:
            for phrase in labels.words(kind):
                if key := normalise_name(phrase):
                    table[key] = table.get(key, frozenset()) | ids
        for phrase in contact_words(code).phone:
            if key := normalise_name(phrase):
                table[key] = table.get(key, frozenset()) | phones
    for country in countries():
        for fmt in country_ids(country).formats:
            group = next((g for g in _LABEL_GROUPS if fmt.label in g), frozenset())
            for phrase in fmt.labels:
                if key := normalise_name(phrase):
                    table[key] = table.get(key, frozenset()) | group
    return table


@cache
def _fillers() -> frozenset[str]:
    """The filler words of every language pack's identifier labels (``identifiers.toml``)."""
    return frozenset(
        w for code in languages() for f in identifier_words(code).fillers for w in normalise_name(f)
    )


def has_label(category: Category, text: str, start: int) -> bool:
    """Whether a label of ``category``'s kind ends right before ``start`` in ``text`` on the
    same line, only separators and up to three filler words between: a field label whose value
    is an ID or phone (:func:`polydeid.lexicon.fields.role_for_words`), or an identifier or
    phone label of any language pack or country (:func:`_label_phrases`)."""
    group = next((g for g in _LABEL_GROUPS if category in g), None)
    if group is None:
        return False
    before = text[max(0, start - _LABEL_REACH) : start]
    breaks = [m.end() for m in _LINE_BREAK.finditer(before)]
    words = list(normalise_name(before[breaks[-1] if breaks else 0 :])[-_LABEL_WORDS:])
    for _ in range(_LABEL_FILLERS + 1):
        if not words:
            return False
        role = role_for_words(words)
        if role is not None and role.kind is RoleKind.VALUE and role.category in group:
            return True
        phrases = _label_phrases()
        ends = (tuple(words[-k:]) for k in range(1, len(words) + 1))
        if any(group & phrases.get(end, frozenset()) for end in ends):
            return True
        if words[-1] not in _fillers():
            return False
        words.pop()
    return False


def fits(category: Category, text: str, *, labelled: bool = False) -> bool:
    """Whether ``text`` has at least the minimal shape of ``category``; the look-alikes
    (``not``: a clock range, vitals, a balance) exclude it only where it has no label
    (``labelled``, :func:`has_label`)."""
    shape = shapes()[category]
    stripped = text.strip()
    letters = sum(map(str.isalpha, stripped))
    digits = sum(map(str.isdigit, stripped))
    if letters + digits < max(shape.min_alnum, 1) or letters < shape.min_letters:
        return False
    if digits < shape.min_digits:
        return False
    if shape.max_digits is not None and digits > shape.max_digits:
        return False
    if shape.calendar_word and not digits and not _has_word(stripped, calendar_words()):
        return False
    if shape.age_word and not digits and not _has_word(stripped, age_words_any()):
        return False
    if shape.structure and not any(p.search(stripped) for p in shape.structure):
        return False
    return labelled or not any(p.fullmatch(stripped) for p in shape.excluded)
