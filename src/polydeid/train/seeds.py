"""Compare tagger training runs (seeds) on the development sets: mean ± SD of the tagger alone.

    python -m polydeid.train.seeds runs/tagger-c2 runs/tagger-c3 runs/tagger-c4 \\
        [--reference runs/tagger-s1] [--out benchmarks/results/tagger_seeds.md]

Every run is scored the same way, in one process: the tagger alone (no rule layer), with the
uncalibrated threshold of 0.5 for every category, on the development corpora training selects
on (:data:`polydeid.train.tagger.SELECTION_CORPORA`: MEDDOCAN dev, the held-out parts of
GermEval 2014 and factRuEval-2016, UNER, WNUT 2017 and LeNER-Br dev, MasakhaNER and NewsEye
dev — "select" data: evaluation only — and the two sets written for polydeid) and synthetic
notes with unseen names (the *test* name split, all languages), each real set scored in the
categories its scheme marks. Figures: entity-strict micro F1, strict recall of names as one
group (patients, third parties and clans: a news person tagged as a third party counts), and
the name value training selects by (:func:`polydeid.train.tagger.name_value`), with its macro
average over languages in the last row. The runs' spread (sample standard deviation) is what
the seeds cost; ``--reference`` runs are shown beside them but not averaged. With a reference,
a last table gives each run's name recall minus the first reference's, with its paired
bootstrap interval.

``--calibrated`` reads every run as the detector does instead of at 0.5: each document at its
language's thresholds and in its categories from the run's own ``router.toml`` (written by
``python -m polydeid.train.calibrate --model RUN``); the name value stays the best over
thresholds. That compares models as they would ship, each with its own calibration.
"""

from __future__ import annotations

import argparse
import json
import logging
import platform
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from polydeid.detect.tagger.decode import DECODER_VERSION
from polydeid.detect.tagger.model import MODEL_DIR, TaggerMeta
from polydeid.train.tagger import (
    DATA,
    SELECTION_CORPORA,
    DevSet,
    comma_names,
    dev_sets,
    evaluate,
    selection_value,
)

log = logging.getLogger("polydeid.train")

SCORES_FILE = "dev-scores.json"
CALIBRATED_SCORES_FILE = "dev-scores-calibrated.json"
FIGURES = (
    ("strict micro F1", "f1"),
    ("name recall (strict, name group)", "person"),
    ("name value (selection)", "name_value"),
)
#: The row of the selection value (macro over languages) in :func:`table`.
SELECTION = "selection (macro over languages)"


def score_run(
    folder: Path, sets: Sequence[DevSet], precision: str | None, *, calibrated: bool = False
) -> dict[str, dict[str, float | None]]:
    """Per development set: strict micro F1, person recall and name value of the tagger in
    ``folder``; under :data:`SELECTION`, the selection value.

    Scores are kept in ``folder/SCORES_FILE`` with the weights' checksum, the decoder version,
    the precision and the sets' sizes, and reused when all match (runs can be scored as they
    finish) — except for the shipped model, whose folder is package data, not a run folder.
    """
    from polydeid.detect.tagger.detector import ROUTER_FILE, read_router
    from polydeid.detect.tagger.model import TaggerModel, sha256_file
    from polydeid.detect.tagger.precision import resolve

    routes = read_router(folder) if calibrated else None
    key = {
        "weights_sha256": TaggerMeta.read(folder).weights_sha256,
        "decoder": DECODER_VERSION,
        "precision": resolve(precision),
        "sets": {dev.name: len(dev.docs) for dev in sets},
        "gold": {dev.name: dev.gold_digest() for dev in sets},
        "scopes": {dev.name: sorted(dev.scope or ()) for dev in sets},
        "figures": [*(key for _, key in FIGURES), "name_documents"],
        **({"router_sha256": sha256_file(folder / ROUTER_FILE)} if calibrated else {}),
    }
    cache = folder / (CALIBRATED_SCORES_FILE if calibrated else SCORES_FILE)
    if cache.is_file():
        kept = json.loads(cache.read_text("utf-8"))
        if kept.get("key") == key:
            return kept["scores"]
    tagger = TaggerModel.load(folder, precision=precision)
    out: dict[str, dict[str, float | None]] = {}
    scored = []
    for dev in sets:
        scores = evaluate(tagger, dev.docs, dev.scope, per_document=True, routes=routes)
        scored.append((dev, scores))
        out[dev.name] = {
            "f1": scores["strict_micro"]["f1"],
            "person": scores["name_group_recall_strict"],
            "name_value": scores["name_value"],
            "name_documents": scores["name_documents"],
        }
        log.info("%s: %s done", folder.name, dev.name)
    out[SELECTION] = {"name_value": selection_value(scored)}
    if folder.resolve() != MODEL_DIR.resolve():
        cache.write_text(json.dumps({"key": key, "scores": out}, indent=1) + "\n", "utf-8")
    return out


def _cell(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _mean_sd(values: Sequence[float | None]) -> str:
    present = [v for v in values if v is not None]
    if not present:
        return "–"
    if len(present) == 1:
        return f"{present[0]:.3f}"
    return f"{statistics.mean(present):.3f} ± {statistics.stdev(present):.3f}"


def table(
    runs: dict[str, dict[str, dict[str, float | None]]],
    references: dict[str, dict[str, dict[str, float | None]]],
    sets: Sequence[DevSet],
) -> list[str]:
    """Markdown rows: one per development set and figure, then the selection value."""
    header = ["development set", "documents", "figure", *runs, *references, "mean ± SD (seeds)"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    rows = [(dev.name, str(len(dev.docs)), label, key) for dev in sets for label, key in FIGURES]
    rows.append((SELECTION, "", "name value", "name_value"))
    for name, documents, label, key in rows:
        values = [runs[r].get(name, {}).get(key) for r in runs]
        cells = [_cell(v) for v in values]
        cells += [_cell(references[r].get(name, {}).get(key)) for r in references]
        lines.append(
            f"| {name} | {documents} | {label} | " + " | ".join(cells) + f" | {_mean_sd(values)} |"
        )
    return lines


def differences(
    runs: dict[str, dict[str, Any]], reference: str, against: dict[str, Any], sets: Sequence[DevSet]
) -> list[str]:
    """Markdown rows: per development set, each run's strict name-group recall minus
    ``reference``'s, with its 95 % paired bootstrap interval over documents (1,000 resamples,
    seed 0); ``*`` where the interval excludes 0."""
    from polydeid.evaluate.bootstrap import paired_recall_difference

    header = ["development set", *(f"{r} − {reference}" for r in runs)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for dev in sets:
        cells = []
        for run in runs.values():
            mine, theirs = (
                run[dev.name].get("name_documents"),
                against[dev.name].get("name_documents"),
            )
            if not mine or not theirs:
                cells.append("–")
                continue
            found = paired_recall_difference(
                {k: tuple(v) for k, v in mine.items()}, {k: tuple(v) for k, v in theirs.items()}
            )
            if found.estimate is None or found.low is None or found.high is None:
                cells.append("–")
                continue
            mark = " *" if found.low > 0 or found.high < 0 else ""
            cells.append(f"{found.estimate:+.3f} [{found.low:+.3f}, {found.high:+.3f}]{mark}")
        lines.append(f"| {dev.name} | " + " | ".join(cells) + " |")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    p = argparse.ArgumentParser(prog="python -m polydeid.train.seeds", description=__doc__)
    p.add_argument("runs", nargs="+", type=Path, help="tagger folders trained with other seeds")
    p.add_argument("--reference", nargs="*", type=Path, default=[])
    p.add_argument("--out", type=Path, default=None, help="write the markdown table here")
    p.add_argument("--data", type=Path, default=DATA)
    p.add_argument("--synthetic-per-language", type=int, default=10)
    p.add_argument(
        "--dev-docs", type=int, default=0, help="documents of each development corpus (0: all)"
    )
    p.add_argument(
        "--dev-corpora",
        type=comma_names,
        default=SELECTION_CORPORA,
        help="score only the development corpora whose names start so, comma-separated",
    )
    p.add_argument("--precision", choices=("auto", "float32", "bfloat16"), default="auto")
    p.add_argument(
        "--calibrated",
        action="store_true",
        help="read each run at its own router.toml's thresholds and categories, not at 0.5",
    )
    args = p.parse_args(argv)
    sets = dev_sets(
        args.data,
        synthetic_per_language=args.synthetic_per_language,
        synthetic_split="test",
        dev_docs=args.dev_docs,
        corpora=args.dev_corpora,
    )
    scored = {
        f: score_run(f, sets, args.precision, calibrated=args.calibrated)
        for f in [*args.runs, *args.reference]
    }
    runs = {str(f): scored[f] for f in args.runs}
    references = {f"{f} (reference)": scored[f] for f in args.reference}
    from polydeid.detect.tagger.precision import resolve

    command = "python -m polydeid.train.seeds " + " ".join(sys.argv[1:] if argv is None else argv)
    lines = [
        "# Tagger training runs compared (tagger alone, "
        + ("each at its own calibration" if args.calibrated else "uncalibrated")
        + ", development data)",
        "",
        f"Command: `{command}`. Machine: {platform.machine()}, Python "
        f"{platform.python_version()}; matrix products in {resolve(args.precision)}; "
        f"decoder version {DECODER_VERSION} (`polydeid.detect.tagger.windows`). "
        "Entity-strict figures, real sets in the categories their scheme marks, "
        + (
            "each document at its language's thresholds and categories of the run's own router.toml"
            if args.calibrated
            else "every category's threshold at 0.5"
        )
        + ", no rule layer; SD is the sample standard deviation over the seeds.",
        "",
        *table(runs, references, sets),
    ]
    if args.reference:
        first = f"{args.reference[0]} (reference)"
        lines += [
            "",
            f"Strict name-group recall, each run minus {args.reference[0]}, with the 95 % "
            "paired bootstrap interval over documents (1,000 resamples, seed 0; `*`: the "
            "interval excludes 0):",
            "",
            *differences(runs, str(args.reference[0]), references[first], sets),
        ]
    text = "\n".join(lines) + "\n"
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, "utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
