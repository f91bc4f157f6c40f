"""Hugging Face token-classifier backends, end to end on tiny local checkpoints.

The checkpoints (see conftest.py) are pass-through BERTs whose labels are set per token, so
every expected span below is exact: loading, word-grid alignment, windowing and merging,
label mapping, thresholds, revisions and failing closed are tested for real.
"""

from __future__ import annotations

import itertools
import json
import logging
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from polydeid.api import Deidentifier
from polydeid.core.errors import ConfigError, DetectionError, DetectorUnavailableError
from polydeid.core.segments import Origin, Segment
from polydeid.core.taxonomy import Category
from polydeid.detect.backends.hf import (
    HfPipelineDetector,
    HfWordGridDetector,
    WindowSpan,
    _snap,
    char_windows,
    load_label_map,
    merge_windows,
)
from polydeid.detect.base import Detector
from polydeid.detect.profiles import profile_detectors
from polydeid.detect.tagger.windows import windows

pytestmark = pytest.mark.torch

P, FAC, VIL, ADDR = (
    Category.PERSON,
    Category.LOCATION_FACILITY,
    Category.LOCATION_VILLAGE,
    Category.LOCATION_ADDRESS,
)
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def found(text: str, spans: Any) -> list[tuple[str, Category]]:
    """(covered text, label) of each span — for assertions only, never logged."""
    return [(text[s.start : s.end], s.label) for s in spans]


@pytest.fixture(scope="module")
def grid(hf_wordgrid_dir: Path) -> HfWordGridDetector:
    return HfWordGridDetector(hf_wordgrid_dir)


@pytest.fixture(scope="module")
def pipe(hf_pipeline_dir: Path) -> HfPipelineDetector:
    return HfPipelineDetector(hf_pipeline_dir)


def copy_of(folder: Path, tmp_path: Path, name: str = "copy") -> Path:
    return Path(shutil.copytree(folder, tmp_path / name))


def edit_json(path: Path, **changes: Any) -> None:
    data = json.loads(path.read_text("utf-8"))
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    path.write_text(json.dumps(data), "utf-8")


# --- the checkpoints themselves ------------------------------------------------------------


def test_fixtures_have_the_layouts(
    hf_builders: Any, hf_wordgrid_dir: Path, hf_pipeline_dir: Path
) -> None:
    assert len(hf_builders.east_africa_tags()) == 29 and len(hf_builders.pii34_tags()) == 69
    for sub in ("lug", "swa", "kin", "luo"):
        config = json.loads((hf_wordgrid_dir / sub / "config.json").read_text("utf-8"))
        assert len(config["id2label"]) == 29
    config = json.loads((hf_pipeline_dir / "config.json").read_text("utf-8"))
    assert len(config["id2label"]) == 69


# --- word-grid layout ----------------------------------------------------------------------


def test_word_grid_detector_is_a_detector(grid: HfWordGridDetector) -> None:
    assert isinstance(grid, Detector)
    assert grid.languages == {"lg", "sw", "rw", "luo"}
    assert grid.id == "backend.hf.eaclin-tiny@v1.2.0"  # name and revision from router_config
    assert {P, FAC, VIL} <= grid.labels and grid.unmapped == ()


def test_word_grid_first_sub_token_labels_words(grid: HfWordGridDetector) -> None:
    text = "omulwadde Nakato Namukwaya yazze e Mulago ku Kampala, Ng'ang'a na Nakatonde."
    spans = list(grid.detect(Segment(text, lang="lg")))
    assert found(text, spans) == [
        ("Nakato Namukwaya", P),  # B- then I-: one span; Namukwaya is 4 sub-tokens
        ("Mulago", FAC),
        ("Kampala", VIL),  # the comma after it is not part of the span
        ("Ng'ang'a", P),  # one grid word, five sub-tokens (the apostrophes split it)
        ("Nakatonde", P),  # multi-sub-token word read at its first sub-token; "." trimmed
    ]
    assert all(s.source == grid.id and s.score > 0.99 for s in spans)


def test_multi_sub_token_words_really_are(grid: HfWordGridDetector, hf_builders: Any) -> None:
    tokenizer = grid._model("lug").tokenizer
    for word in ("Namukwaya", "Ng'ang'a", "Nakatonde"):
        assert len(hf_builders.word_ids(tokenizer, word)) > 1


def test_sentencepiece_style_tokenizer_aligns_too(
    grid: HfWordGridDetector, hf_builders: Any
) -> None:
    tokenizer = grid._model("swa").tokenizer
    assert hf_builders.own_first_token(tokenizer, "Nakato")
    assert hf_builders.own_first_token(tokenizer, "Namukwaya")
    assert len(hf_builders.word_ids(tokenizer, "Nakatonde")) > 1
    text = "mgonjwa Nakato Namukwaya alifika leo; Nakatonde."
    assert found(text, grid.detect(Segment(text, lang="sw"))) == [
        ("Nakato Namukwaya", P),
        ("Nakatonde", P),
    ]


def test_language_aliases_and_unsupported_languages(grid: HfWordGridDetector) -> None:
    text = "omulwadde Nakato yazze."
    assert found(text, grid.detect(Segment(text, lang="lug"))) == [("Nakato", P)]
    for lang in ("en", "xx-nonsense"):
        with pytest.raises(DetectorUnavailableError) as err:
            grid.detect(Segment(text, lang=lang))
        assert repr(lang[:20]) in str(err.value) and "Nakato" not in str(err.value)


def test_an_alias_decodes_with_its_languages_name_words(
    grid: HfWordGridDetector, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A segment tagged with an alias ("lug") is decoded with the canonical language's titles
    and honorifics, not with none (name words are looked up under canonical codes)."""
    from polydeid.detect.backends.hf import _wordgrid
    from polydeid.locales.names import name_words

    seen = []
    decode = _wordgrid.decode

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(kwargs["names"])
        return decode(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_wordgrid, "decode", spy)
    grid.detect(Segment("omulwadde Nakato yazze.", lang="lug"))
    assert seen == [name_words("lg")] and name_words("lg").titles


def long_document(repeats: int = 40) -> tuple[str, list[tuple[str, Category]]]:
    """Filler and names; some filler runs are long so that names fall across windows."""
    parts, expected = [], []
    fillers = ["omulwadde yazze mu ddwaliro", "na homa kali", "leo", "musawo yamukebedde bulungi"]
    for i in range(repeats):
        parts.append(fillers[i % len(fillers)])
        if i % 3 == 0:
            parts.append("Nakato Namukwaya")
            expected.append(("Nakato Namukwaya", P))
        elif i % 3 == 1:
            parts.append("e Mulago,")
            expected.append(("Mulago", FAC))
        else:
            parts.append("Ng'ang'a Namukwaya")
            expected.append(("Ng'ang'a Namukwaya", P))
    return " ".join(parts) + ".", expected


def test_long_documents_are_windowed_and_read_once(
    hf_wordgrid_dir: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    text, expected = long_document(100)
    full = HfWordGridDetector(hf_wordgrid_dir)  # 256 tokens
    model = full._model("lug")
    monkeypatch.setattr(logging.getLogger("transformers"), "propagate", True)
    model.tokenizer.deprecation_warnings.clear()  # the warning is given once per tokenizer
    aligned = model.align(text)
    assert len(aligned.token_ids) > max(256, model.tokenizer.model_max_length)  # many windows
    # ... and tokenised whole without the tokenizer's "sequence length" warning
    assert not [r for r in caplog.records if "sequence length" in r.getMessage()]
    assert found(text, full.detect(Segment(text, lang="lg"))) == expected

    # windows cut right after the second "Nakato": "Nakato | Namukwaya" is split by an edge
    nakato = [i for i, (s, e) in enumerate(aligned.grid) if text[s:e] == "Nakato"][1]
    token = aligned.word_token[nakato]
    specials = len(model.prefix) + len(model.suffix)
    small = HfWordGridDetector(hf_wordgrid_dir, max_tokens=token + 1 + specials, batch_size=4)
    cut = small._model("lug")
    spans = windows(len(aligned.token_ids), cut.max_content, cut.stride)
    assert len(spans) > 5
    assert spans[0] == (0, token + 1) and aligned.word_token[nakato + 1] == token + 1
    assert found(text, small.detect(Segment(text, lang="lg"))) == expected


def test_windows_are_batched_under_inference_mode(
    hf_wordgrid_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    text, expected = long_document(12)
    detector = HfWordGridDetector(hf_wordgrid_dir, max_tokens=12, batch_size=4, preload=True)
    model = detector._model("lug")
    n_windows = len(windows(len(model.align(text).token_ids), model.max_content, model.stride))
    calls: list[tuple[int, bool]] = []
    forward = model.model.forward

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append((kwargs["input_ids"].shape[0], torch.is_inference_mode_enabled()))
        return forward(*args, **kwargs)

    monkeypatch.setattr(model.model, "forward", spy)
    assert found(text, detector.detect(Segment(text, lang="lg"))) == expected
    assert len(calls) == -(-n_windows // 4)
    assert all(size <= 4 and inference for size, inference in calls)


def test_detect_many_batches_segments(grid: HfWordGridDetector) -> None:
    texts = ["Nakato yazze.", "mgonjwa Kampala.", "leo."]
    segments = [Segment(texts[0], lang="lg"), Segment(texts[1], lang="sw"), Segment(texts[2])]
    with pytest.raises(DetectorUnavailableError):  # "en" has no model: nothing half-done
        grid.detect_many(segments)
    out = grid.detect_many(segments[:2])
    assert [found(t, s) for t, s in zip(texts, out, strict=False)] == [
        [("Nakato", P)],
        [("Kampala", VIL)],
    ]
    assert grid.detect(Segment("", lang="lg")) == []
    assert grid.detect(Segment("   \n ", lang="lg")) == []


def test_thresholds_come_from_router_config(grid: HfWordGridDetector) -> None:
    text = "musawo Wekesa na Nakato."
    # Wekesa is a PERSON at p~0.55 in lug, kin and luo (not known to swa's tokenizer)
    lg = list(grid.detect(Segment(text, lang="lg")))
    assert found(text, lg) == [("Wekesa", P), ("Nakato", P)]
    assert 0.5 < lg[0].score < 0.6
    assert found(text, grid.detect(Segment(text, lang="rw"))) == [("Nakato", P)]  # rw: 0.6
    assert found(text, grid.detect(Segment(text, lang="luo"))) == [("Nakato", P)]  # PERSON 0.9
    routes = grid.router.routes
    assert routes["rw"].threshold == 0.6 and routes["lg"].threshold == 0.5
    assert routes["luo"].thresholds == {P: 0.9}
    assert grid.report()["thresholds"]["luo"] == {"default": 0.5, "PERSON": 0.9}


def test_router_config_problems_fail_closed(
    hf_builders: Any, hf_wordgrid_dir: Path, tmp_path: Path
) -> None:
    folder = copy_of(hf_wordgrid_dir, tmp_path)
    router = folder / "router_config.json"
    cases = {
        "unknown or unsupported language": {"languages": {"xx-nonsense": "lug"}},
        "thresholds are numbers": {"thresholds": {"PERSON": 1.5}},
        "neither a category nor a language": {"thresholds": {"NOT_A_CATEGORY": 0.5}},
        "plain directory name": {"languages": {"lg": "../lug"}},
    }
    for problem, change in cases.items():
        router.write_text(json.dumps({**hf_builders.ROUTER, **change}), "utf-8")
        with pytest.raises(DetectorUnavailableError, match=problem) as err:
            HfWordGridDetector(folder)
        assert err.value.location == str(router)
    router.write_text("{not json", "utf-8")
    with pytest.raises(DetectorUnavailableError, match="unreadable"):
        HfWordGridDetector(folder)
    router.unlink()
    with pytest.raises(DetectorUnavailableError, match=r"missing router_config\.json"):
        HfWordGridDetector(folder)


def test_missing_language_subfolder_fails_closed(hf_wordgrid_dir: Path, tmp_path: Path) -> None:
    folder = copy_of(hf_wordgrid_dir, tmp_path)
    shutil.rmtree(folder / "kin")
    with pytest.raises(DetectorUnavailableError, match="no such directory") as err:
        HfWordGridDetector(folder)
    assert err.value.location == str(folder / "kin")


def test_default_language_map_and_own_subset(hf_wordgrid_dir: Path, tmp_path: Path) -> None:
    folder = copy_of(hf_wordgrid_dir, tmp_path)
    (folder / "router_config.json").write_text("{}", "utf-8")
    detector = HfWordGridDetector(folder, revision="r1")
    assert detector.languages == {"lg", "sw", "rw", "luo"}
    assert detector.id == f"backend.hf.{folder.name}@r1"
    (folder / "router_config.json").write_text(json.dumps({"languages": {"lug": "lug"}}))
    only = HfWordGridDetector(folder, name="lg only!", revision="r1")
    assert only.languages == {"lg"} and only.id == "backend.hf.lg-only@r1"
    with pytest.raises(DetectorUnavailableError, match="'sw'"):
        only.detect(Segment("Nakato", lang="sw"))


# --- pipeline layout -----------------------------------------------------------------------


def test_pipeline_detector_maps_pii34_labels(pipe: HfPipelineDetector) -> None:
    assert isinstance(pipe, Detector)
    assert pipe.id == f"backend.hf.tiny-pii@{COMMIT}"  # revision from config _commit_hash
    assert pipe.unmapped == ()
    targets = pipe.plan.targets
    assert targets["PERSON_NAME"] == P
    assert targets["POSTAL_ADDRESS"] == targets["LOCATION"] == ADDR  # LOCATION is an address
    assert targets["DATE_OF_BIRTH"] == Category.DATE
    assert targets["EMAIL_ADDRESS"] == Category.CONTACT_OTHER
    assert targets["PHONE_NUMBER"] == Category.CONTACT_PHONE
    assert targets["HEALTH_DATA"] is None  # not an identifier
    text = "mgonjwa Nakato Namukwaya alifika Kampala na homa kali; Kisumu."
    spans = list(pipe.detect(Segment(text, lang="sw")))
    assert found(text, spans) == [
        ("Nakato Namukwaya", P),  # the pipeline saw "Nakato Namu…": widened to whole words
        ("Kampala", ADDR),
        ("Kisumu", ADDR),
    ]  # "homa" is HEALTH_DATA: not an identifier
    assert all(s.source == pipe.id for s in spans)


def test_pipeline_threshold(hf_pipeline_dir: Path, pipe: HfPipelineDetector) -> None:
    text = "daktari Wekesa na Achieng"
    assert found(text, pipe.detect(Segment(text))) == [("Achieng", P)]  # Wekesa: p~0.55 < 0.6
    low = HfPipelineDetector(hf_pipeline_dir, threshold=0.5)
    spans = list(low.detect(Segment(text)))
    assert found(text, spans) == [("Wekesa", P), ("Achieng", P)]
    assert 0.5 < spans[0].score < 0.6
    strict_person = HfPipelineDetector(hf_pipeline_dir, thresholds={"PERSON": 0.999})
    assert found(text, strict_person.detect(Segment(text))) == [("Achieng", P)]
    with pytest.raises(ConfigError):
        HfPipelineDetector(hf_pipeline_dir, threshold=2.0)


def test_char_windows() -> None:
    assert char_windows(0, 512, 128) == [(0, 0)]
    assert char_windows(512, 512, 128) == [(0, 512)]
    spans = char_windows(1500, 512, 128)
    assert spans == [(0, 512), (384, 896), (768, 1280), (988, 1500)]
    assert all(b[0] <= a[1] - 128 for a, b in itertools.pairwise(spans))
    with pytest.raises(ValueError):
        char_windows(10, 100, 100)


def test_sub_word_entities_widen_to_grid_words() -> None:
    from polydeid.text.wordgrid import words

    for text, (start, end), expected in [
        ("ab Nakato cd", (4, 7), "Nakato"),
        ("ab Nakato cd", (2, 10), "Nakato"),
        ("O'Brien x", (2, 4), "O'Brien"),
        ("Mary-Jane", (1, 3), "Mary"),
        ("张三丰来了", (1, 2), "三"),  # one character is one word: nothing swallowed
    ]:
        a, b = _snap(text, words(text), start, end)
        assert text[a:b] == expected


def test_merge_windows_dedupes_and_keeps_the_better_span() -> None:
    merged = merge_windows(
        [
            WindowSpan(10, 16, P, 0.9, 0, cut=False),  # seen whole by two windows
            WindowSpan(10, 16, P, 0.95, 1, cut=False),
            WindowSpan(500, 512, ADDR, 0.99, 0, cut=True),  # cut by window 0's edge …
            WindowSpan(500, 520, P, 0.8, 1, cut=False),  # … whole in window 1: wins
            WindowSpan(700, 705, P, 0.7, 1, cut=True),  # cut, nothing better: kept
            WindowSpan(800, 810, P, 0.7, 1, cut=False),  # overlapping: one span, union,
            WindowSpan(805, 815, ADDR, 0.9, 2, cut=False),  # label of the higher score
        ],
        "src",
    )
    assert [(s.start, s.end, s.label, s.score) for s in merged] == [
        (10, 16, P, 0.95),
        (500, 520, P, 0.8),
        (700, 705, P, 0.7),
        (800, 815, ADDR, 0.9),
    ]


def place(text: str, at: int, word: str) -> str:
    """``text`` with `` word `` written over it from ``at`` (same length)."""
    piece = f" {word} "
    return text[:at] + piece + text[at + len(piece) :]


def test_pipeline_long_document_windows_merge(pipe: HfPipelineDetector) -> None:
    text = ("na homa kali leo " * 100)[:1500]  # windows 0-512, 384-896, 768-1280, 988-1500
    text = place(text, 500, "Nakato Namukwaya")  # Namukwaya crosses window 0's end
    text = place(text, 890, "Nakatonde")  # cut in two by window 1's end
    text = place(text, 1000, "Achieng")  # inside the overlap of windows 2 and 3
    assert len(text) == 1500
    assert text.index("Namukwaya") < 512 < text.index("Namukwaya") + 9
    assert text.index("Nakatonde") < 896 < text.index("Nakatonde") + 9
    spans = list(pipe.detect(Segment(text, lang="sw")))
    assert found(text, spans) == [
        ("Nakato Namukwaya", P),
        ("Nakatonde", P),
        ("Achieng", P),
    ]
    assert [(s.start, s.end) for s in spans] == [(501, 517), (891, 900), (1001, 1008)]


def test_pipeline_entities_in_overlaps_are_found_once(pipe: HfPipelineDetector) -> None:
    text = ("leo " * 100) + "Achieng " + ("leo " * 200)  # Achieng at 400: in windows 0 and 1
    assert text.index("Achieng") >= 384 and text.index("Achieng") + 7 <= 512
    assert found(text, pipe.detect(Segment(text))) == [("Achieng", P)]


def test_pipeline_languages_option(hf_pipeline_dir: Path) -> None:
    detector = HfPipelineDetector(hf_pipeline_dir, languages=["lug", "sw"])
    assert detector.languages == {"lg", "sw"}
    assert found("Achieng", detector.detect(Segment("Achieng", lang="lg"))) == [("Achieng", P)]
    with pytest.raises(DetectorUnavailableError, match="'en'"):
        detector.detect(Segment("Achieng", lang="en"))


def test_pipeline_threads_and_batches(
    hf_pipeline_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    threads: list[int] = []
    monkeypatch.setattr(torch, "set_num_threads", threads.append)
    detector = HfPipelineDetector(hf_pipeline_dir, threads=1, batch_size=2, preload=True)
    assert threads == [1]
    model = detector.load().model
    calls: list[tuple[int, bool]] = []
    forward = model.forward

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append((kwargs["input_ids"].shape[0], torch.is_inference_mode_enabled()))
        return forward(*args, **kwargs)

    monkeypatch.setattr(model, "forward", spy)
    text = "leo Achieng " * 125  # 1500 characters: 4 windows
    spans = list(detector.detect(Segment(text)))
    assert len(spans) == 125 and all(text[s.start : s.end] == "Achieng" for s in spans)
    assert len(calls) == 2 and all(n == 2 and inference for n, inference in calls)


# --- label maps: unknown labels are reported, never dropped -------------------------------


@pytest.fixture(scope="module")
def odd_pipeline(
    tmp_path_factory: pytest.TempPathFactory, wordpiece: Any, hf_builders: Any
) -> Path:
    """A pipeline checkpoint with a label no map knows (CRYPTO_WALLET)."""
    labels = ["O", "B-PERSON_NAME", "I-PERSON_NAME", "B-CRYPTO_WALLET", "I-CRYPTO_WALLET"]
    folder = tmp_path_factory.mktemp("odd") / "odd-pii"
    return hf_builders.build_token_classifier(
        folder,
        labels,
        wordpiece,
        word_labels={"Achieng": "B-PERSON_NAME", "Kisumu": "B-CRYPTO_WALLET"},
    )


def test_unknown_labels_are_reported_and_redacted(
    odd_pipeline: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="polydeid.detect.backends.hf"):
        detector = HfPipelineDetector(odd_pipeline)
    assert detector.unmapped == ("CRYPTO_WALLET",)
    assert detector.report()["unmapped"] == ["CRYPTO_WALLET"]
    assert detector.report()["fallback"] == "ID_OTHER"
    [record] = [r for r in caplog.records if r.name == "polydeid.detect.backends.hf"]
    assert record.levelno == logging.WARNING and "CRYPTO_WALLET" in record.getMessage()
    assert detector.id.startswith("backend.hf.odd-pii@sha256-")  # no revision declared
    text = "Achieng Kisumu"
    assert found(text, detector.detect(Segment(text))) == [
        ("Achieng", P),
        ("Kisumu", Category.ID_OTHER),
    ]
    as_record = HfPipelineDetector(odd_pipeline, fallback="ID_RECORD")
    assert found(text, as_record.detect(Segment(text)))[1] == ("Kisumu", Category.ID_RECORD)
    assert Category.ID_RECORD in as_record.labels
    with pytest.raises(ConfigError, match="CRYPTO_WALLET") as err:
        HfPipelineDetector(odd_pipeline, strict=True)
    assert err.value.location == str(odd_pipeline)


def test_a_label_map_file_can_name_them(odd_pipeline: Path, tmp_path: Path) -> None:
    path = tmp_path / "wallets.toml"
    path.write_text(
        '[meta]\nname = "wallets"\nscheme = "pii34"\nsources = ["test"]\n'
        '[labels]\nCRYPTO_WALLET = "O"\n',
        "utf-8",
    )
    detector = HfPipelineDetector(odd_pipeline, label_map=path, strict=True)
    assert detector.unmapped == ()
    assert found("Achieng Kisumu", detector.detect(Segment("Achieng Kisumu"))) == [("Achieng", P)]
    path.write_text('[meta]\nname = "x"\n[labels]\nA = "PERSON"\n', "utf-8")
    with pytest.raises(ConfigError, match="sources"):
        load_label_map(path)
    path.write_text('[meta]\nsources = ["t"]\n[labels]\nA = "NOT_A_CATEGORY"\n', "utf-8")
    with pytest.raises(ConfigError) as err:
        load_label_map(path)
    assert err.value.location == str(path)
    with pytest.raises(ConfigError, match="east_africa"):
        load_label_map("no-such-map")


def test_word_grid_unknown_labels(tmp_path: Path, wordpiece: Any, hf_builders: Any) -> None:
    folder = tmp_path / "grid"
    hf_builders.build_token_classifier(
        folder / "lug",
        [*hf_builders.east_africa_tags(), "B-BLOOD_GROUP", "I-BLOOD_GROUP"],
        wordpiece,
        word_labels={"Nakato": "B-PERSON", "Kisumu": "B-BLOOD_GROUP"},
    )
    (folder / "router_config.json").write_text(json.dumps({"languages": {"lg": "lug"}}))
    detector = HfWordGridDetector(folder)
    assert detector.unmapped == ("BLOOD_GROUP",) and Category.ID_OTHER in detector.labels
    text = "Nakato Kisumu leo"
    assert found(text, detector.detect(Segment(text, lang="lg"))) == [
        ("Nakato", P),
        ("Kisumu", Category.ID_OTHER),
    ]
    with pytest.raises(ConfigError, match="BLOOD_GROUP"):
        HfWordGridDetector(folder, strict=True)


# --- revisions -----------------------------------------------------------------------------


def test_revision_given_must_match_the_checkpoint(hf_pipeline_dir: Path) -> None:
    pinned = HfPipelineDetector(hf_pipeline_dir, revision=COMMIT[:7])
    assert pinned.revision == COMMIT
    with pytest.raises(DetectorUnavailableError, match="not the pinned"):
        HfPipelineDetector(hf_pipeline_dir, revision="deadbeef00")
    with pytest.raises(ConfigError):
        HfPipelineDetector(hf_pipeline_dir, revision="no spaces please")


def test_revision_file_and_content_digest(hf_pipeline_dir: Path, tmp_path: Path) -> None:
    folder = copy_of(hf_pipeline_dir, tmp_path)
    edit_json(folder / "config.json", _commit_hash=None)
    first = HfPipelineDetector(folder)
    assert first.revision.startswith("sha256-") and len(first.revision) == 23
    assert HfPipelineDetector(folder).revision == first.revision  # stable
    assert HfPipelineDetector(folder, revision="v9").id == "backend.hf.copy@v9"
    (folder / "revision").write_text("v3.1\n", "utf-8")
    detector = HfPipelineDetector(folder)
    assert detector.id == "backend.hf.copy@v3.1"
    text = "Achieng"
    assert {s.source for s in detector.detect(Segment(text))} == {"backend.hf.copy@v3.1"}


def test_hub_ids_only_from_the_local_cache(hf_pipeline_dir: Path, tmp_path: Path) -> None:
    cache = tmp_path / "hub"
    repo = cache / "models--acme--tiny-pii"
    shutil.copytree(hf_pipeline_dir, repo / "snapshots" / COMMIT)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMIT, "utf-8")
    (repo / "refs" / "v1.0").write_text(COMMIT, "utf-8")
    for revision in (None, "main", "v1.0", COMMIT):  # a ref in the cache, or the full hash
        detector = HfPipelineDetector("acme/tiny-pii", cache_dir=cache, revision=revision)
        assert detector.id == f"backend.hf.acme--tiny-pii@{COMMIT}"
        assert detector.folder == repo / "snapshots" / COMMIT
    with pytest.raises(DetectorUnavailableError, match="never downloads"):
        HfPipelineDetector("acme/not-downloaded", cache_dir=cache)
    with pytest.raises(DetectorUnavailableError, match="never downloads"):
        HfPipelineDetector("acme/tiny-pii", cache_dir=cache, revision="v0-unknown")
    # a commit prefix is not a revision the Hugging Face cache knows: refused, and said so
    with pytest.raises(DetectorUnavailableError, match="not a prefix") as err:
        HfPipelineDetector("acme/tiny-pii", cache_dir=cache, revision=COMMIT[:8])
    assert "never downloads" in str(err.value)


# --- malformed checkpoints fail closed ----------------------------------------------------


def _drop(name: str) -> Any:
    return lambda folder: (folder / name).unlink()


def _more_labels(folder: Path) -> None:
    config = json.loads((folder / "config.json").read_text("utf-8"))
    config["id2label"][str(len(config["id2label"]))] = "B-EXTRA"
    config.pop("label2id", None)
    (folder / "config.json").write_text(json.dumps(config), "utf-8")


def _garbage_weights(folder: Path) -> None:
    (folder / "model.safetensors").write_bytes(b"\x01\x00")


def _no_id2label(folder: Path) -> None:
    edit_json(folder / "config.json", id2label=None, label2id=None)


def _no_tokenizer(folder: Path) -> None:
    (folder / "tokenizer.json").unlink()


@pytest.mark.parametrize(
    ("breakage", "problem"),
    [
        (_drop("config.json"), r"missing config\.json"),
        (_drop("model.safetensors"), "missing model weights"),
        (_no_tokenizer, "missing tokenizer"),
        (_more_labels, "label count mismatch"),
        (_garbage_weights, "weights unreadable"),
        (_no_id2label, "no id2label"),
    ],
    ids=["no-config", "no-weights", "no-tokenizer", "label-count", "garbage-weights", "no-labels"],
)
def test_malformed_checkpoints(
    hf_pipeline_dir: Path, hf_wordgrid_dir: Path, tmp_path: Path, breakage: Any, problem: str
) -> None:
    folder = copy_of(hf_pipeline_dir, tmp_path, "pipeline")
    breakage(folder)
    with pytest.raises(DetectorUnavailableError, match=problem) as err:
        HfPipelineDetector(folder)
    assert err.value.location == str(folder)
    grid_folder = copy_of(hf_wordgrid_dir, tmp_path, "grid")
    breakage(grid_folder / "luo")
    with pytest.raises(DetectorUnavailableError, match=problem) as err:
        HfWordGridDetector(grid_folder)
    assert err.value.location == str(grid_folder / "luo")


def test_weights_without_the_head_fail_on_load(hf_pipeline_dir: Path, tmp_path: Path) -> None:
    from safetensors.torch import load_file, save_file

    folder = copy_of(hf_pipeline_dir, tmp_path)
    weights = load_file(str(folder / "model.safetensors"))
    kept = {k: v for k, v in weights.items() if "classifier" not in k}
    save_file(kept, str(folder / "model.safetensors"), metadata={"format": "pt"})
    detector = HfPipelineDetector(folder)  # the files look complete …
    with pytest.raises(DetectorUnavailableError, match="missing") as err:
        detector.detect(Segment("Achieng"))  # … loading says what is wrong: never random
    assert err.value.location == str(folder)
    with pytest.raises(DetectorUnavailableError, match="missing"):
        HfPipelineDetector(folder, preload=True)


def test_inference_failures_do_not_leak_text(
    hf_pipeline_dir: Path, grid: HfWordGridDetector, monkeypatch: pytest.MonkeyPatch
) -> None:
    detector = HfPipelineDetector(hf_pipeline_dir, preload=True)
    text = "Achieng Nakato"

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(text)

    monkeypatch.setattr(detector.load().model, "forward", boom)
    segment = Segment(text, origin=Origin(file="notes.jsonl", line=3))
    with pytest.raises(DetectionError) as err:
        detector.detect(segment)
    assert "Achieng" not in str(err.value) and err.value.location == "notes.jsonl:3"
    monkeypatch.setattr(grid._model("lug").model, "forward", boom)
    with pytest.raises(DetectionError) as err:
        grid.detect(Segment(text, lang="lg", origin=Origin(file="notes.jsonl", line=4)))
    assert "Nakato" not in str(err.value) and err.value.location == "notes.jsonl:4"


# --- with the rules, through the public API ----------------------------------------------


def test_deidentifier_resolves_rules_and_hf_together(
    grid: HfWordGridDetector, pipe: HfPipelineDetector
) -> None:
    deid = Deidentifier(detectors=[*profile_detectors("rules"), grid], policy="tag")
    text = "omulwadde Nakato Namukwaya, essimu 0772 123456, yazze e Mulago."
    spans = deid.detect(text, lang="lg")
    labels = {(text[s.start : s.end], s.label, s.source.split(".")[0]) for s in spans}
    assert ("Nakato Namukwaya", P, "backend") in labels
    assert ("Mulago", FAC, "backend") in labels
    assert any(label == Category.CONTACT_PHONE for _, label, _ in labels)
    redacted = deid.redact(text, lang="lg")
    assert "Nakato" not in redacted and "Mulago" not in redacted and "123456" not in redacted
    # a language the word-grid models do not cover: the pipeline runs the rules only
    assert deid.detect("Seen by Nakato on 12/03/2024.", lang="en")

    both = Deidentifier(detectors=[*profile_detectors("rules"), pipe], policy="tag")
    text = "Achieng, simu 0712 345678, Kisumu."
    out = both.redact(text, lang="sw")
    assert "Achieng" not in out and "Kisumu" not in out and "345678" not in out


def test_a_composition_file_routes_the_checkpoint_by_language(
    hf_wordgrid_dir: Path, tmp_path: Path
) -> None:
    """The East African layout through a composition: checkpoint + rules for lg, rules
    elsewhere — the same answer as building the detectors by hand."""
    path = tmp_path / "ea.toml"
    path.write_text(
        f"""
[detectors.rules]
kind = "rules"
[detectors.ea]
kind = "hf-wordgrid"
path = "{hf_wordgrid_dir}"
[languages]
lg = ["rules", "ea"]
"*" = ["rules"]
""",
        "utf-8",
    )
    deid = Deidentifier(profile=str(path), policy="tag")
    text = "omulwadde Nakato Namukwaya, essimu 0772 123456, yazze e Mulago."
    redacted = deid.redact(text, lang="lg")
    assert "Nakato" not in redacted and "Mulago" not in redacted and "123456" not in redacted
    assert deid.redact("Nakato, tel 0772 123456", lang="en") == "Nakato, tel [CONTACT_PHONE]"


def test_word_grid_precision_is_chosen_and_bfloat16_finds_the_same_spans(
    hf_wordgrid_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text, expected = long_document(6)
    exact = HfWordGridDetector(hf_wordgrid_dir, precision="float32")
    half = HfWordGridDetector(hf_wordgrid_dir, precision="bfloat16")
    assert exact._model("lug").precision == "float32"
    assert half._model("lug").precision == "bfloat16"
    assert found(text, half.detect(Segment(text, lang="lg"))) == expected
    assert found(text, exact.detect(Segment(text, lang="lg"))) == expected
    monkeypatch.setenv("POLYDEID_TAGGER_PRECISION", "float32")  # the default follows it
    assert HfWordGridDetector(hf_wordgrid_dir)._model("lug").precision == "float32"
