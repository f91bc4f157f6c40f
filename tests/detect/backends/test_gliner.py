"""The GLiNER adapter, against a STAND-IN ``gliner`` module (the real package is not installed
here and is not exercised: gliner 0.2.29 pins transformers<5.17, the tagger needs 5.24).

The stand-in is injected through ``sys.modules``: a ``GLiNER`` class with the real API
(``from_pretrained(directory, local_files_only=True)``, ``predict_entities(text, labels,
threshold=…)`` returning dicts with start, end, text, label and score) that finds the surface
strings listed in the model directory's ``fake_gliner.json`` — deterministic, greedy flat
decoding like GLiNER's, and a chunk that ends inside a multi-word entity returns the cut
entity, as a real model reading a truncated text would.
"""

from __future__ import annotations

import json
import re
import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from polydeid.core.errors import (
    ConfigError,
    DetectionError,
    DetectorUnavailableError,
    UnknownCategoryError,
    UnknownLanguageError,
)
from polydeid.core.segments import Origin, Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.corpora.document import AnnotatedDocument
from polydeid.detect.backends.gliner import INSTALL_HINT, GlinerDetector
from polydeid.train.gliner import tune


class FakeGLiNER:
    """Stand-in for ``gliner.GLiNER`` (same call signatures, deterministic output)."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.entities: dict[str, list[Any]] = spec.get("entities", {})
        self.malformed: str | None = spec.get("malformed")
        self.calls: list[tuple[int, tuple[str, ...], float]] = []

    @classmethod
    def from_pretrained(cls, model_id: str, local_files_only: bool = False, **_: Any) -> Any:
        assert local_files_only is True
        spec = json.loads((Path(model_id) / "fake_gliner.json").read_text(encoding="utf-8"))
        if spec.get("broken"):
            raise RuntimeError("weights do not fit")
        return cls(spec)

    def predict_entities(
        self,
        text: str,
        labels: Sequence[str],
        flat_ner: bool = True,
        threshold: float = 0.5,
        multi_label: bool = False,
    ) -> list[dict[str, Any]]:
        self.calls.append((len(text), tuple(labels), threshold))
        if self.malformed == "raise":
            raise RuntimeError("CUDA out of memory")
        found = []
        for surface, (label, score) in self.entities.items():
            if label not in labels or score < threshold:
                continue
            for m in re.finditer(rf"\b{re.escape(surface)}\b", text):
                found.append((m.start(), m.end(), label, score))
            # a multi-word entity cut by the end of the text: its first words alone
            first_words = surface.rsplit(" ", 1)[0]
            if " " in surface and text.endswith(first_words):
                found.append((len(text) - len(first_words), len(text), label, score))
        chosen: list[tuple[int, int, str, float]] = []
        for item in sorted(found, key=lambda f: (-f[3], f[0])):  # greedy, highest score first
            if all(item[1] <= c[0] or c[1] <= item[0] for c in chosen):
                chosen.append(item)
        out = [
            {"start": s, "end": e, "text": text[s:e], "label": label, "score": score}
            for s, e, label, score in sorted(chosen)
        ]
        if out and self.malformed:
            first = out[0]
            if self.malformed == "offsets":
                first["end"] = len(text) + 5
            elif self.malformed == "text":
                first["text"] = "something else"
            elif self.malformed == "label":
                first["label"] = "not asked"
            elif self.malformed == "score":
                first["score"] = 1.7
        return out


@pytest.fixture
def fake_gliner(monkeypatch: pytest.MonkeyPatch) -> type[FakeGLiNER]:
    module = types.ModuleType("gliner")
    module.GLiNER = FakeGLiNER  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "gliner", module)
    return FakeGLiNER


def _model(root: Path, entities: dict[str, list[Any]], **extra: Any) -> Path:
    folder = root / "gliner-multi-pii"
    folder.mkdir(parents=True, exist_ok=True)
    spec = {"entities": entities, **extra}
    (folder / "fake_gliner.json").write_text(json.dumps(spec), encoding="utf-8")
    (folder / "gliner_config.json").write_text("{}", encoding="utf-8")
    (folder / "pytorch_model.bin").write_bytes(b"not really weights")
    return folder


ENTITIES = {
    "Achieng Otieno": ["jina la mtu", 0.92],
    "Wekesa": ["jina la mtu", 0.41],
    "Hospitali ya Bondo": ["hospitali", 0.77],
    "Mary Atieno": ["person", 0.88],
    "Kisumu": ["city", 0.66],
}
SW = {"jina la mtu": "PERSON", "hospitali": Category.LOCATION_FACILITY}
EN = {"person": "PERSON", "city": "LOCATION_VILLAGE"}


def _texts(spans: list[Span], text: str) -> list[tuple[str, Category]]:
    return [(s.text_of(text), s.label) for s in spans]


# --------------------------------------------------------------------------- loading


def test_missing_package_fails_closed_with_the_install_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "gliner", None)  # import gliner → ImportError
    with pytest.raises(DetectorUnavailableError) as err:
        GlinerDetector(_model(tmp_path, ENTITIES), {"sw": SW})
    assert INSTALL_HINT in str(err.value)
    assert "transformers<5.17" in str(err.value) and "separate environment" in str(err.value)


def test_source_id_names_the_model_and_its_revision(
    tmp_path: Path, fake_gliner: type[FakeGLiNER]
) -> None:
    folder = _model(tmp_path, ENTITIES)
    undeclared = GlinerDetector(folder, {"sw": SW})
    assert re.fullmatch(r"backend\.gliner\.gliner-multi-pii@sha256-[0-9a-f]{16}", undeclared.id)
    (folder / "revision").write_text("5e2b0f1c\n", encoding="utf-8")
    pinned = GlinerDetector(folder, {"sw": SW}, revision="5e2b0f1c")
    assert pinned.id == "backend.gliner.gliner-multi-pii@5e2b0f1c"
    with pytest.raises(DetectorUnavailableError):
        GlinerDetector(folder, {"sw": SW}, revision="0000000")


def test_unloadable_or_missing_models_fail_closed(
    tmp_path: Path, fake_gliner: type[FakeGLiNER]
) -> None:
    broken = _model(tmp_path, ENTITIES, broken=True)
    with pytest.raises(DetectorUnavailableError) as err:
        GlinerDetector(broken, {"sw": SW})
    assert "RuntimeError" in str(err.value) and str(broken) in str(err.value)
    with pytest.raises(DetectorUnavailableError):
        GlinerDetector(tmp_path / "nowhere", {"sw": SW})


def test_configuration_errors(tmp_path: Path, fake_gliner: type[FakeGLiNER]) -> None:
    folder = _model(tmp_path, ENTITIES)
    with pytest.raises(UnknownCategoryError):
        GlinerDetector(folder, {"sw": {"jina": "NOT_A_CATEGORY"}})
    with pytest.raises(ConfigError):
        GlinerDetector(folder, {"sw": SW}, {"sw": 1.5})
    with pytest.raises(ConfigError):
        GlinerDetector(folder, {"sw": SW}, {"en": 0.5})  # no labels for en
    with pytest.raises(ConfigError):
        GlinerDetector(folder, {"sw": {}})
    with pytest.raises(ConfigError):
        GlinerDetector(folder, {"sw": SW}, path=folder)
    with pytest.raises(ConfigError):
        GlinerDetector(folder, {"sw": SW}, max_words=10, overlap_words=10)


# -------------------------------------------------------------------------- detecting


def test_prompt_labels_map_to_categories_per_language(
    tmp_path: Path, fake_gliner: type[FakeGLiNER]
) -> None:
    detector = GlinerDetector(
        _model(tmp_path, ENTITIES),
        {"sw": SW, "en": EN},
        {"sw": {"PERSON": 0.5, "LOCATION_FACILITY": 0.8}, "en": 0.6},
    )
    assert detector.languages == frozenset({"sw", "en"})
    assert detector.labels == {
        Category.PERSON,
        Category.LOCATION_FACILITY,
        Category.LOCATION_VILLAGE,
    }
    sw = "Mgonjwa Achieng Otieno na Wekesa walifika Hospitali ya Bondo, Kisumu."
    spans = list(detector.detect(Segment(sw, lang="sw")))
    # Wekesa (0.41) is under PERSON's 0.5; the hospital (0.77) under the facility's 0.8;
    # Kisumu is an English prompt ("city"), not asked for in Swahili
    assert _texts(spans, sw) == [("Achieng Otieno", Category.PERSON)]
    assert spans[0].source == detector.id and spans[0].score == 0.92
    model = detector.model
    assert model.calls[-1] == (len(sw), ("jina la mtu", "hospitali"), 0.5)  # lowest threshold

    en = "Mary Atieno moved to Kisumu."
    assert _texts(list(detector.detect(Segment(en, lang="en"))), en) == [
        ("Mary Atieno", Category.PERSON),
        ("Kisumu", Category.LOCATION_VILLAGE),
    ]


def test_languages_without_labels_are_refused(
    tmp_path: Path, fake_gliner: type[FakeGLiNER]
) -> None:
    detector = GlinerDetector(_model(tmp_path, ENTITIES), {"sw": SW})
    with pytest.raises(UnknownLanguageError):
        detector.detect(Segment("Mary Atieno", lang="en"))


def test_star_serves_every_language_and_path_is_accepted(
    tmp_path: Path, fake_gliner: type[FakeGLiNER]
) -> None:
    detector = GlinerDetector(
        path=_model(tmp_path, ENTITIES),
        labels_by_language={"*": EN, "lug": SW},  # language codes are canonicalised
        thresholds_by_language={"*": 0.3},
    )
    assert detector.languages == frozenset()  # language-independent
    assert set(detector.labels_by_language) == {"*", "lg"}
    text = "Mary Atieno na Achieng Otieno"
    assert _texts(list(detector.detect(Segment(text, lang="fr"))), text) == [
        ("Mary Atieno", Category.PERSON)
    ]
    assert _texts(list(detector.detect(Segment(text, lang="lg"))), text) == [
        ("Achieng Otieno", Category.PERSON)
    ]


def test_long_texts_are_chunked_with_overlap_and_spans_found_once(
    tmp_path: Path, fake_gliner: type[FakeGLiNER]
) -> None:
    detector = GlinerDetector(_model(tmp_path, ENTITIES), {"sw": SW}, max_words=20, overlap_words=8)
    words = ["mgonjwa", "alifika", "kliniki", "leo", "akiwa", "na", "homa", "kali"] * 13
    for at in (19, 55, 70):  # chunks are words 0-19, 12-31, …, 48-67 …: two names cut
        words[at : at + 2] = ["Achieng", "Otieno"]
    text = " ".join(words)
    spans = list(detector.detect(Segment(text, lang="sw")))
    expected = [m.span() for m in re.finditer("Achieng Otieno", text)]
    assert len(expected) == 3
    assert [(s.start, s.end) for s in spans] == expected  # each once, whole, right offsets
    assert all(s.label is Category.PERSON for s in spans)
    calls = detector.model.calls
    chunks, _, _ = detector.chunks(text)
    assert len(calls) == len(chunks) > 3
    assert max(length for length, _, _ in calls) < len(text)
    # two chunks end inside a name: their cut entity gave way to the whole one
    cut_at = {m.end() for m in re.finditer("Achieng", text)}
    assert len([c for c in chunks if c.end in cut_at]) == 2


def test_short_texts_are_read_whole(tmp_path: Path, fake_gliner: type[FakeGLiNER]) -> None:
    detector = GlinerDetector(_model(tmp_path, ENTITIES), {"sw": SW})
    assert list(detector.detect(Segment("   ", lang="sw"))) == []
    assert detector.model.calls == []
    text = "Achieng Otieno"
    detector.detect(Segment(text, lang="sw"))
    assert [c[0] for c in detector.model.calls] == [len(text)]


@pytest.mark.parametrize("kind", ["offsets", "text", "label", "score", "raise"])
def test_malformed_model_output_fails_closed(
    tmp_path: Path, fake_gliner: type[FakeGLiNER], kind: str
) -> None:
    detector = GlinerDetector(_model(tmp_path, ENTITIES, malformed=kind), {"sw": SW})
    text = "Mgonjwa Achieng Otieno alifika."
    with pytest.raises(DetectionError) as err:
        detector.detect(Segment(text, lang="sw", origin=Origin(file="notes.jsonl", line=7)))
    message = str(err.value)
    assert "notes.jsonl:7" in message
    assert "Achieng" not in message and "Otieno" not in message and "Mgonjwa" not in message


def test_deidentifier_resolves_gliner_with_the_rule_layer(
    tmp_path: Path, fake_gliner: type[FakeGLiNER]
) -> None:
    from polydeid.api import Deidentifier
    from polydeid.detect.profiles import profile_detectors

    gliner = GlinerDetector(_model(tmp_path, ENTITIES), {"sw": SW}, {"sw": 0.5})
    deid = Deidentifier(detectors=[*profile_detectors("rules"), gliner])
    text = "Mgonjwa Achieng Otieno, simu 0722 123 456, alifika Hospitali ya Bondo."
    spans = deid.detect(text, lang="sw")
    by_label = {s.label: s.text_of(text) for s in spans}
    assert by_label[Category.PERSON] == "Achieng Otieno"
    assert by_label[Category.LOCATION_FACILITY] == "Hospitali ya Bondo"
    assert Category.CONTACT_PHONE in by_label  # from the rule layer
    redacted = deid.redact(text, lang="sw")
    assert "Achieng" not in redacted and "Bondo" not in redacted


# ----------------------------------------------------------------------------- tuning


def _doc(doc_id: str, text: str, gold: list[tuple[str, Category]]) -> AnnotatedDocument:
    spans = []
    for value, category in gold:
        start = text.index(value)
        spans.append(Span(start, start + len(value), category, "gold:test"))
    return AnnotatedDocument(doc_id, text, "sw", tuple(sorted(spans, key=lambda s: s.start)))


TUNE_ENTITIES = {
    "Achieng Otieno": ["person", 0.9],
    "Wekesa": ["patient", 0.55],
    "Nakato": ["patient", 0.35],
    "Bondo": ["person", 0.6],  # a place read as a person: a false positive
    "Kisumu": ["patient", 0.3],  # another false positive
}
DEV = [
    _doc("d1", "Achieng Otieno alitoka Bondo.", [("Achieng Otieno", Category.PERSON)]),
    _doc(
        "d2",
        "Wekesa na Nakato walifika Kisumu.",
        [
            ("Wekesa", Category.PERSON),
            ("Nakato", Category.PERSON),
        ],
    ),
]


def test_tune_picks_recall_at_a_precision_floor(
    tmp_path: Path, fake_gliner: type[FakeGLiNER]
) -> None:
    detector = GlinerDetector(_model(tmp_path, TUNE_ENTITIES), {"sw": {"x": "PERSON"}})
    candidates = [{"person": "PERSON"}, {"person": "PERSON", "patient": "PERSON"}]
    chosen, threshold, scores = tune(
        detector, DEV, candidates, [0.3, 0.5, 0.7], precision_floor=0.6
    )
    table = {(p.prompt_set, p.threshold): (p.found_gold, p.predicted, p.gold) for p in scores}
    assert table == {
        (0, 0.3): (1, 2, 3),  # Achieng Otieno, Bondo
        (0, 0.5): (1, 2, 3),
        (0, 0.7): (1, 1, 3),  # precision 1.0, recall 1/3
        (1, 0.3): (3, 5, 3),  # precision 0.6: everything found
        (1, 0.5): (2, 3, 3),  # precision 0.667, recall 2/3
        (1, 0.7): (1, 1, 3),
    }
    # the highest recall whose precision is at least 0.6: the second set at 0.3
    assert dict(chosen) == {"person": Category.PERSON, "patient": Category.PERSON}
    assert threshold == 0.3
    # the model ran once per prompt set and document, at the lowest threshold
    assert [c[2] for c in detector.model.calls] == [0.3] * 4

    # a stricter floor moves the choice to a higher threshold
    chosen, threshold, _ = tune(detector, DEV, candidates, [0.3, 0.5, 0.7], precision_floor=0.65)
    assert (len(chosen), threshold) == (2, 0.5)


def test_tune_refuses_when_no_setting_reaches_the_floor(
    tmp_path: Path, fake_gliner: type[FakeGLiNER]
) -> None:
    detector = GlinerDetector(_model(tmp_path, TUNE_ENTITIES), {"sw": {"x": "PERSON"}})
    with pytest.raises(ConfigError) as err:
        tune(detector, DEV, [{"patient": "PERSON"}], [0.3], precision_floor=0.9)
    assert "best precision 0.667" in str(err.value)
    with pytest.raises(ConfigError):
        tune(detector, [], [{"patient": "PERSON"}], [0.3])
    with pytest.raises(ConfigError):
        tune(detector, DEV, [], [0.3])


def test_tune_gliner_command_writes_composition_entries(
    tmp_path: Path, fake_gliner: type[FakeGLiNER], capsys: pytest.CaptureFixture[str]
) -> None:
    """``polydeid tune-gliner`` on a JSONL development corpus (stand-in gliner module)."""
    from polydeid.cli import main

    model = _model(tmp_path, TUNE_ENTITIES)
    gold = tmp_path / "dev.jsonl"
    rows = []
    for doc in DEV:
        spans = [{"start": s.start, "end": s.end, "label": s.label.value} for s in doc.spans]
        rows.append(json.dumps({"id": doc.id, "lang": "sw", "text": doc.text, "spans": spans}))
    gold.write_text("\n".join(rows) + "\n", encoding="utf-8")
    prompts = tmp_path / "prompts.toml"
    prompts.write_text(
        '[[candidates]]\nperson = "PERSON"\n[[candidates]]\nperson = "PERSON"\n'
        'patient = "PERSON"\n',
        encoding="utf-8",
    )
    out = tmp_path / "chosen.toml"
    args = ["tune-gliner", "--model", str(model), "--gold", str(gold), "--format", "jsonl"]
    rc = main(
        [
            *args,
            "--lang",
            "sw",
            "--prompts",
            str(prompts),
            "--thresholds",
            "0.3,0.5,0.7",
            "--precision-floor",
            "0.6",
            "--out",
            str(out),
        ]
    )
    assert rc == 0
    chosen = out.read_text(encoding="utf-8")
    assert 'sw = { "person" = "PERSON", "patient" = "PERSON" }' in chosen
    assert "sw = 0.3" in chosen
    assert "<- chosen" in capsys.readouterr().err
