"""The tagger's network for inference on CPU: the same computation in fewer, larger steps.

:class:`FastTagger` runs a ``transformers`` ``BertForTokenClassification`` (eval mode:
post-layer-norm BERT encoder, exact GELU, absolute positions from 0, token type 0) as a dozen
tensor operations a layer: one fused query-key-value product instead of three, the linear
weights held once in the compute precision (``torch.autocast`` casts float32 weights again on
every call), no dropout modules, output containers or per-call mask building. In ``bfloat16``
it does what autocast does with the reference model — matrix products and attention in
bfloat16; embeddings, residual sums, layer norms in float32 — and gives the same logits
(tested); in ``float32`` everything is float32.

Measured on the 2-core development machine (bfloat16, one window a call, ad hoc timing): 32
ms against the reference model's 47 ms for 256 tokens, 16 against 24 ms for 64 — Python and
per-module overhead that a short text pays in full. The weights are read once, when the
:class:`FastTagger` is built: it serves a loaded, fixed model, never one being trained.
"""

from __future__ import annotations

from typing import Any

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


class FastTagger:
    """Logits of a ``BertForTokenClassification`` for input ids and an attention mask."""

    def __init__(self, model: Any, precision: str) -> None:
        import torch

        if not supports(model):
            raise ValueError("not a BERT token classifier this fast path computes exactly")
        self.precision = precision
        self.dtype = torch.bfloat16 if precision == "bfloat16" else torch.float32
        config = model.config
        self.heads = int(config.num_attention_heads)
        embeddings = model.bert.embeddings
        self.word = embeddings.word_embeddings.weight.detach()
        self.position = embeddings.position_embeddings.weight.detach()
        self.token_type = embeddings.token_type_embeddings.weight.detach()[0]
        self.embedding_norm = self._norm(embeddings.LayerNorm)
        self.layers = []
        for layer in model.bert.encoder.layer:
            query, key, value, attention_out, intermediate, output = _linears(layer)
            self.layers.append(
                (
                    self._fused(query, key, value),
                    self._linear(attention_out),
                    self._norm(layer.attention.output.LayerNorm),
                    self._linear(intermediate),
                    self._linear(output),
                    self._norm(layer.output.LayerNorm),
                )
            )
        self.classifier = self._linear(model.classifier)

    def __repr__(self) -> str:
        return f"FastTagger(layers={len(self.layers)}, precision={self.precision})"

    def _linear(self, module: Any) -> tuple[Any, Any]:
        return (module.weight.detach().to(self.dtype), module.bias.detach().to(self.dtype))

    def _fused(self, *modules: Any) -> tuple[Any, Any]:
        import torch

        weight = torch.cat([m.weight.detach() for m in modules]).to(self.dtype)
        bias = torch.cat([m.bias.detach() for m in modules]).to(self.dtype)
        return weight, bias

    @staticmethod
    def _norm(module: Any) -> tuple[Any, Any, float]:
        return module.weight.detach(), module.bias.detach(), float(module.eps)

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
        mask = None
        if not bool(attention_mask.all()):
            mask = attention_mask.bool()[:, None, None, :]
        for qkv, attention_out, norm1, intermediate, output, norm2 in self.layers:
            x = h.to(self.dtype)
            q, k, v = F.linear(x, *qkv).view(batch, width, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
            context = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
            context = context.transpose(1, 2).reshape(batch, width, -1)
            h = F.layer_norm(
                F.linear(context, *attention_out).float() + h, size, *norm1[:2], norm1[2]
            )
            inner = F.gelu(F.linear(h.to(self.dtype), *intermediate))
            h = F.layer_norm(F.linear(inner, *output).float() + h, size, *norm2[:2], norm2[2])
        return F.linear(h.to(self.dtype), *self.classifier)
