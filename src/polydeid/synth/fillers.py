"""Realistic slot values for the synthetic corpus generator, drawn from the locale packs.

``Filler(lang, country=..., seed=..., name_split=...)`` makes values for template slots:
``value(category, variant=...) -> FilledValue(text, category, context_prefix)``.

Where each category comes from:

* **Names** (PERSON, PERSON_THIRD_PARTY): ``names.toml`` pools via
  :func:`polydeid.locales.names.name_data`, in the language's order and joiner. Shapes are
  the variants in :data:`NAME_VARIANTS`. ``name_split`` keeps only the given and family names
  whose hash falls in that third, so train, dev and test names are disjoint.
* **Clans** (PERSON_CLAN): the pool's ``clans`` list; other languages raise.
* **Places** (LOCATION_*, ORGANIZATION): the country's ``places.toml`` via
  :func:`polydeid.locales.places.place_data`.
* **National IDs**: the country's ``[[format]]`` patterns in ``ids.toml``, sampled and kept
  only when the format's own validator (the rule layer's, checksums included) accepts them;
  countries without a format get a labelled value after a national-ID word.
* **Record numbers**: labelled values after a ``[record]`` word, or the facility register
  structure (``MUL/2024/00871``).
* **Other IDs**: IBANs (python-stdnum check digits), Luhn-valid payment cards of a listed
  issuer range, passport numbers after a passport word.
* **Phones**: phonenumbers' example mobile/fixed number of the country with random subscriber
  digits, kept only when phonenumbers calls it valid; national, international, E.164 or
  spaced.
* **Other contacts**: e-mails at RFC 2606 domains, e-mails obfuscated with the language's
  ``[obfuscation]`` words, URLs.
* **Dates**: numeric (day-first, or month-first in the ``month_first_regions``), ISO, and
  textual with the language's month names and date words.
* **Ages**: a number with the language's year unit before or after it.

``context_prefix`` is a context word of the language (``"NIN"``, ``"simu"``, ``"umri"``);
templates may put it before the value, and formats that need context are only recognised
with it. Profession, tribe, religion and sex have no data in the packs and raise
:class:`~polydeid.core.errors.ConfigError`, as do categories the chosen country has no data
for.
"""

from __future__ import annotations

import hashlib
import random
import re
import re._parser as sre_parse
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import phonenumbers
from stdnum import iban, luhn
from stdnum.cn import ric as cn_ric

from polydeid.core.errors import ConfigError
from polydeid.core.taxonomy import Category
from polydeid.detect.rules.ids import IdFormat, id_formats
from polydeid.locales import canonical_language, default_countries
from polydeid.locales.ages import UnitWords, age_words
from polydeid.locales.contacts import contact_words
from polydeid.locales.dates import LanguageDates, language_dates
from polydeid.locales.identifiers import identifier_words
from polydeid.locales.names import NameData, NamePool, name_data, name_titles
from polydeid.locales.places import PlaceData, place_data
from polydeid.text.normalise import normalise

SPLITS = ("train", "dev", "test")

NAME_VARIANTS = ("full", "title", "initials", "caps", "single", "hyphenated", "apostrophe")

VARIANTS: Mapping[Category, tuple[str, ...]] = {
    Category.PERSON: NAME_VARIANTS,
    Category.PERSON_THIRD_PARTY: NAME_VARIANTS,
    Category.PERSON_CLAN: ("clan",),
    Category.LOCATION_VILLAGE: ("place",),
    Category.LOCATION_FACILITY: ("named", "pattern"),
    Category.LOCATION_ADDRESS: ("street",),
    Category.ORGANIZATION: ("pattern",),
    Category.ID_NATIONAL: ("format", "labelled"),
    Category.ID_RECORD: ("labelled", "structure"),
    Category.ID_OTHER: ("iban", "card", "passport"),
    Category.CONTACT_PHONE: ("national", "international", "e164", "spaced"),
    Category.CONTACT_OTHER: ("email", "obfuscated_email", "url"),
    Category.DATE: ("numeric", "iso", "text"),
    Category.AGE: ("unit_before", "unit_after", "age_only"),
}

#: Countries' IBAN BBAN shapes (SWIFT IBAN Registry); "n" digits, "a" capitals.
_IBAN_BBAN = {"DE": "n18", "GB": "a4n14", "NL": "a4n10", "IT": "a1n10n12", "FR": "n10a1n10n2"}
#: Issuer prefixes and lengths of cards (from countries/XX/ids.toml ``[[format.iin]]``).
_CARDS = (("4", 16), ("51", 16), ("55", 16), ("2221", 16), ("34", 15), ("37", 15), ("6011", 16))
_EXAMPLE_DOMAINS = ("example.org", "example.com", "example.net")
_MAX_TRIES = 5000
_MIN_YEAR, _MAX_YEAR = 1935, 2025
_LOWER_ASCII = frozenset(string.ascii_lowercase)


@dataclass(frozen=True, slots=True)
class FilledValue:
    """A slot value, its category and an optional context word to write before it."""

    text: str
    category: Category
    context_prefix: str = ""

    def __repr__(self) -> str:
        return f"FilledValue(len={len(self.text)} {self.category.name})"


def name_split_of(name: str) -> str:
    """The split (``train``/``dev``/``test``) a name belongs to, by a hash of its normal form."""
    digest = hashlib.sha256(normalise(name).encode("utf-8")).digest()
    return SPLITS[int.from_bytes(digest[:8], "big") % 3]


#: Particles of compound names that belong to no split (they are not names: da, van, bin…).
NAME_PARTICLES = frozenset(
    [
        "de",
        "del",
        "della",
        "di",
        "da",
        "das",
        "do",
        "dos",
        "du",
        "la",
        "le",
        "van",
        "von",
        "der",
        "den",
        "ter",
        "ten",
        "zu",
        "bin",
        "ibn",
        "al",
        "el",
        "y",
        "e",
    ]
)


def in_split(name: str, split: str) -> bool:
    """Whether every word of pool entry ``name`` falls in ``split`` (particles aside), so that
    compound entries ("Jean-Paul", "Maria Eduarda") never share a word across splits."""
    words = [w for w in _name_words(name) if w.lower() not in NAME_PARTICLES]
    return bool(words) and all(name_split_of(w) == split for w in words)


def _name_words(name: str) -> list[str]:
    return [w for w in re.split(r"[\s\-‐]+", name) if w]


class Filler:
    """Deterministic, realistic slot values for one language (and country)."""

    def __init__(
        self, lang: str, *, country: str | None = None, seed: int, name_split: str = "train"
    ) -> None:
        if name_split not in SPLITS:
            raise ConfigError(f"name_split must be one of {', '.join(SPLITS)}")
        self.lang = canonical_language(lang)
        self.countries = (country.upper(),) if country else default_countries(self.lang)
        self.name_split = name_split
        key = f"{seed}|{self.lang}|{','.join(self.countries)}|{name_split}".encode()
        self._rng = random.Random(int.from_bytes(hashlib.sha256(key).digest()[:16], "big"))
        self._years = (_MIN_YEAR, _MAX_YEAR)
        self._female: bool | None = None

    def __repr__(self) -> str:
        return f"Filler({self.lang}, countries={self.countries}, split={self.name_split})"

    def name_shapes(self) -> tuple[str, ...]:
        """The name shapes (:data:`NAME_VARIANTS`) this language and name split allow."""
        return _shapes(self.lang, self.countries, self.name_split)

    @property
    def country(self) -> str | None:
        return self.countries[0] if self.countries else None

    def value(
        self,
        category: Category,
        *,
        variant: str | None = None,
        years: tuple[int, int] | None = None,
        female: bool | None = None,
    ) -> FilledValue:
        """One value of ``category``; ``variant`` picks a shape from :data:`VARIANTS`.

        ``years`` bounds the year of a DATE (default 1935–2025); ``female`` chooses a person's
        names of women (True) or men (False) instead of either (None).
        """
        known = VARIANTS.get(category)
        if known is None:
            raise ConfigError(
                f"no filler for category {category.name}: the locale packs carry no data for it"
            )
        if variant is not None and variant not in known:
            raise ConfigError(
                f"unknown variant {variant!r} for {category.name}; known: {', '.join(known)}"
            )
        self._years = years or (_MIN_YEAR, _MAX_YEAR)
        self._female = female
        text, prefix = _MAKERS[category](self, variant)
        return FilledValue(text, category, prefix)

    # --- helpers -----------------------------------------------------------------------------

    def _choice(self, values: Sequence[str], what: str) -> str:
        if not values:
            raise ConfigError(f"no {what} for language {self.lang} / countries {self.countries}")
        return values[self._rng.randrange(len(values))]

    def _variant(self, variant: str | None, options: Sequence[str]) -> str:
        return variant if variant is not None else options[self._rng.randrange(len(options))]

    def _prefix(self, words: Sequence[str]) -> str:
        """One of ``words`` (labels of ``identifiers.toml`` or ``contacts.toml``), or ""."""
        return words[self._rng.randrange(len(words))] if words else ""

    def _digits(self, n: int) -> str:
        return "".join(self._rng.choice(string.digits) for _ in range(n))


# --- names -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _SplitPool:
    given_female: tuple[str, ...]
    given_male: tuple[str, ...]
    family_female: tuple[str, ...]
    family_male: tuple[str, ...]
    middle_female: tuple[str, ...]
    middle_male: tuple[str, ...]


@cache
def _split_pool(lang: str, countries: tuple[str, ...], split: str) -> _SplitPool:
    data = _names(lang)
    pool = data.pool(countries)

    def keep(values: Sequence[str]) -> tuple[str, ...]:
        return tuple(v for v in values if in_split(v, split))

    return _SplitPool(
        given_female=keep(pool.given(True)),
        given_male=keep(pool.given(False)),
        family_female=keep(pool.surname(True)),
        family_male=keep(pool.surname(False)),
        middle_female=keep(pool.middle(True)),
        middle_male=keep(pool.middle(False)),
    )


def _names(lang: str) -> NameData:
    data = name_data(lang)
    if data is None:
        raise ConfigError(f"language {lang} ships no names.toml")
    return data


@cache
def _shapes(lang: str, countries: tuple[str, ...], split: str) -> tuple[str, ...]:
    data = _names(lang)
    spaced, cased = data.joiner != "", data.script in ("Latin", "Cyrillic")
    pool = _split_pool(lang, countries, split)
    names = pool.given_male + pool.given_female + pool.family_male + pool.family_female
    allowed = {
        "full": True,
        "title": bool(name_titles(data.lang)),
        "initials": spaced,
        "caps": cased,
        "single": True,
        "hyphenated": data.script == "Latin" and not data.family_first,
        "apostrophe": any(_has_apostrophe(n) for n in names),
    }
    return tuple(v for v in NAME_VARIANTS if allowed[v])


#: How often each shape is drawn when no variant is asked for.
_SHAPE_WEIGHTS = {
    "full": 8,
    "title": 2,
    "initials": 1,
    "caps": 2,
    "single": 1,
    "hyphenated": 1,
    "apostrophe": 1,
}


def _has_apostrophe(name: str) -> bool:
    return "'" in name or "’" in name


def _person(f: Filler, variant: str | None) -> tuple[str, str]:
    data = _names(f.lang)
    shapes = f.name_shapes()
    if variant is not None and variant not in shapes:
        raise ConfigError(f"name shape {variant!r} is not a convention of language {f.lang}")
    shape = variant or f._rng.choices(shapes, [_SHAPE_WEIGHTS[s] for s in shapes])[0]
    pool = _split_pool(f.lang, f.countries, f.name_split)
    drawn = f._rng.random() < 0.5  # drawn either way: a chosen sex moves no later value
    female = drawn if f._female is None else f._female
    given_list = pool.given_female if female else pool.given_male
    family_list = pool.family_female if female else pool.family_male
    given = f._choice(given_list, "given names")
    family = f._choice(family_list, "family names")
    if shape == "apostrophe":
        given, family = _with_apostrophe(f, pool, given, family)
    if shape == "single":
        return given, ""
    if shape == "hyphenated":
        others = [n for n in family_list if n != family and " " not in n]
        family = f"{family}-{f._choice(others, 'second family names')}"
    if data.lang == "vi":
        middle = f._choice(pool.middle_female if female else pool.middle_male, "middle names")
        given = f"{middle} {given}"
    if shape == "initials":
        given = " ".join(w[0] + "." for w in given.split())
    full = _join(data, given, family)
    if shape == "caps":
        full = full.upper()
    if shape == "title":
        title = f._choice(name_titles(f.lang), "titles")
        full = f"{full}{title}" if data.joiner == "" else f"{title} {full}"
    return full, ""


def _with_apostrophe(f: Filler, pool: _SplitPool, given: str, family: str) -> tuple[str, str]:
    """Swap in a given or family name of this split that is written with an apostrophe."""
    givens = [n for n in pool.given_female + pool.given_male if _has_apostrophe(n)]
    families = [n for n in pool.family_female + pool.family_male if _has_apostrophe(n)]
    options = [("given", n) for n in givens] + [("family", n) for n in families]
    if not options:
        raise ConfigError(f"no names with an apostrophe in split {f.name_split} of {f.lang}")
    role, name = options[f._rng.randrange(len(options))]
    return (name, family) if role == "given" else (given, name)


def _join(data: NameData, given: str, family: str) -> str:
    first, last = (family, given) if data.family_first else (given, family)
    return f"{first}{data.joiner}{last}"


def _clan(f: Filler, variant: str | None) -> tuple[str, str]:
    pool: NamePool = _names(f.lang).pool(f.countries)
    return f._choice(pool.clans, "clans"), ""


# --- places ------------------------------------------------------------------------------------


def _places(f: Filler, need: Callable[[PlaceData], bool]) -> PlaceData:
    for cc in f.countries:
        data = place_data(cc)
        if data is not None and need(data):
            return data
    raise ConfigError(f"no places.toml data of this kind for countries {f.countries}")


def _village(f: Filler, variant: str | None) -> tuple[str, str]:
    return f._choice(_places(f, lambda p: bool(p.places)).places, "places"), ""


def _facility(f: Filler, variant: str | None) -> tuple[str, str]:
    data = _places(f, lambda p: bool(p.facility_names or p.facility_patterns))
    kinds = (("named", data.facility_names), ("pattern", data.facility_patterns))
    options = [v for v, ok in kinds if ok]
    shape = f._variant(variant, options)
    if shape == "named":
        return f._choice(data.facility_names, "facility names"), ""
    return _fill_place(f, data, data.facility_patterns), ""


def _organization(f: Filler, variant: str | None) -> tuple[str, str]:
    data = _places(f, lambda p: bool(p.organization_patterns))
    return _fill_place(f, data, data.organization_patterns), ""


def _fill_place(f: Filler, data: PlaceData, patterns: Sequence[str]) -> str:
    pattern = f._choice(patterns, "patterns")
    return pattern.replace("{place}", f._choice(data.places, "places"))


def _address(f: Filler, variant: str | None) -> tuple[str, str]:
    data = _places(f, lambda p: bool(p.streets and p.address_patterns))
    pattern = f._choice(data.address_patterns, "address patterns")
    number = str(f._rng.randint(1, 250))
    return pattern.replace("{street}", f._choice(data.streets, "streets")).replace(
        "{number}", number
    ), ""


# --- identifiers -------------------------------------------------------------------------------


def _national(f: Filler, variant: str | None) -> tuple[str, str]:
    formats = _national_formats(f.countries)
    shape = f._variant(variant, ("format",) if formats else ("labelled",))
    prefix = f._prefix(identifier_words(f.lang).national_id)
    if shape == "labelled":
        if not prefix:
            raise ConfigError(f"language {f.lang} has no national-ID words for a labelled value")
        return _letters(f, 2) + f._digits(f._rng.randint(6, 9)), prefix
    if not formats:
        raise ConfigError(f"no national ID format in ids.toml for countries {f.countries}")
    fmt = formats[f._rng.randrange(len(formats))]
    regions = tuple(dict.fromkeys((fmt.country, *f.countries, *default_countries(f.lang))))
    return _sample_valid(f._rng, fmt, regions), prefix


@cache
def _national_formats(countries: tuple[str, ...]) -> tuple[IdFormat, ...]:
    for cc in countries:
        found = tuple(
            x for x in id_formats() if x.country == cc and x.label == Category.ID_NATIONAL
        )
        if found:
            return found
    return ()


def _sample_valid(rng: random.Random, fmt: IdFormat, regions: Sequence[str]) -> str:
    tree = _parsed(fmt.pattern)
    for _ in range(_MAX_TRIES):
        text = _sample(rng, tree, rng.random() < 0.5)
        if fmt.name in _REPAIR:
            text = _REPAIR[fmt.name](rng, text)
        if (
            fmt.anchored.fullmatch(text)
            and _valid(fmt, text)
            and _plausible_year(text, fmt)
            and (fmt.checksum or not _reads_as_phone(text, regions))
        ):
            return text
    raise ConfigError(f"could not draw a valid value of format {fmt.name}")


def _valid(fmt: IdFormat, text: str) -> bool:
    try:
        return bool(fmt.valid(text))
    except Exception:
        return False


def _reads_as_phone(text: str, regions: Sequence[str]) -> bool:
    """Whether an unchecked ID also reads as a valid phone number of one of ``regions``."""
    for region in regions:
        try:
            if phonenumbers.is_valid_number(phonenumbers.parse(text, region)):
                return True
        except phonenumbers.NumberParseException:
            continue
    return False


#: Formats whose digits hold a birth year, and where it starts among the digits.
_YEAR_AT = {"cn_ric": 6, "rw_nid": 1, "tz_nida": 0}


def _plausible_year(text: str, fmt: IdFormat) -> bool:
    """IDs that embed a birth year keep it between 1935 and 2025."""
    at = _YEAR_AT.get(fmt.name)
    if at is None:
        return True
    digits = "".join(c for c in text if c.isdigit())
    return _MIN_YEAR <= int(digits[at : at + 4]) <= _MAX_YEAR


def _repair_cn_ric(rng: random.Random, text: str) -> str:
    """A county code of GB/T 2260 and the ISO 7064 check character (drawn codes rarely exist)."""
    body = rng.choice(_CN_COUNTIES) + text[6:17]
    return body + cn_ric.calc_check_digit(body + "0")


#: GB/T 2260 county codes (Dongcheng Beijing, Huangpu Shanghai, Liwan Guangzhou, …).
_CN_COUNTIES = ("110101", "110102", "310101", "440103", "510104", "330102", "420102")
_REPAIR: Mapping[str, Callable[[random.Random, str], str]] = {"cn_ric": _repair_cn_ric}


@cache
def _parsed(pattern: str) -> Any:
    return sre_parse.parse(pattern)


def _sample(rng: random.Random, tree: Any, spaced: bool) -> str:
    """A random string matching a parsed simple regex (literals, classes, repeats, branches).

    Optional separators (``" ?"``, ``"-?"``) are all written or all left out (``spaced``).
    """
    out: list[str] = []
    for op, arg in tree:
        name = str(op)
        if name == "LITERAL":
            out.append(chr(arg))
        elif name == "IN":
            out.append(_sample_class(rng, arg))
        elif name in ("MAX_REPEAT", "MIN_REPEAT"):
            low, high, sub = arg
            if (low, high) == (0, 1) and _is_separator(sub):
                count = int(spaced)
            else:
                count = rng.randint(low, low + 3 if high > 1000 else high)
            out.extend(_sample(rng, sub, spaced) for _ in range(count))
        elif name == "BRANCH":
            branches = arg[1]
            out.append(_sample(rng, branches[rng.randrange(len(branches))], spaced))
        elif name == "SUBPATTERN":
            out.append(_sample(rng, arg[-1], spaced))
        else:
            raise ConfigError(f"unsupported regex construct {name} in an ID format pattern")
    return "".join(out)


def _is_separator(sub: Any) -> bool:
    items = list(sub)
    if len(items) != 1:
        return False
    op, arg = items[0]
    if str(op) == "LITERAL":
        return not chr(arg).isalnum()
    return str(op) == "IN" and all(str(o) == "LITERAL" and not chr(a).isalnum() for o, a in arg)


def _sample_class(rng: random.Random, items: Any) -> str:
    """A character of a class; digits are preferred in mixed digit/letter classes."""
    chars: list[str] = []
    for op, arg in items:
        name = str(op)
        if name == "LITERAL":
            chars.append(chr(arg))
        elif name == "RANGE":
            chars.extend(chr(c) for c in range(arg[0], arg[1] + 1))
        elif name == "CATEGORY" and str(arg) == "CATEGORY_DIGIT":
            chars.extend(string.digits)
        else:
            raise ConfigError(f"unsupported class item {name} in an ID format pattern")
    digits = [c for c in chars if c.isdigit()]
    if digits and len(digits) < len(chars) and rng.random() < 0.8:
        chars = digits
    return chars[rng.randrange(len(chars))]


def _record(f: Filler, variant: str | None) -> tuple[str, str]:
    shape = f._variant(variant, ("labelled", "labelled", "structure"))
    prefix = f._prefix(identifier_words(f.lang).record)
    if shape == "structure":
        letters = _letters(f, f._rng.randint(2, 4))
        year = str(f._rng.randint(2000, 2025))
        year = year if f._rng.random() < 0.6 else year[2:]
        sep = f._rng.choice("/-")
        return f"{letters}{sep}{year}{sep}{f._digits(f._rng.randint(4, 6))}", prefix
    if not prefix:
        raise ConfigError(f"language {f.lang} has no record words for a labelled value")
    forms = (
        lambda: f._digits(f._rng.randint(5, 8)),
        lambda: f"{f._rng.choice(('IP', 'OP', 'ST', 'PT'))}-{f._digits(6)}",
        lambda: f"{f._digits(5)}-{_letters(f, 2)}",
    )
    return forms[f._rng.randrange(len(forms))](), prefix


def _letters(f: Filler, n: int) -> str:
    return "".join(f._rng.choice(string.ascii_uppercase) for _ in range(n))


def _other_id(f: Filler, variant: str | None) -> tuple[str, str]:
    shape = f._variant(variant, VARIANTS[Category.ID_OTHER])
    if shape == "iban":
        return _iban(f), ""
    if shape == "card":
        return _card(f), ""
    prefix = f._prefix(identifier_words(f.lang).passport)
    if not prefix:
        raise ConfigError(f"language {f.lang} has no passport words for a labelled value")
    return f._rng.choice(string.ascii_uppercase) + f._digits(7), prefix


def _iban(f: Filler) -> str:
    cc = f.country if f.country in _IBAN_BBAN else f._rng.choice(sorted(_IBAN_BBAN))
    bban = ""
    for kind, count in re.findall(r"([an])(\d+)", _IBAN_BBAN[cc]):
        pool = string.digits if kind == "n" else string.ascii_uppercase
        bban += "".join(f._rng.choice(pool) for _ in range(int(count)))
    for _ in range(_MAX_TRIES):
        compact = cc + iban.calc_check_digits(cc + "00" + bban) + bban
        if iban.is_valid(compact):
            return iban.format(compact) if f._rng.random() < 0.6 else compact
        bban = bban[:-1] + f._rng.choice(string.digits)
    raise ConfigError(f"could not draw a valid IBAN for {cc}")


def _card(f: Filler) -> str:
    prefix, length = _CARDS[f._rng.randrange(len(_CARDS))]
    body = prefix + f._digits(length - len(prefix) - 1)
    number = body + luhn.calc_check_digit(body)
    if length == 16 and f._rng.random() < 0.6:
        sep = f._rng.choice(" -")
        return sep.join(number[i : i + 4] for i in range(0, 16, 4))
    return number


# --- contacts ----------------------------------------------------------------------------------


#: Three mobile numbers to one fixed line.
_PHONE_TYPES = (phonenumbers.PhoneNumberType.MOBILE,) * 3 + (
    phonenumbers.PhoneNumberType.FIXED_LINE,
)
_PHONE_FORMATS = {
    "national": phonenumbers.PhoneNumberFormat.NATIONAL,
    "international": phonenumbers.PhoneNumberFormat.INTERNATIONAL,
    "e164": phonenumbers.PhoneNumberFormat.E164,
}


def _phone(f: Filler, variant: str | None) -> tuple[str, str]:
    region = _phone_region(f.countries)
    shape = f._variant(variant, ("national", "international", "international", "e164", "spaced"))
    kind = _PHONE_TYPES[f._rng.randrange(len(_PHONE_TYPES))]
    example = phonenumbers.example_number_for_type(region, kind)
    if example is None:
        example = phonenumbers.example_number_for_type(region, phonenumbers.PhoneNumberType.MOBILE)
    national = phonenumbers.national_significant_number(example)
    keep = max(2, len(national) - 6)
    for _ in range(_MAX_TRIES):
        candidate = national[:keep] + f._digits(len(national) - keep)
        number = phonenumbers.parse(f"+{example.country_code}{candidate}", region)
        if phonenumbers.is_valid_number(number):
            break
    else:
        raise ConfigError(f"could not draw a valid phone number for {region}")
    prefix = f._prefix(contact_words(f.lang).phone)
    if shape == "spaced":
        e164 = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
        cc_len = len(str(number.country_code)) + 1
        rest = e164[cc_len:]
        return f"{e164[:cc_len]} {rest[:3]} {rest[3:6]} {rest[6:]}".strip(), prefix
    return phonenumbers.format_number(number, _PHONE_FORMATS[shape]), prefix


@cache
def _phone_region(countries: tuple[str, ...]) -> str:
    for cc in countries:
        if phonenumbers.example_number_for_type(cc, phonenumbers.PhoneNumberType.MOBILE):
            return cc
    raise ConfigError(f"phonenumbers has no example numbers for countries {countries}")


def _contact_other(f: Filler, variant: str | None) -> tuple[str, str]:
    shape = f._variant(variant, ("email", "email", "obfuscated_email", "url"))
    local = _ascii_local(f)
    domain = f._rng.choice(_EXAMPLE_DOMAINS)
    if shape == "url":
        return f"https://www.{domain}/{local.replace('.', '-')}", ""
    prefix = f._prefix(contact_words(f.lang).email)
    if shape == "email":
        return f"{local}@{domain}", prefix
    words = contact_words(f.lang)
    at = f._choice(words.at or ("at",), "obfuscation words")
    dot = f._choice(words.dot or ("dot",), "obfuscation words")
    host, tld = domain.rsplit(".", 1)
    return f"{local} {at} {host} {dot} {tld}", prefix


def _ascii_local(f: Filler) -> str:
    """A ``given.family`` local part from the language's names, or English names if not ASCII."""
    for lang in (f.lang, "en"):
        pool = _split_pool(lang, f.countries if lang == f.lang else (), f.name_split)
        given = [n for n in pool.given_female + pool.given_male if _is_ascii_word(n)]
        family = [n for n in pool.family_female + pool.family_male if _is_ascii_word(n)]
        if given and family:
            sep = f._rng.choice((".", "_", ""))
            return f"{f._choice(given, 'names')}{sep}{f._choice(family, 'names')}".lower()
    raise ConfigError("no ASCII names for an e-mail local part")


def _is_ascii_word(name: str) -> bool:
    return bool(name) and set(name.lower()) <= _LOWER_ASCII


# --- dates and ages ----------------------------------------------------------------------------


def _date(f: Filler, variant: str | None) -> tuple[str, str]:
    dates = language_dates(f.lang)
    shape = f._variant(variant, ("numeric", "numeric", "iso", "text", "text"))
    year, month = f._rng.randint(*f._years), f._rng.randint(1, 12)
    day = f._rng.randint(1, 28)
    prefix = _pick(f, _date_words(f.lang))
    month_first = bool(set(f.countries[:1]) & dates.month_first_regions)
    if shape == "iso":
        return f"{year:04d}-{month:02d}-{day:02d}", prefix
    if shape == "numeric":
        sep = f._rng.choice("/.-" if dates.dm_dot else "/-")
        first, second = (month, day) if month_first else (day, month)
        return f"{first:02d}{sep}{second:02d}{sep}{year}", prefix
    return _text_date(f, dates, (year, month, day), month_first), prefix


def _text_date(
    f: Filler, dates: LanguageDates, ymd: tuple[int, int, int], month_first: bool
) -> str:
    year, month, day = ymd
    d = dates
    if d.month_number_suffixes and d.year_words and d.day_words:  # 2024年3月12日
        return f"{year}{d.year_words[0]}{month}{d.month_number_suffixes[0]}{day}{d.day_words[0]}"
    if d.month_number_prefixes and d.day_prefixes:  # ngày 12 tháng 3 năm 2024
        year_word = f"{d.year_prefixes[0]} " if d.year_prefixes else ""
        return f"{d.day_prefixes[0]} {day} {d.month_number_prefixes[0]} {month} {year_word}{year}"
    names = d.twelve_month_names()
    if not names:
        raise ConfigError(f"language {f.lang} has no full month names in dates.toml")
    name = names[month - 1]
    if month_first:
        return f"{name} {day}, {year}"
    return f"{day} {name} {year}"


def _age(f: Filler, variant: str | None) -> tuple[str, str]:
    year = age_words(f.lang).units.get("year", UnitWords())
    units = {"before": year.before, "after": year.after, "age_only": year.age_only}
    options = [v for v, key in _AGE_SHAPES if units[key]]
    if not options:
        raise ConfigError(f"language {f.lang} has no year unit words in ages.toml")
    shape = f._variant(variant, options)
    if shape not in options:
        raise ConfigError(f"language {f.lang} does not write the year unit as {shape}")
    number = str(f._rng.randint(1, 95))
    prefix = _pick(f, _age_labels(f.lang))
    if shape == "unit_before":
        return f"{units['before'][0]} {number}", prefix
    return f"{number} {units[dict(_AGE_SHAPES)[shape]][0]}", prefix


_AGE_SHAPES = (("unit_before", "before"), ("unit_after", "after"), ("age_only", "age_only"))


@cache
def _age_labels(lang: str) -> tuple[str, ...]:
    """Age labels written apart from the number that hold no unit word and start no longer label.

    ``ja higni`` would take the unit word of ``higni 46`` into the label, and so would ``ja``.
    """
    data = age_words(lang)
    units = {w.lower() for u in data.units.values() for w in (*u.after, *u.age_only, *u.before)}
    labels = data.labels
    return tuple(
        w
        for w in labels
        if w[-1:].isalpha()
        and not units & set(re.split(r"[\s'’-]+", w.lower()))
        and not any(other.startswith(w + " ") for other in labels)
    )


@cache
def _date_words(lang: str) -> tuple[str, ...]:
    """Date context words that do not also join ranges (``hadi``, ``по``)."""
    dates = language_dates(lang)
    return tuple(w for w in dates.date_context if w not in dates.range_words)


def _pick(f: Filler, words: Sequence[str]) -> str:
    return words[f._rng.randrange(len(words))] if words else ""


_MAKERS: Mapping[Category, Callable[[Filler, str | None], tuple[str, str]]] = {
    Category.PERSON: _person,
    Category.PERSON_THIRD_PARTY: _person,
    Category.PERSON_CLAN: _clan,
    Category.LOCATION_VILLAGE: _village,
    Category.LOCATION_FACILITY: _facility,
    Category.LOCATION_ADDRESS: _address,
    Category.ORGANIZATION: _organization,
    Category.ID_NATIONAL: _national,
    Category.ID_RECORD: _record,
    Category.ID_OTHER: _other_id,
    Category.CONTACT_PHONE: _phone,
    Category.CONTACT_OTHER: _contact_other,
    Category.DATE: _date,
    Category.AGE: _age,
}
