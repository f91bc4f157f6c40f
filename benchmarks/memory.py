"""Memory of one process over many documents: resident set after start, after load, and as
documents pass.

Issue 36 asks for at most 1.2 GB resident in all with the default profile, after load and
over 1,000 documents, and flat. This reads ``--docs`` synthetic notes of every language
(``polydeid.synth.generate``, the test split's names, written by a child process so that the
generator's own tables are not counted), one ``redact`` call each, as the service and
``polydeid redact`` do, and samples the resident set (``VmRSS`` of
``/proc/self/status``) and its peak (``VmHWM``) every ``--every`` documents. "Flat": the
resident set over the second half of the documents against the first half's end.

    .venv/bin/python benchmarks/memory.py [--profile default] [--docs 1000] [--every 100]

Writes ``benchmarks/results/memory.md`` (Linux only: it reads ``/proc``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from passes import cpu_model

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "memory.md"
TARGET_MB = 1200


def _status_mb(field: str) -> float:
    """A memory field of ``/proc/self/status`` in MB (10^6 bytes)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024 / 1e6
    raise RuntimeError(f"no {field} in /proc/self/status")


def _generate(n_docs: int, path: Path) -> None:
    """Write ``n_docs`` synthetic notes of every language to ``path`` (JSON lines)."""
    from polydeid.locales import languages
    from polydeid.synth.generate import generate

    per_language = -(-n_docs // len(languages()))
    docs = list(generate(per_language=per_language, seed=36, name_split="test"))[:n_docs]
    with path.open("w", encoding="utf-8") as out:
        for doc in docs:
            out.write(json.dumps({"text": doc.text, "lang": doc.lang}) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="default")
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--every", type=int, default=100)
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--generate", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate is not None:
        _generate(args.docs, args.generate)
        return 0
    started = time.perf_counter()
    samples: list[tuple[str, float]] = [("interpreter started", _status_mb("VmRSS"))]
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch, "docs.jsonl")
        subprocess.run(
            [sys.executable, __file__, "--docs", str(args.docs), "--generate", str(path)],
            check=True,
        )
        docs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    from polydeid.api import Deidentifier
    from polydeid.locales import languages

    samples.append(("polydeid imported, documents read", _status_mb("VmRSS")))
    deid = Deidentifier(profile=args.profile)
    samples.append((f"Deidentifier(profile={args.profile!r}) built", _status_mb("VmRSS")))
    chars = 0
    along: list[float] = []  # the resident set every --every documents
    for k, doc in enumerate(docs, 1):
        deid.redact(doc["text"], lang=doc["lang"])
        chars += len(doc["text"])
        if k % args.every == 0 or k == len(docs):
            along.append(_status_mb("VmRSS"))
            samples.append((f"after {k} documents", along[-1]))
    peak = _status_mb("VmHWM")
    growth = max(along) - along[max(len(along) // 2 - 1, 0)]  # over the second half
    lines = [
        "# Memory of one process over many documents",
        "",
        f"Command: `.venv/bin/python benchmarks/memory.py {' '.join(sys.argv[1:])}`. Machine: "
        f"{cpu_model()} ({platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}). {len(docs)} synthetic notes of {len(languages())} "
        f"languages ({chars:,} characters), one `redact` call each, profile "
        f"`{args.profile}`; {time.perf_counter() - started:.0f} s in all. Resident set "
        "(`VmRSS`) in MB (10^6 bytes).",
        "",
        "| when | resident MB |",
        "|---|---:|",
        *(f"| {label} | {mb:.0f} |" for label, mb in samples),
        f"| peak over the run (`VmHWM`) | {peak:.0f} |",
        "",
        f"Target (issue 36): at most {TARGET_MB} MB resident in all, flat. Peak {peak:.0f} MB "
        f"({'within' if peak <= TARGET_MB else 'above'} the bound); growth over the second "
        f"half of the documents: {growth:+.0f} MB (flatness is read from the rows above).",
        "",
    ]
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
