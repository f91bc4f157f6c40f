"""Persons that open a line against persons inside one: how often the tagger alone finds each.

A name the model does not know is read from its context; at the start of a line it has only
what follows. For each tagger folder and each development corpus of real text
(:data:`polydeid.train.tagger.SELECTION_CORPORA`), gold persons (patients and third parties:
the name group) are split by where they start — first on their line (only spaces, a bullet
or a dash before them) or elsewhere — and counted as found when a predicted name-group span
touches them (the issue's "persons touched"). The tagger runs alone, every category at 0.5
(as ``python -m polydeid.train.seeds`` reads it uncalibrated). Counts only: no text is
printed. Writes the table to ``--out`` (markdown) or standard output.

    .venv/bin/python benchmarks/line_openers.py src/polydeid/detect/tagger/model runs/tagger-r11 \\
        [--corpora "MasakhaNER dev,UNER dev"] [--out benchmarks/results/line_openers.md]
"""

from __future__ import annotations

import argparse
import platform
import sys
from collections.abc import Sequence
from pathlib import Path

from polydeid.core.taxonomy import COARSE_GROUP, Category
from polydeid.corpora import AnnotatedDocument
from polydeid.detect.tagger.decode import DECODER_VERSION, decode
from polydeid.detect.tagger.model import TaggerModel
from polydeid.detect.tagger.precision import resolve
from polydeid.locales.names import name_words
from polydeid.train.tagger import DATA, SELECTION_CORPORA, comma_names, dev_corpora

PERSONS = frozenset({Category.PERSON, Category.PERSON_THIRD_PARTY})
NAME_GROUP = COARSE_GROUP[Category.PERSON]
#: What may stand before a line's first word and still leave it first.
_LEAD = " \t-*•·>"


def opens_line(text: str, start: int) -> bool:
    """Whether only spaces, a bullet or a dash stand between ``start`` and its line's start."""
    line_start = text.rfind("\n", 0, start) + 1
    return not text[line_start:start].strip(_LEAD)


def count(docs: Sequence[AnnotatedDocument], tagger: TaggerModel) -> dict[str, list[int]]:
    """``{"opens": [found, gold], "inside": [found, gold]}`` over ``docs``' gold persons."""
    out = {"opens": [0, 0], "inside": [0, 0]}
    thresholds = dict.fromkeys(Category, 0.5)
    for first in range(0, len(docs), 8):
        chunk = docs[first : first + 8]
        readings = tagger.predict([d.text for d in chunk])
        for doc, (aligned, probs) in zip(chunk, readings, strict=True):
            spans = decode(
                doc.text, aligned.grid, probs, thresholds, source="tagger",
                names=name_words(doc.lang),
            )  # fmt: skip
            names = [s for s in spans if COARSE_GROUP.get(s.label) == NAME_GROUP]
            for gold in doc.spans:
                if gold.label not in PERSONS:
                    continue
                where = out["opens" if opens_line(doc.text, gold.start) else "inside"]
                where[1] += 1
                where[0] += any(s.start < gold.end and gold.start < s.end for s in names)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("models", nargs="+", type=Path, help="tagger folders")
    p.add_argument("--corpora", type=comma_names, default=SELECTION_CORPORA)
    p.add_argument("--data", type=Path, default=DATA)
    p.add_argument("--precision", choices=("auto", "float32", "bfloat16"), default="auto")
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args(argv)
    corpora = [(spec.name, docs) for spec, docs in dev_corpora(args.data, args.corpora)]
    results = {}
    for folder in args.models:
        tagger = TaggerModel.load(folder, precision=args.precision)
        results[str(folder)] = {name: count(docs, tagger) for name, docs in corpora}
        del tagger
    command = " ".join(sys.argv[1:] if argv is None else argv)
    head = " | ".join(f"{m}: opening a line | inside a line" for m in results)
    lines = [
        "# Persons that open a line, found by the tagger alone",
        "",
        f"Command: `.venv/bin/python benchmarks/line_openers.py {command}`. "
        f"Machine: {platform.machine()}, Python {platform.python_version()}; matrix products in "
        f"{resolve(args.precision)}; decoder {DECODER_VERSION}. Gold persons found (touched by a "
        "predicted name span) / gold persons, every threshold 0.5.",
        "",
        f"| development set | {head} |",
        "|---|" + "---:|---:|" * len(results),
    ]
    for name, _ in corpora:
        cells = []
        for per in results.values():
            for where in ("opens", "inside"):
                found, gold = per[name][where]
                cells.append(f"{found}/{gold} ({found / gold:.2f})" if gold else "–")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
