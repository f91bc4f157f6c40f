"""The tagger's network for inference on CPU: the same computation in fewer, larger steps.

:class:`FastTagger` runs a ``transformers`` ``BertForTokenClassification`` (eval mode:
post-layer-norm BERT encoder, exact GELU, absolute positions from 0, token type 0) as a dozen
tensor operations a layer: one fused query-key-value product instead of three, the linear
weights held once in the compute precision (``torch.autocast`` casts float32 weights again on
every call), no dropout modules, output containers or per-call mask building. In ``bfloat16``
it does what autocast does with the reference model — matrix products and attention in
bfloat16; embeddings, residual sums, layer norms in float32 — and gives the same logits
(tested); in ``float32`` everything is float32.

It removes the Python and per-module overhead that a short text pays in full (timings:
``benchmarks/results/tagger_speed.md``). The weights are read once, when the
:class:`FastTagger` is built: it serves a loaded, fixed model, never one being trained.

In bfloat16 the linear weights are also laid out once in oneDNN's blocked format
(:func:`packed_products`) where this torch has oneDNN: a plain bfloat16 weight is laid out again
on every product, which costs a short input (a few dozen tokens) about as much as the product
itself. It is the same product with its sums taken in another order (a logit may differ by one
bfloat16 rounding step; the model card records the check on the development data). The product
is checked against ``F.linear`` when the tagger is built, and not used if it disagrees or is
missing."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

#: Largest difference allowed between the packed and the plain product of the build-time
#: check, relative to the largest output (a bfloat16 rounding step is 2**-8 of a value).
_PACK_TOLERANCE = 2**-6

#: ``transformers`` configuration values this implementation reproduces.
_SUPPORTED = {"model_type": "bert", "hidden_act": "gelu"}


def supports(model: Any) -> bool:
    """Whether ``model`` is a network :class:`FastTagger` computes exactly."""
    import torch

    config = getattr(model, "config", None)
    if config is None or any(getattr(config, k, None) != v for k, v in _SUPPORTED.items()):
        return False
    if getattr(config, "position_embedding_type", "absolute") != "absolute":
        return False
    bert = getattr(model, "bert", None)
    layers = getattr(getattr(bert, "encoder", None), "layer", None)
    if layers is None or not isinstance(getattr(model, "classifier", None), torch.nn.Linear):
        return False
    # dynamically quantised (int8) linear layers are another computation
    return all(type(m) is torch.nn.Linear for layer in layers for m in _linears(layer))


def _linears(layer: Any) -> tuple[Any, ...]:
    attention = layer.attention
    return (
        attention.self.query,
        attention.self.key,
        attention.self.value,
        attention.output.dense,
        layer.intermediate.dense,
        layer.output.dense,
    )


@dataclass(frozen=True)
class Products:
    """How the linear layers are computed: ``linear(x, pack(weight), bias)`` is
    ``F.linear(x, weight, bias)``."""

    linear: Callable[[Any, Any, Any], Any]
    pack: Callable[[Any], Any]
    packed: bool


def plain_products() -> Products:
    """``F.linear`` on the weights as they are."""
    import torch.nn.functional as F

    return Products(F.linear, lambda weight: weight, packed=False)


def packed_products() -> Products | None:
    """oneDNN's bfloat16 product on weights laid out once. None where this torch has no such
    product or it disagrees with the plain one on a random input."""
    import torch
    import torch.nn.functional as F

    if not torch.backends.mkldnn.is_available():
        return None
    ops = torch.ops.mkldnn
    try:
        reorder, product = ops._reorder_linear_weight, ops._linear_pointwise

        def pack(weight: Any) -> Any:
            return reorder(weight, None)

        def linear(x: Any, weight: Any, bias: Any) -> Any:
            return product(x, weight, bias, "none", [], "")

        generator = torch.Generator().manual_seed(0)
        weight, bias, probe = (
            torch.randn(shape, generator=generator).to(torch.bfloat16)
            for shape in ((48, 32), (48,), (2, 3, 32))
        )
        reference = F.linear(probe, weight, bias).float()
        gap = linear(probe, pack(weight), bias).float() - reference
    except (AttributeError, RuntimeError):
        return None
    agrees = bool(gap.abs().max() <= _PACK_TOLERANCE * reference.abs().max())
    return Products(linear, pack, packed=True) if agrees else None


def supports_config(config: Mapping[str, Any]) -> bool:
    """Whether a ``transformers`` configuration (``config.json``, read as it is) describes a
    network :class:`FastTagger` computes exactly, built from its weights alone."""
    if any(config.get(k) != v for k, v in _SUPPORTED.items()):
        return False
    return config.get("position_embedding_type", "absolute") == "absolute"


def state_keys(layers: int) -> tuple[str, ...]:
    """The names (``BertForTokenClassification``'s) of the tensors a network of ``layers``
    layers is computed from."""
    keys = [f"bert.embeddings.{name}" for name in _EMBEDDINGS]
    for i in range(layers):
        keys += [f"bert.encoder.layer.{i}.{name}.{part}" for name in _LAYER for part in _PARTS]
    return (*keys, "classifier.weight", "classifier.bias")


_EMBEDDINGS = (
    "word_embeddings.weight",
    "position_embeddings.weight",
    "token_type_embeddings.weight",
    "LayerNorm.weight",
    "LayerNorm.bias",
)
#: A layer's modules, in the order :class:`FastTagger` reads them.
_LAYER = (
    "attention.self.query",
    "attention.self.key",
    "attention.self.value",
    "attention.output.dense",
    "attention.output.LayerNorm",
    "intermediate.dense",
    "output.dense",
    "output.LayerNorm",
)
_PARTS = ("weight", "bias")


class Q4Rows:
    """A matrix held as Q4_0 blocks (a float16 scale and 32 four-bit codes each, the low
    nibbles first, ``blocks`` to a row), read by row: ``rows[ids]`` is the float32 rows of
    ``ids`` computed as the conversion computes the whole matrix
    (:func:`~polydeid.detect.tagger.encoder.dequantise_q4_0`: code − 8, times the scale), so
    they equal its rows bit for bit (tested) in an eighth of its memory."""

    def __init__(self, scales: Any, codes: Any) -> None:
        rows, blocks = scales.shape
        if tuple(codes.shape) != (rows, blocks, 16):
            raise ValueError(f"codes of shape {tuple(codes.shape)} for scales {(rows, blocks)}")
        self.scales, self.codes = scales, codes
        self.shape = (rows, blocks * 32)

    def __getitem__(self, ids: Any) -> Any:
        import torch

        codes = self.codes[ids]
        values = torch.cat((codes & 0x0F, codes >> 4), dim=-1).to(torch.float32)
        values -= 8.0
        values *= self.scales[ids].to(torch.float32).unsqueeze(-1)
        return values.flatten(-2)


class FastTagger:
    """Logits of a ``BertForTokenClassification`` for input ids and an attention mask."""

    def __init__(self, model: Any, precision: str) -> None:
        if not supports(model):
            raise ValueError("not a BERT token classifier this fast path computes exactly")
        config = model.config
        state = {k: v.detach() for k, v in model.state_dict().items()}
        self._build(
            state,
            int(config.num_attention_heads),
            len(model.bert.encoder.layer),
            float(config.layer_norm_eps),
            precision,
        )

    @classmethod
    def from_state(
        cls, state: Mapping[str, Any], config: Mapping[str, Any], layers: int, precision: str
    ) -> FastTagger:
        """The network of ``layers`` layers from its tensors (:func:`state_keys`; float32)
        and its configuration (``config.json``), without building a ``transformers`` model:
        the same computation on the same weights as ``FastTagger(model, precision)``."""
        if not supports_config(config):
            raise ValueError("not a BERT token classifier this fast path computes exactly")
        fast = cls.__new__(cls)
        fast._build(
            state,
            int(config["num_attention_heads"]),
            layers,
            float(config["layer_norm_eps"]),
            precision,
        )
        return fast

    def _build(
        self, state: Mapping[str, Any], heads: int, layers: int, eps: float, precision: str
    ) -> None:
        import torch

        self.precision = precision
        self.dtype = torch.bfloat16 if precision == "bfloat16" else torch.float32
        packed = packed_products() if self.dtype == torch.bfloat16 else None
        self.products = packed or plain_products()
        self.heads = heads
        embeddings = "bert.embeddings."
        self.word = state[embeddings + "word_embeddings.weight"]
        self.position = state[embeddings + "position_embeddings.weight"]
        self.token_type = state[embeddings + "token_type_embeddings.weight"][0]
        self.embedding_norm = self._norm(state, embeddings + "LayerNorm", eps)
        self.layers = []
        for i in range(layers):
            at = f"bert.encoder.layer.{i}."
            query, key, value, attention_out, norm1, intermediate, output, norm2 = (
                at + name for name in _LAYER
            )
            self.layers.append(
                (
                    self._fused(state, query, key, value),
                    self._linear(state, attention_out),
                    self._norm(state, norm1, eps),
                    self._linear(state, intermediate),
                    self._linear(state, output),
                    self._norm(state, norm2, eps),
                )
            )
        self.classifier = self._linear(state, "classifier")

    def __repr__(self) -> str:
        packed = ", packed" if self.products.packed else ""
        return f"FastTagger(layers={len(self.layers)}, precision={self.precision}{packed})"

    def _linear(self, state: Mapping[str, Any], name: str) -> tuple[Any, Any]:
        return self._weights(state[name + ".weight"], state[name + ".bias"])

    def _fused(self, state: Mapping[str, Any], *names: str) -> tuple[Any, Any]:
        import torch

        weight = torch.cat([state[n + ".weight"] for n in names])
        return self._weights(weight, torch.cat([state[n + ".bias"] for n in names]))

    def _weights(self, weight: Any, bias: Any) -> tuple[Any, Any]:
        weight, bias = weight.to(self.dtype), bias.to(self.dtype)
        return self.products.pack(weight), bias

    @staticmethod
    def _norm(state: Mapping[str, Any], name: str, eps: float) -> tuple[Any, Any, float]:
        return state[name + ".weight"], state[name + ".bias"], eps

    def __call__(self, input_ids: Any, attention_mask: Any) -> Any:
        """Logits (batch × tokens × tags) in the compute precision."""
        import torch.nn.functional as F

        batch, width = input_ids.shape
        # the reference adds word and type embeddings, then positions (float32 throughout)
        h = self.word[input_ids] + self.token_type
        h = h + self.position[:width]
        size = h.shape[-1:]
        h = F.layer_norm(h, size, *self.embedding_norm[:2], self.embedding_norm[2])
        # keys at padding are never attended to; a batch without padding needs no mask
        linear = self.products.linear
        mask = None
        if not bool(attention_mask.all()):
            mask = attention_mask.bool()[:, None, None, :]
        for qkv, attention_out, norm1, intermediate, output, norm2 in self.layers:
            x = h.to(self.dtype)
            q, k, v = linear(x, *qkv).view(batch, width, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
            context = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
            context = context.transpose(1, 2).reshape(batch, width, -1)
            h = F.layer_norm(
                linear(context, *attention_out).float() + h, size, *norm1[:2], norm1[2]
            )
            inner = F.gelu(linear(h.to(self.dtype), *intermediate))
            h = F.layer_norm(linear(inner, *output).float() + h, size, *norm2[:2], norm2[2])
        return linear(h.to(self.dtype), *self.classifier)
