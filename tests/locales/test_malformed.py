"""A malformed data file raises ConfigError naming the file (and the key), through its loader."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import polydeid.locales as locales
from polydeid.core.errors import ConfigError
from polydeid.locales.ages import age_words
from polydeid.locales.contacts import contact_words
from polydeid.locales.eponyms import eponyms
from polydeid.locales.facts import fact_words
from polydeid.locales.field_labels import field_labels
from polydeid.locales.identifiers import identifier_words
from polydeid.locales.ids import country_ids
from polydeid.locales.names_heldout import heldout_pool
from polydeid.locales.people import country_people
from polydeid.locales.place_words import place_words
from polydeid.locales.synth import synth_data

_RAW_READERS = (locales.language_data, locales.country_data, locales.shared_data)
META = "[meta]\nsources = ['test']\nlicence = 'test'\n"


@pytest.fixture
def pack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., None]]:
    """Packs rooted at ``tmp_path``: ``pack(relative_path, text, loader)`` writes one data file.

    The raw readers' and the loader's caches are cleared on writing, and again once the real
    packs are back. A file without its ``[meta]`` gets one (every data file must have it)."""
    loaders: list = []

    def write(relative: str, text: str, loader) -> None:
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text if "[meta]" in text else META + text, "utf-8")
        loaders.append(loader)
        for cached in (*_RAW_READERS, loader):
            cached.cache_clear()

    monkeypatch.setattr(locales, "_ROOT", tmp_path)
    yield write
    monkeypatch.undo()
    for cached in (*_RAW_READERS, *loaders):
        cached.cache_clear()


#: (file, loader, code, content, key named in the error) of malformed files, several per kind.
CASES = [
    (
        "languages/en/ages.toml",
        age_words,
        "en",
        '[units.year]\nafter = "years"',
        "units.year.after",
    ),
    ("languages/en/ages.toml", age_words, "en", "[units.hour]\nafter = ['h']", "units.hour"),
    ("languages/en/ages.toml", age_words, "en", "[context]\nlabels = [1]", "context.labels"),
    ("languages/en/ages.toml", age_words, "en", "[numbers]\norder = 'sideways'", "numbers"),
    ("languages/en/ages.toml", age_words, "en", "[numbers]\nwords = {one = '1'}", "numbers.words"),
    ("languages/en/ages.toml", age_words, "en", "[numbers]\njoiners = '-'", "numbers.joiners"),
    ("languages/en/contacts.toml", contact_words, "en", "[phone]\nwords = [1]", "phone.words"),
    ("languages/en/contacts.toml", contact_words, "en", "obfuscation = 'at'", "obfuscation"),
    ("languages/en/facts.toml", fact_words, "en", "[units]\nlab = 'mg'", "units.lab"),
    (
        "languages/en/facts.toml",
        fact_words,
        "en",
        "[vital.pulse]\nlabels = ['P']\nmin = 20",
        "vital.pulse.max",
    ),
    (
        "languages/en/facts.toml",
        fact_words,
        "en",
        "[vital.gcs]\nlabels = ['GCS']\nmin = 3\nmax = 15\ndenominators = ['15']",
        "vital.gcs.denominators",
    ),
    ("languages/en/facts.toml", fact_words, "en", "[eponym]\nafter = 'disease'", "eponym.after"),
    ("languages/en/field_labels.toml", field_labels, "en", "[labels]\ndob = 3", "labels.dob"),
    (
        "languages/en/identifiers.toml",
        identifier_words,
        "en",
        "[record]\nwords = 'MRN'",
        "record.words",
    ),
    ("languages/en/synth.toml", synth_data, "en", "[[sentence]]\nsection = 'plan'", "sentence 1"),
    ("languages/en/synth.toml", synth_data, "en", "[vocab]\ndrugs = [1, 2]", "vocab.drugs"),
    (
        "languages/en/names_heldout.toml",
        heldout_pool,
        "en",
        "[default]\nfamily = 'Smith'",
        "default.family",
    ),
    ("languages/luo/places.toml", place_words, "luo", "[heads]\nbefore = 'ma'", "heads.before"),
    (
        "languages/de/places.toml",
        place_words,
        "de",
        "[words]\nnouns_capitalised = 'yes'",
        "words.nouns_capitalised",
    ),
    (
        "languages/sw/places.toml",
        place_words,
        "sw",
        "[facility]\nafter = 'Hospital'",
        "facility.after",
    ),
    (
        "countries/UG/ids.toml",
        country_ids,
        "UG",
        "[[format]]\nname = 'x'\nlabel = 'ID_OTHER'\nstarts = 'digit'\npattern = '[0-9]{5}'",
        "format x",
    ),
    (
        "countries/UG/ids.toml",
        country_ids,
        "UG",
        "[[format]]\nname = 'x'\nlabel = 'NO_SUCH'\nstarts = 'digit'\npattern = '1'\n"
        "validator = 'none'",
        "format x",
    ),
    (
        "countries/XX/ids.toml",
        country_ids,
        "XX",
        "[[labelled]]\nname = 'y'\nkind = 'shoe_size'\nlabel = 'ID_OTHER'",
        "labelled y",
    ),
    ("countries/XX/ids.toml", country_ids, "XX", "[records]\nvalue = '[0-9]+'", "[records]"),
    (
        "countries/UG/people.toml",
        country_people,
        "UG",
        META + "recorded = 'yes'",
        "meta.recorded",
    ),
    ("countries/UG/people.toml", country_people, "UG", "[people]\ntribes = 'x'", "people.tribes"),
]


@pytest.mark.parametrize(("relative", "loader", "code", "content", "key"), CASES)
def test_malformed_content_names_file_and_key(pack, relative, loader, code, content, key) -> None:
    pack(relative, content, loader)
    with pytest.raises(ConfigError) as info:
        loader(code)
    assert info.value.location.startswith(relative), info.value.location
    assert key in info.value.location, info.value.location


def test_malformed_shared_eponyms(pack) -> None:
    pack("eponyms.toml", "[eponyms]\nnames = 'Crohn'", eponyms)
    with pytest.raises(ConfigError) as info:
        eponyms()
    assert info.value.location == "eponyms.toml eponyms.names"


@pytest.mark.parametrize(
    ("relative", "loader", "code"),
    [
        ("languages/en/ages.toml", age_words, "en"),
        ("languages/en/synth.toml", synth_data, "en"),
        ("countries/KE/ids.toml", country_ids, "KE"),
        ("countries/KE/people.toml", country_people, "KE"),
    ],
)
def test_broken_toml_names_the_file(pack, relative, loader, code) -> None:
    pack(relative, "[units\nafter = ", loader)
    with pytest.raises(ConfigError) as info:
        loader(code)
    assert info.value.location.endswith(relative)


def test_a_well_formed_file_of_ones_own_loads(pack) -> None:
    pack(
        "languages/en/contacts.toml",
        "[meta]\nsources = ['x']\nlicence = 'x'\n[phone]\nwords = ['tel']",
        contact_words,
    )
    assert contact_words("en").phone == ("tel",) and contact_words("en").fax == ()


def test_the_real_packs_are_back() -> None:
    # runs after the tests above: their files and caches are gone
    assert contact_words("en").phone != ("tel",) and "Crohn" in eponyms().names
