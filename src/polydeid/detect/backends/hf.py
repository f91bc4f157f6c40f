"""Hugging Face token classifiers as detectors, loaded only from local directories.

Two layouts:

* :class:`HfWordGridDetector` — the East African clinical layout: one directory with a
  ``router_config.json`` and one ``AutoModelForTokenClassification`` checkpoint per language
  (``lug/``, ``swa/``, ``kin/``, ``luo/``), trained on polydeid's whitespace-and-punctuation
  word grid (:mod:`polydeid.text.wordgrid`): the words are fed pre-split
  (``is_split_into_words=True``), each word is read at its first sub-token, long documents are
  cut into windows of at most ``max_tokens`` (256) tokens with
  :mod:`polydeid.detect.tagger.windows`, and word tags are decoded into character spans there
  too (BIO repair, punctuation trimmed from span edges, per-category thresholds).
* :class:`HfPipelineDetector` — any token classifier run through the transformers
  ``token-classification`` pipeline with ``aggregation_strategy="simple"``; the text is cut into
  512-character windows overlapping by 128 characters, and the windows' spans are merged
  (a span cut by a window edge gives way to the whole one seen by the next window; overlapping
  spans become one, with the label and score of the highest-scoring one).

``router_config.json`` (word-grid layout; every key optional)::

    {"name": "eaclin-ner", "revision": "v1.2", "max_tokens": 256, "stride": 127,
     "default_threshold": 0.5,
     "thresholds": {"PERSON": 0.55, "lg": {"DATE": 0.7}, "sw": 0.6},
     "languages": {"lg": "lug", "sw": {"subfolder": "swa", "threshold": 0.5,
                                         "thresholds": {"PERSON": 0.6}},
                   "rw": "kin", "luo": "luo"}}

Language keys may be any code or alias polydeid knows (``lug`` = ``lg``); without
``languages`` the four standard subfolders are expected. A threshold is looked up per language
and category, then per language, then per category, then ``default_threshold`` (0.5).

Label maps (``labelmaps/<name>.toml``, or a path): the checkpoint's ``id2label`` tags are split
into a BIO/BIOES prefix and a bare label, which the map sends to a canonical category or
``"O"`` (not an identifier). Labels the map does not know are **reported** — ``unmapped``,
:meth:`report`, one warning naming the labels — and treated as identifiers of ``fallback``
(``ID_OTHER``), or refused with ``strict=True`` (:class:`ConfigError`); never dropped.

Revision: every span's source is ``backend.hf.<name>@<revision>``. The revision is the one
given, else the checkpoint's own: ``_commit_hash`` in ``config.json``, a ``revision`` file, the
name of a Hugging Face cache snapshot directory (``…/snapshots/<commit>``), or (word grid)
``router_config.json``'s ``revision``; a revision given that differs from the checkpoint's is
refused. A checkpoint that declares none is pinned by content (``sha256-`` + 16 hex digits of
its config, weights and tokenizer files).

A hub id (``org/name``) is accepted only as the name of a snapshot already in the local
Hugging Face cache; nothing is ever downloaded. A missing or malformed checkpoint (no config,
weights or tokenizer, label count different from the classifier's, weights that do not fit)
raises :class:`DetectorUnavailableError` naming the directory and the problem: the detector
fails closed instead of finding nothing.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import logging
import os
import re
import struct
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

from polydeid.core.errors import (
    ConfigError,
    DetectionError,
    DetectorUnavailableError,
    PolydeidError,
    UnknownCategoryError,
)
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import OUTSIDE, Category, Scheme, scheme
from polydeid.detect.tagger.precision import autocast, resolve
from polydeid.detect.tagger.windows import (
    TAG_INDEX,
    TAGS,
    Aligned,
    decode,
    name_form,
    owner_windows,
    windows,
    word_rows,
)
from polydeid.locales import canonical_language
from polydeid.text.wordgrid import words

log = logging.getLogger(__name__)

ROUTER_FILE = "router_config.json"
REVISION_FILE = "revision"
CONFIG_FILE = "config.json"
#: The standard language → subfolder map of the word-grid layout.
WORDGRID_SUBFOLDERS: Mapping[str, str] = MappingProxyType(
    {"lg": "lug", "sw": "swa", "rw": "kin", "luo": "luo"}
)
WORDGRID_MAX_TOKENS = 256
WORDGRID_THRESHOLD = 0.5
PIPELINE_THRESHOLD = 0.6
PIPELINE_WINDOW = 512
PIPELINE_OVERLAP = 128
DEFAULT_FALLBACK = Category.ID_OTHER

_WEIGHT_FILES = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)
_TOKENIZER_FILES = (
    "tokenizer.json",
    "sentencepiece.bpe.model",
    "spm.model",
    "tokenizer.model",
    "vocab.txt",
    "vocab.json",
)
_LABEL_SHAPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,39}")
_REVISION_SHAPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,79}")
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]+")
_HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*/[A-Za-z0-9][A-Za-z0-9_.\-]*")
_PREFIX = re.compile(r"([BIESLU])[-_](.+)", re.IGNORECASE)
#: BIOES/BILOU prefixes read as BIO: a single or beginning tag starts a span, the rest continue.
_PREFIX_BIO = {"B": "B", "S": "B", "U": "B", "I": "I", "E": "I", "L": "I"}


def _shown(label: str) -> str:
    """A checkpoint label as it may appear in a message (only label-shaped names are echoed)."""
    return label if _LABEL_SHAPE.fullmatch(label) else "(a label not shown: not label-shaped)"


# --- label maps ----------------------------------------------------------------------------


class UnmappedLabel(KeyError):
    """A checkpoint label that the label map does not know."""


@dataclass(frozen=True, slots=True)
class LabelMap:
    """How one family of checkpoints' labels map onto canonical categories."""

    name: str
    description: str
    sources: tuple[str, ...]
    outside: frozenset[str]  # upper-cased names of the "outside" tag
    labels: Mapping[str, Category | None]  # explicit entries, checked before the scheme
    scheme: Scheme | None
    location: str

    def __repr__(self) -> str:
        return f"LabelMap({self.name!r}, explicit={len(self.labels)}, scheme={self._scheme_name})"

    @property
    def _scheme_name(self) -> str | None:
        return self.scheme.name if self.scheme else None

    def category(self, bare: str) -> Category | None:
        """The category of a bare label (``None``: not an identifier); raises UnmappedLabel."""
        key = bare.strip()
        if key.upper() in self.outside:
            return None
        if key in self.labels:
            return self.labels[key]
        upper = key.upper()
        for name, target in self.labels.items():
            if name.upper() == upper:
                return target
        if self.scheme is not None:
            try:
                return self.scheme.map(key)
            except UnknownCategoryError:
                pass
        raise UnmappedLabel(bare)

    def resolve(self, label: str) -> tuple[str, Category | None]:
        """``(prefix, category)`` of a checkpoint tag: prefix ``"O"``, ``"B"`` or ``"I"`` (a
        label without a prefix continues like ``I-``, as the transformers pipeline reads it)."""
        key = label.strip()
        if key.upper() in self.outside:
            return OUTSIDE, None
        match = _PREFIX.fullmatch(key)
        if match:
            bare, prefix = match.group(2), _PREFIX_BIO[match.group(1).upper()]
        else:
            bare, prefix = key, "I"
        category = self.category(bare)
        return (OUTSIDE, None) if category is None else (prefix, category)


def label_map_names() -> tuple[str, ...]:
    """Names of the label maps shipped in ``detect/backends/labelmaps``."""
    folder = resources.files("polydeid.detect.backends") / "labelmaps"
    return tuple(
        sorted(p.name.removesuffix(".toml") for p in folder.iterdir() if p.name.endswith(".toml"))
    )


def load_label_map(spec: str | Path | LabelMap) -> LabelMap:
    """A shipped label map by name, or one read from a TOML file."""
    if isinstance(spec, LabelMap):
        return spec
    if isinstance(spec, str) and spec in label_map_names():
        resource = resources.files("polydeid.detect.backends") / "labelmaps" / f"{spec}.toml"
        return _parse_label_map(resource.read_text("utf-8"), f"labelmaps/{spec}.toml")
    path = Path(spec)
    if not path.is_file():
        raise ConfigError(
            f"unknown label map {str(spec)[:80]!r}: neither a shipped map "
            f"({', '.join(label_map_names())}) nor a TOML file"
        )
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"label map unreadable ({type(exc).__name__})", location=str(path)
        ) from None
    return _parse_label_map(text, str(path))


def _parse_label_map(text: str, location: str) -> LabelMap:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"malformed label map: {exc}", location=location) from None
    meta = raw.get("meta")
    if not isinstance(meta, dict):
        raise ConfigError("label map has no [meta] table", location=location)
    sources = meta.get("sources")
    if (
        not isinstance(sources, list)
        or not sources
        or not all(isinstance(s, str) and s.strip() for s in sources)
    ):
        raise ConfigError("label map [meta] needs a non-empty 'sources' list", location=location)
    try:
        base = scheme(meta["scheme"]) if meta.get("scheme") else None
        explicit: dict[str, Category | None] = {}
        for label, target in raw.get("labels", {}).items():
            if not isinstance(target, str):
                raise ConfigError(f"label {_shown(label)} must map to a category name or 'O'")
            explicit[label] = None if target.strip().upper() == OUTSIDE else Category.parse(target)
    except PolydeidError as exc:
        raise exc.at(location) from None
    outside = meta.get("outside", [OUTSIDE])
    if not isinstance(outside, list) or not all(isinstance(o, str) for o in outside):
        raise ConfigError("label map [meta] 'outside' must be a list of names", location=location)
    return LabelMap(
        name=str(meta.get("name") or Path(location).stem),
        description=str(meta.get("description", "")),
        sources=tuple(sources),
        outside=frozenset(o.strip().upper() for o in outside) | {OUTSIDE},
        labels=MappingProxyType(explicit),
        scheme=base,
        location=location,
    )


@dataclass(frozen=True, slots=True)
class LabelPlan:
    """A checkpoint's ``id2label`` read through a label map."""

    labels: tuple[str, ...]  # checkpoint tags in output order
    tags: tuple[str, ...]  # per output: the canonical tag ("O", "B-PERSON", …)
    targets: Mapping[str, Category | None]  # bare label → category (None: not an identifier)
    unmapped: tuple[str, ...]  # bare labels the map does not know (treated as the fallback)
    categories: frozenset[Category]


def plan_labels(
    labels: Sequence[str],
    label_map: LabelMap,
    *,
    fallback: Category,
    strict: bool,
    location: str,
) -> LabelPlan:
    """Map checkpoint tags onto canonical ones; unknown labels become ``fallback`` or, when
    ``strict``, raise :class:`ConfigError` listing them."""
    tags: list[str] = []
    targets: dict[str, Category | None] = {}
    unmapped: dict[str, None] = {}
    for label in labels:
        key = label.strip()
        match = _PREFIX.fullmatch(key)
        bare = match.group(2) if match and key.upper() not in label_map.outside else key
        try:
            prefix, category = label_map.resolve(key)
        except UnmappedLabel:
            unmapped[bare] = None
            prefix = _PREFIX_BIO[match.group(1).upper()] if match else "I"
            category = fallback
        else:
            targets[bare] = category
        tags.append(OUTSIDE if category is None else f"{prefix}-{category.value}")
    if unmapped and strict:
        shown = ", ".join(_shown(u) for u in unmapped)
        raise ConfigError(
            f"checkpoint labels not in label map {label_map.name!r}: {shown} "
            "(add them to the map, or drop strict to treat them as "
            f"{fallback.value})",
            location=location,
        )
    for bare in unmapped:
        targets[bare] = fallback
    categories = frozenset(c for c in targets.values() if c is not None)
    return LabelPlan(
        tuple(labels), tuple(tags), MappingProxyType(targets), tuple(unmapped), categories
    )


# --- locating checkpoints, revisions --------------------------------------------------------


def _cache_dirs(cache_dir: str | Path | None) -> list[Path]:
    dirs = []
    if cache_dir is not None:
        dirs.append(Path(cache_dir).expanduser())
    if os.environ.get("HF_HUB_CACHE"):
        dirs.append(Path(os.environ["HF_HUB_CACHE"]).expanduser())
    if os.environ.get("HF_HOME"):
        dirs.append(Path(os.environ["HF_HOME"]).expanduser() / "hub")
    xdg = os.environ.get("XDG_CACHE_HOME")
    dirs.append((Path(xdg) if xdg else Path.home() / ".cache") / "huggingface" / "hub")
    return list(dict.fromkeys(dirs))


def _snapshot(repo: Path, revision: str | None) -> Path | None:
    snapshots = repo / "snapshots"
    if not snapshots.is_dir():
        return None
    ref = revision or "main"
    if _REVISION_SHAPE.fullmatch(ref):
        if (snapshots / ref).is_dir():
            return snapshots / ref
        ref_file = repo / "refs" / ref
        if ref_file.is_file():
            commit = ref_file.read_text("utf-8").strip()
            if _REVISION_SHAPE.fullmatch(commit) and (snapshots / commit).is_dir():
                return snapshots / commit
    found = sorted(p for p in snapshots.iterdir() if p.is_dir())
    if revision is None:
        return found[0] if len(found) == 1 else None
    if len(revision) >= 7:
        prefixed = [p for p in found if p.name.startswith(revision)]
        if len(prefixed) == 1:
            return prefixed[0]
    return None


def resolve_local(
    spec: str | Path, *, revision: str | None = None, cache_dir: str | Path | None = None
) -> tuple[Path, bool]:
    """The local directory of a checkpoint — ``spec`` itself, or the already-downloaded
    snapshot of the hub id ``spec`` in the Hugging Face cache (at ``revision``: a commit, a
    commit prefix or a ref such as ``main``) — and whether it came from the cache. Never
    downloads."""
    path = Path(spec).expanduser()
    if path.is_dir():
        return path, False
    text = str(spec)
    if not path.exists() and _HUB_ID.fullmatch(text):
        looked = _cache_dirs(cache_dir)
        for cache in looked:
            repo = cache / ("models--" + text.replace("/", "--"))
            if repo.is_dir():
                found = _snapshot(repo, revision)
                if found is not None:
                    return found, True
        pinned = f" at revision {revision[:80]!r}" if revision else ""
        raise DetectorUnavailableError(
            f"model {text!r}{pinned} is neither a local directory nor a downloaded snapshot "
            f"(looked in {', '.join(str(c) for c in looked)}); polydeid never downloads "
            "models: download it first (e.g. `hf download`) and pass its directory"
        )
    raise DetectorUnavailableError("no checkpoint directory here", location=str(path))


def declared_revision(folder: Path, config: Mapping[str, Any] | None = None) -> str | None:
    """The revision a checkpoint declares: ``_commit_hash`` in its config, a ``revision``
    file, or the name of the cache snapshot directory it is; ``None`` when it declares none."""
    candidates: list[tuple[str, object]] = []
    if config is not None:
        candidates.append(("config.json _commit_hash", config.get("_commit_hash")))
    revision_file = folder / REVISION_FILE
    if revision_file.is_file():
        try:
            lines = revision_file.read_text("utf-8").strip().splitlines()
        except (OSError, UnicodeDecodeError):
            lines = ["\0"]
        candidates.append((REVISION_FILE, lines[0].strip() if lines else ""))
    if folder.parent.name == "snapshots":
        candidates.append(("snapshot directory", folder.name))
    for what, value in candidates:
        if value is None:
            continue
        if isinstance(value, str) and _REVISION_SHAPE.fullmatch(value.strip()):
            return value.strip()
        raise DetectorUnavailableError(f"unreadable revision in {what}", location=str(folder))
    return None


def pin_revision(given: str | None, declared: str | None, location: str) -> str | None:
    """The revision to record: ``given`` must match what the checkpoint declares (a commit
    hash may be given by a prefix of at least 7 characters)."""
    if given is not None and not _REVISION_SHAPE.fullmatch(given):
        raise ConfigError("revision must be letters, digits, '_', '.', '-' (at most 80)")
    if given and declared:
        if given == declared or (len(given) >= 7 and declared.startswith(given)):
            return declared
        raise DetectorUnavailableError(
            f"the checkpoint is revision {declared!r}, not the pinned {given!r}",
            location=location,
        )
    return given or declared


def content_revision(folders: Iterable[Path]) -> str:
    """A revision for checkpoints that declare none: a digest of their config, weight and
    tokenizer files (and ``router_config.json``)."""
    digest = hashlib.sha256()
    for folder in folders:
        for name in (ROUTER_FILE, CONFIG_FILE, *_WEIGHT_FILES, *_TOKENIZER_FILES):
            path = folder / name
            if not path.is_file():
                continue
            digest.update(f"{folder.name}/{name}\0".encode())
            with path.open("rb") as handle:
                for block in iter(lambda h=handle: h.read(1 << 20), b""):
                    digest.update(block)
    return "sha256-" + digest.hexdigest()[:16]


def _model_name(folder: Path, given: str | None) -> str:
    if given is None:
        if folder.parent.name == "snapshots" and folder.parent.parent.name.startswith("models--"):
            given = folder.parent.parent.name.removeprefix("models--")
        else:
            given = folder.resolve().name
    name = _NAME_UNSAFE.sub("-", given).strip("-.")[:60]
    return name or "model"


# --- checkpoints ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """What a checkpoint directory says about itself, checked without loading the weights."""

    folder: Path
    config: Mapping[str, Any]
    labels: tuple[str, ...]  # id2label in output order

    def __repr__(self) -> str:
        return f"Checkpoint({self.folder}, labels={len(self.labels)})"


def inspect_checkpoint(folder: Path) -> Checkpoint:
    """Config, label list, weights and tokenizer of a checkpoint directory, or
    :class:`DetectorUnavailableError` naming the directory and what is wrong."""
    where = str(folder)

    def broken(problem: str) -> DetectorUnavailableError:
        return DetectorUnavailableError(f"malformed checkpoint: {problem}", location=where)

    if not folder.is_dir():
        raise broken("no such directory")
    config_path = folder / CONFIG_FILE
    if not config_path.is_file():
        raise broken(f"missing {CONFIG_FILE}")
    try:
        config = json.loads(config_path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise broken(f"{CONFIG_FILE} unreadable ({type(exc).__name__})") from None
    if not isinstance(config, dict):
        raise broken(f"{CONFIG_FILE} is not a JSON object")
    id2label = config.get("id2label")
    if not isinstance(id2label, dict) or not id2label:
        raise broken(f"{CONFIG_FILE} has no id2label (not a token classifier?)")
    try:
        indexed = {int(k): v for k, v in id2label.items()}
    except (TypeError, ValueError):
        raise broken("id2label keys are not label indices") from None
    if sorted(indexed) != list(range(len(indexed))) or not all(
        isinstance(v, str) and v.strip() for v in indexed.values()
    ):
        raise broken("id2label is not one name for each index 0..n-1")
    labels = tuple(indexed[i] for i in range(len(indexed)))
    declared = config.get("num_labels")
    if isinstance(declared, int) and declared != len(labels):
        raise broken(f"label count mismatch: num_labels {declared}, id2label {len(labels)}")
    if not any((folder / name).is_file() for name in _WEIGHT_FILES):
        raise broken("missing model weights (model.safetensors or pytorch_model.bin)")
    if not any((folder / name).is_file() for name in _TOKENIZER_FILES):
        raise broken("missing tokenizer (tokenizer.json or a vocabulary file)")
    rows = _classifier_rows(folder)
    if rows is not None and rows != len(labels):
        raise broken(f"label count mismatch: id2label has {len(labels)}, the classifier {rows}")
    return Checkpoint(folder, MappingProxyType(config), labels)


def _safetensors_header(path: Path) -> dict[str, Any]:
    with path.open("rb") as handle:
        head = handle.read(8)
        if len(head) != 8:
            raise ValueError("short file")
        (size,) = struct.unpack("<Q", head)
        if size > 100_000_000:
            raise ValueError("header too large")
        header = json.loads(handle.read(size))
    if not isinstance(header, dict):
        raise ValueError("header is not an object")
    return header


def _classifier_rows(folder: Path) -> int | None:
    """Output size of the classification head, read from safetensors headers (no loading)."""
    single, index = folder / "model.safetensors", folder / "model.safetensors.index.json"
    try:
        if single.is_file():
            files = {single}
        elif index.is_file():
            weight_map = json.loads(index.read_text("utf-8"))["weight_map"]
            files = {
                folder / f
                for k, f in weight_map.items()
                if k.split(".")[-2:] == ["classifier", "bias"]
            }
        else:
            return None
        for path in files:
            header = _safetensors_header(path)
            keys = [k for k in header if k.split(".")[-2:] == ["classifier", "bias"]]
            if len(keys) == 1:
                shape = header[keys[0]]["shape"]
                return int(shape[0])
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        raise DetectorUnavailableError(
            f"malformed checkpoint: weights unreadable ({type(exc).__name__})",
            location=str(folder),
        ) from None
    return None


def _load(folder: Path, *, threads: int | None, device: str) -> tuple[Any, Any]:
    """Model and fast tokenizer of a checkpoint directory (local files only); fails closed."""
    try:
        import torch
        from transformers import AutoModelForTokenClassification, AutoTokenizer
    except ImportError as exc:  # pragma: no cover - exercised where torch is absent
        raise DetectorUnavailableError(
            f"Hugging Face backends need torch and transformers ({exc.name})"
        ) from None
    where = str(folder)
    if threads:
        torch.set_num_threads(threads)
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    except Exception as exc:
        raise DetectorUnavailableError(
            f"malformed checkpoint: tokenizer unreadable ({type(exc).__name__})", location=where
        ) from None
    if not getattr(tokenizer, "is_fast", False):
        raise DetectorUnavailableError(
            "malformed checkpoint: needs a fast tokenizer (tokenizer.json) for word ids and "
            "offsets",
            location=where,
        )
    try:
        model, info = AutoModelForTokenClassification.from_pretrained(
            folder, local_files_only=True, output_loading_info=True, dtype=torch.float32
        )
    except Exception as exc:
        first = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else ""
        raise DetectorUnavailableError(
            f"malformed checkpoint: weights do not load ({type(exc).__name__}: {first})",
            location=where,
        ) from None
    missing = sorted(k for k in info.get("missing_keys", ()) if not k.endswith("position_ids"))
    mismatched = list(info.get("mismatched_keys", ()))
    if missing or mismatched:
        raise DetectorUnavailableError(
            f"malformed checkpoint: {len(missing)} weight tensors missing, "
            f"{len(mismatched)} of the wrong shape (e.g. {(missing or mismatched)[0]})",
            location=where,
        )
    model.eval()
    model.to(device)
    if tokenizer.pad_token is None:  # batches are padded (and masked)
        tokenizer.pad_token = tokenizer.eos_token or tokenizer.unk_token
    limit = _position_limit(model.config)
    if limit and (not tokenizer.model_max_length or tokenizer.model_max_length > limit):
        tokenizer.model_max_length = limit
    return model, tokenizer


def _position_limit(config: Any) -> int | None:
    """How many tokens (specials included) the model can read at once."""
    positions = getattr(config, "max_position_embeddings", None)
    if not isinstance(positions, int) or positions <= 0:
        return None
    if getattr(config, "model_type", "") in {"roberta", "xlm-roberta", "camembert", "longformer"}:
        positions -= 2  # positions start after the padding index
    return positions


def _location(segment: Segment) -> str:
    return str(segment.origin)


# --- word-grid layout -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LanguageRoute:
    """One language of a word-grid directory: its checkpoint and thresholds."""

    lang: str
    subfolder: str
    threshold: float
    thresholds: Mapping[Category, float]


@dataclass(frozen=True, slots=True)
class RouterConfig:
    routes: Mapping[str, LanguageRoute]
    name: str | None
    revision: str | None
    max_tokens: int | None
    stride: int | None


def read_router_config(folder: Path) -> RouterConfig:
    """``router_config.json`` of a word-grid directory (see the module docstring)."""
    path = folder / ROUTER_FILE
    where = str(path)
    if not path.is_file():
        raise DetectorUnavailableError(
            f"malformed checkpoint directory: missing {ROUTER_FILE}", location=str(folder)
        )
    try:
        raw = json.loads(path.read_text("utf-8"))
        if not isinstance(raw, dict):
            raise TypeError("not an object")
        return _router(raw)
    except PolydeidError as exc:
        raise DetectorUnavailableError(f"{ROUTER_FILE}: {exc.message}", location=where) from None
    except (OSError, UnicodeDecodeError, ValueError, TypeError, KeyError) as exc:
        raise DetectorUnavailableError(
            f"{ROUTER_FILE} unreadable ({type(exc).__name__}: {str(exc)[:120]})", location=where
        ) from None


def _threshold(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ValueError("thresholds are numbers in [0, 1]")
    return float(value)


def _category_thresholds(raw: object) -> dict[Category, float]:
    if not isinstance(raw, dict):
        raise TypeError("per-category thresholds must be an object")
    return {Category.parse(k): _threshold(v) for k, v in raw.items()}


def _optional_int(raw: dict[str, Any], key: str) -> int | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{key} must be a positive integer")
    return value


def _router(raw: dict[str, Any]) -> RouterConfig:
    languages = raw.get("languages", dict(WORDGRID_SUBFOLDERS))
    if not isinstance(languages, dict) or not languages:
        raise TypeError("'languages' must be a non-empty object")
    default = _threshold(raw.get("default_threshold", WORDGRID_THRESHOLD))
    global_categories: dict[Category, float] = {}
    language_default: dict[str, float] = {}
    language_categories: dict[str, dict[Category, float]] = {}
    thresholds = raw.get("thresholds", {})
    if not isinstance(thresholds, dict):
        raise TypeError("'thresholds' must be an object")
    for key, value in thresholds.items():
        if key.strip().upper() in Category.__members__:
            global_categories[Category.parse(key)] = _threshold(value)
            continue
        try:
            lang = canonical_language(key)
        except PolydeidError:
            raise ValueError(
                f"thresholds key {_shown(key)} is neither a category nor a language"
            ) from None
        if isinstance(value, dict):
            language_categories.setdefault(lang, {}).update(_category_thresholds(value))
        else:
            language_default[lang] = _threshold(value)
    routes: dict[str, LanguageRoute] = {}
    for key, spec in languages.items():
        lang = canonical_language(key)
        if isinstance(spec, str):
            spec = {"subfolder": spec}
        if not isinstance(spec, dict):
            raise TypeError("a language maps to a subfolder name or an object")
        subfolder = spec.get("subfolder", WORDGRID_SUBFOLDERS.get(lang))
        if (
            not isinstance(subfolder, str)
            or not _NAME_UNSAFE.sub("", subfolder) == subfolder
            or subfolder in {"", ".", ".."}
        ):
            raise ValueError("a subfolder is one plain directory name")
        per_category = {
            **global_categories,
            **language_categories.get(lang, {}),
            **_category_thresholds(spec.get("thresholds", {})),
        }
        threshold = (
            _threshold(spec["threshold"])
            if "threshold" in spec
            else language_default.get(lang, default)
        )
        routes[lang] = LanguageRoute(lang, subfolder, threshold, MappingProxyType(per_category))
    revision = raw.get("revision")
    if revision is not None and (
        not isinstance(revision, str) or not _REVISION_SHAPE.fullmatch(revision)
    ):
        raise ValueError("unreadable revision")
    name = raw.get("name")
    if name is not None and not isinstance(name, str):
        raise TypeError("'name' must be a string")
    return RouterConfig(
        routes=MappingProxyType(routes),
        name=name,
        revision=revision,
        max_tokens=_optional_int(raw, "max_tokens"),
        stride=_optional_int(raw, "stride"),
    )


class _GridModel:
    """One word-grid checkpoint, loaded: per-word probabilities over polydeid's tags."""

    def __init__(
        self,
        checkpoint: Checkpoint,
        plan: LabelPlan,
        *,
        max_tokens: int,
        stride: int | None,
        batch_size: int,
        threads: int | None,
        device: str,
        precision: str | None = None,
    ) -> None:
        import torch

        self.model, self.tokenizer = _load(checkpoint.folder, threads=threads, device=device)
        self.device = device
        self.device_type = device.split(":")[0]
        self.precision = resolve(precision, device=self.device_type)
        self.batch_size = batch_size
        where = str(checkpoint.folder)
        try:
            probe = self.tokenizer(
                ["a", "b"], is_split_into_words=True, return_special_tokens_mask=True
            )
        except Exception as exc:
            raise DetectorUnavailableError(
                f"malformed checkpoint: the tokenizer cannot read pre-split words "
                f"({type(exc).__name__}; a byte-level BPE tokenizer needs "
                "add_prefix_space: true in tokenizer_config.json)",
                location=where,
            ) from None
        ids, mask = probe["input_ids"], probe["special_tokens_mask"]
        lead = next((i for i, m in enumerate(mask) if not m), len(mask))
        trail = next((i for i, m in enumerate(reversed(mask)) if not m), 0)
        self.prefix = list(ids[:lead])
        self.suffix = list(ids[len(ids) - trail :]) if trail else []
        pad = self.tokenizer.pad_token_id
        self.pad_id = pad if pad is not None else (self.model.config.pad_token_id or 0)
        limit = _position_limit(self.model.config) or max_tokens
        self.max_content = min(max_tokens, limit) - len(self.prefix) - len(self.suffix)
        if self.max_content <= 0:
            raise DetectorUnavailableError(
                "malformed checkpoint: no room for text in a window", location=where
            )
        self.stride = min(stride or max(1, self.max_content // 2), self.max_content)
        projection = torch.zeros((len(plan.tags), len(TAGS)), dtype=torch.float32)
        for i, tag in enumerate(plan.tags):
            projection[i, TAG_INDEX[tag]] = 1.0
        self.projection = projection.to(device)

    def align(self, text: str) -> Aligned:
        """The word grid of ``text`` and its sub-tokens, read word by word."""
        grid = tuple(words(text))
        if not grid:
            return Aligned(grid, (), ())
        encoded = self.tokenizer(
            [text[s:e] for s, e in grid],
            is_split_into_words=True,
            add_special_tokens=False,
            verbose=False,  # a whole text is longer than the model; it is read in windows
        )
        word_token = [-1] * len(grid)
        for t, w in enumerate(encoded.word_ids()):
            if w is not None and word_token[w] < 0:
                word_token[w] = t
        return Aligned(grid, tuple(encoded["input_ids"]), tuple(word_token))

    def predict(self, texts: Sequence[str]) -> list[tuple[Aligned, list[list[float] | None]]]:
        import torch

        docs = [self.align(t) for t in texts]
        plans = []
        items: list[tuple[int, int, int]] = []  # (document, window start, window end)
        for d, aligned in enumerate(docs):
            if not aligned.token_ids:
                plans.append(([], []))
                continue
            spans = windows(len(aligned.token_ids), self.max_content, self.stride)
            plans.append((spans, owner_windows(aligned, spans)))
            items.extend((d, s, e) for s, e in spans)
        results: dict[tuple[int, int], Any] = {}
        order = sorted(range(len(items)), key=lambda i: items[i][2] - items[i][1])
        with torch.inference_mode(), autocast(self.precision, self.device_type):
            for b in range(0, len(order), self.batch_size):
                batch = [items[i] for i in order[b : b + self.batch_size]]
                width = max(e - s for _, s, e in batch) + len(self.prefix) + len(self.suffix)
                ids = torch.full((len(batch), width), self.pad_id, dtype=torch.long)
                mask = torch.zeros((len(batch), width), dtype=torch.long)
                for row, (d, s, e) in enumerate(batch):
                    seq = [*self.prefix, *docs[d].token_ids[s:e], *self.suffix]
                    ids[row, : len(seq)] = torch.tensor(seq, dtype=torch.long)
                    mask[row, : len(seq)] = 1
                logits = self.model(
                    input_ids=ids.to(self.device), attention_mask=mask.to(self.device)
                ).logits
                probs = torch.softmax(logits.float(), dim=-1) @ self.projection
                probs = probs.cpu()
                for row, (d, s, _) in enumerate(batch):
                    results[(d, s)] = probs[row, len(self.prefix) :]
        return word_rows(docs, plans, results)


class HfWordGridDetector:
    """Per-language word-grid token classifiers from one local directory (see the module
    docstring for the layout, ``router_config.json``, label maps and revisions).

    Every checkpoint is checked when the detector is built (config, labels, weights,
    tokenizer); the weights of a language are loaded on its first segment, or all at once
    with ``preload=True`` or :meth:`load`.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        name: str | None = None,
        revision: str | None = None,
        label_map: str | Path | LabelMap = "east_africa",
        strict: bool = False,
        fallback: Category | str = DEFAULT_FALLBACK,
        max_tokens: int | None = None,
        stride: int | None = None,
        threads: int | None = None,
        batch_size: int = 16,
        device: str = "cpu",
        precision: str | None = None,
        cache_dir: str | Path | None = None,
        preload: bool = False,
    ) -> None:
        self.folder, cached = resolve_local(path, revision=revision, cache_dir=cache_dir)
        if cached:  # the snapshot was chosen by the revision: its commit is what is recorded
            revision = None
        self.router = read_router_config(self.folder)
        self.label_map = load_label_map(label_map)
        self.fallback = Category.parse(fallback) if isinstance(fallback, str) else fallback
        self.checkpoints: dict[str, Checkpoint] = {}
        self.plans: dict[str, LabelPlan] = {}
        for route in self.router.routes.values():
            if route.subfolder in self.checkpoints:
                continue
            checkpoint = inspect_checkpoint(self.folder / route.subfolder)
            self.checkpoints[route.subfolder] = checkpoint
            self.plans[route.subfolder] = plan_labels(
                checkpoint.labels,
                self.label_map,
                fallback=self.fallback,
                strict=strict,
                location=str(checkpoint.folder),
            )
        declared = declared_revision(self.folder) or self.router.revision
        self.revision = pin_revision(revision, declared, str(self.folder)) or content_revision(
            [self.folder, *(c.folder for c in self.checkpoints.values())]
        )
        self.name = _model_name(self.folder, name or self.router.name)
        self.id = f"backend.hf.{self.name}@{self.revision}"
        self.languages: frozenset[str] = frozenset(self.router.routes)
        self.labels: frozenset[Category] = frozenset(
            c for plan in self.plans.values() for c in plan.categories
        )
        self.unmapped: tuple[str, ...] = tuple(
            dict.fromkeys(u for plan in self.plans.values() for u in plan.unmapped)
        )
        self.max_tokens = max_tokens or self.router.max_tokens or WORDGRID_MAX_TOKENS
        self.stride = stride or self.router.stride
        self.threads = threads
        self.batch_size = batch_size
        self.device = device
        self.precision = precision  # None: POLYDEID_TAGGER_PRECISION, then auto
        self._models: dict[str, _GridModel] = {}
        if self.unmapped:
            _warn_unmapped(self.folder, self.label_map, self.unmapped, self.fallback)
        if preload:
            self.load()

    def __repr__(self) -> str:
        return f"HfWordGridDetector({self.id}, languages={sorted(self.languages)})"

    def report(self) -> dict[str, Any]:
        """What the detector is (no text): id, revision, languages, label map, unmapped labels."""
        return {
            "id": self.id,
            "layout": "wordgrid",
            "revision": self.revision,
            "folder": str(self.folder),
            "languages": {
                lang: route.subfolder for lang, route in sorted(self.router.routes.items())
            },
            "thresholds": {
                lang: {
                    "default": route.threshold,
                    **{c.value: t for c, t in route.thresholds.items()},
                }
                for lang, route in sorted(self.router.routes.items())
            },
            "label_map": self.label_map.name,
            "labels": sorted(c.value for c in self.labels),
            "unmapped": list(self.unmapped),
            "fallback": self.fallback.value,
            "max_tokens": self.max_tokens,
        }

    def load(self) -> None:
        """Load every language's weights now (fails closed like the first segment would)."""
        for subfolder in self.checkpoints:
            self._model(subfolder)

    def _model(self, subfolder: str) -> _GridModel:
        if subfolder not in self._models:
            self._models[subfolder] = _GridModel(
                self.checkpoints[subfolder],
                self.plans[subfolder],
                max_tokens=self.max_tokens,
                stride=self.stride,
                batch_size=self.batch_size,
                threads=self.threads,
                device=self.device,
                precision=self.precision,
            )
        return self._models[subfolder]

    def route(self, lang: str) -> LanguageRoute:
        """The route of ``lang`` (any known code or alias); fails closed for other languages."""
        if lang in self.router.routes:
            return self.router.routes[lang]
        try:
            canonical = canonical_language(lang)
        except PolydeidError:
            canonical = None
        if canonical in self.router.routes:
            return self.router.routes[canonical]
        raise DetectorUnavailableError(
            f"{self.id} has no model for language {lang[:20]!r}; "
            f"it covers {', '.join(sorted(self.router.routes))}"
        )

    def detect(self, segment: Segment) -> Iterable[Span]:
        return self.detect_many([segment])[0]

    def detect_many(self, segments: Sequence[Segment]) -> list[list[Span]]:
        """Spans for several segments, batched through each language's model."""
        routes = [self.route(s.lang) for s in segments]
        out: list[list[Span]] = [[] for _ in segments]
        by_model: dict[str, list[int]] = {}
        for i, route in enumerate(routes):
            by_model.setdefault(route.subfolder, []).append(i)
        for subfolder, indices in by_model.items():
            model = self._model(subfolder)
            try:
                results = model.predict([segments[i].text for i in indices])
            except PolydeidError:
                raise
            except Exception as exc:
                raise DetectionError(
                    f"{self.id}: model inference failed ({type(exc).__name__})",
                    location=_location(segments[indices[0]]),
                ) from None
            for i, (aligned, probs) in zip(indices, results, strict=True):
                route = routes[i]
                out[i] = decode(
                    segments[i].text,
                    aligned.grid,
                    probs,
                    route.thresholds,
                    default_threshold=route.threshold,
                    source=self.id,
                    names=name_form(segments[i].lang),
                )
        return out


def _warn_unmapped(
    folder: Path, label_map: LabelMap, unmapped: Sequence[str], fallback: Category
) -> None:
    log.warning(
        "%s: checkpoint labels not in label map %r: %s; treated as %s",
        folder,
        label_map.name,
        ", ".join(_shown(u) for u in unmapped),
        fallback.value,
    )


# --- pipeline layout ------------------------------------------------------------------------


def char_windows(length: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """``[start, end)`` character windows of ``size`` covering ``length`` characters, each
    overlapping the next by at least ``overlap`` (the last one is moved back to be full)."""
    if size <= 0 or not 0 <= overlap < size:
        raise ValueError("need size > 0 and 0 <= overlap < size")
    if length <= size:
        return [(0, length)]
    out, start = [], 0
    while True:
        end = min(start + size, length)
        out.append((start, end))
        if end == length:
            return out
        start = min(start + size - overlap, length - size)


def _snap(text: str, grid: Sequence[tuple[int, int]], start: int, end: int) -> tuple[int, int]:
    """The range without surrounding whitespace, widened to the words of the word grid that
    it cuts (a sub-word entity covers its whole word: half a name is not a redaction; a
    Chinese or Japanese character is a word of its own, so no run of them is swallowed)."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start >= end:
        return start, end
    i = bisect.bisect_right(grid, (start, len(text) + 1)) - 1
    if i >= 0 and grid[i][0] < start < grid[i][1]:
        start = grid[i][0]
    j = bisect.bisect_left(grid, (end, -1)) - 1
    if j >= 0 and grid[j][0] < end < grid[j][1]:
        end = grid[j][1]
    return start, end


@dataclass(slots=True)
class WindowSpan:
    """A span one window found, in the whole text's offsets."""

    start: int
    end: int
    label: Category
    score: float
    window: int
    cut: bool  # reaches a window edge inside the text: the model may have seen part of it


def merge_windows(found: Sequence[WindowSpan], source: str) -> list[Span]:
    """One span per entity from overlapping windows' spans.

    A span cut by its window's edge is dropped where another window saw an overlapping span
    whole. Overlapping spans then become one: the label and score of the highest-scoring,
    the union of the ranges (never less text than any window found).
    """
    whole = [f for f in found if not f.cut]
    kept = [
        f
        for f in found
        if not f.cut
        or not any(w.window != f.window and w.start < f.end and f.start < w.end for w in whole)
    ]
    kept.sort(key=lambda f: (f.start, -f.end))
    spans: list[Span] = []
    group: list[WindowSpan] = []

    def close() -> None:
        if group:
            best = max(group, key=lambda f: (f.score, f.end - f.start))
            start, end = min(f.start for f in group), max(f.end for f in group)
            spans.append(Span(start, end, best.label, source, round(best.score, 4)))
            group.clear()

    for f in kept:
        if group and f.start < max(g.end for g in group):
            group.append(f)
        else:
            close()
            group.append(f)
    close()
    return spans


class HfPipelineDetector:
    """A token classifier through the transformers ``token-classification`` pipeline
    (``aggregation_strategy="simple"``) over overlapping character windows.

    ``threshold`` (0.6) is the minimum span score, ``thresholds`` per-category overrides;
    ``languages`` (canonical codes or aliases) limits the detector to those languages (it
    fails closed for others); empty means any language.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        name: str | None = None,
        revision: str | None = None,
        label_map: str | Path | LabelMap = "pii34",
        strict: bool = False,
        fallback: Category | str = DEFAULT_FALLBACK,
        threshold: float = PIPELINE_THRESHOLD,
        thresholds: Mapping[Category | str, float] | None = None,
        languages: Iterable[str] = (),
        window: int = PIPELINE_WINDOW,
        overlap: int = PIPELINE_OVERLAP,
        threads: int | None = None,
        batch_size: int = 8,
        device: str = "cpu",
        cache_dir: str | Path | None = None,
        preload: bool = False,
    ) -> None:
        char_windows(0, window, overlap)  # validates the sizes
        self.folder, cached = resolve_local(path, revision=revision, cache_dir=cache_dir)
        if cached:  # the snapshot was chosen by the revision: its commit is what is recorded
            revision = None
        self.checkpoint = inspect_checkpoint(self.folder)
        self.label_map = load_label_map(label_map)
        self.fallback = Category.parse(fallback) if isinstance(fallback, str) else fallback
        self.plan = plan_labels(
            self.checkpoint.labels,
            self.label_map,
            fallback=self.fallback,
            strict=strict,
            location=str(self.folder),
        )
        declared = declared_revision(self.folder, self.checkpoint.config)
        self.revision = pin_revision(revision, declared, str(self.folder)) or content_revision(
            [self.folder]
        )
        self.name = _model_name(self.folder, name)
        self.id = f"backend.hf.{self.name}@{self.revision}"
        try:
            self.threshold = _threshold(threshold)
            self.thresholds: Mapping[Category, float] = MappingProxyType(
                {
                    (c if isinstance(c, Category) else Category.parse(c)): _threshold(v)
                    for c, v in (thresholds or {}).items()
                }
            )
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        self.languages: frozenset[str] = frozenset(canonical_language(x) for x in languages)
        self.labels: frozenset[Category] = self.plan.categories
        self.unmapped = self.plan.unmapped
        self.window, self.overlap = window, overlap
        self.threads, self.batch_size, self.device = threads, batch_size, device
        self._pipe: Any = None
        if self.unmapped:
            _warn_unmapped(self.folder, self.label_map, self.unmapped, self.fallback)
        if preload:
            self.load()

    def __repr__(self) -> str:
        return f"HfPipelineDetector({self.id})"

    def report(self) -> dict[str, Any]:
        """What the detector is (no text): id, revision, label map, unmapped labels."""
        return {
            "id": self.id,
            "layout": "pipeline",
            "revision": self.revision,
            "folder": str(self.folder),
            "languages": sorted(self.languages),
            "label_map": self.label_map.name,
            "labels": sorted(c.value for c in self.labels),
            "unmapped": list(self.unmapped),
            "fallback": self.fallback.value,
            "threshold": self.threshold,
            "window": self.window,
            "overlap": self.overlap,
        }

    def load(self) -> Any:
        """The transformers pipeline (loaded on first use; fails closed)."""
        if self._pipe is None:
            from transformers import pipeline

            model, tokenizer = _load(self.folder, threads=self.threads, device=self.device)
            try:
                self._pipe = pipeline(
                    "token-classification",
                    model=model,
                    tokenizer=tokenizer,
                    aggregation_strategy="simple",
                    device=self.device,
                )
            except Exception as exc:
                raise DetectorUnavailableError(
                    f"malformed checkpoint: no token-classification pipeline "
                    f"({type(exc).__name__})",
                    location=str(self.folder),
                ) from None
        return self._pipe

    def detect(self, segment: Segment) -> Iterable[Span]:
        return self.detect_many([segment])[0]

    def detect_many(self, segments: Sequence[Segment]) -> list[list[Span]]:
        """Spans for several segments; all their windows go through the pipeline in batches."""
        for segment in segments:
            if self.languages and segment.lang not in self.languages:
                try:
                    lang = canonical_language(segment.lang)
                except PolydeidError:
                    lang = None
                if lang not in self.languages:
                    raise DetectorUnavailableError(
                        f"{self.id} does not cover language {segment.lang[:20]!r}; "
                        f"it covers {', '.join(sorted(self.languages))}"
                    )
        jobs: list[tuple[int, int, int, int]] = []  # (segment, window index, start, end)
        for i, segment in enumerate(segments):
            spans = char_windows(len(segment.text), self.window, self.overlap)
            for w, (start, end) in enumerate(spans):
                if not segment.text[start:end].isspace() and start < end:
                    jobs.append((i, w, start, end))
        if not jobs:
            return [[] for _ in segments]
        pipe = self.load()
        import torch

        texts = [segments[i].text[s:e] for i, _, s, e in jobs]
        stride = max(1, min(64, (pipe.tokenizer.model_max_length or 512) // 4))
        try:
            with torch.inference_mode():
                results = pipe(texts, batch_size=self.batch_size, stride=stride)
        except Exception as exc:
            raise DetectionError(
                f"{self.id}: model inference failed ({type(exc).__name__})",
                location=_location(segments[jobs[0][0]]),
            ) from None
        if len(texts) == 1 and results and isinstance(results[0], dict):
            results = [results]
        found: list[list[WindowSpan]] = [[] for _ in segments]
        grids: dict[int, list[tuple[int, int]]] = {}
        for (i, w, start, end), entities in zip(jobs, results, strict=True):
            text = segments[i].text
            for entity in entities:
                if i not in grids:
                    grids[i] = words(text)
                found_span = self._entity(text, grids[i], entity, w, start, end)
                if found_span is not None:
                    found[i].append(found_span)
        return [merge_windows(f, self.id) for f in found]

    def _entity(
        self,
        text: str,
        grid: Sequence[tuple[int, int]],
        entity: Mapping[str, Any],
        window: int,
        w_start: int,
        w_end: int,
    ) -> WindowSpan | None:
        label = str(entity.get("entity_group", entity.get("entity", "")))
        bare = label.strip()
        if bare in self.plan.targets:
            category = self.plan.targets[bare]
        else:
            try:
                _, category = self.label_map.resolve(bare)
            except UnmappedLabel:
                category = self.fallback
        if category is None or entity.get("start") is None or entity.get("end") is None:
            return None
        score = min(1.0, max(0.0, float(entity.get("score", 0.0))))
        if score < self.thresholds.get(category, self.threshold):
            return None
        start, end = _snap(text, grid, w_start + int(entity["start"]), w_start + int(entity["end"]))
        if start >= end:
            return None
        cut = (w_start > 0 and start <= w_start) or (w_end < len(text) and end >= w_end)
        return WindowSpan(start, end, category, score, window, cut)
