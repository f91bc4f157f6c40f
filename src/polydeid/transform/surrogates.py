"""Realistic surrogates that fit the segment's language and countries.

:meth:`SurrogateGenerator.generate` draws candidates deterministically from a seed (the caller
derives it from a key and the original) and returns the first acceptable one, or None when
every candidate within the attempt budget fails (the caller then falls back to a tag).

What each category gets:

* **Names** (PERSON, PERSON_THIRD_PARTY): names of the segment's language (names of the
  country pool when the segment names its countries; the names of the original's script when
  it differs, e.g. a Latin name in a Chinese note). The shape is kept: number of words,
  initials (``J.``), separators (hyphens, commas), ALL CAPS / lower case, honorifics such as
  ``Dr`` (kept as written), family-first order after a comma or in family-first languages,
  and the gender when the original's given name or a gendered surname reveals it.
* **Clans** (PERSON_CLAN): the language's clan list, else a surname.
* **Places** (LOCATION_VILLAGE): a name from the same list as the original (village, parish,
  district, city …) of the segment's countries, else from the most local list.
* **Facilities / organisations**: the country's patterns (``{place} Health Centre III``).
* **Street addresses**: the country's street patterns with a number of the same length;
  addresses without words (postal codes) keep their shape.
* **IDs and phones**: the same shape — digits → digits, letters → letters of the same case,
  separators kept; phones keep their leading digits (country and network code, at most 5),
  IDs their first character or two. Candidates must satisfy the injected ``validate`` callback
  (the lead wires it to "the rule layer recognises the whole candidate as this category"),
  which is how checksums come out valid; the last character is swept through its class so a
  trailing check digit or letter is found quickly. When the original itself does not pass
  ``validate`` (found by a model, not a rule), candidates are not required to pass either.
* **E-mail** → a surrogate name at ``example.org``/``.com``/``.net`` (RFC 2606); **URLs** →
  ``example.org`` hosts; **IP addresses** → documentation ranges (RFC 5737, RFC 3849);
  **handles** → ``@`` and a surrogate name.
* **Ages**: every number moves by 1–3 (never below 0; ages of 90 and over stay in 90–99);
  unit words are kept as written, since they are not identifying.
* **Dates**: shifted by a seed-derived 1–365 days with
  :func:`polydeid.transform.dateshift.shift_date_text` (prefer the ``dateshift`` operator,
  which shifts all of a patient's dates alike).
* Anything else (profession, tribe, religion, sex): no surrogate (the caller tags it).

No candidate that equals or contains the original (normalised, case-insensitive) is returned.
"""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import regex

from polydeid.core.segments import Segment
from polydeid.core.taxonomy import Category
from polydeid.locales import canonical_language, default_countries, segment_languages
from polydeid.locales.names import (
    SCRIPT_LANGUAGE,
    NameData,
    NameLookup,
    NamePool,
    name_data,
    script_of,
)
from polydeid.locales.places import PlaceData, place_data
from polydeid.text.digits import digit_value, digits_int, zero_of
from polydeid.text.normalise import contains_original, normalise
from polydeid.transform.dateshift import shift_date_text

SurrogateValidator = Callable[[str, Category, Segment], bool]

#: Categories whose candidates are checked with the validator.
VALIDATED: frozenset[Category] = frozenset(
    {
        Category.ID_NATIONAL,
        Category.ID_RECORD,
        Category.ID_OTHER,
        Category.CONTACT_PHONE,
        Category.CONTACT_OTHER,
        Category.DATE,
        Category.AGE,
    }
)

DEFAULT_MAX_ATTEMPTS = 60

_WORD = regex.compile(r"[\p{L}\p{M}]+(?:['’][\p{L}\p{M}]+)*")
_NUMBER = regex.compile(r"\d+")
_EMAIL = regex.compile(r"^(?P<local>[^@\s]+)@(?P<domain>[^@\s]+\.[^@\s]+)$")
_URL = regex.compile(
    r"^(?P<scheme>[a-z][a-z0-9+.-]*://)?(?P<www>www\.)?[^/\s]+(?P<path>/\S*)?$", regex.I
)
_IPV4 = regex.compile(r"^\d{1,3}(?:\.\d{1,3}){3}$")
_IPV6 = regex.compile(r"^[0-9a-f:]*:[0-9a-f:]+$", regex.I)
_ASCII_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_ASCII_LOWER = _ASCII_UPPER.lower()
_EXAMPLE_DOMAINS = ("example.org", "example.com", "example.net")


@dataclass(frozen=True, slots=True)
class Draw:
    """One surrogate request: the original, its category, its segment and a seeded RNG."""

    original: str = field(repr=False)  # may hold identifier text
    category: Category
    segment: Segment
    rng: random.Random

    def __repr__(self) -> str:
        return f"Draw(len={len(self.original)} {self.category.name} {self.segment!r})"


Candidates = Callable[[Draw], Iterator[str]]


class SurrogateGenerator:
    """Deterministic surrogate candidates per category, checked and bounded."""

    def __init__(
        self,
        *,
        validate: SurrogateValidator | None = None,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    ) -> None:
        self.validate = validate
        self.max_attempts = max_attempts

    def __repr__(self) -> str:
        return f"SurrogateGenerator(validated={self.validate is not None})"

    def supports(self, category: Category) -> bool:
        return category in _GENERATORS

    def candidates(
        self, original: str, category: Category, segment: Segment, seed: bytes
    ) -> Iterator[str]:
        """Raw candidates, best first, at most ``max_attempts`` of them."""
        make = _GENERATORS.get(category)
        if make is None:
            return
        draw = Draw(original, category, segment, random.Random(int.from_bytes(seed, "big")))
        for n, candidate in enumerate(make(draw)):
            if n >= self.max_attempts:
                return
            yield candidate

    def generate(
        self,
        original: str,
        category: Category,
        segment: Segment,
        seed: bytes,
        *,
        accept: Callable[[str], bool] | None = None,
    ) -> str | None:
        """The first candidate that is valid, new and accepted by ``accept``; else None."""
        # The validator, where the original passes it (else candidates are not checked).
        validate = self.validate if self._needs_validation(original, category, segment) else None
        for candidate in self.candidates(original, category, segment, seed):
            if not candidate or contains_original(candidate, original):
                continue
            if validate is not None and not validate(candidate, category, segment):
                continue
            if accept is None or accept(candidate):
                return candidate
        return None

    def _needs_validation(self, original: str, category: Category, segment: Segment) -> bool:
        if self.validate is None or category not in VALIDATED:
            return False
        return self.validate(original, category, segment)


# --- names -----------------------------------------------------------------------------------


def _names_for(original: str, segment: Segment) -> NameData | None:
    data = name_data(segment.lang) or name_data("en")
    script = script_of(original)
    if data is not None and script and script != data.script and script in SCRIPT_LANGUAGE:
        data = name_data(SCRIPT_LANGUAGE[script]) or data
    return data


def _cased(new: str, like: str) -> str:
    if like.isupper() and (len(like) > 1 or new[:1].isupper()):
        return new.upper()
    if like.islower():
        return new.lower()
    return new


def _is_female(words: Sequence[str], chain: Sequence[NameLookup], rng: random.Random) -> bool:
    for lookup in chain:
        genders = {g for w in words if len(w) > 1 and (g := lookup.gender(w)) is not None}
        if len(genders) == 1:
            return genders.pop()
    return rng.random() < 0.5


def _roles(
    words: list[regex.Match[str]], original: str, data: NameData, chain: Sequence[NameLookup]
) -> list[str]:
    """``title``, ``given``, ``middle`` or ``family`` for each word of a name."""
    roles: list[str | None] = [None] * len(words)
    for i, w in enumerate(words):
        if normalise(w[0]) in data.titles:
            roles[i] = "title"
    names = [i for i, r in enumerate(roles) if r is None]
    if not names:
        return [r or "title" for r in roles]
    first = words[names[0]]
    after_first = original[first.end() : words[names[1]].start()] if len(names) > 1 else ""
    family_first = data.family_first or "," in after_first
    for i in names:
        prev = words[i - 1][0] if i > 0 else ""
        if roles[i - 1 if i else 0] == "title" and i > 0 and prev.islower():
            roles[i] = "family"  # after a particle: "de la Cruz", "van Dijk"
        elif len(words[i][0]) > 1:
            roles[i] = next((r for lk in chain if (r := lk.role(words[i][0]))), None)
    unresolved = [i for i in names if roles[i] is None]
    if unresolved and "family" not in roles:
        if family_first:
            surnames = unresolved[:1]
        else:
            surnames = unresolved[-(data.family_words if len(names) >= 3 else 1) :]
        for i in surnames:
            roles[i] = "family"
    for i in unresolved:
        roles[i] = roles[i] or "given"
    seen_given = False
    for i in names:
        if roles[i] == "given":
            roles[i] = "middle" if seen_given else "given"
            seen_given = True
    return [r or "given" for r in roles]


def _pick(pool: NamePool, role: str, female: bool, rng: random.Random) -> str:
    choices = {
        "family": pool.surname(female),
        "middle": pool.middle(female),
    }.get(role) or pool.given(female)
    return rng.choice(choices) if choices else "X"


def _han_name(length: int, pool: NamePool, female: bool, rng: random.Random) -> str:
    surnames = pool.surname(female)
    family = rng.choice([f for f in surnames if len(f) == 1] or list(surnames))
    if length <= 1:
        return family
    want = length - len(family)
    given = [g for g in pool.given(female) if len(g) == want]
    if given:
        return family + rng.choice(given)
    singles = [g for g in pool.given(female) if len(g) == 1] or [g[0] for g in pool.given(female)]
    return family + "".join(rng.choice(singles) for _ in range(max(1, want)))


def _name_candidates(draw: Draw) -> Iterator[str]:
    data = _names_for(draw.original, draw.segment)
    words = list(_WORD.finditer(draw.original))
    if data is None or not words:
        return
    pool = data.pool(draw.segment.countries)
    chain = data.lookup_chain(draw.segment.countries)
    female = _is_female([w[0] for w in words], chain, draw.rng)
    han = data.script == "Han" and script_of(draw.original) == "Han"
    roles = _roles(words, draw.original, data, chain)
    while True:
        out: list[str] = []
        pos = 0
        for word, role in zip(words, roles, strict=True):
            out.append(draw.original[pos : word.start()])
            pos = word.end()
            text = word[0]
            if role == "title":
                out.append(text)
            elif han and len(words) == 1:
                out.append(_han_name(len(text), pool, female, draw.rng))
            else:
                new = _pick(pool, role, female, draw.rng)
                out.append(_cased(new[0] if len(text) == 1 else new, text))
        out.append(draw.original[pos:])
        yield "".join(out)


def _clan_candidates(draw: Draw) -> Iterator[str]:
    data = _names_for(draw.original, draw.segment)
    if data is None:
        return
    pool = data.pool(draw.segment.countries)
    choices = pool.clans or data.default.clans or pool.surname(False)
    while choices:
        yield _cased(draw.rng.choice(choices), draw.original)


# --- places ----------------------------------------------------------------------------------


def _countries(segment: Segment) -> tuple[str, ...]:
    if segment.countries:
        return tuple(segment.countries)
    return default_countries(canonical_language(segment.lang))


def _place_data(segment: Segment) -> PlaceData | None:
    for cc in _countries(segment):
        data = place_data(cc)
        if data is not None:
            return data
    return None


def _village_candidates(draw: Draw) -> Iterator[str]:
    data = _place_data(draw.segment)
    choices = data.list_for(draw.original) if data else ()
    while choices:
        yield _cased(draw.rng.choice(choices), draw.original)


def _fill(pattern: str, draw: Draw, data: PlaceData) -> str:
    place = draw.rng.choice(data.places) if data.places else ""
    street = draw.rng.choice(data.streets) if data.streets else ""
    number = _number_like(draw.original, draw.rng)
    return pattern.format(place=place, street=street, number=number)


def _facility_candidates(draw: Draw) -> Iterator[str]:
    data = _place_data(draw.segment)
    if data is None or not (data.facility_patterns or data.facility_names):
        return
    while True:
        if data.facility_patterns and data.places:
            yield _cased(_fill(draw.rng.choice(data.facility_patterns), draw, data), draw.original)
        else:
            yield _cased(draw.rng.choice(data.facility_names), draw.original)


def _organization_candidates(draw: Draw) -> Iterator[str]:
    data = _place_data(draw.segment)
    if data is None or not data.organization_patterns or not data.places:
        return
    while True:
        yield _cased(_fill(draw.rng.choice(data.organization_patterns), draw, data), draw.original)


def _address_candidates(draw: Draw) -> Iterator[str]:
    has_words = any(len(w[0]) >= 3 for w in _WORD.finditer(draw.original))
    data = _place_data(draw.segment)
    if not has_words:
        yield from _shape_candidates(draw)
        return
    if data is None or not data.streets or not data.address_patterns:
        return
    while True:
        yield _fill(draw.rng.choice(data.address_patterns), draw, data)


def _number_like(original: str, rng: random.Random) -> str:
    match = _NUMBER.search(original)
    width = len(match[0]) if match else rng.randint(1, 3)
    return str(rng.randint(1 if width == 1 else 10 ** (width - 1), 10**width - 1))


# --- shapes: IDs, phones, postal codes ----------------------------------------------------------


def _random_like(ch: str, rng: random.Random) -> str:
    value = digit_value(ch)
    if value is not None:
        return chr(ord(ch) - value + rng.randrange(10))
    if ch.isascii() and ch.isalpha():
        return rng.choice(_ASCII_UPPER if ch.isupper() else _ASCII_LOWER)
    return ch


def _class_of(ch: str) -> str:
    value = digit_value(ch)
    if value is not None:
        return "".join(chr(ord(ch) - value + d) for d in range(10))
    if ch.isascii() and ch.isalpha():
        return _ASCII_UPPER if ch.isupper() else _ASCII_LOWER
    return ch


def _keep_prefix(draw: Draw, n_alnum: int) -> int:
    if draw.category is Category.CONTACT_PHONE:
        return min(5, n_alnum // 2)
    return min(2, n_alnum // 4)


def _shape_candidates(draw: Draw) -> Iterator[str]:
    """Same-shape candidates; each random base is followed by its last-character sweep."""
    original = draw.original
    slots = [i for i, ch in enumerate(original) if _class_of(ch) != ch]
    if not slots:
        return
    keep = _keep_prefix(draw, len(slots))
    attempt = 0
    while True:
        kept = keep if attempt < 3 else 0
        chars = list(original)
        for n, i in enumerate(slots):
            if n >= kept:
                chars[i] = _random_like(original[i], draw.rng)
        yield "".join(chars)
        last = slots[-1]
        sweep = list(_class_of(original[last]))
        draw.rng.shuffle(sweep)
        for ch in sweep:
            if ch != chars[last]:
                chars[last] = ch
                yield "".join(chars)
        attempt += 1


# --- contacts, ages, dates ---------------------------------------------------------------------


def _ascii_slug(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return "".join(ch for ch in folded.lower() if ch.isalnum())


def _latin_pool(segment: Segment) -> NamePool | None:
    data = name_data(segment.lang)
    if data is None or data.script != "Latin":
        data = name_data("en")
    return data.pool(segment.countries) if data else None


def _latin_name(pool: NamePool | None, rng: random.Random) -> tuple[str, str]:
    """A lower-case ASCII given and family name (for e-mail addresses and handles)."""
    if pool is None:
        return "patient", f"{rng.randrange(10_000):04d}"
    female = rng.random() < 0.5
    given = _ascii_slug(rng.choice(pool.given(female))) if pool.given(female) else ""
    family = _ascii_slug(rng.choice(pool.surname(female))) if pool.surname(female) else ""
    return given or "user", family or f"{rng.randrange(10_000):04d}"


def _contact_candidates(draw: Draw) -> Iterator[str]:
    text = draw.original.strip()
    rng = draw.rng
    if _IPV4.match(text):
        while True:
            net = rng.choice(("192.0.2", "198.51.100", "203.0.113"))
            yield f"{net}.{rng.randint(1, 254)}"
    if _IPV6.match(text) and text.count(":") >= 2:
        while True:
            yield f"2001:db8::{rng.randrange(1, 0xFFFF):x}"
    email = _EMAIL.match(text)
    pool = _latin_pool(draw.segment)
    if email:
        local = email["local"]
        sep = next((c for c in "._-" if c in local), "")
        digits = sum(c.isdigit() for c in local)
        while True:
            given, family = _latin_name(pool, rng)
            tail = "".join(str(rng.randrange(10)) for _ in range(digits))
            yield f"{given}{sep}{family}{tail}@{rng.choice(_EXAMPLE_DOMAINS)}"
    if text.startswith("@"):
        while True:
            yield "@" + _latin_name(pool, rng)[0] + str(rng.randint(1, 99))
    url = _URL.match(text)
    if url and "." in text:
        while True:
            path = "/" + "".join(rng.choice(_ASCII_LOWER) for _ in range(6)) if url["path"] else ""
            yield f"{url['scheme'] or ''}{url['www'] or ''}{rng.choice(_EXAMPLE_DOMAINS)}{path}"
    if any(c.isspace() or c in "[](){}" for c in text):
        # An obfuscated e-mail ("nguyen dot an at gmail dot com"): a plain one replaces it,
        # since a random string of the same shape no longer reads as an address.
        while True:
            given, family = _latin_name(pool, rng)
            yield f"{given}.{family}@{rng.choice(_EXAMPLE_DOMAINS)}"
    yield from _shape_candidates(draw)


def _render_number(value: int, like: str) -> str:
    digits = str(value)
    if like.isascii():
        return digits
    zero = ord(zero_of(like[0]))
    return "".join(chr(zero + int(d)) for d in digits)


def _moved_age(value: int, rng: random.Random) -> int:
    if value >= 90:
        return rng.choice([v for v in range(90, 100) if v != value])
    step = rng.randint(1, 3)
    return value + step if value - step < 0 or rng.random() < 0.5 else value - step


def _age_candidates(draw: Draw) -> Iterator[str]:
    if not _NUMBER.search(draw.original):
        return
    while True:
        yield _NUMBER.sub(
            lambda m: _render_number(_moved_age(digits_int(m[0]), draw.rng), m[0]), draw.original
        )


def _date_candidates(draw: Draw) -> Iterator[str]:
    langs = segment_languages(draw.segment)
    while True:
        days = draw.rng.choice((-1, 1)) * draw.rng.randint(1, 365)
        shifted = shift_date_text(draw.original, days, langs)
        if shifted is None:
            return
        yield shifted


_GENERATORS: dict[Category, Candidates] = {
    Category.PERSON: _name_candidates,
    Category.PERSON_THIRD_PARTY: _name_candidates,
    Category.PERSON_CLAN: _clan_candidates,
    Category.LOCATION_VILLAGE: _village_candidates,
    Category.LOCATION_FACILITY: _facility_candidates,
    Category.LOCATION_ADDRESS: _address_candidates,
    Category.ORGANIZATION: _organization_candidates,
    Category.ID_NATIONAL: _shape_candidates,
    Category.ID_RECORD: _shape_candidates,
    Category.ID_OTHER: _shape_candidates,
    Category.CONTACT_PHONE: _shape_candidates,
    Category.CONTACT_OTHER: _contact_candidates,
    Category.AGE: _age_candidates,
    Category.DATE: _date_candidates,
}
