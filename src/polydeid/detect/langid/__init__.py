"""Offline language identification over polydeid's languages, overridable by an explicit one.

``identify(text)`` returns a :class:`LanguageGuess`: the most likely of polydeid's canonical
language codes, its probability and the runners-up. Two naive Bayes models are combined:

* **py3langid** (pinned; its model ships in the wheel), restricted to the packs' languages it
  knows — every one but Dholuo (``luo``);
* **our own character n-gram model** over all the packs' languages (``langid.npy``, with
  ``langid.json`` describing it), trained by ``python -m polydeid.train.langid`` only on text
  polydeid's contributors wrote: the sentence templates and vocabularies of ``synth.toml``,
  the clinical-facts fixtures, and synthetic documents from :mod:`polydeid.synth.generate`.

The combined score of a language is ``nb_weight`` × our model's log-likelihood plus the log of
py3langid's probability (floored, so that neither model alone can veto). A language py3langid
lacks takes, as its py3langid term, the largest probability among the languages py3langid
mistakes it for (``proxies`` in ``langid.json``: Dholuo → Kiswahili, Luganda, Kinyarwanda,
English); our model then tells them apart. Probabilities are the softmax of the combined
scores divided by a temperature fitted on synthetic development text.

Fail closed: text with fewer than :data:`MIN_LETTERS` letters, or whose best language falls
below :data:`MIN_CONFIDENCE`, is *undetermined* (``lang`` is None, ``reason`` says why) — the
caller must then name the language. A missing, altered or malformed model file raises
:class:`~polydeid.core.errors.DetectorUnavailableError`, never a silent fallback.

Mixed text (code-mixed Kiswahili–English notes, say) gets its dominant language: the one with
the most evidence over the whole text, unless most of the text's letters lie in segments
(sentences and lines of at least :data:`SEGMENT_LETTERS` letters) confidently in another
language — the code-mixing languages' training text holds English words, so a little Kiswahili
would otherwise outweigh much English. ``mixture`` gives each language's share of the letters,
``alternatives`` the runners-up with their probabilities.
Texts longer than :data:`MAX_CHARS` are judged on evenly spaced parts of that total length.
No result or error ever carries the text itself.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import unicodedata
import zlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import regex

from polydeid.core.errors import DetectorUnavailableError, RecordError
from polydeid.locales import canonical_language, languages

MODEL_DIR = Path(__file__).parent
WEIGHTS_FILE = "langid.npy"
META_FILE = "langid.json"
FORMAT = "polydeid-langid-nb/1"

#: Fewest letters to judge a text by; shorter texts are undetermined.
MIN_LETTERS = 20
#: Least probability of the best language; below it the text is undetermined.
MIN_CONFIDENCE = 0.5
#: Longest text analysed whole; longer texts are sampled in evenly spaced parts.
MAX_CHARS = 20_000
_PARTS = 8
#: Runners-up reported in ``alternatives``.
ALTERNATIVES = 3
#: Mixed text: least letters of a segment, least probability for a segment to count.
SEGMENT_LETTERS = 40
SEGMENT_CONFIDENCE = 0.9

TOO_SHORT = "too_short"
UNCERTAIN = "uncertain"

_LETTER = regex.compile(r"\p{L}")
_SEGMENT_END = regex.compile(r"(?<=[.!?;。！？؟।።])\s+|\n+")
_NOT_WORD = regex.compile(r"[^\p{L}\p{M}']+")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})


# --------------------------------------------------------------------------------------------
# Features (shared with the training script)


def normalise(text: str) -> str:
    """Lower-cased words of letters, marks and apostrophes, space-separated and space-padded."""
    text = unicodedata.normalize("NFC", text).lower().translate(_APOSTROPHES)
    return " " + " ".join(_NOT_WORD.sub(" ", text).split()) + " "


def ngram_counts(
    text: str, buckets: int, orders: Sequence[int] = (1, 2, 3, 4)
) -> tuple[np.ndarray, np.ndarray]:
    """Hashed character n-grams of ``text``: (bucket ids, counts), CRC-32 modulo ``buckets``."""
    padded = normalise(text)
    grams: Counter[str] = Counter()
    for n in orders:
        grams.update(padded[i : i + n] for i in range(len(padded) - n + 1))
    for n in orders:
        grams.pop(" " * n, None)
    mask = buckets - 1
    ids = np.fromiter(
        (zlib.crc32(g.encode("utf-8")) & mask for g in grams), dtype=np.int64, count=len(grams)
    )
    counts = np.fromiter(grams.values(), dtype=np.float64, count=len(grams))
    return ids, counts


def count_letters(text: str) -> int:
    return len(_LETTER.findall(text))


def sample_text(text: str, limit: int = MAX_CHARS, parts: int = _PARTS) -> str:
    """``text`` itself when short enough, else ``parts`` evenly spaced slices, ``limit`` in all."""
    if len(text) <= limit:
        return text
    size = limit // parts
    step = (len(text) - size) / (parts - 1)
    return "\n".join(text[round(i * step) : round(i * step) + size] for i in range(parts))


def segments(text: str, least: int = SEGMENT_LETTERS) -> list[tuple[str, int]]:
    """Sentences and lines of ``text`` joined until each has ``least`` letters: (text, letters).

    A remainder with fewer than :data:`MIN_LETTERS` letters joins the last segment.
    """
    out: list[tuple[str, int]] = []
    pieces: list[str] = []
    letters = 0
    for piece in _SEGMENT_END.split(text):
        n = count_letters(piece)
        if not n:
            continue
        pieces.append(piece)
        letters += n
        if letters >= least:
            out.append((" ".join(pieces), letters))
            pieces, letters = [], 0
    if pieces:
        if out and letters < MIN_LETTERS:
            last, n = out.pop()
            out.append((" ".join([last, *pieces]), n + letters))
        else:
            out.append((" ".join(pieces), letters))
    return out


# --------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True, slots=True)
class LanguageGuess:
    """The identified language (None when undetermined), its probability and the runners-up.

    ``alternatives`` are (language, probability) pairs of the next most likely languages, best
    first (when undetermined: the most likely ones); ``reason`` is :data:`TOO_SHORT` or
    :data:`UNCERTAIN` when ``lang`` is None; ``mixture`` is each language's share of the
    letters, by segment (empty for one segment).
    """

    lang: str | None
    confidence: float
    alternatives: tuple[tuple[str, float], ...] = ()
    letters: int = 0
    reason: str | None = None
    mixture: tuple[tuple[str, float], ...] = ()

    @property
    def determined(self) -> bool:
        return self.lang is not None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"lang": self.lang, "confidence": round(self.confidence, 4)}
        if self.reason:
            out["reason"] = self.reason
        out["alternatives"] = [
            {"lang": k, "score": float(f"{v:.3g}")} for k, v in self.alternatives
        ]
        if len(self.mixture) > 1:
            out["mixture"] = {k: round(v, 4) for k, v in self.mixture}
        return out


# --------------------------------------------------------------------------------------------
# Our model


@dataclass(frozen=True, slots=True)
class NgramModel:
    """Multinomial naive Bayes over hashed character n-grams, log-probabilities in uint8."""

    classes: tuple[str, ...]
    orders: tuple[int, ...]
    buckets: int
    weights: np.ndarray  # (classes, buckets) uint8; log p = offset + scale * weight
    offset: float
    scale: float
    nb_weight: float
    py3_floor: float
    temperature: float
    proxies: Mapping[str, tuple[str, ...]]
    meta: Mapping[str, Any]

    def __repr__(self) -> str:
        return f"NgramModel(classes={len(self.classes)}, buckets={self.buckets})"

    @classmethod
    def load(cls, folder: str | Path | None = None) -> NgramModel:
        """The model in ``folder`` (default: the shipped one); raises when anything is off."""
        folder = Path(folder) if folder is not None else MODEL_DIR
        meta_path, weights_path = folder / META_FILE, folder / WEIGHTS_FILE
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            data = weights_path.read_bytes()
        except (OSError, ValueError) as exc:
            raise DetectorUnavailableError(
                f"language identifier model unreadable ({type(exc).__name__}) in {folder}"
            ) from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise DetectorUnavailableError(f"{meta_path} is not a {FORMAT} model description")
        if hashlib.sha256(data).hexdigest() != meta.get("weights_sha256"):
            raise DetectorUnavailableError(
                f"language identifier weights {weights_path} fail their checksum"
            )
        try:
            return cls._build(meta, data)
        except (KeyError, TypeError, ValueError, AttributeError, OSError, EOFError) as exc:
            raise DetectorUnavailableError(
                f"language identifier model malformed ({type(exc).__name__}) in {folder}"
            ) from None

    @classmethod
    def _build(cls, meta: dict[str, Any], data: bytes) -> NgramModel:
        weights = np.load(io.BytesIO(data), allow_pickle=False)
        classes = tuple(str(c) for c in meta["classes"])
        buckets = int(meta["buckets"])
        known = set(languages())
        if not classes or len(set(classes)) != len(classes) or not set(classes) <= known:
            raise ValueError("classes")
        if buckets <= 0 or buckets & (buckets - 1):
            raise ValueError("buckets")
        if weights.dtype != np.uint8 or weights.shape != (len(classes), buckets):
            raise ValueError("weights shape")
        fusion = meta["fusion"]
        proxies = {str(k): tuple(str(x) for x in v) for k, v in fusion["proxies"].items()}
        if not all(k in classes and v and set(v) <= set(classes) for k, v in proxies.items()):
            raise ValueError("proxies")
        orders = tuple(int(n) for n in meta["orders"])
        if not orders or not all(1 <= n <= 8 for n in orders):
            raise ValueError("orders")
        values = [float(meta["offset"]), float(meta["scale"]), float(fusion["nb_weight"])]
        values += [float(fusion["py3_floor"]), float(fusion["temperature"])]
        if not all(math.isfinite(v) for v in values) or min(values[1:]) <= 0:
            raise ValueError("parameters")
        weights.setflags(write=False)
        return cls(
            classes=classes,
            orders=orders,
            buckets=buckets,
            weights=weights,
            offset=values[0],
            scale=values[1],
            nb_weight=values[2],
            py3_floor=values[3],
            temperature=values[4],
            proxies=proxies,
            meta=meta,
        )

    def log_likelihood(self, text: str) -> tuple[np.ndarray, float]:
        """Per-class log-likelihood of ``text``'s n-grams, and how many n-grams there were."""
        ids, counts = ngram_counts(text, self.buckets, self.orders)
        if not len(ids):
            return np.zeros(len(self.classes)), 0.0
        total = float(counts.sum())
        quantised = self.weights[:, ids].astype(np.float64) @ counts
        return self.offset * total + self.scale * quantised, total


# --------------------------------------------------------------------------------------------
# py3langid


def _load_py3langid() -> Any:
    """A fresh py3langid model with normalised probabilities (its data ships in its wheel)."""
    try:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier
    except ImportError:  # pragma: no cover - py3langid is a dependency
        raise DetectorUnavailableError("language identification needs py3langid") from None
    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


@cache
def _py3langid_labels() -> frozenset[str]:
    return frozenset(_load_py3langid().labels)


def py3langid_languages() -> frozenset[str]:
    """The packs' languages py3langid knows (canonical codes)."""
    return frozenset(code for code in languages() if code in _py3langid_labels())


# --------------------------------------------------------------------------------------------
# The combined identifier


class LanguageIdentifier:
    """Our n-gram model and py3langid combined over the model's languages."""

    def __init__(self, model: NgramModel, *, use_py3langid: bool = True) -> None:
        self.model = model
        known = _py3langid_labels() if use_py3langid else frozenset()
        self._py3_langs = tuple(c for c in model.classes if c in known)
        self._py3 = None
        if self._py3_langs:
            self._py3 = _load_py3langid()
            self._py3.set_languages(list(self._py3_langs))
        missing = [
            c
            for c in model.classes
            if c not in known and not set(model.proxies.get(c, ())) <= set(self._py3_langs)
        ]
        if self._py3 is not None and missing:
            raise DetectorUnavailableError(
                f"language identifier: no py3langid stand-in for {', '.join(missing)}"
            )
        index = {c: i for i, c in enumerate(model.classes)}
        self._py3_index = np.array([index[c] for c in self._py3_langs], dtype=np.int64)
        self._proxies = [
            (index[c], [self._py3_langs.index(p) for p in model.proxies[c]])
            for c in model.classes
            if self._py3 is not None and c not in known and c in model.proxies
        ]

    def __repr__(self) -> str:
        return f"LanguageIdentifier({self.model!r}, py3langid={len(self._py3_langs)} languages)"

    def scores(self, text: str) -> np.ndarray:
        """Combined scores (before the temperature) of every class for ``text``."""
        model = self.model
        sample = sample_text(text)
        nb, _ = model.log_likelihood(sample)
        combined = model.nb_weight * nb
        if self._py3 is not None:
            floor = math.log(model.py3_floor)
            probs = dict(self._py3.rank(sample))
            p = np.array([probs.get(c, 0.0) for c in self._py3_langs], dtype=np.float64)
            py3 = np.full(len(model.classes), floor)
            py3[self._py3_index] = np.log(np.maximum(p, model.py3_floor))
            for target, sources in self._proxies:
                py3[target] = math.log(max(float(p[sources].max()), model.py3_floor))
            combined = combined + py3
        return combined

    def probabilities(self, text: str) -> dict[str, float]:
        """Every class's probability for ``text``, best first."""
        scores = self.scores(text) / self.model.temperature
        scores = np.exp(scores - scores.max())
        scores /= scores.sum()
        order = np.argsort(-scores, kind="stable")
        return {self.model.classes[i]: float(scores[i]) for i in order}

    def identify(
        self,
        text: str,
        *,
        min_letters: int = MIN_LETTERS,
        min_confidence: float = MIN_CONFIDENCE,
    ) -> LanguageGuess:
        letters = count_letters(text)
        if letters == 0:
            return LanguageGuess(None, 0.0, (), 0, TOO_SHORT)
        sample = sample_text(text)
        ranked = list(self.probabilities(sample).items())
        if letters < min_letters:
            return LanguageGuess(
                None, ranked[0][1], tuple(ranked[:ALTERNATIVES]), letters, TOO_SHORT
            )
        best, confidence = ranked[0]
        parts = self._segment_probabilities(sample)
        mixture = _shares(parts)
        if mixture:
            share = dict(mixture)
            top, top_share = mixture[0]
            # The whole text's evidence favours a code-mixing language (Kiswahili, Luganda …
            # absorb English words in training): the segments overrule it when most letters
            # are confidently in another language.
            if top != best and top_share >= 0.5 and share.get(best, 0.0) < 0.5:
                total = sum(n for _, n in parts)
                mean = {c: sum(probs[c] * n for probs, n in parts) / total for c, _ in ranked}
                others = sorted(
                    ((k, v) for k, v in mean.items() if k != top), key=lambda kv: -kv[1]
                )
                best, confidence = top, mean[top]
                ranked = [(best, confidence), *others]
        rest = tuple((k, v) for k, v in ranked if k != best)[:ALTERNATIVES]
        if confidence < min_confidence:
            return LanguageGuess(
                None, confidence, tuple(ranked[:ALTERNATIVES]), letters, UNCERTAIN, mixture
            )
        return LanguageGuess(best, confidence, rest, letters, None, mixture)

    def mixture(self, text: str) -> tuple[tuple[str, float], ...]:
        """Shares of ``text``'s letters in each language, by segment; () for one segment.

        Segments are sentences and lines joined until each has :data:`SEGMENT_LETTERS`
        letters; a segment counts for its language when that language's probability is at least
        :data:`SEGMENT_CONFIDENCE` (the shares then sum to less than 1).
        """
        return _shares(self._segment_probabilities(sample_text(text)))

    def _segment_probabilities(self, text: str) -> list[tuple[dict[str, float], int]]:
        parts = segments(text)
        if len(parts) < 2:
            return []
        return [(self.probabilities(part), n) for part, n in parts]


def _shares(parts: Sequence[tuple[dict[str, float], int]]) -> tuple[tuple[str, float], ...]:
    total = sum(n for _, n in parts)
    shares: Counter[str] = Counter()
    for probs, n in parts:
        lang, p = next(iter(probs.items()))
        if p >= SEGMENT_CONFIDENCE:
            shares[lang] += n / total
    return tuple(sorted(shares.items(), key=lambda kv: (-kv[1], kv[0])))


@cache
def default_identifier() -> LanguageIdentifier:
    """The shipped model with py3langid (loaded once); raises when it cannot load."""
    return LanguageIdentifier(NgramModel.load())


def identify(
    text: str,
    *,
    min_letters: int = MIN_LETTERS,
    min_confidence: float = MIN_CONFIDENCE,
) -> LanguageGuess:
    """The language of ``text`` among polydeid's, or an undetermined guess (``lang`` None)."""
    return default_identifier().identify(
        text, min_letters=min_letters, min_confidence=min_confidence
    )


def resolve_language(text: str, lang: str | None = None, *, location: str | None = None) -> str:
    """``lang`` (canonical) when given and not ``auto``, else the identified language.

    Raises :class:`RecordError` (located at ``location``, never quoting the text) when the
    language cannot be determined: the caller must then name it.
    """
    if lang and lang.strip().lower() != "auto":
        return canonical_language(lang)
    guess = identify(text)
    if guess.lang is None:
        raise RecordError(undetermined_message(guess), location=location)
    return guess.lang


def undetermined_message(guess: LanguageGuess) -> str:
    """Why a language was not determined, in words (no text)."""
    if guess.reason == TOO_SHORT:
        return (
            f"language undetermined: {guess.letters} letter(s), fewer than {MIN_LETTERS}; "
            "pass --lang"
        )
    return (
        f"language undetermined: best guess below {MIN_CONFIDENCE:.0%} confidence "
        f"({guess.confidence:.2f}); pass --lang"
    )
