"""Tests for the external-scheme mapping tables in core/schemes/*.toml."""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from polydeid.core.errors import UnknownCategoryError, UnknownSchemeError
from polydeid.core.taxonomy import COARSE_GROUP, Category, Scheme, scheme, scheme_names

C = Category

#: Scheme name -> exact number of labels it must define.
EXPECTED_SIZES: dict[str, int] = {
    "east_africa": 14,
    "pii_families7": 7,
    "pii34": 34,
    "meddocan": 29,
    "i2b2_2014": 30,
    "hipaa_safe_harbor": 19,
    "presidio": 48,
    "conll": 5,
    "germeval2014": 12,
    "echr_tab": 8,
    "asq_phi": 13,
    "presidio_research": 20,
    "physionet_deid": 10,
    "polydeid": len(Category),
}

SCHEMES = sorted(EXPECTED_SIZES)


def _raw(name: str) -> dict[str, object]:
    """The scheme's TOML, parsed without the loader's normalisation."""
    text = (resources.files("polydeid.core") / "schemes" / f"{name}.toml").read_text("utf-8")
    return tomllib.loads(text)


def _raw_labels(name: str) -> dict[str, str]:
    labels = _raw(name)["labels"]
    assert isinstance(labels, dict)
    return labels


# --- every scheme -------------------------------------------------------------------------


def test_every_expected_scheme_ships() -> None:
    assert set(SCHEMES) <= set(scheme_names())


@pytest.mark.parametrize("name", scheme_names())
def test_scheme_loads_with_description_and_source(name: str) -> None:
    loaded = scheme(name)
    assert isinstance(loaded, Scheme)
    assert loaded.name == name
    assert loaded.description.strip() and loaded.source.strip()
    assert loaded.mapping


@pytest.mark.parametrize("name", scheme_names())
def test_targets_are_exact_category_names_or_outside(name: str) -> None:
    bad = {
        label: target
        for label, target in _raw_labels(name).items()
        if target != "O" and target not in Category.__members__
    }
    assert not bad


@pytest.mark.parametrize("name", scheme_names())
def test_labels_are_bare_and_distinct_ignoring_case(name: str) -> None:
    labels = list(_raw_labels(name))
    assert "O" not in labels
    assert not [label for label in labels if re.match(r"^[BIESLU]-", label)]
    assert len({label.upper() for label in labels}) == len(labels)


@pytest.mark.parametrize("name", SCHEMES)
def test_scheme_size(name: str) -> None:
    assert len(scheme(name).mapping) == EXPECTED_SIZES[name]


def test_every_category_is_reachable_from_some_external_scheme() -> None:
    reached = {
        target
        for name in SCHEMES
        if name != "polydeid"
        for target in scheme(name).mapping.values()
        if target is not None
    }
    assert reached == set(Category)


# --- identity schemes ---------------------------------------------------------------------


def test_polydeid_scheme_is_the_identity_on_every_category() -> None:
    mapping = scheme("polydeid").mapping
    assert set(mapping) == {c.value for c in Category}
    assert all(mapping[c.value] is c for c in Category)


def test_east_africa_is_the_identity_on_its_14_categories() -> None:
    mapping = scheme("east_africa").mapping
    assert all(mapping[label] is Category[label] for label in mapping)
    absent = {C.ID_OTHER, C.LOCATION_ADDRESS, C.ORGANIZATION, C.SEX}
    assert set(mapping.values()) == set(Category) - absent


def test_east_africa_29_bio_tags() -> None:
    east = scheme("east_africa")
    tags = ["O"] + [f"{p}-{label}" for label in east.mapping for p in ("B", "I")]
    assert len(tags) == 29
    mapped = [east.map_bio(tag) for tag in tags]
    assert mapped[0] == ("O", None)
    assert all(cat is not None and prefix in {"B", "I"} for prefix, cat in mapped[1:])
    assert {cat for _, cat in mapped[1:]} == set(east.mapping.values())


# --- key decisions ------------------------------------------------------------------------

DECISIONS: list[tuple[str, str, Category | None]] = [
    # MEDDOCAN
    ("meddocan", "NOMBRE_SUJETO_ASISTENCIA", C.PERSON),
    ("meddocan", "NOMBRE_PERSONAL_SANITARIO", C.PERSON_THIRD_PARTY),
    ("meddocan", "FAMILIARES_SUJETO_ASISTENCIA", C.PERSON_THIRD_PARTY),
    ("meddocan", "TERRITORIO", C.LOCATION_VILLAGE),
    ("meddocan", "CALLE", C.LOCATION_ADDRESS),
    ("meddocan", "PAIS", C.LOCATION_VILLAGE),
    ("meddocan", "HOSPITAL", C.LOCATION_FACILITY),
    ("meddocan", "CENTRO_SALUD", C.LOCATION_FACILITY),
    ("meddocan", "INSTITUCION", C.ORGANIZATION),
    ("meddocan", "ID_SUJETO_ASISTENCIA", C.ID_RECORD),
    ("meddocan", "ID_ASEGURAMIENTO", C.ID_OTHER),
    ("meddocan", "NUMERO_FAX", C.CONTACT_PHONE),
    ("meddocan", "SEXO_SUJETO_ASISTENCIA", C.SEX),
    ("meddocan", "EDAD_SUJETO_ASISTENCIA", C.AGE),
    ("meddocan", "OTROS_SUJETO_ASISTENCIA", None),
    # i2b2 2014
    ("i2b2_2014", "PATIENT", C.PERSON),
    ("i2b2_2014", "DOCTOR", C.PERSON_THIRD_PARTY),
    ("i2b2_2014", "LOCATION-OTHER", C.LOCATION_VILLAGE),
    ("i2b2_2014", "ZIP", C.LOCATION_ADDRESS),
    ("i2b2_2014", "ROOM", C.LOCATION_FACILITY),
    ("i2b2_2014", "MEDICALRECORD", C.ID_RECORD),
    ("i2b2_2014", "SSN", C.ID_NATIONAL),
    ("i2b2_2014", "FAX", C.CONTACT_PHONE),
    # HIPAA Safe Harbor
    ("hipaa_safe_harbor", "NAMES", C.PERSON),
    ("hipaa_safe_harbor", "AGES_OVER_89", C.AGE),
    ("hipaa_safe_harbor", "FULL_FACE_PHOTOGRAPHS", None),
    ("hipaa_safe_harbor", "MEDICAL_RECORD_NUMBERS", C.ID_RECORD),
    ("hipaa_safe_harbor", "IP_ADDRESSES", C.CONTACT_OTHER),
    # PII schemes
    ("pii34", "PERSON_NAME", C.PERSON),
    ("pii34", "POSTAL_ADDRESS", C.LOCATION_ADDRESS),
    ("pii34", "LOCATION", C.LOCATION_ADDRESS),
    ("pii34", "DATE_OF_BIRTH", C.DATE),
    ("pii34", "HEALTH_DATA", None),
    ("pii34", "TIME", None),
    ("pii34", "GENDER", C.SEX),
    ("pii34", "SOCIAL_SECURITY_NUMBER", C.ID_NATIONAL),
    ("pii34", "IBAN", C.ID_OTHER),
    ("pii_families7", "human_name", C.PERSON),
    ("pii_families7", "id_number", C.ID_OTHER),
    ("pii_families7", "address", C.LOCATION_ADDRESS),
    ("pii_families7", "company_name", C.ORGANIZATION),
    # Presidio
    ("presidio", "NRP", C.TRIBE),
    ("presidio", "DATE_TIME", C.DATE),
    ("presidio", "US_SSN", C.ID_NATIONAL),
    ("presidio", "IT_VAT_CODE", C.ID_OTHER),
    ("presidio", "AU_MEDICARE", C.ID_OTHER),
    ("presidio", "IN_AADHAAR", C.ID_NATIONAL),
    ("presidio_research", "ZIP_CODE", C.LOCATION_ADDRESS),
    ("presidio_research", "GPE", C.LOCATION_VILLAGE),
    ("presidio_research", "TITLE", C.PROFESSION),
    ("presidio_research", "PREFIX", None),
    # news and legal NER
    ("conll", "PER", C.PERSON),
    ("conll", "LOC", C.LOCATION_VILLAGE),
    ("conll", "MISC", None),
    ("germeval2014", "PERpart", C.PERSON),
    ("germeval2014", "PERderiv", C.PERSON),
    ("germeval2014", "LOCpart", C.LOCATION_VILLAGE),
    ("germeval2014", "LOCderiv", None),
    ("germeval2014", "ORGpart", C.ORGANIZATION),
    ("germeval2014", "OTH", None),
    ("echr_tab", "CODE", C.ID_OTHER),
    ("echr_tab", "DATETIME", C.DATE),
    ("echr_tab", "QUANTITY", None),
    ("echr_tab", "MISC", None),
    # clinical query and note corpora
    ("asq_phi", "GEOGRAPHIC_LOCATION", C.LOCATION_FACILITY),
    ("asq_phi", "UNIQUE_IDENTIFIER", C.ID_OTHER),
    ("physionet_deid", "HCPName", C.PERSON_THIRD_PARTY),
    ("physionet_deid", "RelativeProxyName", C.PERSON_THIRD_PARTY),
    ("physionet_deid", "DateYear", None),
]


@pytest.mark.parametrize(
    "name,label,expected", DECISIONS, ids=[f"{n}:{lab}" for n, lab, _ in DECISIONS]
)
def test_key_decision(name: str, label: str, expected: Category | None) -> None:
    assert scheme(name).map(label) is expected


def test_person_labels_of_schemes_without_roles_share_the_name_group() -> None:
    generic = [
        ("conll", "PER"),
        ("presidio", "PERSON"),
        ("pii34", "PERSON_NAME"),
        ("asq_phi", "NAME"),
    ]
    mapped = [scheme(n).map(label) for n, label in generic]
    assert all(cat is C.PERSON for cat in mapped)
    assert {COARSE_GROUP[C.PERSON], COARSE_GROUP[C.PERSON_THIRD_PARTY]} == {"NAME"}


# --- map and map_bio ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "tag,expected",
    [
        ("O", ("O", None)),
        ("B-PER", ("B", C.PERSON)),
        ("I-LOC", ("I", C.LOCATION_VILLAGE)),
        ("E-ORG", ("E", C.ORGANIZATION)),
        ("S-DATE", ("S", C.DATE)),
        ("B-MISC", ("B", None)),
        ("PER", ("B", C.PERSON)),
    ],
)
def test_map_bio_conll(tag: str, expected: tuple[str, Category | None]) -> None:
    assert scheme("conll").map_bio(tag) == expected


def test_map_bio_keeps_hyphens_inside_the_label() -> None:
    i2b2 = scheme("i2b2_2014")
    assert i2b2.map_bio("I-LOCATION-OTHER") == ("I", C.LOCATION_VILLAGE)
    assert i2b2.map_bio("LOCATION-OTHER") == ("B", C.LOCATION_VILLAGE)


def test_map_is_case_insensitive_and_strips_space() -> None:
    assert scheme("conll").map(" per ") is C.PERSON
    assert scheme("germeval2014").map("perpart") is C.PERSON
    assert scheme("physionet_deid").map("PTNAME") is C.PERSON


@given(
    data=st.data(),
    name=st.sampled_from(SCHEMES),
    prefix=st.sampled_from(["B", "I", "E", "S", "L", "U"]),
)
def test_map_bio_agrees_with_map_for_every_prefix(
    data: st.DataObject, name: str, prefix: str
) -> None:
    loaded = scheme(name)
    label = data.draw(st.sampled_from(sorted(loaded.mapping)))
    assert loaded.map_bio(f"{prefix}-{label}") == (prefix, loaded.map(label))


# --- unknown labels and schemes -----------------------------------------------------------


def test_unknown_label_raises_listing_known_labels() -> None:
    with pytest.raises(UnknownCategoryError) as info:
        scheme("conll").map("GPE")
    message = str(info.value)
    assert info.value.code == "PD102"
    assert "conll" in message
    assert all(label in message for label in ("PER", "LOC", "ORG", "DATE", "MISC"))


def test_unknown_bio_label_raises() -> None:
    with pytest.raises(UnknownCategoryError):
        scheme("east_africa").map_bio("B-ORGANIZATION")


def test_label_of_another_scheme_is_unknown() -> None:
    with pytest.raises(UnknownCategoryError):
        scheme("meddocan").map("PATIENT")


def test_unknown_scheme_raises_listing_known_schemes() -> None:
    with pytest.raises(UnknownSchemeError) as info:
        scheme("masakhaner-3")
    assert "meddocan" in str(info.value) and "conll" in str(info.value)


# --- labels found in the shared corpora ---------------------------------------------------


def _bio_labels(lines: Iterator[str], column: int) -> set[str]:
    """Bare labels of the BIO tags in ``column`` of whitespace-separated lines."""
    labels: set[str] = set()
    for line in lines:
        fields = line.split()
        if len(fields) > abs(column) and not line.startswith("#"):
            tag = fields[column]
            if tag != "O":
                labels.add(tag.split("-", 1)[1])
    return labels


def _lines(paths: list[Path]) -> Iterator[str]:
    for path in paths:
        with path.open(encoding="utf-8") as handle:
            yield from handle


def _assert_all_map(name: str, labels: set[str]) -> dict[str, Category | None]:
    assert labels, f"no labels read for {name}"
    loaded = scheme(name)
    return {label: loaded.map(label) for label in sorted(labels)}


def test_meddocan_labels_map_and_are_all_phi(shared_data: Callable[..., Path]) -> None:
    root = shared_data("meddocan")
    labels = {
        line.split("\t")[1].split(" ")[0]
        for line in _lines(sorted(root.glob("*/*.ann")))
        if line.startswith("T")
    }
    mapped = _assert_all_map("meddocan", labels)
    assert len(mapped) >= 22
    assert [label for label, cat in mapped.items() if cat is None] == ["OTROS_SUJETO_ASISTENCIA"]


def test_germeval_labels_map(shared_data: Callable[..., Path]) -> None:
    path = shared_data("germeval2014", "NER-de-dev.tsv")
    lines = [line.replace("\t", " ") for line in _lines([path]) if not line.startswith("#")]
    labels = _bio_labels(iter(lines), 2) | _bio_labels(iter(lines), 3)
    mapped = _assert_all_map("germeval2014", labels)
    assert set(mapped) == set(scheme("germeval2014").mapping)


def test_echr_labels_map(shared_data: Callable[..., Path]) -> None:
    root = shared_data("echr")
    labels = _bio_labels(_lines(sorted(root.glob("*.tsv"))), -1)
    mapped = _assert_all_map("echr_tab", labels)
    assert set(mapped) == set(scheme("echr_tab").mapping)


@pytest.mark.parametrize("language", ["lug", "swa", "kin", "luo"])
def test_masakhaner_labels_map(language: str, shared_data: Callable[..., Path]) -> None:
    path = shared_data("masakhaner", language, "dev.txt")
    mapped = _assert_all_map("conll", _bio_labels(_lines([path]), -1))
    assert set(mapped) == {"PER", "LOC", "ORG", "DATE"}


def test_asq_phi_labels_map(shared_data: Callable[..., Path]) -> None:
    path = shared_data("asq_phi", "queries-dev.txt")
    labels = {
        json.loads(line)["identifier_type"] for line in _lines([path]) if line.startswith("{")
    }
    mapped = _assert_all_map("asq_phi", labels)
    assert set(mapped) == set(scheme("asq_phi").mapping)
    assert None not in mapped.values()


def test_presidio_research_labels_map(shared_data: Callable[..., Path]) -> None:
    root = shared_data("presidio_research")
    labels: set[str] = set()
    for path in sorted(root.glob("*.json")):
        records = json.loads(path.read_text(encoding="utf-8"))
        labels |= {span["entity_type"] for record in records for span in record["spans"]}
    mapped = _assert_all_map("presidio_research", labels)
    assert set(mapped) == set(scheme("presidio_research").mapping)
