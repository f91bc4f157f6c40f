"""Schemas of the data files and shape checks shared by their loaders (one loader per kind, see
the sibling modules).

Every data file is validated against the schema of its kind when it is read
(:func:`validate`, called by :mod:`polydeid.locales` for the packs and by the lexicon and
format readers for their tables): an unknown key or a value of the wrong type is a
:class:`~polydeid.core.errors.DataFileError` naming the file and the key.

Each check reads one key of a raw TOML table and raises :class:`ConfigError` located at the
file and the key (``languages/en/ages.toml units.year.after``) when the value has the wrong
shape. A missing key reads as empty. Lists keep their items as written (blank ones too): what
a consumer does with them is the consumer's business.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from types import MappingProxyType
from typing import Any, Required

from pydantic import ConfigDict, TypeAdapter, ValidationError, with_config
from typing_extensions import TypedDict  # pydantic reads typing's TypedDict from 3.12 only

from polydeid.core.errors import ConfigError, DataFileError


def at(file: str, path: str) -> str:
    """The location of ``path`` (dotted keys) in ``file``."""
    return f"{file} {path}" if path else file


def table(raw: Mapping[str, Any], key: str, file: str, path: str = "") -> Mapping[str, Any]:
    """The sub-table ``key`` of ``raw`` (empty when absent)."""
    value = raw.get(key, {})
    if not isinstance(value, Mapping):
        raise ConfigError("expected a table", location=at(file, f"{path}{key}"))
    return value


def tables(
    raw: Mapping[str, Any], key: str, file: str, path: str = ""
) -> tuple[Mapping[str, Any], ...]:
    """The array of tables ``key`` of ``raw`` (``[[key]]``; empty when absent)."""
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(t, Mapping) for t in value):
        raise ConfigError("expected an array of tables", location=at(file, f"{path}{key}"))
    return tuple(value)


def strings(raw: Mapping[str, Any], key: str, file: str, path: str = "") -> tuple[str, ...]:
    """The list of strings ``key`` of ``raw``, as written (empty when absent)."""
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError("expected a list of strings", location=at(file, f"{path}{key}"))
    return tuple(value)


def string(raw: Mapping[str, Any], key: str, file: str, path: str = "", default: str = "") -> str:
    value = raw.get(key, default)
    if not isinstance(value, str):
        raise ConfigError("expected a string", location=at(file, f"{path}{key}"))
    return value


def number(
    raw: Mapping[str, Any], key: str, file: str, path: str = "", default: float | None = None
) -> float:
    """A number (an integer or a float; required when ``default`` is None)."""
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError("expected a number", location=at(file, f"{path}{key}"))
    return float(value)


def integer(raw: Mapping[str, Any], key: str, file: str, path: str = "") -> int:
    """A required integer."""
    value = raw.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError("expected an integer", location=at(file, f"{path}{key}"))
    return value


def flag(raw: Mapping[str, Any], key: str, file: str, path: str = "") -> bool:
    """A boolean (false when absent)."""
    value = raw.get(key, False)
    if not isinstance(value, bool):
        raise ConfigError("expected true or false", location=at(file, f"{path}{key}"))
    return value


def word_values(raw: Mapping[str, Any], key: str, file: str, path: str = "") -> Mapping[str, int]:
    """A table of words and their integer values, in file order (empty when absent)."""
    value = raw.get(key, {})
    if not isinstance(value, Mapping) or not all(isinstance(v, int) for v in value.values()):
        raise ConfigError(
            "expected a table of words and integers", location=at(file, f"{path}{key}")
        )
    return MappingProxyType(dict(value))


def frozen(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    """A read-only copy of ``mapping``."""
    return MappingProxyType(dict(mapping))


# --- schemas: every data file kind, validated when it is read -----------------------------------
#
# One model per kind of data file: unknown keys are refused (``extra="forbid"``) and values
# are of their type (``strict``: no "3" for 3), so a misspelt key (``grammar.yeer_words``)
# is an error naming the file and the key, never a table silently read as empty. A table
# whose keys are data (month forms, vital signs, field labels, place kinds) is a mapping.


#: A table of a data file: known keys only (``extra="forbid"``), values of their type. Keys a
#: loader requires are checked by the loader (its message names the entry: ``format x``).
strict = with_config(ConfigDict(extra="forbid", strict=True))


Words = list[str]


@strict
class Meta(TypedDict, total=False):
    """``[meta]``: where the data comes from and under which licence."""

    sources: Required[Words]
    licence: Required[str]
    description: str
    review: str
    notes: str
    recorded: bool


@strict
class _Data(TypedDict, total=False):
    """A locale data file: it starts with its ``[meta]``."""

    meta: Required[Meta]


@strict
class _WordList(TypedDict, total=False):
    words: Words


@strict
class _Names(TypedDict, total=False):
    names: Words


# languages/<code>/language.toml


@strict
class LanguageFile(TypedDict, total=False):
    name: Required[str]
    iso639_1: str
    iso639_3: Required[str]
    script: Required[str]
    aliases: Words
    countries: Words


# languages/<code>/ages.toml


@strict
class _AgeUnit(TypedDict, total=False):
    after: Words
    age_only: Words
    before: Words


@strict
class _AgeUnits(TypedDict, total=False):
    year: _AgeUnit
    month: _AgeUnit
    week: _AgeUnit
    day: _AgeUnit


@strict
class _AgeContext(TypedDict, total=False):
    labels: Words
    at_event: Words
    after: Words
    nearby: Words


@strict
class _NotAge(TypedDict, total=False):
    before: Words
    after: Words
    labels: Words


@strict
class _Numbers(TypedDict, total=False):
    units: Words
    order: str
    joiners: Words
    hundreds: dict[str, int]
    words: dict[str, int]
    tens: dict[str, int]


@strict
class AgesFile(_Data, total=False):
    units: _AgeUnits
    context: _AgeContext
    not_age: _NotAge
    numbers: _Numbers


# languages/<code>/contacts.toml


@strict
class _Email(TypedDict, total=False):
    words: Words
    webmail_domains: Words


@strict
class _Ip(TypedDict, total=False):
    words: Words
    version_words: Words


@strict
class _Obfuscation(TypedDict, total=False):
    at: Words
    dot: Words
    stopwords: Words


@strict
class _Domains(TypedDict, total=False):
    generic_tlds: Words
    extra_cctlds: Words


@strict
class _Urls(TypedDict, total=False):
    standard_hosts: Words


@strict
class ContactsFile(_Data, total=False):
    phone: _WordList
    fax: _WordList
    extension: _WordList
    email: _Email
    social: _WordList
    ip: _Ip
    obfuscation: _Obfuscation
    domains: _Domains
    urls: _Urls


# languages/<code>/dates.toml


@strict
class _Grammar(TypedDict, total=False):
    numeric_order: str
    dm_dot: bool
    day_prefixes: Words
    day_words: Words
    connectors: Words
    year_prefixes: Words
    year_words: Words
    month_prefixes: Words
    attached_prefixes: Words
    month_number_prefixes: Words
    month_number_suffixes: Words
    range_words: Words
    day_month_separators: Words
    month_first_regions: Words
    alone_year_prefixes: Words


@strict
class _CalendarYear(TypedDict, total=False):
    year_words: Words


@strict
class _Ordinals(TypedDict, total=False):
    suffixes: Words
    default: str | None
    by_day: dict[str, str]
    only_first: bool


@strict
class _NameForm(TypedDict, total=False):
    names: Words
    abbreviation: bool
    calendar: str
    dot_required: bool


@strict
class _Ambiguous(TypedDict, total=False):
    months: Words
    needs_year: Words


@strict
class _DateContext(TypedDict, total=False):
    date: Words
    birth: Words
    not_date: Words
    not_date_after: Words
    day_month: Words
    year: Words
    month: Words
    time: Words


@strict
class _DateUnits(TypedDict, total=False):
    after_number: Words
    clock: Words


@strict
class DatesFile(_Data, total=False):
    grammar: _Grammar
    calendars: dict[str, _CalendarYear]
    ordinals: _Ordinals
    month_forms: dict[str, _NameForm]
    month_variants: dict[str, int | list[int | str]]
    weekday_forms: dict[str, _NameForm]
    weekday_variants: dict[str, int]
    ambiguous: _Ambiguous
    context: _DateContext
    units: _DateUnits


# languages/<code>/facts.toml


@strict
class _FactUnits(TypedDict, total=False):
    dose: Words
    vital: Words
    quantity: Words
    frequency: Words
    per: Words
    lab: Words
    after_label: Words


@strict
class _Before(TypedDict, total=False):
    quantity: Words
    frequency: Words


@strict
class _Dose(TypedDict, total=False):
    routes: Words
    frequencies: Words


@strict
class _Duration(TypedDict, total=False):
    markers: Words
    fillers: Words
    units: Words
    units_before: Words
    after_markers: Words


@strict
class _Vital(TypedDict, total=False):
    labels: Words
    min: float | None
    max: float | None
    ratio: bool
    denominators: list[int]


@strict
class _Labels(TypedDict, total=False):
    labels: Words


@strict
class _Around(TypedDict, total=False):
    after: Words
    before: Words


@strict
class _EponymTerm(_Around, total=False):
    results: Words


@strict
class _CareRole(TypedDict, total=False):
    determiners: Words
    roles: Words


@strict
class FactsFile(_Data, total=False):
    units: _FactUnits
    before: _Before
    dose: _Dose
    duration: _Duration
    vital: dict[str, _Vital]
    lab: _Names
    link: _WordList
    quantity: _Labels
    eponym: _Around
    eponym_term: _EponymTerm
    care_role: _CareRole


# languages/<code>/field_labels.toml, identifiers.toml, kinship.toml


@strict
class FieldLabelsFile(_Data, total=False):
    labels: dict[str, str]


@strict
class IdentifiersFile(_Data, total=False):
    national_id: _WordList
    record: _WordList
    passport: _WordList
    insurance: _WordList
    licence: _WordList
    postal_code: _WordList
    fillers: _WordList


@strict
class _Kinship(TypedDict, total=False):
    words: Words
    modifiers: Words


@strict
class _Address(TypedDict, total=False):
    forms: Words
    salutations: Words


@strict
class _KinshipGrammar(TypedDict, total=False):
    words: Words
    elisions: Words


@strict
class KinshipFile(_Data, total=False):
    kinship: _Kinship
    role: _WordList
    address: _Address
    grammar: _KinshipGrammar


# languages/<code>/names.toml, names_heldout.toml


@strict
class _NameFormat(TypedDict, total=False):
    order: str
    joiner: str
    titles: Words
    honorifics: Words
    greetings: Words
    possessive_suffixes: Words
    titles_in_names: bool
    family_words: int
    pronouns: Words


@strict
class _NamePool(TypedDict, total=False):
    given_male: Words
    given_female: Words
    family: Words
    family_male: Words
    family_female: Words
    clans: Words
    middle_male: Words
    middle_female: Words


@strict
class NamesFile(_Data, total=False):
    format: _NameFormat
    default: _NamePool
    countries: dict[str, _NamePool]


@strict
class NamesHeldoutFile(_Data, total=False):
    default: _NamePool


# languages/<code>/places.toml


@strict
class _PlaceContext(TypedDict, total=False):
    before: Words
    attached: Words
    people: Words


@strict
class _PlaceWords(TypedDict, total=False):
    joiners: Words
    organisations: Words
    nouns_capitalised: bool
    german_nouns: bool


@strict
class _Streets(TypedDict, total=False):
    number_marks: Words


@strict
class _Heads(TypedDict, total=False):
    before: Words


@strict
class PlaceWordsFile(_Data, total=False):
    context: _PlaceContext
    facility: _Around
    words: _PlaceWords
    streets: _Streets
    heads: _Heads


# languages/<code>/synth.toml


@strict
class _Vocab(TypedDict, total=False):
    diagnoses: Words
    eponym_diagnoses: Words
    drugs: Words
    departments: Words
    professions: Words
    religions: Words
    relations: Words
    relative_dates: Words
    times: Words
    word_names: Words
    age_words: Words
    chat_greetings: Words
    code_mix_language: str
    sex_female: str
    sex_male: str
    clans: Words


@strict
class _Sentence(TypedDict, total=False):
    section: str
    text: str
    types: Words


@strict
class SynthFile(_Data, total=False):
    vocab: _Vocab
    sentence: list[_Sentence]


# countries/<CC>/*.toml


@strict
class FacilitiesFile(_Data, total=False):
    facilities: dict[str, Words]


@strict
class _IinRange(TypedDict, total=False):
    scheme: str
    ranges: list[list[str]]
    lengths: list[int]


@strict
class _IdFormat(TypedDict, total=False):
    name: str
    label: str
    starts: str
    pattern: str
    validator: str
    checksum: bool
    context: str
    score: float
    labels: Words
    statuses: Words
    sexes: Words
    min_year: int | None
    max_year: int | None
    min_tail_letters: int
    provinces: Words
    century_digits: dict[str, int]
    iin: list[_IinRange]


@strict
class _LabelledId(TypedDict, total=False):
    name: str
    kind: str
    label: str
    value: str
    min_digits: int
    score: float


@strict
class _Records(TypedDict, total=False):
    value: str
    min_digits: int
    prefix_score: float
    structure: str
    structure_score: float
    min_year: int | None
    max_year: int | None
    not_prefixes: Words


@strict
class IdsFile(_Data, total=False):
    format: list[_IdFormat]
    labelled: list[_LabelledId]
    records: _Records


@strict
class _People(TypedDict, total=False):
    tribes: Words
    tribes_female: Words


@strict
class PeopleFile(_Data, total=False):
    people: _People


@strict
class _Patterns(TypedDict, total=False):
    patterns: Words


@strict
class _StreetNames(_Patterns, total=False):
    names: Words


@strict
class PlacesFile(_Data, total=False):
    places: dict[str, Words]
    streets: _StreetNames
    facilities: _StreetNames
    organizations: _Patterns


# <kind>.toml at the locales root


@strict
class _Anatomy(TypedDict, total=False):
    heads: Words
    endings: Words


@strict
class _Organisms(TypedDict, total=False):
    genera: Words
    species: Words


@strict
class _Drugs(TypedDict, total=False):
    stems: Words


@strict
class _Prior(TypedDict, total=False):
    languages: Words


@strict
class ClinicalTermsFile(_Data, total=False):
    anatomy: _Anatomy
    organisms: _Organisms
    drugs: _Drugs
    words: dict[str, _WordList]
    prior: _Prior


@strict
class _EponymTerms(TypedDict, total=False):
    sources: Words
    names: Words
    scales: Words
    alone: Words
    surnames: Words
    lower_alone: Words


@strict
class EponymsFile(_Data, total=False):
    eponyms: _Names
    terms: _EponymTerms


# lexicon/data/*.toml (read by polydeid.lexicon)


@strict
class _MetaOnly(TypedDict, total=False):
    meta: Meta


@strict
class _NamesAndKeys(TypedDict, total=False):
    keys: Words
    names: Words


@strict
class _NameList(TypedDict, total=False):
    names: Words


@strict
class _NoName(TypedDict, total=False):
    values: Words


@strict
class FieldsFile(_MetaOnly, total=False):
    value: dict[str, _NameList]
    text: _NameList
    skip: _NameList
    labels: dict[str, str]
    name_roles: dict[str, _NamesAndKeys]
    noun_roles: dict[str, _NamesAndKeys]
    value_nouns: dict[str, _NameList]
    name_labels: dict[str, _NamesAndKeys]
    no_name: _NoName


@strict
class _Hl7Type(TypedDict, total=False):
    components: Words
    rest: str
    lone_name: str
    id_type_component: int


@strict
class _Hl7Field(TypedDict, total=False):
    name: str
    role: str


@strict
class _Hl7Segment(TypedDict, total=False):
    name: str
    header: bool
    rest: str
    fields: dict[str, _Hl7Field]


@strict
class Hl7File(_MetaOnly, total=False):
    types: dict[str, _Hl7Type]
    identifier_types: dict[str, str]
    observation_value: dict[str, str]
    charsets: dict[str, str]
    segments: dict[str, _Hl7Segment]


# ``not`` is a Python keyword: this table is declared in the functional form.
_CategoryShape = strict(
    TypedDict(
        "_CategoryShape",
        {
            "min_letters": int,
            "min_alnum": int,
            "min_digits": int | str,
            "max_digits": int | str,
            "not": Words,
            "structure": Words,
            "calendar_word": bool,
            "age_word": bool,
        },
        total=False,
    )
)


@strict
class ShapesFile(_MetaOnly, total=False):
    excluded: dict[str, str]
    structures: dict[str, str]
    category: dict[str, _CategoryShape]


# formats/data/*.toml (read by polydeid.formats)


@strict
class _CdaTypes(TypedDict, total=False):
    dates: Words
    telecom: Words


@strict
class CdaFile(_MetaOnly, total=False):
    elements: dict[str, str]
    attributes: dict[str, str]
    types: _CdaTypes
    telecom: dict[str, str]
    id_roots: dict[str, str]


@strict
class _FhirTelecom(TypedDict, total=False):
    phone: str
    fax: str
    pager: str
    sms: str
    email: str
    url: str
    other: str


@strict
class _FhirText(TypedDict, total=False):
    keys: Words


@strict
class FhirFile(_MetaOnly, total=False):
    elements: dict[str, Words]
    address: dict[str, str]
    telecom: _FhirTelecom
    identifier_type: dict[str, str]
    identifier_default: dict[str, str]
    reference_display: dict[str, str]
    text: _FhirText


@strict
class _CodeLanguages(TypedDict, total=False):
    code: Words
    config: Words
    no_escapes: Words
    lines: Words
    prose: Words
    log_extensions: Words
    prose_extensions: Words


@strict
class _CodeGuess(TypedDict, total=False):
    min_hits: int
    min_fraction: float
    signals: dict[str, Words]


@strict
class _PatternList(TypedDict, total=False):
    patterns: Words


@strict
class _Literals(TypedDict, total=False):
    skip: Words
    code_skip: Words


@strict
class _LogLayout(TypedDict, total=False):
    name: str
    pattern: str
    fields: dict[str, str]


@strict
class _Log(TypedDict, total=False):
    timestamps: Words
    levels: Words
    thread: str
    logger: str
    items: Words
    json_keys: Words
    layout: list[_LogLayout]


@strict
class _Trace(TypedDict, total=False):
    python_start: str
    python_frame: str
    python_exception: str
    go_start: str
    go_frame: str
    frames: Words
    exceptions: Words


@strict
class _Git(TypedDict, total=False):
    skip: Words
    header_date: str
    attribution_label: str
    mailbox: str
    rcs_id: str
    name_particles: Words
    organisation_words: Words


@strict
class _Markdown(TypedDict, total=False):
    fence_open: str


@strict
class _Comments(TypedDict, total=False):
    markers: Words
    signature: str
    signature_inside: str
    signature_max_zipf: float
    line_prefix: str
    line_suffix: str


@strict
class CodeFile(_MetaOnly, total=False):
    languages: _CodeLanguages
    guess: _CodeGuess
    code_lines: _PatternList
    literals: _Literals
    versions: _PatternList
    tokens: _PatternList
    log: _Log
    trace: _Trace
    git: _Git
    markdown: _Markdown
    comments: _Comments


# detect/tagger/model/router.toml (read by polydeid.detect.tagger.detector; also in a
# retrained model's folder)


@strict
class _RouterMeta(TypedDict, total=False):
    sources: Words
    licence: str
    floor: float


@strict
class _Route(TypedDict, total=False):
    categories: Words
    threshold: float
    thresholds: dict[str, float]


@strict
class RouterFile(TypedDict, total=False):
    meta: _RouterMeta
    default: _Route
    languages: Required[dict[str, _Route]]


#: The tables outside the locales folder, by their file name under ``polydeid/``.
TABLES: Mapping[str, Any] = MappingProxyType(
    {
        "detect/tagger/model/router.toml": RouterFile,
        "lexicon/data/fields.toml": FieldsFile,
        "lexicon/data/hl7v2.toml": Hl7File,
        "lexicon/data/shapes.toml": ShapesFile,
        "formats/data/cda.toml": CdaFile,
        "formats/data/code.toml": CodeFile,
        "formats/data/fhir.toml": FhirFile,
    }
)
#: Kinds of ``languages/<code>/<kind>.toml``.
LANGUAGE_KINDS: Mapping[str, Any] = MappingProxyType(
    {
        "language": LanguageFile,
        "ages": AgesFile,
        "contacts": ContactsFile,
        "dates": DatesFile,
        "facts": FactsFile,
        "field_labels": FieldLabelsFile,
        "identifiers": IdentifiersFile,
        "kinship": KinshipFile,
        "names": NamesFile,
        "names_heldout": NamesHeldoutFile,
        "places": PlaceWordsFile,
        "synth": SynthFile,
    }
)
#: The kinds every language pack has: the rules profile promises what they hold for every
#: language, so a pack without one is refused rather than read as empty.
REQUIRED_LANGUAGE_KINDS = frozenset(
    {"language", "ages", "contacts", "dates", "facts", "field_labels", "identifiers", "names"}
)
#: Kinds of ``countries/<CC>/<kind>.toml``.
COUNTRY_KINDS: Mapping[str, Any] = MappingProxyType(
    {
        "facilities": FacilitiesFile,
        "ids": IdsFile,
        "people": PeopleFile,
        "places": PlacesFile,
    }
)
#: Kinds of ``<kind>.toml`` at the locales root.
SHARED_KINDS: Mapping[str, Any] = MappingProxyType(
    {"clinical_terms": ClinicalTermsFile, "eponyms": EponymsFile}
)


def schema_of(kinds: Mapping[str, Any], kind: str, file: str) -> Any:
    """The schema of ``kind``; a kind without one is a :class:`DataFileError` (every data file
    is validated, none is read unchecked)."""
    try:
        return kinds[kind]
    except KeyError:
        raise DataFileError(
            f"no schema for data files of kind {kind!r}; known: {', '.join(sorted(kinds))}",
            location=file,
        ) from None


#: A union member's tag in an error location (``int``, ``list[union[int,str]]``), not a key.
_TYPE_TAG = re.compile(r"(?:int|str|float|bool|list|dict)(?:\[.*\])?")


@cache
def _adapter(schema: Any) -> TypeAdapter[Any]:
    """The validator of ``schema``, built on first use (a kind never read costs nothing)."""
    return TypeAdapter(schema)


def validate(raw: Mapping[str, Any], schema: Any, file: str) -> None:
    """Raise :class:`DataFileError` at ``file`` and the first offending key unless ``raw``
    fits ``schema`` (the message names the key and the rule, never the value)."""
    try:
        _adapter(schema).validate_python(raw)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False, include_context=False)
        first = errors[0]
        path = ".".join(str(part) for part in first["loc"] if not _TYPE_TAG.fullmatch(str(part)))
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        reason = "unknown key" if first["type"] == "extra_forbidden" else first["msg"].lower()
        raise DataFileError(f"{reason}{more}", location=at(file, path)) from None
