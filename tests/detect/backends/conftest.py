"""Tiny Hugging Face checkpoints for backend tests, built locally (nothing is downloaded).

A checkpoint is a BERT token classifier (hidden 32, 2 layers, seeded random weights) with a
tokenizer trained here with ``tokenizers`` and wrapped as ``PreTrainedTokenizerFast``, saved
with ``save_pretrained``. Random weights predict noise, so :func:`build_token_classifier`
makes the encoder a pass-through (attention and feed-forward outputs zeroed, position and type
embeddings zeroed: every layer is then LayerNorm of its input) and gives each token an input
embedding that is one row of a Hadamard matrix; the classifier's rows are those patterns, so a
token's label is exactly the one chosen for it, with probability ~1 — or a chosen
probability for "weak" tokens, whose embedding mixes two patterns.

Other backend tests reuse the builders through the ``hf_builders`` fixture (a namespace
with ``train_tokenizer``, ``build_token_classifier``, ``word_ids``, ``own_first_token``,
``CORPUS``, …); this module imports nothing heavy, and only the fixtures that build models
skip where torch/transformers/tokenizers are absent.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

HIDDEN = 32
SCALE = 1.0  # logit of the matching label: SCALE * HIDDEN

#: Words the tokenizers are trained on (Luganda / Kiswahili / Kinyarwanda / Dholuo-flavoured
#: clinical filler).
_CORPUS_TEXT = """
omulwadde yazze mu ddwaliro ng'alina omusujja n'okukolola era musawo yamukebedde bulungi
mgonjwa alifika kliniki leo akiwa na homa kali na kikohozi daktari alimpima akapewa dawa
umurwayi yaje kwa muganga afite umuriro n'inkorora bamuhaye imiti arataha neza
jatuo nobiro e osiptal ka en gi liet kod ahonda jathieth nonone maber kendo nomiye yath
patient came to the clinic today with fever and cough doctor examined and gave medicine
visit follow up review ward bed note plan blood pressure normal temperature high
wiki ijayo siku tatu mwezi mwaka saa asubuhi jioni usiku kesho jana
omwezi olunaku wiiki ejja ku makya akawungeezi ekiro enkya jjo
ukwezi umunsi icyumweru gitaha mu gitondo nimugoroba ejo
dwe odiechieng' juma mabiro okinyi odhiambo otieno kiny nyoro
"""
CORPUS = _CORPUS_TEXT.split()

#: Entity-like words, frequent in training, so each has a first sub-token of its own …
NAMES = ["Nakato", "Namu", "Achieng", "Mulago", "Kampala", "Wekesa", "Kisumu", "Ng'ang'a"]
#: … and words never seen in training, which therefore split into several sub-tokens, the
#: first of them a frequent name's ("Namu", "Nakato"). (Tokenizer training breaks ties
#: differently from run to run; tests rely only on what holds whatever the ties.)
UNSEEN = ["Namukwaya", "Nakatonde"]


def train_tokenizer(
    words: Sequence[str] = (),
    *,
    kind: str = "wordpiece",
    vocab_size: int = 400,
    model_max_length: int = 512,
) -> Any:
    """A fast tokenizer trained on ``words`` (default: :data:`CORPUS` and :data:`NAMES`).

    ``kind="wordpiece"``: BERT style (``[CLS] … [SEP]``, ``##`` continuations);
    ``kind="unigram"``: sentencepiece style (``<s> … </s>``, ``▁`` word starts, like XLM-R).
    """
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from tokenizers import trainers as tr
    from transformers import PreTrainedTokenizerFast

    text = list(words) or [*CORPUS * 5, *NAMES * 20]
    lines = [" ".join(text[i : i + 12]) for i in range(0, len(text), 12)]
    if kind == "wordpiece":
        specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.NFC()
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.train_from_iterator(
            lines, tr.WordPieceTrainer(vocab_size=vocab_size, special_tokens=specials)
        )
        tok.decoder = decoders.WordPiece()
        bos, eos, pad, unk = "[CLS]", "[SEP]", "[PAD]", "[UNK]"
        extra = {"cls_token": bos, "sep_token": eos, "mask_token": "[MASK]"}
    elif kind == "unigram":
        specials = ["<pad>", "<unk>", "<s>", "</s>"]
        tok = Tokenizer(models.Unigram())
        tok.normalizer = normalizers.NFC()
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        tok.train_from_iterator(
            lines,
            tr.UnigramTrainer(vocab_size=vocab_size, special_tokens=specials, unk_token="<unk>"),
        )
        tok.decoder = decoders.Metaspace()
        bos, eos, pad, unk = "<s>", "</s>", "<pad>", "<unk>"
        extra = {"bos_token": bos, "eos_token": eos, "cls_token": bos, "sep_token": eos}
    else:
        raise ValueError(kind)
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        pair=f"{bos} $A {eos} $B {eos}",
        special_tokens=[(bos, tok.token_to_id(bos)), (eos, tok.token_to_id(eos))],
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token=unk,
        pad_token=pad,
        model_max_length=model_max_length,
        **extra,
    )


def word_ids(tokenizer: Any, word: str) -> list[int]:
    """Token ids of ``word`` read on its own as one pre-split word."""
    return list(tokenizer([word], is_split_into_words=True, add_special_tokens=False)["input_ids"])


def first_tokens(tokenizer: Any, words: Sequence[str]) -> dict[str, int]:
    """First sub-token id of each word."""
    return {w: word_ids(tokenizer, w)[0] for w in words}


def own_first_token(tokenizer: Any, word: str) -> bool:
    """Whether ``word`` starts with a token of its own, not a bare word-start marker (``▁``)
    that a sentencepiece-style tokenizer puts before many words (the pattern trick gives a
    label per token, so such a token cannot carry one word's label)."""
    first = tokenizer.convert_ids_to_tokens(word_ids(tokenizer, word)[:1])[0]
    return first not in {"\u2581", "[UNK]", "<unk>"}


def _hadamard(n: int) -> Any:
    import torch

    h = torch.ones((1, 1))
    while h.shape[0] < n:
        h = torch.cat([torch.cat([h, h], 1), torch.cat([h, -h], 1)], 0)
    return h


def build_token_classifier(
    folder: Path,
    labels: Sequence[str],
    tokenizer: Any,
    *,
    word_labels: Mapping[str, str] = {},
    weak_words: Mapping[str, tuple[str, float]] = {},
    every_subtoken: bool = False,
    outside: str = "O",
    seed: int = 0,
    config_extra: Mapping[str, Any] | None = None,
) -> Path:
    """Save a tiny BERT token classifier with labels ``labels`` and the tokenizer to ``folder``.

    ``word_labels``: word → tag its first sub-token gets (every other token: ``outside``);
    with ``every_subtoken`` the word's other sub-tokens get the ``I-`` form of the tag (what
    the aggregating pipeline needs to keep a word whole). ``weak_words``: word → (tag, p): the
    first sub-token gets ``tag`` with probability ~``p`` (the rest mostly ``outside``).
    """
    import torch
    from transformers import BertConfig, BertForTokenClassification

    index = {label: i for i, label in enumerate(labels)}
    token_tag: dict[int, tuple[str, float]] = {}

    def assign(token: int, tag: str, p: float = 1.0) -> None:
        if token in token_tag and token_tag[token] != (tag, p):
            raise ValueError(f"token {token} would carry two labels: pick other test words")
        token_tag[token] = (tag, p)

    for word in [*word_labels, *weak_words]:
        if not own_first_token(tokenizer, word):
            raise ValueError("a test word starts with a shared token: pick another word")
    for word, tag in word_labels.items():
        ids = word_ids(tokenizer, word)
        assign(ids[0], tag)
        if every_subtoken:
            inside = "I-" + tag.split("-", 1)[1] if "-" in tag else tag
            for t in ids[1:]:
                assign(t, inside)
    for word, (tag, p) in weak_words.items():
        assign(word_ids(tokenizer, word)[0], tag, p)

    used = [outside, *sorted({t for t, _ in token_tag.values()} - {outside})]
    if len(used) >= HIDDEN:
        raise ValueError("too many distinct labels in use for the pattern trick")
    patterns = _hadamard(HIDDEN)[1 : len(used) + 1]  # zero mean, unit variance, orthogonal
    pattern = {tag: patterns[i] for i, tag in enumerate(used)}

    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=HIDDEN,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
        id2label=dict(enumerate(labels)),
        label2id=dict(index),
        pad_token_id=tokenizer.pad_token_id,
        **(config_extra or {}),
    )
    torch.manual_seed(seed)
    model = BertForTokenClassification(config)
    with torch.no_grad():
        emb = model.bert.embeddings
        emb.position_embeddings.weight.zero_()
        emb.token_type_embeddings.weight.zero_()
        emb.word_embeddings.weight.copy_(pattern[outside].expand(config.vocab_size, HIDDEN))
        for token, (tag, p) in token_tag.items():
            if p >= 1.0:
                vec = pattern[tag]
            else:
                # logits: tag = 32 cos(a), outside = 32 sin(a); p = sigmoid(difference)
                diff = math.log(p / (1 - p)) / (SCALE * HIDDEN)
                a = math.pi / 4 - math.asin(diff / math.sqrt(2))
                vec = math.cos(a) * pattern[tag] + math.sin(a) * pattern[outside]
            emb.word_embeddings.weight[token] = vec
        for layer in model.bert.encoder.layer:
            layer.attention.output.dense.weight.zero_()
            layer.attention.output.dense.bias.zero_()
            layer.output.dense.weight.zero_()
            layer.output.dense.bias.zero_()
        model.classifier.weight.zero_()
        model.classifier.bias.zero_()
        for tag in used:
            model.classifier.weight[index[tag]] = SCALE * pattern[tag]
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def east_africa_tags() -> list[str]:
    """The 29 tags of the East African scheme: O, then B-/I- of its 14 categories."""
    from polydeid.core.taxonomy import scheme

    names = list(scheme("east_africa").mapping)
    return ["O", *(f"{p}-{n}" for n in names for p in ("B", "I"))]


def pii34_tags() -> list[str]:
    """O and B-/I- of the 34 types of the ``pii34`` scheme (69 tags)."""
    from polydeid.core.taxonomy import scheme

    names = list(scheme("pii34").mapping)
    return ["O", *(f"{p}-{n}" for n in names for p in ("B", "I"))]


#: What the word-grid test models say (first sub-token of each word).
GRID_WORDS = {
    "Nakato": "B-PERSON",
    "Namukwaya": "I-PERSON",
    "Achieng": "B-PERSON",
    "Ng'ang'a": "B-PERSON",
    "Mulago": "B-LOCATION_FACILITY",
    "Kampala": "B-LOCATION_VILLAGE",
}
GRID_WEAK = {"Wekesa": ("B-PERSON", 0.55)}

#: What the pipeline test model says (first sub-token of each word: the detector widens a
#: sub-word entity to its whole word).
PIPELINE_WORDS = {
    "Nakato": "B-PERSON_NAME",
    "Namukwaya": "I-PERSON_NAME",
    "Achieng": "B-PERSON_NAME",
    "Kampala": "B-LOCATION",
    "Kisumu": "B-POSTAL_ADDRESS",
    "homa": "B-HEALTH_DATA",
}
PIPELINE_WEAK = {"Wekesa": ("B-PERSON_NAME", 0.55)}

ROUTER = {
    "name": "eaclin-tiny",
    "revision": "v1.2.0",
    "max_tokens": 256,
    "default_threshold": 0.5,
    "thresholds": {"rw": 0.6},
    "languages": {
        "lg": "lug",
        "sw": {"subfolder": "swa"},
        "rw": "kin",
        "luo": {"subfolder": "luo", "thresholds": {"PERSON": 0.9}},
    },
}


@pytest.fixture(scope="session")
def hf_builders() -> SimpleNamespace:
    """The builders, for other backend tests."""
    _need_hf()
    return SimpleNamespace(
        CORPUS=CORPUS,
        NAMES=NAMES,
        UNSEEN=UNSEEN,
        train_tokenizer=train_tokenizer,
        build_token_classifier=build_token_classifier,
        first_tokens=first_tokens,
        own_first_token=own_first_token,
        word_ids=word_ids,
        east_africa_tags=east_africa_tags,
        pii34_tags=pii34_tags,
        ROUTER=ROUTER,
        GRID_WORDS=GRID_WORDS,
        PIPELINE_WORDS=PIPELINE_WORDS,
    )


def _need_hf() -> None:
    """Skip (not fail) where the optional Hugging Face stack is absent; the conftest itself
    imports nothing heavy, so other backend tests in this folder do not depend on it."""
    for module in ("torch", "transformers", "tokenizers"):
        pytest.importorskip(module)


@pytest.fixture(scope="session")
def wordpiece() -> Any:
    _need_hf()
    return train_tokenizer(kind="wordpiece")


@pytest.fixture(scope="session")
def hf_wordgrid_dir(tmp_path_factory: pytest.TempPathFactory, wordpiece: Any) -> Path:
    """The East African layout: router_config.json and lug/ swa/ kin/ luo/ checkpoints
    (29 east_africa tags; ``swa`` uses a sentencepiece-style Unigram tokenizer, and knows only
    the names that start with a token of their own there)."""
    root = tmp_path_factory.mktemp("hf-wordgrid")
    unigram = train_tokenizer(kind="unigram", vocab_size=300)
    for seed, sub in enumerate(("lug", "swa", "kin", "luo")):
        tokenizer = unigram if sub == "swa" else wordpiece
        build_token_classifier(
            root / sub,
            east_africa_tags(),
            tokenizer,
            word_labels={w: t for w, t in GRID_WORDS.items() if own_first_token(tokenizer, w)},
            weak_words={w: t for w, t in GRID_WEAK.items() if own_first_token(tokenizer, w)},
            seed=seed,
        )
    (root / "router_config.json").write_text(json.dumps(ROUTER), "utf-8")
    return root


@pytest.fixture(scope="session")
def hf_pipeline_dir(tmp_path_factory: pytest.TempPathFactory, wordpiece: Any) -> Path:
    """A 34-type PII model (69 BIO tags) for the pipeline layout, with a ``_commit_hash``."""
    root = tmp_path_factory.mktemp("hf-pipeline") / "tiny-pii"
    build_token_classifier(
        root,
        pii34_tags(),
        wordpiece,
        word_labels=PIPELINE_WORDS,
        weak_words=PIPELINE_WEAK,
        seed=7,
    )
    config = json.loads((root / "config.json").read_text("utf-8"))
    config["_commit_hash"] = "0123456789abcdef0123456789abcdef01234567"
    (root / "config.json").write_text(json.dumps(config), "utf-8")
    return root
