"""Every data file is validated against the schema of its kind when it is read: every shipped
file passes, and a misspelt key, a value of the wrong type, an unknown kind or a missing
required file is a DataFileError naming the file and the key — never a table read as empty."""

from __future__ import annotations

import json
import shutil
import tomllib
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest

import polydeid.locales as locales
from polydeid.cli import main
from polydeid.core.errors import DataFileError
from polydeid.locales import _schema, check_data, countries, languages
from polydeid.locales.dates import language_dates

PACKAGE = Path(str(resources.files("polydeid")))
LOCALES = PACKAGE / "locales"
_READERS = (
    locales.language_data,
    locales.country_data,
    locales.shared_data,
    locales.language_info,
    locales.languages,
    locales.countries,
    locales._alias_table,
    language_dates,
)


def _clear() -> None:
    for cached in _READERS:
        cached.cache_clear()


def test_every_shipped_data_file_has_a_schema_and_passes_it() -> None:
    read = set()
    for code in languages():
        locales.language_info(code)
        read.add(f"languages/{code}/language.toml")
        for kind in _schema.LANGUAGE_KINDS:
            if locales.language_data(code, kind):
                read.add(f"languages/{code}/{kind}.toml")
    for cc in countries():
        for kind in _schema.COUNTRY_KINDS:
            if locales.country_data(cc, kind):
                read.add(f"countries/{cc}/{kind}.toml")
    for kind in _schema.SHARED_KINDS:
        assert locales.shared_data(kind)
        read.add(f"{kind}.toml")
    shipped = {str(p.relative_to(LOCALES)) for p in LOCALES.rglob("*.toml")}
    assert shipped == read  # no shipped file is left unvalidated, none is missing
    for file in _schema.TABLES:
        check_data(tomllib.loads((PACKAGE / file).read_text("utf-8")), file)
    tables = {str(p.relative_to(PACKAGE)) for p in PACKAGE.glob("*/data/*.toml")}
    data = {t for t in _schema.TABLES if t.startswith(("lexicon/", "formats/"))}
    assert {t for t in tables if t.startswith(("lexicon/", "formats/"))} == data


def test_every_language_has_its_required_files() -> None:
    for code in languages():
        for kind in _schema.REQUIRED_LANGUAGE_KINDS:
            assert (LOCALES / "languages" / code / f"{kind}.toml").is_file(), (code, kind)


@pytest.fixture
def packs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of the shipped packs, made the packs polydeid reads (caches cleared before and
    after)."""
    root = tmp_path / "locales"
    shutil.copytree(LOCALES, root, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    monkeypatch.setattr(locales, "_ROOT", root)
    _clear()
    yield root
    monkeypatch.undo()
    _clear()


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text("utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), "utf-8")


RU_DATES = "languages/ru/dates.toml"

#: (edit of the Russian date pack, the location the error names)
MISSPELT = [
    (("year_words =", "yeer_words ="), f"{RU_DATES} grammar.yeer_words"),
    (("[month_forms.", "[month_formz."), f"{RU_DATES} month_formz"),
    (("dm_dot = true", 'dm_dot = "true"'), f"{RU_DATES} grammar.dm_dot"),
]


@pytest.mark.parametrize(("edit", "location"), MISSPELT, ids=["key", "table", "type"])
def test_a_misspelt_key_is_refused_naming_file_and_key(
    packs: Path, edit: tuple[str, str], location: str
) -> None:
    path = packs / RU_DATES
    text = path.read_text("utf-8")
    if edit[0] == "[month_forms.":
        path.write_text(text.replace(edit[0], edit[1]), "utf-8")  # every month form table
    else:
        _edit(path, *edit)
    with pytest.raises(DataFileError) as refused:
        language_dates("ru")  # the loader the date rule uses
    assert refused.value.code == "PD109"
    assert refused.value.location == location
    language_dates("en")  # other languages are unaffected


def test_the_real_russian_grammar_is_not_empty() -> None:
    dates = language_dates("ru")
    assert dates.year_words and len(dates.twelve_month_names()) == 12


def test_a_country_and_a_shared_file_are_validated(packs: Path) -> None:
    _edit(packs / "countries/KE/places.toml", "[places]", "[placez]")
    with pytest.raises(DataFileError) as refused:
        locales.country_data("KE", "places")
    assert refused.value.location == "countries/KE/places.toml placez"
    _edit(packs / "eponyms.toml", "[terms]", "[termz]")
    with pytest.raises(DataFileError, match="unknown key"):
        locales.shared_data("eponyms")


def test_meta_is_required(packs: Path) -> None:
    path = packs / "languages/sw/contacts.toml"
    text = path.read_text("utf-8")
    start = text.index("[meta]\n")
    end = text.index("\n[", start)
    path.write_text(text[:start] + text[end + 1 :], "utf-8")  # the [meta] table removed
    assert "meta" not in tomllib.loads(path.read_text("utf-8"))
    with pytest.raises(DataFileError) as refused:
        locales.language_data("sw", "contacts")
    assert refused.value.location == "languages/sw/contacts.toml meta"


def test_a_missing_required_file_and_an_unknown_kind_are_refused(packs: Path) -> None:
    (packs / "languages/sw/dates.toml").unlink()
    with pytest.raises(DataFileError) as refused:
        locales.language_data("sw", "dates")
    assert refused.value.location == "languages/sw/dates.toml"
    assert locales.language_data("sw", "kinship")  # optional kinds may be absent elsewhere
    (packs / "languages/sw/notes.toml").write_text("[meta]\nsources = []\nlicence = ''\n")
    with pytest.raises(DataFileError, match="no schema"):
        locales.language_data("sw", "notes")


def test_a_table_of_the_lexicon_is_validated() -> None:
    file = "lexicon/data/fields.toml"
    raw = tomllib.loads((PACKAGE / file).read_text("utf-8"))
    raw["no_name"] = {"valuez": ["n/a"]}
    with pytest.raises(DataFileError) as refused:
        check_data(raw, file)
    assert refused.value.location == f"{file} no_name.valuez"
    with pytest.raises(DataFileError, match="no schema"):
        check_data({}, "lexicon/data/unknown.toml")


def test_a_broken_pack_stops_the_cli_with_exit_2(
    packs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _edit(packs / RU_DATES, "year_words =", "yeer_words =")
    src = tmp_path / "in.jsonl"
    record = {"id": 1, "lang": "ru", "text": "Пациент осмотрен 12 марта 2024 года."}
    src.write_text(json.dumps(record, ensure_ascii=False) + "\n", "utf-8")
    out = tmp_path / "out.jsonl"
    assert main(["detect", str(src), "-o", str(out), "--profile", "rules"]) == 2
    err = capsys.readouterr().err
    assert "PD109" in err and "grammar.yeer_words" in err and "марта" not in err
    assert not out.exists()


def test_validation_reads_no_value_into_its_message(packs: Path) -> None:
    secret = "Zebedee Quartermain"  # an invented value that must not be echoed
    _edit(packs / "languages/en/names.toml", "[format]", f'[format]\ntitlez = ["{secret}"]')
    with pytest.raises(DataFileError) as refused:
        locales.language_data("en", "names")
    assert secret not in str(refused.value)
