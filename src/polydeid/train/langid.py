"""Train the language identifier's own n-gram model; write ``langid.npy`` and ``langid.json``.

    python -m polydeid.train.langid [--out src/polydeid/detect/langid] [--evaluate]

Training text — only what polydeid's contributors wrote (never MasakhaNER, whose licence allows
selection only):

* every sentence template of each language's ``synth.toml``, rendered :data:`RENDERS` times with
  its ``{slot}`` placeholders replaced by words of the same language's vocabulary (or by
  nothing: names, places, IDs and numbers are left out);
* the clinical-facts fixture lines ``tests/fixtures/clinical_facts/<lang>.jsonl``, identifiers
  removed;
* :data:`PER_LANGUAGE` synthetic documents per language from
  :func:`polydeid.synth.generate.generate` (seed :data:`TRAIN_SEED`, the *train* name split),
  identifier spans removed. Every text format is used, not only prose: the English keys and
  markup of JSON, XML, FHIR or HL7 records then occur in every language's counts and weigh
  nothing, which measured better on whole structured records (the weakest language's accuracy
  0.57 with prose-like formats only, 0.97 with all) at no loss on sentences.

The model is multinomial naive Bayes over character 1–4-grams of the normalised text
(:func:`polydeid.detect.langid.normalise`), hashed with CRC-32 into :data:`BUCKETS` buckets,
smoothed with :data:`ALPHA`, log-probabilities quantised to uint8 (under 2 MB). Its weight
against py3langid, py3langid's floor and Dholuo's stand-ins were chosen on the synthetic dev
split and MasakhaNER dev (selection use); the softmax temperature is fitted here, by least
log-loss on dev-split synthetic sentences. Everything is seeded: the same sources rebuild the
same files byte for byte.

``--evaluate`` measures the written model: per-language accuracy on held-out synthetic
sentences (seed :data:`TEST_SEED`, *test* name split) and on MasakhaNER dev sentences (where
``../shared/data`` exists), py3langid alone beside the combined identifier, and the speed.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import regex

from polydeid.core.errors import ConfigError
from polydeid.detect.langid import (
    FORMAT,
    META_FILE,
    MODEL_DIR,
    WEIGHTS_FILE,
    LanguageIdentifier,
    NgramModel,
    count_letters,
    ngram_counts,
)

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures" / "clinical_facts"
DATA = ROOT.parent / "shared" / "data"

TRAIN_SEED = 101
DEV_SEED = 4242
TEST_SEED = 20261130
PER_LANGUAGE = 200
RENDERS = 3
BUCKETS = 1 << 16
ORDERS = (1, 2, 3, 4)
ALPHA = 0.1
#: Fusion (chosen on the dev split and MasakhaNER dev): our log-likelihood's weight, the least
#: py3langid probability counted, and py3langid's languages standing in for those it lacks
#: (the largest of their probabilities; their sum made Dholuo win too many short texts).
NB_WEIGHT = 0.03
PY3_FLOOR = 1e-12
PROXIES: Mapping[str, tuple[str, ...]] = {"luo": ("sw", "lg", "rw", "en")}
#: Prose-like formats for sentence-level development and test sets.
PROSE_FORMATS = ("prose", "soap", "bullets", "chat", "key_value")
#: MasakhaNER folders by canonical code.
MASAKHANER = {"lg": "lug", "sw": "swa", "rw": "kin", "luo": "luo"}

#: Template slots filled from the language's own vocabulary (the others are left empty).
SLOT_VOCABULARY = {
    "diagnosis": "diagnoses",
    "eponym": "eponym_diagnoses",
    "drug": "drugs",
    "medication": "drugs",
    "department": "departments",
    "profession": "professions",
    "religion": "religions",
    "relation": "relations",
    "relative_date": "relative_dates",
    "time": "times",
    "age": "age_words",
    "clan": "clans",
}
_SLOT = re.compile(r"\{(\w+)\}")
_SENTENCE_END = regex.compile(r"(?<=[.!?。！？؟।።])\s+|\n+")


# --------------------------------------------------------------------------------------------
# Training text


def template_texts(lang: str, rng: random.Random, renders: int = RENDERS) -> list[str]:
    """The language's sentence templates, rendered with its own vocabulary, and its greetings."""
    from polydeid.synth.generate import language_templates

    data = language_templates(lang)
    sexes = [w for w in (data.vocab.get("sex_female"), data.vocab.get("sex_male")) if w]

    def fill(match: re.Match[str]) -> str:
        slot = match.group(1)
        words = list(sexes) if slot == "sex" else data.words(SLOT_VOCABULARY.get(slot, ""))
        return rng.choice(words) if words and rng.random() < 0.8 else ""

    out = []
    for section in data.sections.values():
        for template in section:
            for _ in range(renders):
                out.append(" ".join(_SLOT.sub(fill, template.text).split()))
    out.extend(data.words("chat_greetings"))
    return out


def fixture_texts(lang: str, folder: Path = FIXTURES) -> list[str]:
    """The clinical-facts fixture lines of ``lang``, each identifier replaced by a space."""
    path = folder / f"{lang}.jsonl"
    if not path.is_file():
        raise ConfigError(
            "clinical-facts fixture missing; train from a source checkout", location=str(path)
        )
    out = []
    for line in path.read_text("utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            out.append(
                _blank(
                    record["text"], [(s["start"], s["end"]) for s in record.get("identifiers", [])]
                )
            )
    return out


def _blank(text: str, spans: Iterable[tuple[int, int]]) -> str:
    for start, end in sorted(spans, reverse=True):
        text = text[:start] + " " + text[end:]
    return text


def synthetic_texts(
    per_language: int,
    seed: int,
    name_split: str,
    *,
    formats: Sequence[str] | None = None,
    blank: bool = True,
    langs: Iterable[str] | None = None,
) -> dict[str, list[str]]:
    """Generated documents by language, identifier spans blanked when ``blank``."""
    from polydeid.synth.generate import generate

    out: dict[str, list[str]] = {}
    for doc in generate(
        per_language=per_language, seed=seed, name_split=name_split, formats=formats, langs=langs
    ):
        text = _blank(doc.text, [(s.start, s.end) for s in doc.spans]) if blank else doc.text
        out.setdefault(doc.lang, []).append(text)
    return out


def sentences(texts: Iterable[str], min_letters: int = 40) -> list[str]:
    """Sentences (and lines) of ``texts`` with at least ``min_letters`` letters."""
    out = []
    for text in texts:
        for part in _SENTENCE_END.split(text):
            sentence = " ".join(part.split())
            if count_letters(sentence) >= min_letters:
                out.append(sentence)
    return out


def heldout_sentences(
    per_language: int = 40,
    seed: int = TEST_SEED,
    min_letters: int = 40,
    langs: Iterable[str] | None = None,
) -> dict[str, list[str]]:
    """Sentences of synthetic prose-like documents with unseen names (the *test* split)."""
    docs = synthetic_texts(
        per_language, seed, "test", formats=PROSE_FORMATS, blank=False, langs=langs
    )
    return {lang: sentences(texts, min_letters) for lang, texts in docs.items()}


def training_corpus(per_language: int = PER_LANGUAGE) -> dict[str, list[str]]:
    """All training text by language (deterministic)."""
    from polydeid.synth.generate import synth_languages

    rng = random.Random(TRAIN_SEED)
    corpus = {lang: template_texts(lang, rng) + fixture_texts(lang) for lang in synth_languages()}
    for lang, texts in synthetic_texts(per_language, TRAIN_SEED, "train").items():
        corpus[lang].extend(texts)
    return corpus


def masakhaner_sentences(lang: str, data: Path = DATA, min_letters: int = 40) -> list[str]:
    """MasakhaNER dev sentences of ``lang`` (tokens joined by spaces); [] when absent.

    For measurement only: the licence allows selection, never training.
    """
    path = data / "masakhaner" / MASAKHANER[lang] / "dev.txt"
    if not path.is_file():
        return []
    out, tokens = [], []
    for line in [*path.read_text("utf-8").splitlines(), ""]:
        if line.strip():
            tokens.append(line.split()[0])
        elif tokens:
            out.append(" ".join(tokens))
            tokens = []
    return [s for s in out if count_letters(s) >= min_letters]


# --------------------------------------------------------------------------------------------
# Fitting


def fit_counts(corpus: Mapping[str, Sequence[str]], classes: Sequence[str]) -> np.ndarray:
    """N-gram counts per class (classes × buckets)."""
    counts = np.zeros((len(classes), BUCKETS))
    for k, lang in enumerate(classes):
        for text in corpus[lang]:
            ids, n = ngram_counts(text, BUCKETS, ORDERS)
            np.add.at(counts[k], ids, n)
    return counts


def quantise(counts: np.ndarray) -> tuple[np.ndarray, float, float]:
    """Smoothed log-probabilities as uint8 with an affine map (offset, scale)."""
    totals = counts.sum(axis=1, keepdims=True)
    logp = np.log((counts + ALPHA) / (totals + ALPHA * counts.shape[1]))
    low, high = float(logp.min()), float(logp.max())
    scale = (high - low) / 255.0
    weights = np.rint((logp - low) / scale).astype(np.uint8)
    return weights, low, scale


def _npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def build_meta(
    classes: Sequence[str],
    weights: bytes,
    offset: float,
    scale: float,
    temperature: float,
    corpus: Mapping[str, Sequence[str]],
) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "classes": list(classes),
        "orders": list(ORDERS),
        "buckets": BUCKETS,
        "hash": "crc32(utf-8 n-gram) mod buckets over polydeid.detect.langid.normalise(text)",
        "offset": offset,
        "scale": scale,
        "weights_sha256": hashlib.sha256(weights).hexdigest(),
        "fusion": {
            "nb_weight": NB_WEIGHT,
            "py3_floor": PY3_FLOOR,
            "temperature": temperature,
            "proxies": {k: list(v) for k, v in PROXIES.items()},
            "py3langid": "0.4.0",
        },
        "training": {
            "script": "python -m polydeid.train.langid",
            "seed": TRAIN_SEED,
            "per_language": PER_LANGUAGE,
            "template_renders": RENDERS,
            "alpha": ALPHA,
            "temperature_fitted_on": f"synthetic dev split, seed {DEV_SEED}",
            "characters": {lang: sum(len(t) for t in corpus[lang]) for lang in classes},
        },
        "sources": [
            "sentence templates and vocabularies of locales/languages/*/synth.toml "
            "(written by polydeid contributors)",
            "tests/fixtures/clinical_facts/*.jsonl (written by polydeid contributors)",
            "synthetic documents from polydeid.synth.generate (seeded; names and places "
            "from the packs' pools, removed before training)",
        ],
        "licence": "Apache-2.0",
    }


def fit_temperature(identifier: LanguageIdentifier, dev: Mapping[str, Sequence[str]]) -> float:
    """The temperature with the least log-loss on ``dev`` (a fixed grid: deterministic)."""
    classes = identifier.model.classes
    scores, gold = [], []
    for lang, texts in sorted(dev.items()):
        for text in texts:
            scores.append(identifier.scores(text))
            gold.append(classes.index(lang))
    matrix, truth = np.array(scores), np.array(gold)
    best, best_loss = 1.0, float("inf")
    for temperature in np.round(np.exp(np.linspace(np.log(0.05), np.log(50.0), 61)), 4):
        z = matrix / temperature
        z = z - z.max(axis=1, keepdims=True)
        log_probs = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        loss = float(-log_probs[np.arange(len(truth)), truth].mean())
        if loss < best_loss - 1e-12:
            best, best_loss = float(temperature), loss
    return best


def train(out: Path, per_language: int = PER_LANGUAGE) -> NgramModel:
    """Build the model from the sources and write it to ``out``."""
    started = time.perf_counter()
    corpus = training_corpus(per_language)
    classes = sorted(corpus)
    weights, offset, scale = quantise(fit_counts(corpus, classes))
    data = _npy_bytes(weights)
    meta = build_meta(classes, data, offset, scale, 1.0, corpus)
    provisional = NgramModel._build(meta, data)
    dev = synthetic_texts(15, DEV_SEED, "dev", formats=PROSE_FORMATS, blank=False)
    dev_sentences = {lang: sentences(texts, 20) for lang, texts in dev.items()}
    meta["fusion"]["temperature"] = fit_temperature(LanguageIdentifier(provisional), dev_sentences)
    out.mkdir(parents=True, exist_ok=True)
    (out / WEIGHTS_FILE).write_bytes(data)
    text = json.dumps(meta, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    (out / META_FILE).write_text(text, encoding="utf-8")
    print(
        f"langid: {len(classes)} languages, {sum(map(len, corpus.values()))} texts, "
        f"temperature {meta['fusion']['temperature']}, {len(data)} bytes "
        f"in {time.perf_counter() - started:.1f} s -> {out}",
        file=sys.stderr,
    )
    return NgramModel.load(out)


# --------------------------------------------------------------------------------------------
# Measurement


def py3langid_alone() -> Any:
    """py3langid restricted to the packs' languages it knows (the baseline)."""
    from polydeid.detect.langid import _load_py3langid, py3langid_languages

    identifier = _load_py3langid()
    identifier.set_languages(sorted(py3langid_languages()))
    return identifier


def accuracy(predict: Any, texts: Sequence[str], lang: str) -> tuple[float, Counter[str]]:
    found = Counter(predict(t) for t in texts)
    return (found[lang] / len(texts) if texts else float("nan")), found


def evaluate(model_dir: Path) -> dict[str, Any]:
    """Accuracy per language of py3langid alone, our n-gram model alone and the combined
    identifier (with its defaults: an undetermined sentence counts as wrong), speed, size."""
    model = NgramModel.load(model_dir)
    identifier = LanguageIdentifier(model)
    alone = LanguageIdentifier(model, use_py3langid=False)
    baseline = py3langid_alone()
    systems = {
        "py3langid": lambda t: baseline.classify(t)[0],
        "ngram": lambda t: next(iter(alone.probabilities(t))),
        "combined": lambda t: identifier.identify(t).lang,
    }
    sets = {lang: masakhaner_sentences(lang) for lang in MASAKHANER}
    report: dict[str, Any] = {
        "masakhaner": _measure(systems, {k: v for k, v in sets.items() if v}),
        "synthetic": _measure(systems, heldout_sentences()),
    }
    every = [t for texts in heldout_sentences().values() for t in texts]
    started = time.perf_counter()
    for text in every:
        identifier.identify(text)
    report["sentences_per_second"] = round(len(every) / (time.perf_counter() - started), 1)
    report["model_bytes"] = sum((model_dir / f).stat().st_size for f in (WEIGHTS_FILE, META_FILE))
    return report


def _measure(systems: Mapping[str, Any], sets: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for lang, texts in sorted(sets.items()):
        row: dict[str, Any] = {"sentences": len(texts)}
        for name, predict in systems.items():
            share, found = accuracy(predict, texts, lang)
            row[name] = round(share, 3)
            row[f"{name}_errors"] = {str(k): v for k, v in found.most_common() if k != lang}
        out[lang] = row
    return out


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m polydeid.train.langid", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--out", type=Path, default=MODEL_DIR, help="model folder")
    parser.add_argument("--per-language", type=int, default=PER_LANGUAGE)
    parser.add_argument("--evaluate", action="store_true", help="measure the model afterwards")
    parser.add_argument("--evaluate-only", action="store_true", help="measure, do not train")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if not args.evaluate_only:
        train(args.out, args.per_language)
    if args.evaluate or args.evaluate_only:
        print(json.dumps(evaluate(args.out), ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
