"""benchmarks/gpu.py, the GPU path's measurement, runs end to end on the CPU (where the
suite runs) and refuses a GPU that torch does not see."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "gpu.py"


@pytest.mark.torch
def test_the_gpu_benchmark_runs_on_the_cpu(tmp_path: Path) -> None:
    out = tmp_path / "gpu.md"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--device", "cpu", "--mb", "0.02", "--workers", "1",
         "--split-records", "12", "--output", str(out)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    page = out.read_text("utf-8")
    assert "## End to end" in page and "## Split" in page
    row = next(line for line in page.splitlines() if line.startswith("| cpu | 1 |"))
    records = int(row.split("|")[3])
    assert records > 0
    split_row = page.split("## Split")[1].splitlines()[4]
    share = split_row.split("|")[6].strip()
    assert share.endswith("%") and 0 < int(share[:-1]) <= 100


@pytest.mark.torch
def test_the_gpu_benchmark_refuses_a_gpu_torch_does_not_see(tmp_path: Path) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--device", "cuda", "--output", str(tmp_path / "x.md")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode != 0
    assert "torch sees no GPU" in done.stderr
    assert not (tmp_path / "x.md").exists()
