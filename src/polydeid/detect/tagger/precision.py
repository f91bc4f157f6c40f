"""Which floating-point precision the tagger's matrix products run in on this machine.

bfloat16 speeds the tagger up where the processor multiplies bfloat16 natively (``avx512_bf16``
or ``amx_bf16``; speed-ups in ``benchmarks/results/tagger_speed.md``, tag changes in the model
card). Elsewhere torch emulates it, slower than float32, so ``auto`` keeps float32 there. Layer
norms, softmax and the loss stay in float32 (``torch.autocast``); the weights stay float32.
Inference on a loaded model does the same through :mod:`polydeid.detect.tagger._fast`, which
holds a bfloat16 copy of the linear weights.

The choice: an explicit argument, else ``POLYDEID_TAGGER_PRECISION`` (``auto``, ``float32``,
``bfloat16``), else ``auto``.

The device the tagger runs on (:func:`resolve_device`): an explicit argument, else
``POLYDEID_TAGGER_DEVICE`` (``cpu``, ``cuda``, ``auto``), else ``cpu``. ``auto`` takes a CUDA
GPU where torch sees one; ``cuda`` where none is fails closed. On a GPU the tagger runs the
``transformers`` model (bfloat16 where the GPU has it), not the CPU fast path.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from polydeid.core.errors import ConfigError

PRECISIONS = ("auto", "float32", "bfloat16")
ENV = "POLYDEID_TAGGER_PRECISION"
DEVICES = ("cpu", "cuda", "auto")
DEVICE_ENV = "POLYDEID_TAGGER_DEVICE"
_NATIVE_FLAGS = frozenset({"avx512_bf16", "amx_bf16"})


@cache
def native_bf16(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether this CPU multiplies bfloat16 natively (Linux ``/proc/cpuinfo`` flags)."""
    try:
        text = cpuinfo.read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    for line in text.splitlines():
        if line.startswith("flags"):
            return bool(_NATIVE_FLAGS & set(line.partition(":")[2].split()))
    return False


def resolve(precision: str | None = None, *, device: str = "cpu") -> str:
    """``float32`` or ``bfloat16`` for ``precision`` (None: the environment, then ``auto``)."""
    choice = precision or os.environ.get(ENV) or "auto"
    if choice not in PRECISIONS:
        raise ConfigError(
            f"tagger precision {choice!r} is not one of {', '.join(PRECISIONS)} ({ENV})"
        )
    if choice != "auto":
        return choice
    if device == "cuda":
        import torch

        return "bfloat16" if torch.cuda.is_bf16_supported() else "float32"
    return "bfloat16" if native_bf16() else "float32"


def autocast(precision: str, device: str = "cpu") -> Any:
    """A context in which matrix products run in ``precision`` (a no-op for float32) on
    ``device`` (``cpu``, ``cuda``, or one of their numbered devices)."""
    import torch

    kind = torch.device(device).type
    return torch.autocast(kind, dtype=torch.bfloat16, enabled=precision == "bfloat16")


def resolve_device(device: str | None = None) -> str:
    """``cpu`` or ``cuda`` for ``device`` (None: the environment, then ``cpu``); a CUDA device
    asked for where torch sees none is a configuration error (no silent fall-back to the CPU,
    whose speed the caller did not plan for)."""
    choice = device or os.environ.get(DEVICE_ENV) or "cpu"
    if choice not in DEVICES:
        raise ConfigError(
            f"tagger device {choice!r} is not one of {', '.join(DEVICES)} ({DEVICE_ENV})"
        )
    if choice == "cpu":
        return "cpu"
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if choice == "auto":
        return "cpu"
    raise ConfigError(
        f"tagger device cuda asked for ({DEVICE_ENV} or --device), and torch sees no GPU"
    )


@contextmanager
def device_environment(device: str | None) -> Iterator[None]:
    """Within the block, a tagger loaded without a device of its own uses ``device``
    (:data:`DEVICE_ENV`); None leaves the environment as it is. For a process that builds its
    de-identifier for one device (a batch worker); the variable is restored after."""
    if device is None:
        yield
        return
    before = os.environ.get(DEVICE_ENV)
    os.environ[DEVICE_ENV] = device
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(DEVICE_ENV, None)
        else:
            os.environ[DEVICE_ENV] = before
