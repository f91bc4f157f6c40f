"""The tagger's encoder under ONNX Runtime, float32 and int8, against polydeid's torch fast path.

A probe for issue 36's CPU path without native bfloat16: how much faster the shipped tagger's
network runs in ONNX Runtime (float32, and int8 with per-channel weights on every MatMul,
``onnxruntime.quantization.quantize_dynamic``) than in the torch fast path in float32, on
random token ids of a few batch shapes. It measures speed, and how often the int8 model's best
tag agrees with float32's on those ids; it says nothing of accuracy on text, which a shipped
int8 path must show on the development corpora.

The ONNX file is written by ``polydeid export-tagger --onnx`` (float32 weights) into
``--work`` (a temporary folder by default; 0.9 GB with the int8 file).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from passes import cpu_model


def _export(work: Path) -> tuple[Path, Path]:
    """The tagger as ONNX in float32, and its dynamic int8 quantisation."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    plain, quantised = work / "tagger.onnx", work / "tagger.int8.onnx"
    if not plain.exists():
        polydeid = Path(sys.executable).with_name("polydeid")
        command = [str(polydeid), "export-tagger", "--hf", str(work / "hf")]
        subprocess.run(
            [*command, "--onnx", str(plain), "--dtype", "float32", "--force"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    if not quantised.exists():
        quantize_dynamic(
            str(plain),
            str(quantised),
            weight_type=QuantType.QInt8,
            per_channel=True,
            op_types_to_quantize=["MatMul"],
        )
    return plain, quantised


def _best_ms(run: Callable[[], Any], repeat: int) -> float:
    run()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, help="folder for the ONNX files (kept)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--shapes", default="1x64,1x256,8x256", help="batch x tokens, ...")
    parser.add_argument("--repeat", type=int, default=7, help="runs per cell (best is kept)")
    args = parser.parse_args()

    import numpy as np
    import onnxruntime as ort
    import torch

    from polydeid.detect.tagger.model import TaggerModel

    work = args.work or Path(tempfile.mkdtemp(prefix="polydeid-onnx-"))
    work.mkdir(parents=True, exist_ok=True)
    plain, quantised = _export(work)

    torch.set_num_threads(args.threads)
    model = TaggerModel.load(None, precision="float32")
    model.predict(["warm up"])
    fast = model._fast["float32"]

    def session(path: Path) -> Any:
        options = ort.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = args.threads, 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    float32, int8 = session(plain), session(quantised)
    rng = np.random.default_rng(0)
    rows = []
    for shape in args.shapes.split(","):
        batch, tokens = (int(n) for n in shape.split("x"))
        ids = rng.integers(5, 5000, (batch, tokens)).astype(np.int64)
        mask = np.ones_like(ids)
        feed = {"input_ids": ids, "attention_mask": mask}
        ids_t, mask_t = torch.from_numpy(ids), torch.from_numpy(mask)

        def torch_run(ids_t: Any = ids_t, mask_t: Any = mask_t) -> Any:
            with torch.inference_mode():
                return fast(ids_t, mask_t)

        cells = [
            _best_ms(torch_run, args.repeat),
            _best_ms(lambda feed=feed: float32.run(None, feed), args.repeat),
            _best_ms(lambda feed=feed: int8.run(None, feed), args.repeat),
        ]
        reference = torch_run().float().numpy()
        quantised_logits = int8.run(None, feed)[0]
        agree = float((reference.argmax(-1) == quantised_logits.argmax(-1)).mean())
        rows.append((shape, *cells, agree))

    print("# The tagger's network: torch fast path vs ONNX Runtime, float32 and int8\n")
    print(
        f"Command: `python benchmarks/onnx_probe.py --threads {args.threads} --shapes "
        f"{args.shapes} --repeat {args.repeat}`. Machine: {cpu_model()} ({platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}); onnxruntime "
        f"{ort.__version__}, torch {torch.__version__}, {args.threads} threads. Random token "
        f"ids, no padding; milliseconds per call, best of {args.repeat}. Agreement: the share "
        "of tokens whose best tag is the same in int8 as in torch float32.\n"
    )
    print("| batch x tokens | torch fast path, float32 | ORT float32 | ORT int8 | int8 agreement |")
    print("|---|---:|---:|---:|---:|")
    for shape, torch_ms, ort_ms, int8_ms, agree in rows:
        print(f"| {shape} | {torch_ms:.1f} | {ort_ms:.1f} | {int8_ms:.1f} | {agree:.4f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
