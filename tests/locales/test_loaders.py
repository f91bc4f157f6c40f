"""Every data file of every kind loads through its loader, and the typed view holds what the
file says (checked against the raw table for the word lists)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from polydeid.core.taxonomy import Category
from polydeid.locales import countries, country_data, language_data, languages, shared_data
from polydeid.locales.ages import AGE_UNITS, NUMBER_ORDERS, AgeWords, age_languages, age_words
from polydeid.locales.clinical_terms import clinical_terms
from polydeid.locales.contacts import ContactWords, contact_words
from polydeid.locales.eponyms import eponyms
from polydeid.locales.facts import FactWords, fact_words
from polydeid.locales.field_labels import field_labels
from polydeid.locales.identifiers import LABEL_TABLES, IdentifierWords, identifier_words
from polydeid.locales.ids import INTERNATIONAL, country_ids
from polydeid.locales.names_heldout import heldout_pool
from polydeid.locales.people import country_people
from polydeid.locales.place_words import PlaceWords, place_words
from polydeid.locales.synth import synth_data

LANGS = languages()
COUNTRIES = countries()


def _raw(raw: Mapping[str, Any], path: str) -> tuple[Any, ...]:
    """The list at dotted ``path`` of ``raw`` as a tuple (empty when absent)."""
    *tables, key = path.split(".")
    for table in tables:
        raw = raw.get(table, {})
    return tuple(raw.get(key, ()))


#: (kind, loader, {field: dotted path in the file}) of the word-list kinds.
WORD_KINDS: list[tuple[str, Callable[[str], Any], Mapping[str, str]]] = [
    (
        "contacts",
        contact_words,
        {
            "phone": "phone.words",
            "fax": "fax.words",
            "extension": "extension.words",
            "email": "email.words",
            "webmail_domains": "email.webmail_domains",
            "social": "social.words",
            "ip": "ip.words",
            "ip_version": "ip.version_words",
            "at": "obfuscation.at",
            "dot": "obfuscation.dot",
            "stopwords": "obfuscation.stopwords",
            "generic_tlds": "domains.generic_tlds",
            "extra_cctlds": "domains.extra_cctlds",
            "standard_hosts": "urls.standard_hosts",
        },
    ),
    ("identifiers", identifier_words, {t: f"{t}.words" for t in (*LABEL_TABLES, "fillers")}),
    (
        "facts",
        fact_words,
        {
            "lab_units": "units.lab",
            "dose_units": "units.dose",
            "frequency_units": "units.frequency",
            "vital_units": "units.vital",
            "quantity_units": "units.quantity",
            "per_units": "units.per",
            "label_units": "units.after_label",
            "quantity_before": "before.quantity",
            "frequency_before": "before.frequency",
            "routes": "dose.routes",
            "frequencies": "dose.frequencies",
            "duration_markers": "duration.markers",
            "duration_fillers": "duration.fillers",
            "duration_units": "duration.units",
            "duration_units_before": "duration.units_before",
            "duration_after_markers": "duration.after_markers",
            "lab_names": "lab.names",
            "quantity_labels": "quantity.labels",
            "links": "link.words",
            "eponym_after": "eponym.after",
            "eponym_before": "eponym.before",
            "term_after": "eponym_term.after",
            "term_before": "eponym_term.before",
            "term_results": "eponym_term.results",
            "care_determiners": "care_role.determiners",
            "care_roles": "care_role.roles",
        },
    ),
    (
        "ages",
        age_words,
        {
            "labels": "context.labels",
            "at_event": "context.at_event",
            "after": "context.after",
            "nearby": "context.nearby",
            "not_before": "not_age.before",
            "not_after": "not_age.after",
            "not_labels": "not_age.labels",
        },
    ),
    (
        "places",
        place_words,
        {
            "heads_before": "heads.before",
            "joiners": "words.joiners",
            "organisations": "words.organisations",
            "locatives": "context.before",
            "attached": "context.attached",
            "people": "context.people",
            "facility_before": "facility.before",
            "facility_after": "facility.after",
        },
    ),
]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize(("kind", "loader", "fields"), WORD_KINDS, ids=[k[0] for k in WORD_KINDS])
def test_word_lists_load_as_written(kind, loader, fields, lang: str) -> None:
    raw = language_data(lang, kind)
    data = loader(lang)
    assert data.code == lang
    for field, path in fields.items():
        assert getattr(data, field) == _raw(raw, path), (kind, field)
    assert loader(lang) is data  # cached


@pytest.mark.parametrize("lang", LANGS)
def test_every_pack_ships_the_word_kinds(lang: str) -> None:
    assert identifier_words(lang).national_id and identifier_words(lang).record
    assert contact_words(lang).phone and contact_words(lang).at
    assert fact_words(lang).routes and fact_words(lang).vitals
    assert age_words(lang).units and lang in age_languages()


def test_empty_without_a_file() -> None:
    # Only Dholuo writes administrative heads before a place; Chinese ships no places.toml.
    assert place_words("luo").heads_before and place_words("luo").joiners
    assert [c for c in LANGS if place_words(c).heads_before] == ["luo"]
    assert place_words("zh") == PlaceWords("zh")
    assert IdentifierWords("xx").words("national_id") == ()
    assert ContactWords("xx").phone == () and FactWords("xx").vitals == {}
    assert AgeWords("xx").numbers is None


def test_identifier_words_by_table() -> None:
    words = identifier_words("en")
    assert words.words("passport") == words.passport
    assert words.words("fillers") == words.fillers
    assert words.words("no_such_table") == ()


@pytest.mark.parametrize("lang", LANGS)
def test_ages(lang: str) -> None:
    raw = language_data(lang, "ages")
    data = age_words(lang)
    assert list(data.units) == list(raw.get("units", {}))
    assert set(data.units) <= set(AGE_UNITS)
    for unit, words in data.units.items():
        for side in ("after", "age_only", "before"):
            assert getattr(words, side) == _raw(raw, f"units.{unit}.{side}")
    numbers = raw.get("numbers")
    assert (data.numbers is None) == (numbers is None)
    if data.numbers is not None:
        assert data.numbers.order in NUMBER_ORDERS
        assert data.numbers.order == numbers.get("order", "tens_first")
        assert data.numbers.joiners == tuple(numbers.get("joiners", [" "]))
        assert dict(data.numbers.words) == numbers.get("words", {})
        assert dict(data.numbers.tens) == numbers.get("tens", {})
        assert dict(data.numbers.hundreds) == numbers.get("hundreds", {})
        assert data.numbers.units == _raw(numbers, "units")


@pytest.mark.parametrize("lang", LANGS)
def test_facts_vitals(lang: str) -> None:
    raw = language_data(lang, "facts").get("vital", {})
    vitals = fact_words(lang).vitals
    assert list(vitals) == list(raw)
    for name, sign in vitals.items():
        table = raw[name]
        assert sign.labels == tuple(table["labels"])
        has_range = "min" in table or "max" in table
        assert sign.range == ((table["min"], table["max"]) if has_range else None)
        assert sign.ratio == table.get("ratio", False)
        assert sign.denominators == tuple(table.get("denominators", ()))


def test_english_gives_every_vital_range() -> None:
    english = fact_words("en").vitals
    assert all(sign.range is not None for sign in english.values())
    for lang in LANGS:
        assert set(fact_words(lang).vitals) <= set(english), lang


@pytest.mark.parametrize("lang", LANGS)
def test_field_labels(lang: str) -> None:
    labels = field_labels(lang).labels
    assert dict(labels) == language_data(lang, "field_labels")["labels"]
    assert labels["patient_name"] and all(isinstance(v, str) for v in labels.values())


@pytest.mark.parametrize("lang", LANGS)
def test_synth(lang: str) -> None:
    raw = language_data(lang, "synth")
    data = synth_data(lang)
    assert data is not None and data.code == lang
    assert list(data.vocab) == list(raw["vocab"])
    for key, value in data.vocab.items():
        assert value == (raw["vocab"][key] if isinstance(value, str) else tuple(raw["vocab"][key]))
    assert len(data.sentences) == len(raw["sentence"]) >= 1
    for sentence, entry in zip(data.sentences, raw["sentence"], strict=True):
        assert (sentence.section, sentence.text) == (entry["section"], entry["text"])
        assert sentence.types == tuple(entry.get("types", ()))


@pytest.mark.parametrize("lang", LANGS)
def test_names_heldout(lang: str) -> None:
    raw = language_data(lang, "names_heldout")["default"]
    pool = heldout_pool(lang)
    assert pool is not None and pool.code == lang
    for key in ("given_male", "given_female", "family", "family_female", "clans"):
        expected = tuple(dict.fromkeys(n.strip() for n in raw.get(key, ()) if n.strip()))
        assert getattr(pool, key) == expected, key
    assert pool.given_male and pool.given_female and pool.family


@pytest.mark.parametrize("country", COUNTRIES)
def test_country_ids(country: str) -> None:
    raw = country_data(country, "ids")
    data = country_ids(country)
    assert data.country == country and country_ids(country.lower()) is not None
    assert [f.name for f in data.formats] == [t["name"] for t in raw.get("format", ())]
    for spec, table in zip(data.formats, raw.get("format", ()), strict=True):
        assert spec.country == country and spec.label is Category.parse(table["label"])
        assert (spec.pattern, spec.validator, spec.starts) == (
            table["pattern"],
            table["validator"],
            table["starts"],
        )
        assert spec.needs_context == (table.get("context", "none") == "required")
        assert spec.labels == tuple(table.get("labels", ()))
        assert spec.score == table.get("score", 0.9) and dict(spec.params) == table
    if country != INTERNATIONAL:
        assert not data.labelled and data.records is None


def test_international_ids() -> None:
    data = country_ids(INTERNATIONAL)
    raw = country_data(INTERNATIONAL, "ids")
    assert [k.name for k in data.labelled] == [t["name"] for t in raw["labelled"]]
    assert {k.kind for k in data.labelled} <= set(LABEL_TABLES)
    records = data.records
    assert records is not None
    table = raw["records"]
    assert (records.value, records.min_digits, records.structure) == (
        table["value"],
        table["min_digits"],
        table["structure"],
    )
    assert (records.min_year, records.max_year) == (table["min_year"], table["max_year"])
    assert records.not_prefixes == frozenset(table.get("not_prefixes", ()))


@pytest.mark.parametrize("country", COUNTRIES)
def test_country_people(country: str) -> None:
    raw = country_data(country, "people")
    people = country_people(country)
    assert people.country == country
    assert people.recorded == raw.get("meta", {}).get("recorded", True)
    assert people.tribes == _raw(raw, "people.tribes")


def test_people_recorded_or_not() -> None:
    assert country_people("UG").recorded and "Baganda" in country_people("UG").tribes
    assert not country_people("EG").recorded
    assert country_people("DE").tribes == ()  # no people.toml


def test_eponyms() -> None:
    names = eponyms().names
    assert names == tuple(shared_data("eponyms")["eponyms"]["names"])
    assert "Crohn" in names and eponyms() is eponyms()
    terms = shared_data("eponyms")["terms"]
    assert eponyms().terms == tuple(terms["names"])
    assert eponyms().scales == tuple(terms["scales"]) and "Glasgow" in eponyms().scales
    assert set(eponyms().alone) | set(eponyms().lower_alone) <= set(eponyms().terms)


def test_clinical_terms() -> None:
    raw = shared_data("clinical_terms")
    terms = clinical_terms()
    assert terms.anatomy_heads == tuple(raw["anatomy"]["heads"]) and "N." in terms.anatomy_heads
    assert terms.species == tuple(raw["organisms"]["species"]) and "coli" in terms.species
    assert terms.drug_stems == tuple(raw["drugs"]["stems"])
    assert "aline" in terms.words_of("en") and "fieber" in terms.words_of("de")
    assert terms.words_of("lg") == frozenset() and clinical_terms() is terms


@pytest.mark.parametrize(
    ("kind", "folder"),
    [
        *((k, "languages") for k in ("ages", "contacts", "facts", "field_labels")),
        *((k, "languages") for k in ("identifiers", "synth", "names_heldout", "places")),
        ("ids", "countries"),
        ("people", "countries"),
    ],
)
def test_every_file_names_its_sources(kind: str, folder: str) -> None:
    codes = LANGS if folder == "languages" else COUNTRIES
    read = language_data if folder == "languages" else country_data
    for code in codes:
        raw = read(code, kind)
        if raw:
            assert raw["meta"]["sources"] and raw["meta"]["licence"], (code, kind)


def test_every_pools_names_are_kept_in_the_cache_and_read_back_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The names of every pack's pools are built once, kept in polydeid's cache and read back
    equal to a new build; a damaged file is built again."""
    from polydeid.locales import names

    monkeypatch.setenv("POLYDEID_CACHE", str(tmp_path))
    built = names._build_every_pool_name()
    assert len(built) > 10_000
    names._every_pool_name.cache_clear()
    assert names._every_pool_name() == built  # built, and kept
    (kept,) = (tmp_path / "names").glob("*.json")
    names._every_pool_name.cache_clear()
    calls: list[int] = []
    monkeypatch.setattr(names, "_build_every_pool_name", lambda: calls.append(1) or built)
    assert names._every_pool_name() == built  # read back
    assert calls == []
    kept.write_text('{"format": 1, "table": [1, 2', encoding="utf-8")
    names._every_pool_name.cache_clear()
    assert names._every_pool_name() == built
    assert calls == [1]  # built again
    names._every_pool_name.cache_clear()


def _shipped_files() -> list[tuple[Path, Any, str]]:
    """Every shipped data file of the packs: its path, schema and name (not ``language.toml``,
    read by its own loader with its own schema)."""
    from polydeid.locales import _ROOT, _schema

    root = Path(str(_ROOT))
    found = []
    for kinds, pattern in (
        (_schema.LANGUAGE_KINDS, "languages/*/*.toml"),
        (_schema.COUNTRY_KINDS, "countries/*/*.toml"),
        (_schema.SHARED_KINDS, "*.toml"),
    ):
        for path in sorted(root.glob(pattern)):
            if path.name == "language.toml":
                continue
            file = path.relative_to(root).as_posix()
            found.append((path, _schema.schema_of(kinds, path.stem, file), file))
    return found


def test_every_data_file_is_kept_parsed_and_read_back_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each shipped file's table, parsed once, is kept in polydeid's cache and read back equal
    to ``tomllib``'s parse, without parsing again."""
    import tomllib

    import polydeid.locales as packs

    monkeypatch.setenv("POLYDEID_CACHE", str(tmp_path))
    files = _shipped_files()
    assert len(files) > 100
    first = [packs._read_toml(path, schema, file) for path, schema, file in files]
    assert first == [tomllib.loads(path.read_text("utf-8")) for path, _, _ in files]
    assert len(list((tmp_path / packs._PARSED).glob("*.json"))) == len(files)

    def no_parse(text: str) -> dict[str, Any]:
        raise AssertionError("parsed again")

    monkeypatch.setattr(packs.tomllib, "loads", no_parse)
    assert [packs._read_toml(path, schema, file) for path, schema, file in files] == first


def test_a_kept_table_is_not_read_once_its_file_changes_or_is_damaged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An edited file is parsed again (its kept table names the text it came from); a damaged
    kept table is parsed again and replaced; a table TOML holds as a date is not kept."""
    import polydeid.locales as packs

    monkeypatch.setenv("POLYDEID_CACHE", str(tmp_path / "cache"))
    path, schema, file = next(f for f in _shipped_files() if f[2] == "languages/en/ages.toml")
    copy = tmp_path / "ages.toml"
    text = path.read_text("utf-8")
    copy.write_text(text, encoding="utf-8")
    original = packs._read_toml(copy, schema, file)
    edited = text.replace('licence = "', 'licence = "edited: ', 1)
    assert edited != text
    copy.write_text(edited, encoding="utf-8")
    assert packs._read_toml(copy, schema, file)["meta"]["licence"].startswith("edited: ")
    (kept,) = (tmp_path / "cache" / packs._PARSED).glob("*.json")
    kept.write_text('{"format": 1, "table": {', encoding="utf-8")
    copy.write_text(text, encoding="utf-8")
    assert packs._read_toml(copy, schema, file) == original
    assert packs._json_plain(original)
    assert not packs._json_plain({"meta": {"updated": __import__("datetime").date(2026, 1, 2)}})
    assert not packs._json_plain({"x": float("nan")})
