"""Two tagger folders through the whole ``default`` profile: name recall per corpus, paired.

For each development corpus of ``benchmarks/quality.py`` whose name holds one of ``--only``,
both tagger folders (weights and router) run in the same pipeline of the ``default`` profile,
and the strict name-group recall (gold spans of the name group found exactly by a predicted
span of the group) of the second minus the first is printed with its paired 95 % bootstrap
interval over documents (1,000 resamples, seed 0). The model card's stage-5 intervals came
from::

    mkdir /tmp/stage4; for f in weights.safetensors router.toml tagger.json; do
        git show 9018fc9:src/polydeid/detect/tagger/model/$f > /tmp/stage4/$f; done
    .venv/bin/python benchmarks/compare_models.py /tmp/stage4 src/polydeid/detect/tagger/model \\
        --only "MasakhaNER,NewsEye,Arztbriefe,Clinical notes"

Prints counts and intervals only, never a document's text.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from quality import DEV_CORPORA, read_dev_corpus

from polydeid.core.segments import Origin, Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import COARSE_GROUP, Category
from polydeid.detect.pipeline import Pipeline
from polydeid.detect.registry import PROFILES, TAGGER, create
from polydeid.detect.tagger.detector import TaggerDetector
from polydeid.evaluate.bootstrap import paired_recall_difference
from polydeid.locales import languages


def _is_name(span: Span) -> bool:
    return isinstance(span.label, Category) and COARSE_GROUP.get(span.label) == "NAME"


def name_counts(folder: Path, only: list[str]) -> dict[str, dict[str, tuple[int, int]]]:
    """Per corpus, per document: ``(found, gold)`` names with the tagger in ``folder``."""
    # the default profile's detectors, in its order, with the tagger read from ``folder``
    pipeline = Pipeline(
        [
            TaggerDetector(folder, required_languages=languages())
            if name == TAGGER
            else create(name)
            for name in PROFILES["default"]
        ]
    )
    out: dict[str, dict[str, tuple[int, int]]] = {}
    for spec in DEV_CORPORA:
        if not any(key in spec.name for key in only):
            continue
        per: dict[str, tuple[int, int]] = {}
        for doc in read_dev_corpus(spec).documents:
            segment = Segment(doc.text, lang=doc.lang, origin=Origin(file=doc.id))
            found = {(s.start, s.end) for s in pipeline.detect(segment) if _is_name(s)}
            gold = [(s.start, s.end) for s in doc.spans if _is_name(s)]
            per[doc.id] = (sum(g in found for g in gold), len(gold))
        out[spec.name] = per
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first", type=Path, help="the reference tagger folder")
    parser.add_argument("second", type=Path, help="the tagger folder compared with it")
    parser.add_argument("--only", default="", help="comma-separated substrings of corpus names")
    args = parser.parse_args()
    only = [k for k in args.only.split(",") if k] or [""]
    first, second = name_counts(args.first, only), name_counts(args.second, only)
    for name, counts in first.items():
        gold = sum(g for _, g in counts.values())
        if not gold:
            continue
        iv = paired_recall_difference(second[name], counts, n_resamples=1000, seed=0)
        a = sum(f for f, _ in counts.values()) / gold
        b = sum(f for f, _ in second[name].values()) / gold
        band = "" if iv.low is None or iv.high is None else f" [{iv.low:+.3f}, {iv.high:+.3f}]"
        print(f"{name}: gold names {gold}, {a:.3f} -> {b:.3f}, {iv.estimate:+.3f}{band}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
