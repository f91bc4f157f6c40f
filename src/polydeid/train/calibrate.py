"""Fit the tagger's per-language, per-category thresholds and scope; write ``router.toml``.

    python -m polydeid.train.calibrate --model src/polydeid/detect/tagger/model [--floor 0.85]

For each language, development documents with **unseen names** — synthetic documents of the
*dev* name split, and the language's real development corpora named in
:data:`CALIBRATION_CORPORA` (MEDDOCAN dev, the held-out 30 % of GermEval 2014 and ASQ-PHI,
MasakhaNER dev; "select" data may choose thresholds), read from the one list of
:mod:`polydeid.evaluate.devsets` — are tagged once with every threshold at 0.05. For each
category, the threshold kept is the one with the highest strict recall whose precision is at
least ``--floor``, searched only at or below the uncalibrated 0.5 — so calibration can never
lower recall against the uncalibrated model; when no threshold reaches the floor, 0.5 stays.
Categories are in scope for a language unless its records never carry them (tribes where no
country of the language records them, clans where the language has no clan names).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from polydeid.core.taxonomy import COARSE_GROUP, Category, scheme
from polydeid.corpora import AnnotatedDocument
from polydeid.detect.tagger.decode import decode
from polydeid.detect.tagger.detector import DEFAULT_THRESHOLD, ROUTER_FILE
from polydeid.detect.tagger.model import TaggerModel
from polydeid.locales import default_countries, languages
from polydeid.locales.names import name_data, name_words
from polydeid.locales.people import country_people
from polydeid.locales.synth import synth_data
from polydeid.train.tagger import DATA, dev_corpora

log = logging.getLogger("polydeid.train")

GRID = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5)

#: The real development corpora calibration reads, by the start of their names in
#: :data:`polydeid.evaluate.devsets.DEV_CORPORA` (one list of corpora for training, calibration
#: and evaluation). Each annotates patients and third parties as polydeid does, or persons
#: whose role the model's votes give ("select" MasakhaNER may choose thresholds).
CALIBRATION_CORPORA = ("MEDDOCAN dev", "ASQ-PHI dev", "GermEval 2014 dev", "MasakhaNER dev")


def in_scope(lang: str) -> list[Category]:
    """Categories the tagger reports for ``lang``: all, less tribes and clans it never has."""
    people = [country_people(cc) for cc in default_countries(lang)]
    tribes = any(p.tribes and p.recorded for p in people)
    names = name_data(lang)
    pools = [names.default, *names.by_country.values()] if names is not None else []
    synth = synth_data(lang)
    clans = any(pool.clans for pool in pools) or bool(synth and synth.vocab.get("clans"))
    out = []
    for category in Category:
        if category is Category.TRIBE and not tribes:
            continue
        if category is Category.PERSON_CLAN and not clans:
            continue
        out.append(category)
    return out


def dev_documents(
    lang: str, per_language: int, data: Path
) -> tuple[list[AnnotatedDocument], dict[str, frozenset[Category]], frozenset[str]]:
    """The language's development documents, and for those of real corpora the categories
    their scheme can mark (:func:`polydeid.evaluate.harness.scored_categories`): an age found
    in MasakhaNER news is neither right nor wrong by its gold, so it does not count there;
    and the ids of the documents whose corpus marks persons without their role
    (:func:`marks_roles`)."""
    from polydeid.evaluate.harness import scored_categories
    from polydeid.synth.generate import generate

    docs = list(generate(per_language=per_language, seed=11, langs=[lang], name_split="dev"))
    scopes: dict[str, frozenset[Category]] = {}
    roleless: set[str] = set()
    for spec, read in dev_corpora(data, CALIBRATION_CORPORA, lang):
        scope = scored_categories(spec.scheme)
        if scope is not None:
            scopes.update((d.id, scope) for d in read)
        if not marks_roles(spec.scheme):
            roleless.update(d.id for d in read)
        docs.extend(read)
    return docs, scopes, frozenset(roleless)


def marks_roles(scheme_name: str) -> bool:
    """Whether a scheme tells a patient's name from a third party's (MEDDOCAN does; CoNLL
    ``PER``, GermEval and ASQ-PHI ``NAME`` do not)."""
    return Category.PERSON_THIRD_PARTY in scheme(scheme_name).mapping.values()


def fit(
    tagger: TaggerModel,
    docs: Sequence[AnnotatedDocument],
    floor: float,
    scopes: Mapping[str, frozenset[Category]] | None = None,
    roleless: Collection[str] = (),
) -> dict[Category, tuple[float, float | None, float | None, int]]:
    """Per category: (threshold, precision, recall, gold count) at the chosen threshold.

    ``scopes`` (by document id) limits a document's predictions to the categories its corpus
    annotates; documents not named are scored in every category. In the documents named in
    ``roleless`` (a corpus that marks persons without saying whose record it is) a gold name
    takes the role the model gives the span at the same place, so a role is never counted
    wrong where the corpus has none."""
    scopes = scopes or {}
    roleless = frozenset(roleless)
    candidates: list[tuple[str, Category, int, int, float]] = []
    gold: dict[Category, set[tuple[str, int, int]]] = defaultdict(set)
    for start in range(0, len(docs), 8):
        chunk = docs[start : start + 8]
        for doc, (aligned, probs) in zip(
            chunk, tagger.predict([d.text for d in chunk]), strict=True
        ):
            scope = scopes.get(doc.id)
            names = name_words(doc.lang)
            spans = decode(
                doc.text, aligned.grid, probs, {}, default_threshold=GRID[0], names=names
            )
            for span in spans:
                if scope is not None and span.label not in scope:
                    continue
                candidates.append((doc.id, span.label, span.start, span.end, span.score or 0.0))
            roles = (
                {(s.start, s.end): s.label for s in spans if COARSE_GROUP[s.label] == "NAME"}
                if doc.id in roleless
                else {}
            )
            for span in doc.spans:
                if isinstance(span.label, Category):
                    label = span.label
                    if roles and COARSE_GROUP[label] == "NAME":
                        label = roles.get((span.start, span.end), label)
                    gold[label].add((doc.id, span.start, span.end))
    chosen: dict[Category, tuple[float, float | None, float | None, int]] = {}
    for category in Category:
        found = [c for c in candidates if c[1] is category]
        rows = []
        for threshold in GRID:
            kept = {(d, s, e) for d, _, s, e, score in found if score >= threshold}
            correct = len(kept & gold[category])
            precision = correct / len(kept) if kept else None
            recall = correct / len(gold[category]) if gold[category] else None
            rows.append((threshold, precision, recall))
        base = rows[-1]
        best = base
        for row in rows:
            if row[1] is not None and row[1] >= floor and (row[2] or 0) > (best[2] or 0):
                best = row
        chosen[category] = (*best, len(gold[category]))
    return chosen


def write_router(folder: Path, fitted: dict[str, dict], floor: float, per_language: int) -> Path:
    lines = [
        "# Tagger routing: per language, the categories in scope and their score thresholds.",
        "# Written by `python -m polydeid.train.calibrate` (do not edit by hand; rerun it).",
        f"# Thresholds: highest strict recall at precision >= {floor} on development data with",
        "# unseen names, searched at or below the uncalibrated 0.5.",
        "",
        "[meta]",
        "sources = [",
        f'  "synthetic dev name split, {per_language} documents per language (seed 11)",',
        '  "MEDDOCAN dev; held-out 30 % of ASQ-PHI and GermEval 2014 dev; MasakhaNER dev",',
        "]",
        f"floor = {floor}",
        "",
        "[default]",
        f"threshold = {DEFAULT_THRESHOLD}",
        "",
    ]
    for lang in sorted(fitted):
        info = fitted[lang]
        lines.append(f"[languages.{lang}]")
        lines.append("categories = [" + ", ".join(f'"{c.value}"' for c in info["categories"]) + "]")
        lines.append(f"[languages.{lang}.thresholds]")
        for category, (threshold, precision, recall, gold) in sorted(
            info["fit"].items(), key=lambda kv: kv[0].value
        ):
            if category not in info["categories"]:
                continue
            p = "-" if precision is None else f"{precision:.3f}"
            r = "-" if recall is None else f"{recall:.3f}"
            lines.append(f"{category.value} = {threshold}  # P {p} R {r} gold {gold}")
        lines.append("")
    path = folder / ROUTER_FILE
    path.write_text("\n".join(lines), "utf-8")
    return path


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    p = argparse.ArgumentParser(prog="python -m polydeid.train.calibrate")
    p.add_argument("--model", type=Path, required=True)
    p.add_argument("--floor", type=float, default=0.85)
    p.add_argument("--per-language", type=int, default=20)
    p.add_argument("--langs", default=None)
    p.add_argument("--data", type=Path, default=DATA)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args(argv)
    tagger = TaggerModel.load(args.model, threads=args.threads)
    langs = args.langs.split(",") if args.langs else list(languages())
    fitted = {}
    for lang in langs:
        docs, scopes, roleless = dev_documents(lang, args.per_language, args.data)
        fitted[lang] = {
            "categories": in_scope(lang),
            "fit": fit(tagger, docs, args.floor, scopes, roleless),
        }
        log.info("calibrated %s on %d documents", lang, len(docs))
    path = write_router(args.model, fitted, args.floor, args.per_language)
    log.info("wrote %s", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
