"""Quality on every development corpus in ../shared/data: systems side by side.

Runs the rule layer alone (`rules`), the full shipped pipeline (`default`) and Microsoft
Presidio (`presidio`, its English pipeline on every language) over each dev corpus with the
same scorer, and writes ``benchmarks/results/quality.md`` (plus one JSON/Markdown/HTML report
per corpus under ``benchmarks/results/quality/``).

    .venv/bin/python benchmarks/quality.py [--systems rules,default,presidio] [--bootstrap 1000]
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.corpora import AnnotatedDocument, read_corpus
from polydeid.detect.pipeline import Pipeline
from polydeid.evaluate.disjoint import familiar_vs_unseen, heldout_pools, name_vocabulary
from polydeid.evaluate.harness import EvaluationRun, build_system, evaluate
from polydeid.evaluate.report import quality_markdown, write_report

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "benchmarks" / "results"


@dataclass(frozen=True)
class DevCorpus:
    name: str
    path: str
    format: str
    scheme: str
    lang: str
    #: Sentence corpora are cut into documents of this many sentences (for bootstrap CIs).
    sentences: int | None = None


DEV_CORPORA = (
    DevCorpus("MEDDOCAN dev (es, clinical)", "meddocan/dev", "brat", "meddocan", "es"),
    DevCorpus(
        "ASQ-PHI dev (en, clinical queries)",
        "asq_phi/queries-dev.txt",
        "valuetags",
        "asq_phi",
        "en",
    ),
    DevCorpus(
        "GermEval 2014 dev (de, news/Wikipedia)",
        "germeval2014/NER-de-dev.tsv",
        "germeval2014",
        "germeval2014",
        "de",
        10,
    ),
    DevCorpus("ECHR ES dev (es, legal)", "echr/ES-all-dev.tsv", "conll", "echr_tab", "es", 10),
    DevCorpus("ECHR FR dev (fr, legal)", "echr/FR-all-dev.tsv", "conll", "echr_tab", "fr", 10),
    DevCorpus("MasakhaNER dev lug (news)", "masakhaner/lug/dev.txt", "conll", "conll", "lg", 10),
    DevCorpus("MasakhaNER dev swa (news)", "masakhaner/swa/dev.txt", "conll", "conll", "sw", 10),
    DevCorpus("MasakhaNER dev kin (news)", "masakhaner/kin/dev.txt", "conll", "conll", "rw", 10),
    DevCorpus("MasakhaNER dev luo (news)", "masakhaner/luo/dev.txt", "conll", "conll", "luo", 10),
    DevCorpus(
        "presidio-research synth v2 (en, generic PII)",
        "presidio_research/synth_dataset_v2.json",
        "presidio_research",
        "presidio_research",
        "en",
    ),
)


def unseen_names_section(documents: tuple[AnnotatedDocument, ...], systems: list[str]) -> str:
    """Person recall on MEDDOCAN dev as written, with names reshuffled, and with unseen names."""
    lines = [
        "## Unseen names: MEDDOCAN dev, person recall",
        "",
        "Gold names replaced by held-out names disjoint from polydeid's name lists (offsets",
        "realigned), and a control that reshuffles the original names across documents",
        "(`polydeid.evaluate.disjoint`, seed 0). Strict / relaxed recall over the person",
        "categories.",
        "",
        "| system | original | reshuffled | unseen | familiarity gap (reshuffled − unseen) |",
        "|---|---|---|---|---|",
    ]
    for name in systems:
        _, pipeline = build_system(name)

        def predict(doc: AnnotatedDocument, pipeline: Pipeline = pipeline) -> tuple[Span, ...]:
            return pipeline.detect(Segment(doc.text, lang=doc.lang))

        report = familiar_vs_unseen(
            documents, predict, pool=heldout_pools(), vocabulary=name_vocabulary(), seed=0
        )
        gap = report.differences()
        cells = [
            f"{r.strict:.3f} / {r.relaxed:.3f}"
            for r in (report.original, report.reshuffled, report.unseen)
        ]
        lines.append(
            f"| {name} | {' | '.join(cells)} | "
            f"{gap['familiarity_strict']:+.3f} / {gap['familiarity_relaxed']:+.3f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", default="rules,default,presidio")
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--only", default="", help="comma-separated substrings of corpus names")
    args = parser.parse_args()
    if not DATA.is_dir():
        print(f"no development data at {DATA}", file=sys.stderr)
        return 2
    systems = [s for s in args.systems.split(",") if s]
    runs: list[EvaluationRun] = []
    documents: dict[str, tuple[AnnotatedDocument, ...]] = {}
    for spec in DEV_CORPORA:
        if args.only and not any(k in spec.name for k in args.only.split(",")):
            continue
        options = {} if spec.sentences is None else {"sentences_per_document": spec.sentences}
        corpus = read_corpus(
            DATA / spec.path,
            spec.format,
            scheme=spec.scheme,
            lang=spec.lang,
            name=spec.name,
            **options,
        )
        documents[spec.path] = corpus.documents
        run = evaluate(corpus, systems, corpus_format=spec.format, bootstrap=args.bootstrap)
        slug = str(Path(spec.path).with_suffix("")).replace("/", "-")
        write_report(run, RESULTS / "quality" / slug)
        runs.append(run)
        print(f"{spec.name}: {run.documents} documents, {run.gold_spans} gold spans", flush=True)
    command = "`.venv/bin/python benchmarks/quality.py " + " ".join(sys.argv[1:]) + "`"
    page = quality_markdown(runs, title="Quality on the development corpora", command=command)
    if "meddocan/dev" in documents:
        page += "\n" + unseen_names_section(documents["meddocan/dev"], systems)
    (RESULTS / "quality.md").write_text(page, "utf-8")
    print(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
