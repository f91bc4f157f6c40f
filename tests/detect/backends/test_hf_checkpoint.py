"""Checkpoint location and inspection of the Hugging Face backends: the local hub cache
(through ``huggingface_hub``, never downloading) and the classifier head read from the
safetensors headers (through ``safetensors``), on the tiny checkpoints of conftest.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("huggingface_hub")

from polydeid.core.errors import DetectorUnavailableError
from polydeid.detect.backends.hf import inspect_checkpoint, resolve_local

pytestmark = pytest.mark.torch

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def cache(hf_pipeline_dir: Path, tmp_path: Path) -> Path:
    """A Hugging Face cache holding ``acme/tiny-pii`` at COMMIT, ``main`` pointing at it."""
    root = tmp_path / "hub"
    repo = root / "models--acme--tiny-pii"
    shutil.copytree(hf_pipeline_dir, repo / "snapshots" / COMMIT)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMIT, "utf-8")
    return root


def test_the_cache_is_read_with_local_files_only(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import huggingface_hub

    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    real = huggingface_hub.snapshot_download

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append((args, kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", spy)
    folder, cached = resolve_local("acme/tiny-pii", cache_dir=cache)
    assert cached and folder == cache / "models--acme--tiny-pii" / "snapshots" / COMMIT
    [(args, kwargs)] = calls
    assert args == ("acme/tiny-pii",) and kwargs["local_files_only"] is True
    assert kwargs["revision"] is None and Path(kwargs["cache_dir"]) == cache
    # a local directory never reaches the hub library
    assert resolve_local(folder) == (folder, False) and len(calls) == 1


def test_missing_snapshots_fail_closed_and_say_why(cache: Path) -> None:
    repo = cache / "models--acme--tiny-pii"
    (repo / "refs" / "stale").write_text("f" * 40, "utf-8")  # a ref to a commit not cached
    cases = {
        "stale": "no snapshot for that revision",
        COMMIT[:12]: "full 40-character hash, not a prefix",
        "f" * 40: "no snapshot for that revision",
        "../refs/main": "letters, digits",
    }
    for revision, problem in cases.items():
        with pytest.raises(DetectorUnavailableError, match="never downloads") as err:
            resolve_local("acme/tiny-pii", revision=revision, cache_dir=cache)
        assert problem in str(err.value) and str(cache) in str(err.value)
    shutil.rmtree(repo / "refs")
    with pytest.raises(DetectorUnavailableError, match="no snapshot for ref main"):
        resolve_local("acme/tiny-pii", cache_dir=cache)
    with pytest.raises(DetectorUnavailableError, match="not a valid hub id"):
        resolve_local("acme/tiny--pii", cache_dir=cache)


def _shard(folder: Path) -> None:
    """Split model.safetensors into two shards and an index, the classifier in the second."""
    from safetensors.torch import load_file, save_file

    weights = load_file(str(folder / "model.safetensors"))
    head = {k: v for k, v in weights.items() if "classifier" in k}
    body = {k: v for k, v in weights.items() if k not in head}
    names = ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors")
    for name, part in zip(names, (body, head), strict=True):
        save_file(part, str(folder / name), metadata={"format": "pt"})
    weight_map = {k: names[k in head] for k in weights}
    index = {"metadata": {}, "weight_map": weight_map}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index), "utf-8")
    (folder / "model.safetensors").unlink()


def test_sharded_weights_are_checked_through_the_index(
    hf_pipeline_dir: Path, tmp_path: Path
) -> None:
    folder = Path(shutil.copytree(hf_pipeline_dir, tmp_path / "sharded"))
    _shard(folder)
    assert len(inspect_checkpoint(folder).labels) == 69
    config = json.loads((folder / "config.json").read_text("utf-8"))
    config["id2label"]["69"] = "B-EXTRA"
    config.pop("label2id", None)
    (folder / "config.json").write_text(json.dumps(config), "utf-8")
    with pytest.raises(DetectorUnavailableError, match="id2label has 70, the classifier 69"):
        inspect_checkpoint(folder)
    (folder / "model-00002-of-00002.safetensors").write_bytes(b"\x08" + b"\x00" * 7 + b"{")
    with pytest.raises(DetectorUnavailableError, match="weights unreadable") as err:
        inspect_checkpoint(folder)
    assert err.value.location == str(folder)
