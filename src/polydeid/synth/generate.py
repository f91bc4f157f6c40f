"""The synthetic clinical corpus generator: documents with gold spans by construction.

``generate(per_language=..., seed=...)`` yields
:class:`~polydeid.corpora.document.AnnotatedDocument` records, one language
after another in round-robin order, each with its identifier spans, its clinical-fact spans
(hard negatives to keep) and a ``meta`` object recording the sampled axes:

* **language** — every language pack that ships ``synth.toml`` (sentence templates and
  vocabulary written for that language) and the country (from the language's countries) whose
  names, places, IDs and phone conventions fill the slots;
* **document type** — ``data/doctypes.toml`` (18 types: admission note … birth notification),
  each with its header fields and narrative sections;
* **text format** — one of the type's formats, rendered by :mod:`polydeid.synth.formats`
  (prose, SOAP, bullets, key-value, CSV, JSON, FHIR, XML, HL7 v2, chat, log, code);
* **length** — short, medium or long (long documents are longer than one 512-token model
  window: at least ``min_chars`` characters);
* **edge cases** — :data:`EDGE_CASES`; a few are forced per document and every edge case the
  document actually contains is recorded (``meta.edge_cases`` is what the text holds, not what
  was asked for).

Sentences come from the language's ``[[sentence]]`` templates, whose ``{slot}`` placeholders
(:data:`SLOTS`) are filled by :class:`~polydeid.synth.fillers.Filler` (names, places, IDs with
valid checksums, phones valid for the country, dates, ages) and by this module (clinical
facts from ``data/clinical.toml`` and the language's ``facts.toml``; vocabulary from
``synth.toml``). A document names one patient, one relative and one clinician, each the same
person at every mention. Generation is deterministic for a seed: document *i* depends only on
``(seed, i)``, never on the documents before it, except that a document is drawn again when
its masked text repeats an earlier one exactly, or when the validator's language identifier
would confidently take it for another language (a short SMS buried in English code syntax).

Names come from one third of the name pools (``name_split``), so train, dev and test corpora
generated with different splits share no given or family name (unseen-name tests).
"""

from __future__ import annotations

import hashlib
import random
import re
import tomllib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from types import MappingProxyType
from typing import Any, Final

from polydeid.core.errors import ConfigError
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.corpora.document import AnnotatedDocument
from polydeid.locales import canonical_language, languages
from polydeid.locales.ages import UnitWords, age_words
from polydeid.locales.contacts import contact_words
from polydeid.locales.dates import language_dates
from polydeid.locales.facts import VitalSign, fact_words
from polydeid.locales.names import name_data, titles_in_names
from polydeid.locales.people import country_people
from polydeid.locales.synth import synth_data
from polydeid.synth.fillers import NAME_PARTICLES, SPLITS, Filler, in_split, name_titles
from polydeid.synth.formats import Field, Rendered, render
from polydeid.synth.validate import confident_mismatch, mask_spans

Label = Category | Fact

SOURCE = "synth.v1"

#: Slots a sentence template may use, with the label their value gets (None: plain words).
SLOTS: Final[Mapping[str, Label | None]] = MappingProxyType(
    {
        "patient": Category.PERSON,
        "relative": Category.PERSON_THIRD_PARTY,
        "clinician": Category.PERSON_THIRD_PARTY,
        # one word of that person's name, as running text refers back to someone ("Otieno")
        "patient_word": Category.PERSON,
        "relative_word": Category.PERSON_THIRD_PARTY,
        "clinician_word": Category.PERSON_THIRD_PARTY,
        "age": Category.AGE,
        "date": Category.DATE,
        "dob": Category.DATE,
        "day_month": Category.DATE,
        "phone": Category.CONTACT_PHONE,
        "relative_phone": Category.CONTACT_PHONE,
        "email": Category.CONTACT_OTHER,
        "village": Category.LOCATION_VILLAGE,
        "district": Category.LOCATION_VILLAGE,
        "address": Category.LOCATION_ADDRESS,
        "facility": Category.LOCATION_FACILITY,
        "organization": Category.ORGANIZATION,
        "national_id": Category.ID_NATIONAL,
        "record": Category.ID_RECORD,
        "insurance": Category.ID_OTHER,
        "profession": Category.PROFESSION,
        "religion": Category.RELIGION,
        "tribe": Category.TRIBE,
        "clan": Category.PERSON_CLAN,
        "sex": Category.SEX,
        "diagnosis": Fact.DIAGNOSIS,
        "eponym": Fact.DIAGNOSIS,
        "drug": Fact.DRUG,
        "dose": Fact.DOSE,
        "lab": Fact.LAB_VALUE,
        "vital": Fact.VITAL,
        "duration": Fact.DURATION,
        "department": Fact.DEPARTMENT,
        "vaccine": Fact.DRUG,
        "birth_weight": Fact.VITAL,
        "medication": Fact.DRUG,  # a drug and its dose: two fact spans
        "relation": None,
        "relative_date": None,
        "time": None,
        "amount": None,
    }
)

#: Sentence sections of ``synth.toml`` and the fewest templates each language must give.
SECTIONS: Final[Mapping[str, int]] = MappingProxyType(
    {
        "complaint": 8,
        "history": 8,
        "social_history": 8,
        "examination": 8,
        "labs": 6,
        "assessment": 8,
        "plan": 10,
        "nursing": 6,
        "radiology": 6,
        "operative": 6,
        "vaccination": 5,
        "consent": 5,
        "sms": 8,
        "chat": 8,
        "billing": 6,
        "death": 5,
        "birth": 5,
        "referral": 6,
        "code_mixed": 8,
        # what a patient or relative said, each sentence opening with the speaker's name
        "reported": 8,
    }
)

LENGTHS: Final = ("short", "medium", "long")
_LENGTH_WEIGHTS: Final = (0.35, 0.45, 0.2)

#: Every edge case a document may record, with what it means.
EDGE_CASES: Final[Mapping[str, str]] = MappingProxyType(
    {
        "name_lowercase": "a person's name written in lower case",
        "name_allcaps": "a person's name written in capitals",
        "name_punctuation": "a name directly before or after punctuation",
        "name_is_word": "a given name that is also an ordinary word of the language",
        "single_name": "a person named by one word only",
        "name_word": "a person referred to by one word of their name (a family name alone)",
        "initials": "given names written as initials",
        "hyphenated_name": "a hyphenated family name",
        "apostrophe_name": "a name written with an apostrophe (Ng'ang'a)",
        "title_name": (
            "a title before a name, outside the span (Dr, Bw, Mama); inside it where"
            " names.toml sets titles_in_names (English)"
        ),
        "possessive_name": "a name with a possessive ending ('s)",
        "diacritics_name": "a name with letters outside ASCII",
        "repeated_name_forms": "one person mentioned in two different forms",
        "third_party_name": "a relative's or visitor's name",
        "clinician_name": "a clinician's name",
        "eponym_disease": "a disease named after a person (Parkinson, Hodgkin): not a name",
        "name_like_drug": "a drug brand that reads like a given name (Yasmin): not a name",
        "obfuscated_email": "an e-mail written with words for @ and dot",
        "plain_email": "an e-mail address",
        "spaced_phone": "a phone number written with spaces between digit groups",
        "international_phone": "a phone number with its country code",
        "phone_extension": "a phone number with an extension",
        "relative_phone": "a relative's phone number",
        "date_words": "a date with the month in words",
        "date_iso": "an ISO 8601 date",
        "partial_date": "a month and year without a day",
        "relative_date": "a relative time (yesterday, last week): not a date to redact",
        "time_of_day": "a time of day: not a date to redact",
        "age_words": "an age written in words",
        "ocr_noise": "OCR-like letter confusions in the running text",
        "code_mixed": "a sentence mixing the language with another",
        "nested_facility": "a facility name that contains a place name",
        "clan_mention": "a clan named",
        "tribe_mention": "an ethnic group or tribe named",
        "religion_mention": "a religion named",
        "profession_mention": "an occupation named",
        "id_in_url": "a record number inside a URL",
        "money_amount": "an amount of money: a number that is not an identifier",
    }
)

#: Edge cases a document can be asked for up front (the rest arise from the templates).
_FORCIBLE: Final = (
    "name_lowercase",
    "name_allcaps",
    "name_is_word",
    "single_name",
    "initials",
    "hyphenated_name",
    "apostrophe_name",
    "title_name",
    "repeated_name_forms",
    "eponym_disease",
    "name_like_drug",
    "obfuscated_email",
    "spaced_phone",
    "international_phone",
    "phone_extension",
    "date_words",
    "date_iso",
    "partial_date",
    "age_words",
    "ocr_noise",
    "code_mixed",
    "nested_facility",
    "id_in_url",
)

_SLOT = re.compile(r"\{(\w+)\}")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_DEDUP_TRIES = 8


# --------------------------------------------------------------------------------------------
# Data


@dataclass(frozen=True, slots=True)
class Template:
    """One sentence template of a language."""

    id: str
    section: str
    text: str
    types: frozenset[str]
    slots: tuple[str, ...]

    def __repr__(self) -> str:
        return f"Template({self.id!r})"


@dataclass(frozen=True, slots=True)
class LanguageData:
    """A language's templates by section and its generator vocabulary."""

    lang: str
    sections: Mapping[str, tuple[Template, ...]]
    vocab: Mapping[str, tuple[str, ...] | str]

    def words(self, key: str) -> tuple[str, ...]:
        value = self.vocab.get(key, ())
        return value if isinstance(value, tuple) else ()


@dataclass(frozen=True, slots=True)
class DocType:
    name: str
    header: tuple[str, ...]
    required: frozenset[str]
    sections: tuple[tuple[str, str], ...]  # (field key, sentence section)
    formats: tuple[str, ...]
    lengths: tuple[str, ...]
    fact_field: str
    narrator: str = "clinician"
    #: "female" where the patient must be a woman (a birth notification's mother); "" either
    patient_sex: str = ""


def _data_file(name: str) -> dict[str, Any]:
    with resources.files("polydeid.synth").joinpath("data", name).open("rb") as handle:
        return tomllib.load(handle)


@cache
def doctype_data() -> Mapping[str, Any]:
    return MappingProxyType(_data_file("doctypes.toml"))


@cache
def clinical_data() -> Mapping[str, Any]:
    return MappingProxyType(_data_file("clinical.toml"))


@cache
def document_types() -> Mapping[str, DocType]:
    """The document types of ``data/doctypes.toml``, by name."""
    raw = doctype_data()
    known_fields = raw["fields"]
    types: dict[str, DocType] = {}
    for name, spec in raw["doc"].items():
        for key in (*spec["header"], *spec.get("required", ())):
            if key not in known_fields:
                raise ConfigError(f"document type {name}: unknown header field {key!r}")
        for key, section in spec["sections"].items():
            if section not in SECTIONS:
                raise ConfigError(f"document type {name}: unknown section {section!r} ({key})")
        if spec.get("narrator", "clinician") not in ("clinician", "patient"):
            raise ConfigError(f"document type {name}: narrator must be clinician or patient")
        if spec.get("patient_sex", "") not in ("", "female", "male"):
            raise ConfigError(f"document type {name}: patient_sex must be female or male")
        types[name] = DocType(
            name=name,
            header=tuple(spec["header"]),
            required=frozenset(spec.get("required", ())),
            sections=tuple(spec["sections"].items()),
            formats=tuple(spec["formats"]),
            lengths=tuple(spec.get("lengths", LENGTHS)),
            fact_field=spec.get("fact_field", "diagnosis"),
            narrator=spec.get("narrator", "clinician"),
            patient_sex=spec.get("patient_sex", ""),
        )
    return MappingProxyType(types)


@cache
def language_templates(lang: str) -> LanguageData:
    """Templates and vocabulary of ``lang``; :class:`ConfigError` when it has no ``synth.toml``."""
    code = canonical_language(lang)
    data = synth_data(code)
    if data is None:
        raise ConfigError(f"language {code} ships no synth.toml: no synthetic documents for it")
    by_section: dict[str, list[Template]] = {s: [] for s in SECTIONS}
    for i, sentence in enumerate(data.sentences):
        section, text = sentence.section, sentence.text
        where = f"languages/{code}/synth.toml sentence {i + 1}"
        if section not in SECTIONS:
            raise ConfigError(f"{where}: needs a known section and a text")
        slots = tuple(_SLOT.findall(text))
        unknown = sorted(set(slots) - set(SLOTS))
        if unknown:
            raise ConfigError(f"{where}: unknown slot(s) {', '.join(unknown)}")
        types = frozenset(sentence.types)
        bad_types = types - set(document_types())
        if bad_types:
            raise ConfigError(f"{where}: unknown document type(s) {', '.join(sorted(bad_types))}")
        by_section[section].append(
            Template(f"{code}.{section}.{len(by_section[section])}", section, text, types, slots)
        )
    return LanguageData(
        code,
        MappingProxyType({k: tuple(v) for k, v in by_section.items()}),
        data.vocab,
    )


@cache
def synth_languages() -> tuple[str, ...]:
    """Languages whose pack ships ``synth.toml``."""
    return tuple(code for code in languages() if synth_data(code) is not None)


@cache
def _tribes(country: str) -> tuple[str, ...]:
    people = country_people(country)
    return people.tribes if people.recorded else ()


# --------------------------------------------------------------------------------------------
# Pieces of text


@dataclass(frozen=True, slots=True)
class _Piece:
    text: str
    label: Label | None = None
    edges: frozenset[str] = frozenset()


class _Unfillable(Exception):
    """A slot this language or country has no value for (a tribe in Germany)."""


@dataclass(slots=True)
class _Person:
    """One person of a document: the base form of the name and its tokens."""

    text: str
    edges: frozenset[str]
    tokens: tuple[str, ...]
    mentions: int = 0


@dataclass(slots=True)
class _State:
    """Everything one document draws, so that a person or a phone stays the same throughout."""

    lang: str
    country: str
    rng: random.Random
    filler: Filler
    data: LanguageData
    doctype: DocType
    forced: frozenset[str]
    people: dict[str, _Person] = field(default_factory=dict)
    fixed: dict[str, list[_Piece]] = field(default_factory=dict)
    used_templates: list[str] = field(default_factory=list)
    edges: set[str] = field(default_factory=set)


def _decimal_comma(lang: str) -> bool:
    return lang in clinical_data().get("format", {}).get("decimal_comma", ())


def _number(state: _State, low: float, high: float, decimals: int) -> str:
    value = state.rng.uniform(low, high)
    text = f"{value:.{decimals}f}" if decimals else str(round(value))
    return text.replace(".", ",") if decimals and _decimal_comma(state.lang) else text


# --- people --------------------------------------------------------------------------------


def _name_tokens(lang: str, text: str) -> tuple[str, ...]:
    data = name_data(lang)
    if data is None or not data.joiner:
        return (text,)
    return tuple(text.split(data.joiner))


def _new_person(state: _State, role: str) -> _Person:
    category = Category.PERSON if role == "patient" else Category.PERSON_THIRD_PARTY
    shapes = state.filler.name_shapes()
    forced = state.forced if role == "patient" else frozenset()
    wanted = {
        "initials": "initials",
        "hyphenated_name": "hyphenated",
        "apostrophe_name": "apostrophe",
        "single_name": "single",
    }
    edges: set[str] = set()
    variant = "full"
    for edge, shape in wanted.items():
        if edge in forced and shape in shapes:
            variant, edges = shape, {edge}
            break
    sex = state.doctype.patient_sex if role == "patient" else ""
    female = None if not sex else sex == "female"
    text = state.filler.value(category, variant=variant, female=female).text
    if role == "patient" and "name_is_word" in forced and variant == "full":
        words = [w for w in state.data.words("word_names") if in_split(w, state.filler.name_split)]
        if words:
            tokens = list(_name_tokens(state.lang, text))
            data = name_data(state.lang)
            given_at = -1 if data is not None and data.family_first else 0
            tokens[given_at] = state.rng.choice(words)
            joiner = data.joiner if data is not None else " "
            text = joiner.join(tokens) if len(tokens) > 1 else tokens[0]
            edges.add("name_is_word")
    if forced & {"name_allcaps"} and text.upper() != text:
        text, edges = text.upper(), edges | {"name_allcaps"}
    elif forced & {"name_lowercase"} and text.lower() != text:
        text, edges = text.lower(), edges | {"name_lowercase"}
    if any(ord(c) > 127 and c.isalpha() for c in text):
        edges.add("diacritics_name")
    if role != "patient":
        edges.add("clinician_name" if role == "clinician" else "third_party_name")
    if variant == "single":
        edges.add("single_name")
    return _Person(text, frozenset(edges), _name_tokens(state.lang, text))


def _name_word(token: str) -> bool:
    """Whether ``token`` of a name can stand alone as a name (not an initial, not a particle)."""
    core = token.strip(".")
    return not token.endswith(".") and len(core) > 1 and core.lower() not in NAME_PARTICLES


@cache
def _title_before(lang: str) -> re.Pattern[str] | None:
    """Matches text that ends with one of the language's titles ("… Dr", "… Mama")."""
    titles = name_titles(lang)
    if not titles:
        return None
    return re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, titles)) + r")\.?\s*$")


def _title_into_name(state: _State, pieces: list[_Piece], filled: list[_Piece]) -> None:
    """Where titles belong to names, move a template's title ("… Dr {clinician}") from the
    literal before a name into the name's piece, so the gold span holds "Dr Achieng"."""
    if not (filled and pieces and pieces[-1].label is None and titles_in_names(state.lang)):
        return
    if filled[0].label not in (Category.PERSON, Category.PERSON_THIRD_PARTY):
        return
    pattern = _title_before(state.lang)
    literal = pieces[-1].text
    found = pattern.search(literal) if pattern else None
    if found is None:
        return
    start = found.start()
    title = literal[start:]
    if not title.strip() or "\n" in title:
        return
    pieces[-1] = _Piece(literal[:start])
    filled[0] = _Piece(title + filled[0].text, filled[0].label, filled[0].edges)


def _person_pieces(state: _State, role: str, before: str, word: bool = False) -> list[_Piece]:
    """A mention of the document's ``role`` person; ``word``: one word of the name, no title."""
    person = state.people.get(role)
    if person is None:
        person = state.people[role] = _new_person(state, role)
    label = Category.PERSON if role == "patient" else Category.PERSON_THIRD_PARTY
    text, edges = person.text, set(person.edges)
    person.mentions += 1
    tokens = [t for t in person.tokens if _name_word(t)]  # the words it can go by alone
    if word:
        if len(tokens) > 1 or (tokens and tokens[0] != text):
            text = state.rng.choice(tokens)
            edges |= {"name_word"} | ({"repeated_name_forms"} if person.mentions > 1 else set())
        return [_Piece(text, label, frozenset(edges))]
    if (
        person.mentions > 1
        and len(person.tokens) > 1
        and ("repeated_name_forms" in state.forced or state.rng.random() < 0.25)
        and tokens
    ):
        text = state.rng.choice(tokens)
        edges.add("repeated_name_forms")
    pieces: list[_Piece] = []
    titles = name_titles(state.lang)
    pattern = _title_before(state.lang)
    has_title = bool(pattern and pattern.search(before))
    wants_title = (role == "clinician" and state.rng.random() < 0.5) or (
        "title_name" in state.forced
    )
    if titles and not has_title and wants_title and person.mentions == 1:
        joiner = "" if state.lang == "zh" else " "
        title = state.rng.choice(titles)
        if state.lang == "zh":  # 王医生: the title follows the name
            return [_Piece(text, label, frozenset(edges | {"title_name"})), _Piece(title)]
        edges.add("title_name")
        if titles_in_names(state.lang):  # "Dr. Smith" is one name span in English
            return [_Piece(title + joiner + text, label, frozenset(edges))]
        pieces.append(_Piece(title + joiner))
    elif has_title:
        edges.add("title_name")
    pieces.append(_Piece(text, label, frozenset(edges)))
    return pieces


# --- identifiers ---------------------------------------------------------------------------


def _fixed(state: _State, key: str, make: Any) -> list[_Piece]:
    if key not in state.fixed:
        state.fixed[key] = make()
    return state.fixed[key]


def _with_prefix(
    state: _State, category: Category, header: bool, variant: str | None = None
) -> list[_Piece]:
    value = state.filler.value(category, variant=variant)
    pieces = [_Piece(value.text, category)]
    if value.context_prefix and not header:
        pieces.insert(0, _Piece(value.context_prefix + " "))
    return pieces


def _phone(state: _State, role: str) -> list[_Piece]:
    forced = state.forced
    variant = None
    edges: set[str] = {"relative_phone"} if role == "relative" else set()
    if "spaced_phone" in forced:
        variant = "spaced"
    elif "international_phone" in forced:
        variant = state.rng.choice(("international", "e164"))
    value = state.filler.value(Category.CONTACT_PHONE, variant=variant)
    text = value.text
    if text.startswith("+"):
        edges.add("international_phone")
    if variant == "spaced":
        edges.add("spaced_phone")
    ext_words = contact_words(state.lang).extension
    if "phone_extension" in forced and role == "patient" and ext_words:
        text = f"{text} {state.rng.choice(ext_words)} {state.rng.randint(100, 999)}"
        edges.add("phone_extension")
    return [_Piece(text, Category.CONTACT_PHONE, frozenset(edges))]


def _email(state: _State) -> list[_Piece]:
    obfuscated = "obfuscated_email" in state.forced
    value = state.filler.value(
        Category.CONTACT_OTHER, variant="obfuscated_email" if obfuscated else "email"
    )
    edge = "obfuscated_email" if obfuscated else "plain_email"
    return [_Piece(value.text, Category.CONTACT_OTHER, frozenset({edge}))]


def _record(state: _State, header: bool) -> list[_Piece]:
    value = state.filler.value(Category.ID_RECORD)
    if "id_in_url" in state.forced and not header and re.fullmatch(r"[\w/.-]+", value.text):
        host = state.rng.choice(("emr.example.org", "portal.example.com", "his.example.net"))
        return [
            _Piece(f"https://{host}/patients?mrn="),
            _Piece(value.text, Category.ID_RECORD, frozenset({"id_in_url"})),
        ]
    pieces = [_Piece(value.text, Category.ID_RECORD)]
    if value.context_prefix and not header:
        pieces.insert(0, _Piece(value.context_prefix + " "))
    return pieces


def _date(state: _State, years: tuple[int, int] = (2012, 2025)) -> list[_Piece]:
    forced = state.forced
    if "partial_date" in forced and state.rng.random() < 0.6:
        text = _partial_date(state)
        if text:
            return [_Piece(text, Category.DATE, frozenset({"partial_date"}))]
    variant = None
    if "date_words" in forced:
        variant = "text"
    elif "date_iso" in forced:
        variant = "iso"
    value = state.filler.value(Category.DATE, variant=variant, years=years)
    edges = set()
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value.text):
        edges.add("date_iso")
    elif re.search(r"[^\W\d_]{3}", value.text):
        edges.add("date_words")
    return [_Piece(value.text, Category.DATE, frozenset(edges))]


def _day_month(state: _State) -> list[_Piece]:
    """A day and month without a year, as notes write them: numbers in the order of the
    document's country (``3/14`` where month first, ``14/3``, ``14.3.`` where the language
    writes a dot after them), or with a month name (``14 March``, ``Mar 14``, ``14. März``;
    ``3月14日``, ``ngày 14 tháng 3`` where the language writes month numbers with words)."""
    d, rng = language_dates(state.lang), state.rng
    day, month = rng.randint(1, 28), rng.randint(1, 12)
    month_first = d.numeric_order == "mdy" or state.country in d.month_first_regions
    if d.month_number_suffixes:  # 3月14日
        day_word = d.day_words[0] if d.day_words else ""
        return [_Piece(f"{month}{d.month_number_suffixes[0]}{day}{day_word}", Category.DATE)]
    if d.month_number_prefixes:  # ngày 14 tháng 3
        day_prefix = f"{d.day_prefixes[0]} " if d.day_prefixes else ""
        text = f"{day_prefix}{day} {d.month_number_prefixes[0]} {month}"
        return [_Piece(text, Category.DATE)]
    forms = [f for f in d.month_forms.values() if len(f.names) == 12]
    if forms and rng.random() < 0.5:
        name = rng.choice(forms).names[month - 1]
        dot = "." if d.dm_dot else ""
        text = f"{name} {day}" if month_first else f"{day}{dot} {name}"
        return [_Piece(text, Category.DATE, frozenset({"date_words"}))]
    if d.dm_dot:
        text = f"{day}.{month}." if rng.random() < 0.5 else f"{day:02d}.{month:02d}."
    else:
        first, second = (month, day) if month_first else (day, month)
        text = f"{first}/{second}"
    return [_Piece(text, Category.DATE)]


def _partial_date(state: _State) -> str:
    d = language_dates(state.lang)
    year, month = state.rng.randint(2005, 2025), state.rng.randint(1, 12)
    if d.month_number_suffixes and d.year_words:  # 2024年3月
        return f"{year}{d.year_words[0]}{month}{d.month_number_suffixes[0]}"
    if d.month_number_prefixes:  # tháng 3 năm 2024
        year_word = f"{d.year_prefixes[0]} " if d.year_prefixes else ""
        return f"{d.month_number_prefixes[0]} {month} {year_word}{year}"
    names = d.twelve_month_names()
    return f"{names[month - 1]} {year}" if names else ""


@cache
def _age_words(lang: str) -> tuple[str, ...]:
    """The language's ages in words that hold a number word its ``ages.toml`` knows (others
    could not be told from prose by the validator, nor read by the rule layer)."""
    figures = age_words(lang).numbers
    known = (
        {w.lower() for group in (figures.words, figures.tens, figures.hundreds) for w in group}
        if figures is not None
        else set()
    )
    if not known:
        return ()
    pattern = re.compile(
        r"(?<!\w)(?:"
        + "|".join(map(re.escape, sorted(known, key=lambda w: (-len(w), w))))
        + r")(?!\w)"
    )
    return tuple(
        w for w in language_templates(lang).words("age_words") if pattern.search(w.lower())
    )


def _age(state: _State) -> list[_Piece]:
    words = _age_words(state.lang)
    if words and ("age_words" in state.forced or state.rng.random() < 0.05):
        return [_Piece(state.rng.choice(words), Category.AGE, frozenset({"age_words"}))]
    return [_Piece(state.filler.value(Category.AGE).text, Category.AGE)]


def _vocab_piece(state: _State, key: str, label: Label | None, edge: str = "") -> list[_Piece]:
    words = state.data.words(key)
    if not words:
        raise _Unfillable(key)
    return [_Piece(state.rng.choice(words), label, frozenset({edge} if edge else ()))]


def _clan(state: _State) -> list[_Piece]:
    try:
        text = state.filler.value(Category.PERSON_CLAN).text
    except ConfigError:
        words = state.data.words("clans")
        if not words:
            raise _Unfillable("clan") from None
        text = state.rng.choice(words)
    return [_Piece(text, Category.PERSON_CLAN, frozenset({"clan_mention"}))]


def _tribe(state: _State) -> list[_Piece]:
    tribes = _tribes(state.country)
    if not tribes:
        raise _Unfillable("tribe")
    return [_Piece(state.rng.choice(tribes), Category.TRIBE, frozenset({"tribe_mention"}))]


def _sex(state: _State) -> list[_Piece]:
    """The patient's sex (the type's ``patient_sex`` where it says one)."""
    key = state.rng.choice(("sex_female", "sex_male"))  # drawn either way: later values stay
    if state.doctype.patient_sex:
        key = f"sex_{state.doctype.patient_sex}"
    word = state.data.vocab.get(key)
    if not isinstance(word, str) or not word:
        raise _Unfillable("sex")
    return [_Piece(word, Category.SEX)]


def _facility(state: _State) -> list[_Piece]:
    variant = "pattern" if "nested_facility" in state.forced else None
    try:
        value = state.filler.value(Category.LOCATION_FACILITY, variant=variant)
    except ConfigError:
        value = state.filler.value(Category.LOCATION_FACILITY)
    places = {p for p in _place_words(state.country)}
    nested = any(p in value.text for p in places if len(p) > 3)
    edges = frozenset({"nested_facility"}) if nested else frozenset()
    return [_Piece(value.text, Category.LOCATION_FACILITY, edges)]


#: Place lists of ``places.toml`` from the most local up, for the village and district slots.
_LOCAL_LISTS: Final = (
    "villages",
    "cells",
    "wards",
    "parishes",
    "bairros",
    "freguesias",
    "localities",
    "sectors",
    "subcounties",
    "constituencies",
    "cities",
)
_DISTRICT_LISTS: Final = (
    "districts",
    "counties",
    "concelhos",
    "subcounties",
    "sectors",
    "provinces",
    "regions",
    "departments",
    "states",
    "governorates",
    "cities",
)


def _place(state: _State, slot: str) -> list[_Piece]:
    """A village (or district) of the document's country, from the most local lists it has."""
    from polydeid.locales.places import place_data

    data = place_data(state.country)
    lists = data.lists if data is not None else {}
    wanted = _LOCAL_LISTS if slot == "village" else _DISTRICT_LISTS
    options = [v for kind in wanted for v in lists.get(kind, ())]
    if not options:
        options = [v for values in lists.values() for v in values]
    if not options:
        raise _Unfillable(slot)
    return [_Piece(state.rng.choice(options), Category.LOCATION_VILLAGE)]


@cache
def _place_words(country: str) -> frozenset[str]:
    from polydeid.locales.places import place_data

    data = place_data(country)
    if data is None:
        return frozenset()
    return frozenset(v for values in data.lists.values() for v in values)


# --- clinical facts ------------------------------------------------------------------------


def _dose_text(state: _State, frequency: bool) -> str:
    doses = clinical_data()["dose"]
    unit = state.rng.choice(("mg", "mg", "mg", "g", "mcg", "mL", "IU"))
    value = state.rng.choice(doses[unit])
    number = f"{value:g}"
    if _decimal_comma(state.lang):
        number = number.replace(".", ",")
    text = f"{number} {unit}"
    if frequency and state.rng.random() < 0.5:
        text += " " + state.rng.choice(doses["frequencies"])
    return text


def _drug(state: _State) -> _Piece:
    if "name_like_drug" in state.forced and state.rng.random() < 0.7:
        names = clinical_data()["drugs"]["name_like"]
        return _Piece(state.rng.choice(names), Fact.DRUG, frozenset({"name_like_drug"}))
    words = state.data.words("drugs")
    if not words:
        raise _Unfillable("drug")
    return _Piece(state.rng.choice(words), Fact.DRUG)


def _lab(state: _State) -> str:
    test = state.rng.choice(clinical_data()["lab"])
    low, high = test["range"]
    value = _number(state, low, high, test["decimals"])
    return f"{state.rng.choice(test['names'])} {value} {state.rng.choice(test['unit'])}"


def _vital_labels(lang: str, kind: str) -> tuple[str, ...]:
    own, english = (fact_words(code).vitals.get(kind, VitalSign()) for code in (lang, "en"))
    return own.labels or english.labels


def _vital(state: _State) -> str:
    vitals = clinical_data()["vital"]
    kind = state.rng.choice(sorted(vitals))
    spec = vitals[kind]
    labels = _vital_labels(state.lang, kind)
    if state.rng.random() < 0.4:
        english = _vital_labels("en", kind)
        labels = english[:3] or labels
    label = state.rng.choice(labels)
    unit = state.rng.choice(spec["units"])
    if kind == "blood_pressure":
        systolic = state.rng.randint(*spec["range"])
        diastolic = min(state.rng.randint(*spec["diastolic"]), systolic - 20)
        value = f"{systolic}/{diastolic}"
    else:
        value = _number(state, *spec["range"], spec.get("decimals", 0))
    space = "" if unit in ("%", "°C") and state.rng.random() < 0.5 else " "
    return f"{label} {value}{space}{unit}"


def _duration(state: _State) -> str:
    units = age_words(state.lang).units
    kind = state.rng.choice(("day", "day", "week", "month"))
    spec = units.get(kind) or units.get("day") or UnitWords()
    number = state.rng.randint(2, 14)
    joiner = "" if state.lang == "zh" else " "
    before, after = spec.before, spec.after
    if before and (not after or state.rng.random() < 0.7):
        return f"{before[0]}{joiner}{number}"
    if after:
        return f"{number}{joiner}{after[0]}"
    facts = fact_words(state.lang)
    if facts.duration_units_before:
        return f"{state.rng.choice(facts.duration_units_before)}{joiner}{number}"
    if facts.duration_units:
        return f"{number}{joiner}{state.rng.choice(facts.duration_units)}"
    raise _Unfillable("duration")


def _birth_weight(state: _State) -> str:
    return f"{_number(state, 1.8, 4.6, 1)} kg"


def _amount(state: _State) -> list[_Piece]:
    currencies = clinical_data()["amount"].get(state.country, ("USD",))
    value = state.rng.randrange(5, 2000) * state.rng.choice((10, 100, 1000))
    number = f"{value:,}".replace(",", "." if _decimal_comma(state.lang) else ",")
    currency = state.rng.choice(currencies)
    text = f"{currency} {number}" if state.rng.random() < 0.5 else f"{number} {currency}"
    return [_Piece(text, None, frozenset({"money_amount"}))]


def _time(state: _State) -> list[_Piece]:
    words = state.data.words("times")
    if words:
        text = state.rng.choice(words)
    else:
        text = f"{state.rng.randint(7, 18):02d}:{state.rng.choice((0, 15, 30, 45)):02d}"
    return [_Piece(text, None, frozenset({"time_of_day"}))]


# --- slot fillers --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _SlotUse:
    """One placeholder to fill: the slot's name, the text written just before it and whether
    it is a header field's value (no context prefix, no title taken into a name)."""

    name: str
    before: str
    header: bool


#: What fills a slot: its pieces, drawn from the document's state.
_SlotFiller = Callable[[_State, _SlotUse], list[_Piece]]


def _once(make: _SlotFiller, *, per_header: bool = False) -> _SlotFiller:
    """``make``'s pieces drawn at the slot's first use in a document and repeated at every
    later one (one phone, one village, one religion throughout); ``per_header``: drawn once
    for header fields and once for sentences (an identifier's context prefix differs)."""

    def fill(state: _State, use: _SlotUse) -> list[_Piece]:
        key = f"{use.name}{use.header}" if per_header else use.name
        return _fixed(state, key, lambda: make(state, use))

    return fill


def _of_state(make: Callable[[_State], list[_Piece]]) -> _SlotFiller:
    """``make``, which needs nothing but the document's state, as a filler."""

    def fill(state: _State, use: _SlotUse) -> list[_Piece]:
        return make(state)

    return fill


def _vocab(key: str, label: Label | None, edge: str = "") -> _SlotFiller:
    """A word of the language's vocabulary list ``key`` (``synth.toml``)."""

    def fill(state: _State, use: _SlotUse) -> list[_Piece]:
        return _vocab_piece(state, key, label, edge)

    return fill


def _fact(make: Callable[[_State], str], label: Fact) -> _SlotFiller:
    """One clinical fact, its text drawn by ``make``."""

    def fill(state: _State, use: _SlotUse) -> list[_Piece]:
        return [_Piece(make(state), label)]

    return fill


def _fill_person(state: _State, use: _SlotUse) -> list[_Piece]:
    return _person_pieces(state, use.name, "" if use.header else use.before)


def _fill_person_word(state: _State, use: _SlotUse) -> list[_Piece]:
    return _person_pieces(state, use.name.removesuffix("_word"), "", word=True)


def _fill_phone(state: _State, use: _SlotUse) -> list[_Piece]:
    return _phone(state, "patient")


def _fill_relative_phone(state: _State, use: _SlotUse) -> list[_Piece]:
    return _phone(state, "relative")


def _fill_dob(state: _State, use: _SlotUse) -> list[_Piece]:
    return _date(state, (1935, 2024))


def _fill_place(state: _State, use: _SlotUse) -> list[_Piece]:
    return _place(state, use.name)


def _fill_address(state: _State, use: _SlotUse) -> list[_Piece]:
    value = state.filler.value(Category.LOCATION_ADDRESS)
    return [_Piece(value.text, Category.LOCATION_ADDRESS)]


def _fill_organization(state: _State, use: _SlotUse) -> list[_Piece]:
    return [_Piece(state.filler.value(Category.ORGANIZATION).text, Category.ORGANIZATION)]


def _fill_national_id(state: _State, use: _SlotUse) -> list[_Piece]:
    return _with_prefix(state, Category.ID_NATIONAL, use.header)


def _fill_record(state: _State, use: _SlotUse) -> list[_Piece]:
    return _record(state, use.header)


def _fill_insurance(state: _State, use: _SlotUse) -> list[_Piece]:
    return _with_prefix(state, Category.ID_OTHER, use.header)


def _fill_drug(state: _State, use: _SlotUse) -> list[_Piece]:
    return [_drug(state)]


def _fill_vaccine(state: _State, use: _SlotUse) -> list[_Piece]:
    names = clinical_data()["vaccines"]["names"]
    return [_Piece(state.rng.choice(names), Fact.DRUG)]


def _fill_medication(state: _State, use: _SlotUse) -> list[_Piece]:
    """A drug and its dose (with a frequency half the time): two fact pieces."""
    return [_drug(state), _Piece(" "), _Piece(_dose_text(state, True), Fact.DOSE)]


def _fill_dose(state: _State, use: _SlotUse) -> list[_Piece]:
    return [_Piece(_dose_text(state, False), Fact.DOSE)]


#: The filler of each slot of :data:`SLOTS`.
_SLOT_FILLERS: Final[Mapping[str, _SlotFiller]] = MappingProxyType(
    {
        "patient": _fill_person,
        "relative": _fill_person,
        "clinician": _fill_person,
        "patient_word": _fill_person_word,
        "relative_word": _fill_person_word,
        "clinician_word": _fill_person_word,
        "phone": _once(_fill_phone),
        "relative_phone": _once(_fill_relative_phone),
        "email": _once(_of_state(_email)),
        "dob": _once(_fill_dob),
        "date": _of_state(_date),
        "age": _once(_of_state(_age)),
        "village": _once(_fill_place),
        "district": _once(_fill_place),
        "address": _once(_fill_address),
        "facility": _once(_of_state(_facility)),
        "organization": _fill_organization,
        "national_id": _once(_fill_national_id, per_header=True),
        "record": _once(_fill_record, per_header=True),
        "insurance": _once(_fill_insurance, per_header=True),
        "profession": _once(_vocab("professions", Category.PROFESSION, "profession_mention")),
        "religion": _once(_vocab("religions", Category.RELIGION, "religion_mention")),
        "tribe": _once(_of_state(_tribe)),
        "clan": _once(_of_state(_clan)),
        "sex": _once(_of_state(_sex)),
        "diagnosis": _vocab("diagnoses", Fact.DIAGNOSIS),
        "eponym": _vocab("eponym_diagnoses", Fact.DIAGNOSIS, "eponym_disease"),
        "drug": _fill_drug,
        "vaccine": _fill_vaccine,
        "medication": _fill_medication,
        "dose": _fill_dose,
        "lab": _fact(_lab, Fact.LAB_VALUE),
        "vital": _fact(_vital, Fact.VITAL),
        "birth_weight": _fact(_birth_weight, Fact.VITAL),
        "duration": _fact(_duration, Fact.DURATION),
        "department": _vocab("departments", Fact.DEPARTMENT),
        "relation": _once(_vocab("relations", None)),  # one relative: one relation
        "relative_date": _vocab("relative_dates", None, "relative_date"),
        "time": _of_state(_time),
        "amount": _of_state(_amount),
        "day_month": _of_state(_day_month),
    }
)


# --- slot dispatch -------------------------------------------------------------------------


def _fill(state: _State, slot: str, before: str, header: bool = False) -> list[_Piece]:
    """The pieces that fill ``slot`` (``before``: the text written just before it)."""
    try:
        return _fill_slot(state, slot, before, header)
    except ConfigError:  # the country's packs lack this kind of value (no streets for CN)
        raise _Unfillable(slot) from None


def _fill_slot(state: _State, slot: str, before: str, header: bool) -> list[_Piece]:
    """The pieces :data:`_SLOT_FILLERS` gives ``slot``; ConfigError for an unknown slot."""
    filler = _SLOT_FILLERS.get(slot)
    if filler is None:
        raise ConfigError(f"unknown slot {slot!r}")
    return filler(state, _SlotUse(slot, before, header))


# --------------------------------------------------------------------------------------------
# OCR noise (letters only, never digits: noise must not forge an identifier)

_OCR_CONFUSIONS: Final = (
    ("rn", "m"),
    ("m", "rn"),
    ("cl", "d"),
    ("e", "c"),
    ("h", "b"),
    ("i", "l"),
    ("u", "v"),
    ("o", "a"),
)


def _ocr(state: _State, text: str) -> str:
    out, i = [], 0
    while i < len(text):
        if state.rng.random() < 0.04:
            for old, new in _OCR_CONFUSIONS:
                if text.startswith(old, i):
                    out.append(new)
                    i += len(old)
                    break
            else:
                out.append(text[i])
                i += 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


# --------------------------------------------------------------------------------------------
# Sentences and fields


def _sentence(state: _State, template: Template, noisy: bool) -> list[_Piece]:
    pieces: list[_Piece] = []
    last = 0
    written = ""
    for match in _SLOT.finditer(template.text):
        literal = template.text[last : match.start()]
        if literal:
            literal = _ocr(state, literal) if noisy else literal
            pieces.append(_Piece(literal))
            written += literal
        filled = _fill(state, match.group(1), written)
        _title_into_name(state, pieces, filled)
        pieces.extend(filled)
        written += "".join(p.text for p in filled)
        last = match.end()
    tail = template.text[last:]
    if tail:
        pieces.append(_Piece(_ocr(state, tail) if noisy else tail))
    return pieces


def _field(key: str, pieces: Sequence[_Piece], state: _State) -> Field:
    text_parts: list[str] = []
    spans: list[Span] = []
    facts: list[Span] = []
    offset = 0
    for piece in pieces:
        if piece.label is not None and piece.text:
            span = Span(offset, offset + len(piece.text), piece.label, SOURCE)
            (facts if isinstance(piece.label, Fact) else spans).append(span)
        state.edges.update(piece.edges)
        text_parts.append(piece.text)
        offset += len(piece.text)
    text = "".join(text_parts)
    _punctuation_edges(state, text, spans)
    return Field(key, text, tuple(spans), tuple(facts))


def _punctuation_edges(state: _State, text: str, spans: Sequence[Span]) -> None:
    for span in spans:
        if span.label not in (Category.PERSON, Category.PERSON_THIRD_PARTY):
            continue
        after = text[span.end : span.end + 2]
        before = text[span.start - 1] if span.start else ""
        if (after and after[0] in ',;:.)!?"»”') or (before and before in '("«“'):
            state.edges.add("name_punctuation")
        if after in ("'s", "’s"):
            state.edges.add("possessive_name")


def _pick_templates(state: _State, section: str, count: int) -> list[Template]:
    pool = [
        t
        for t in state.data.sections.get(section, ())
        if not t.types or state.doctype.name in t.types
    ]
    if not pool:
        return []
    state.rng.shuffle(pool)
    return [pool[i % len(pool)] for i in range(count)]


def _narrative(state: _State, section: str, count: int, noisy: bool) -> list[_Piece]:
    pieces: list[_Piece] = []
    joiner = "" if state.lang in ("zh",) else " "
    for template in _pick_templates(state, section, count * 3):
        if count == 0:
            break
        saved = (
            dict(state.fixed),
            {k: _Person(p.text, p.edges, p.tokens, p.mentions) for k, p in state.people.items()},
        )
        try:
            sentence = _sentence(state, template, noisy)
        except _Unfillable:
            state.fixed, state.people = saved
            continue
        if pieces:
            pieces.append(_Piece(joiner))
        pieces.extend(sentence)
        state.used_templates.append(template.id)
        count -= 1
    return pieces


def _header_field(state: _State, key: str) -> Field | None:
    slot = doctype_data()["fields"][key]
    try:
        pieces = _fill(state, slot, "", header=True)
    except _Unfillable:
        return None
    if slot in ("patient", "relative", "clinician"):
        pieces = [p for p in pieces if p.label is not None]  # no title in a name field
    return _field(key, pieces, state)


# --------------------------------------------------------------------------------------------
# Documents


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _seed_of(*parts: object) -> int:
    digest = hashlib.sha256("|".join(map(str, parts)).encode("utf-8")).digest()
    return int.from_bytes(digest[:16], "big")


def _draw_edges(rng: random.Random, lang: str, filler: Filler) -> frozenset[str]:
    shapes = set(filler.name_shapes())
    allowed = [
        e
        for e in _FORCIBLE
        if not (
            (e == "initials" and "initials" not in shapes)
            or (e == "hyphenated_name" and "hyphenated" not in shapes)
            or (e == "apostrophe_name" and "apostrophe" not in shapes)
            or (e in ("name_allcaps", "name_lowercase") and "caps" not in shapes)
            or (e == "ocr_noise" and lang == "zh")
        )
    ]
    k = rng.choice((0, 1, 1, 2, 2, 3, 4))
    chosen = set(rng.sample(allowed, k))
    if {"name_allcaps", "name_lowercase"} <= chosen:
        chosen.discard("name_lowercase")
    return frozenset(chosen)


def _build(
    lang: str,
    index: int,
    attempt: int,
    seed: int,
    name_split: str,
    formats: Sequence[str] | None,
    doctypes: Sequence[str] | None = None,
) -> AnnotatedDocument:
    rng = random.Random(_seed_of(seed, lang, index, attempt))
    types = document_types()
    doctype = types[rng.choice(sorted(types if doctypes is None else doctypes))]
    allowed_formats = [f for f in doctype.formats if formats is None or f in formats]
    if not allowed_formats:
        allowed_formats = list(formats or doctype.formats)
    text_format = rng.choice(allowed_formats)
    lengths = [
        (n, w) for n, w in zip(LENGTHS, _LENGTH_WEIGHTS, strict=True) if n in doctype.lengths
    ]
    length = rng.choices([n for n, _ in lengths], [w for _, w in lengths])[0]
    countries = _countries(lang)
    country = rng.choice(countries)
    state = _new_state(
        lang,
        country,
        rng,
        doctype,
        name_split,
        fill_seed=_seed_of(seed, lang, index, attempt, "fill"),
    )
    spec = doctype_data()["lengths"][length]
    fields = _header_fields(state, spec)
    noisy = "ocr_noise" in state.forced
    sections = list(doctype.sections)
    low, high = spec["sections"]
    if len(sections) > high:
        keep = sorted(rng.sample(range(len(sections)), rng.randint(min(low, len(sections)), high)))
        sections = [sections[i] for i in keep]
    narrative: list[tuple[str, list[_Piece]]] = []
    for key, section in sections:
        count = rng.randint(*spec["sentences"])
        narrative.append((key, _narrative(state, section, count, noisy)))
    if "code_mixed" in state.forced and narrative:
        key, pieces = narrative[rng.randrange(len(narrative))]
        mixed = _narrative(state, "code_mixed", 1, False)
        if mixed:
            pieces.extend([_Piece(" "), *mixed] if pieces else mixed)
            state.edges.add("code_mixed")
    if noisy:
        state.edges.add("ocr_noise")
    if not any(f.facts for f in fields) and not any(
        isinstance(p.label, Fact) for _, pieces in narrative for p in pieces
    ):
        extra = _header_field(state, doctype.fact_field)
        if extra is not None:
            fields.append(extra)
    rendered = _render(state, fields, narrative, text_format)
    if length == "long":
        minimum = spec["min_chars_cjk"] if _CJK.search(rendered.text) else spec["min_chars"]
        rounds = 0
        while len(rendered.text) < minimum and rounds < 40 and narrative:
            key, pieces = narrative[rounds % len(narrative)]
            section = dict(doctype.sections)[key]
            extra = _narrative(state, section, 2, noisy)
            if extra:
                pieces.extend([_Piece(" "), *extra] if pieces else extra)
            rendered = _render(state, fields, narrative, text_format)
            rounds += 1
    edges = sorted(e for e in state.edges if e in EDGE_CASES)
    templates = sorted(set(state.used_templates))
    meta = {
        "document_type": doctype.name,
        "text_format": text_format,
        "length": length,
        "edge_cases": edges,
        "country": country,
        "template": f"{doctype.name}:{_digest('+'.join(templates))}",
        "templates": templates,
    }
    return AnnotatedDocument(
        id=f"synth-{seed}-{lang}-{index:06d}",
        text=rendered.text,
        lang=lang,
        spans=rendered.spans,
        facts=rendered.facts,
        source=SOURCE,
        meta=MappingProxyType(meta),
    )


def _new_state(
    lang: str,
    country: str,
    rng: random.Random,
    doctype: DocType,
    name_split: str,
    *,
    fill_seed: int,
    drop_edges: frozenset[str] = frozenset(),
) -> _State:
    """A fresh document state: filler for the country, edge cases drawn (less ``drop_edges``)."""
    filler = Filler(lang, country=country, seed=fill_seed, name_split=name_split)
    return _State(
        lang=lang,
        country=country,
        rng=rng,
        filler=filler,
        data=language_templates(lang),
        doctype=doctype,
        forced=_draw_edges(rng, lang, filler) - drop_edges,
    )


def _header_fields(state: _State, spec: Mapping[str, Any]) -> list[Field]:
    share = state.rng.uniform(*spec["header_share"])
    fields = []
    for key in state.doctype.header:
        if key not in state.doctype.required and state.rng.random() > share:
            continue
        made = _header_field(state, key)
        if made is not None:
            fields.append(made)
    return fields


def _render(
    state: _State,
    header: Sequence[Field],
    narrative: Sequence[tuple[str, list[_Piece]]],
    text_format: str,
) -> Rendered:
    fields = list(header)
    for key, pieces in narrative:
        if pieces:
            fields.append(_field(key, pieces, state))
    return render(
        fields,
        text_format=text_format,
        document_type=state.doctype.name,
        lang=state.lang,
        rng=random.Random(_seed_of(state.rng.random())),
        narrator=state.doctype.narrator,
    )


@cache
def _countries(lang: str) -> tuple[str, ...]:
    from polydeid.locales import default_countries
    from polydeid.locales.places import place_data

    found = tuple(c for c in default_countries(lang) if place_data(c) is not None)
    if not found:
        raise ConfigError(f"language {lang}: none of its countries has places.toml")
    return found


def _masked_key(doc: AnnotatedDocument) -> str:
    """The text with identifiers as labels and digits as 0: equal keys, same document."""
    return re.sub(r"\d", "0", mask_spans(doc.text, doc.spans))


def generate(
    *,
    per_language: int,
    seed: int,
    langs: Iterable[str] | None = None,
    name_split: str = "train",
    formats: Sequence[str] | None = None,
    doctypes: Sequence[str] | None = None,
) -> Iterator[AnnotatedDocument]:
    """``per_language`` documents for each language, interleaved, deterministic for ``seed``;
    ``doctypes``: draw only these document types (default: all of them)."""
    if name_split not in SPLITS:
        raise ConfigError(f"name_split must be one of {', '.join(SPLITS)}")
    if per_language < 0:
        raise ConfigError("the number of documents must not be negative")
    codes = _languages(langs)
    if formats is not None:
        from polydeid.synth.formats import format_names

        unknown = sorted(set(formats) - set(format_names()))
        if unknown:
            raise ConfigError(f"unknown text format(s): {', '.join(unknown)}")
    if doctypes is not None:
        unknown = sorted(set(doctypes) - set(document_types()))
        if unknown or not doctypes:
            raise ConfigError(f"unknown document type(s): {', '.join(unknown) or 'none given'}")
    seen: dict[str, set[str]] = {code: set() for code in codes}
    for index in range(per_language):
        for lang in codes:
            for attempt in range(_DEDUP_TRIES):
                doc = _build(lang, index, attempt, seed, name_split, formats, doctypes)
                key = _masked_key(doc)
                fresh = key not in seen[lang] and not confident_mismatch(
                    doc.text, doc.lang, doc.spans, doc.meta["edge_cases"]
                )
                if fresh or attempt == _DEDUP_TRIES - 1:
                    seen[lang].add(key)
                    yield doc
                    break


def _languages(langs: Iterable[str] | None) -> tuple[str, ...]:
    available = synth_languages()
    if langs is None:
        if not available:
            raise ConfigError("no language pack ships synth.toml")
        return available
    codes = tuple(dict.fromkeys(canonical_language(code) for code in langs))
    missing = [c for c in codes if c not in available]
    if missing:
        raise ConfigError(f"no synthetic-document data for language(s): {', '.join(missing)}")
    return codes


# --------------------------------------------------------------------------------------------
# Plans for other writers (the LLM mode)


@dataclass(frozen=True, slots=True)
class PlannedValue:
    """A value a document must contain, with its slot and label (None: plain words)."""

    slot: str
    label: Label | None
    text: str

    def __repr__(self) -> str:
        return f"PlannedValue({self.slot}, chars={len(self.text)})"


@dataclass(frozen=True, slots=True)
class DocumentPlan:
    """Sampled axes of one document and the values it must hold, for a writer to compose."""

    lang: str
    country: str
    document_type: str
    text_format: str
    length: str
    edge_cases: tuple[str, ...]
    values: tuple[PlannedValue, ...]

    def __repr__(self) -> str:
        return f"DocumentPlan({self.lang}, {self.document_type}, values={len(self.values)})"


#: Formats a free writer can produce as plain text (the structured ones are rendered here).
PLAIN_FORMATS: Final = ("prose", "soap", "bullets", "key_value", "chat")
_PLAN_SLOTS: Final = ("diagnosis", "drug", "dose", "vital", "lab", "duration")


def plan_document(lang: str, index: int, *, seed: int, name_split: str = "train") -> DocumentPlan:
    """The axes and slot values of document ``index``, drawn like :func:`generate` draws them."""
    code = _languages([lang])[0]
    rng = random.Random(_seed_of(seed, code, index, "plan"))
    types = document_types()
    doctype = types[rng.choice(sorted(types))]
    formats = [f for f in doctype.formats if f in PLAIN_FORMATS] or list(PLAIN_FORMATS)
    text_format = rng.choice(formats)
    length = rng.choices(LENGTHS[:2], (0.5, 0.5))[0]
    country = rng.choice(_countries(code))
    state = _new_state(
        code,
        country,
        rng,
        doctype,
        name_split,
        fill_seed=_seed_of(seed, code, index, "plan-fill"),
        drop_edges=frozenset({"ocr_noise", "code_mixed", "id_in_url"}),
    )
    values: list[PlannedValue] = []
    for key in doctype.header:
        if key not in doctype.required and rng.random() > 0.6:
            continue
        slot = doctype_data()["fields"][key]
        try:
            pieces = _fill(state, slot, "", header=True)
        except _Unfillable:
            continue
        kept = [p for p in pieces if p.text.strip() and p.label]
        values.extend(PlannedValue(key, p.label, p.text) for p in kept)
        state.edges.update(e for p in kept for e in p.edges)
    for slot in rng.sample(_PLAN_SLOTS, 3):
        try:
            pieces = _fill(state, slot, "")
        except _Unfillable:
            continue
        kept = [p for p in pieces if p.label]
        values.extend(PlannedValue(slot, p.label, p.text) for p in kept)
        state.edges.update(e for p in kept for e in p.edges)
    unique = {(v.label, v.text): v for v in values}
    edges = sorted(e for e in state.edges if e in EDGE_CASES)
    return DocumentPlan(
        code, country, doctype.name, text_format, length, tuple(edges), tuple(unique.values())
    )
