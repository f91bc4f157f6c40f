"""Minimal shapes: what a span of each identifier category must at least look like.

The table (``lexicon/data/shapes.toml``) gives, per category, the least number of letters and
digits, the structures a contact needs (``@``, ``://``, a domain), and the whole-span shapes
that are never an identifier of that category (a clock time, a shift range ``1900-0700``, a
list of vital signs, a fluid balance ``+4701``). :func:`fits` judges one span's text by it;
the segment pass ``shapes.minimal`` (:mod:`polydeid.detect.passes`) drops every span of any
detector that does not fit. Phone lengths come from the ``phonenumbers`` metadata (the
shortest and longest possible number of any region) and calendar words from the language
packs' month and weekday names.
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
from polydeid.locales import languages
from polydeid.locales.ages import age_languages, age_words
from polydeid.locales.contacts import contact_words
from polydeid.locales.dates import language_dates, name_key
from polydeid.text.scripts import UNSPACED

#: A country calling code has at most this many digits.
_COUNTRY_CODE_DIGITS = 3
#: The value of ``min_digits``/``max_digits`` that stands for the phone plans' lengths.
_PHONE_PLAN = "phone_plan"
_WORD = re.compile(r"[^\W\d_]+(?:\.)?")


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
    raw = tomllib.loads(
        (resources.files("polydeid.lexicon") / "data" / "shapes.toml").read_text("utf-8")
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


def fits(category: Category, text: str) -> bool:
    """Whether ``text`` has at least the minimal shape of ``category``."""
    shape = shapes()[category]
    stripped = text.strip()
    letters = sum(c.isalpha() for c in stripped)
    digits = sum(c.isdigit() for c in stripped)
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
    return not any(p.fullmatch(stripped) for p in shape.excluded)
