"""The tagger's matrix-product precision: detection of native bfloat16, the choice, autocast."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from polydeid.core.errors import ConfigError
from polydeid.detect.tagger import precision


def _cpuinfo(tmp_path: Path, flags: str) -> Path:
    path = tmp_path / "cpuinfo"
    path.write_text(f"processor\t: 0\nmodel name\t: X\nflags\t\t: fpu sse2 {flags}\n\n")
    return path


@pytest.mark.parametrize(
    ("flags", "native"),
    [("avx2 avx512f avx512_bf16", True), ("avx2 amx_bf16 amx_tile", True), ("avx2 avx512f", False)],
)
def test_native_bf16_reads_the_cpu_flags(tmp_path: Path, flags: str, native: bool) -> None:
    assert precision.native_bf16.__wrapped__(_cpuinfo(tmp_path, flags)) is native


def test_native_bf16_is_false_without_cpuinfo(tmp_path: Path) -> None:
    assert precision.native_bf16.__wrapped__(tmp_path / "absent") is False


def test_resolve_explicit_environment_and_auto(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(precision.ENV, raising=False)
    assert precision.resolve("float32") == "float32"
    assert precision.resolve("bfloat16") == "bfloat16"
    monkeypatch.setattr(precision, "native_bf16", lambda: False)
    assert precision.resolve() == "float32"
    monkeypatch.setattr(precision, "native_bf16", lambda: True)
    assert precision.resolve("auto") == "bfloat16"
    monkeypatch.setenv(precision.ENV, "float32")
    assert precision.resolve() == "float32"  # the environment overrides auto
    assert precision.resolve("bfloat16") == "bfloat16"  # an argument overrides the environment
    monkeypatch.setenv(precision.ENV, "fp8")
    with pytest.raises(ConfigError, match=precision.ENV):
        precision.resolve()


def test_resolve_device_defaults_to_the_cpu_and_fails_closed_without_a_gpu(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    torch = pytest.importorskip("torch")
    monkeypatch.delenv(precision.DEVICE_ENV, raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert precision.resolve_device() == "cpu"
    assert precision.resolve_device("auto") == "cpu"  # no GPU: the CPU, as asked
    with pytest.raises(ConfigError, match="sees no GPU"):
        precision.resolve_device("cuda")
    monkeypatch.setenv(precision.DEVICE_ENV, "cuda")
    with pytest.raises(ConfigError, match="sees no GPU"):
        precision.resolve_device()  # the environment asks for one: never a silent fall-back
    assert precision.resolve_device("cpu") == "cpu"  # an argument overrides the environment
    monkeypatch.setenv(precision.DEVICE_ENV, "tpu")
    with pytest.raises(ConfigError, match=precision.DEVICE_ENV):
        precision.resolve_device()
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert precision.resolve_device("auto") == precision.resolve_device("cuda") == "cuda"


@pytest.mark.torch
def test_autocast_runs_matrix_products_in_bfloat16_only_when_asked() -> None:
    torch = pytest.importorskip("torch")
    a, b = torch.randn(4, 8), torch.randn(8, 3)
    with precision.autocast("bfloat16"):
        assert (a @ b).dtype == torch.bfloat16
    with precision.autocast("float32"):
        assert (a @ b).dtype == torch.float32
    with precision.autocast("bfloat16", "cpu:0"):  # a numbered device: its type
        assert (a @ b).dtype == torch.bfloat16


def test_a_device_environment_holds_only_within_its_block(monkeypatch) -> None:
    from polydeid.detect.tagger.precision import DEVICE_ENV, device_environment

    monkeypatch.delenv(DEVICE_ENV, raising=False)
    with device_environment("cpu"):
        assert os.environ[DEVICE_ENV] == "cpu"
    assert DEVICE_ENV not in os.environ
    monkeypatch.setenv(DEVICE_ENV, "auto")
    with device_environment("cpu"):
        assert os.environ[DEVICE_ENV] == "cpu"
    assert os.environ[DEVICE_ENV] == "auto"
    with device_environment(None):
        assert os.environ[DEVICE_ENV] == "auto"
