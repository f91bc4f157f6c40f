"""Checkpoint directories: where they are, what revision they are, whether they are whole.

A hub id (``org/name``) is accepted only as a snapshot already in the local Hugging Face cache
(``huggingface_hub.snapshot_download(..., local_files_only=True)``): nothing is ever downloaded.
A revision is the one given, else the checkpoint's own (``_commit_hash``, a ``revision`` file,
the snapshot's commit), else a digest of its files. A missing or malformed checkpoint raises
:class:`DetectorUnavailableError` naming the directory and the problem: fail closed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from polydeid.core.errors import ConfigError, DetectorUnavailableError
from polydeid.core.segments import Segment

ROUTER_FILE = "router_config.json"
REVISION_FILE = "revision"
CONFIG_FILE = "config.json"

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
_REVISION_SHAPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,79}")
_COMMIT_PREFIX = re.compile(r"[0-9a-f]{7,39}")
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]+")
_HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*/[A-Za-z0-9][A-Za-z0-9_.\-]*")


# --- locating checkpoints, revisions --------------------------------------------------------


def resolve_local(
    spec: str | Path, *, revision: str | None = None, cache_dir: str | Path | None = None
) -> tuple[Path, bool]:
    """The local directory of a checkpoint — ``spec`` itself, or the already-downloaded
    snapshot of the hub id ``spec`` in the Hugging Face cache (at ``revision``: a full commit
    hash or a ref such as ``main`` or a tag; ``main`` by default) — and whether it came from
    the cache. Never downloads."""
    path = Path(spec).expanduser()
    if path.is_dir():
        return path, False
    text = str(spec)
    if not path.exists() and _HUB_ID.fullmatch(text):
        return _cached_snapshot(text, revision, cache_dir), True
    raise DetectorUnavailableError("no checkpoint directory here", location=str(path))


def _cached_snapshot(repo_id: str, revision: str | None, cache_dir: str | Path | None) -> Path:
    """The snapshot of ``repo_id`` at ``revision`` in the local cache, or
    :class:`DetectorUnavailableError` saying what is missing."""
    given = Path(cache_dir).expanduser() if cache_dir is not None else None
    if revision is not None and not _REVISION_SHAPE.fullmatch(revision):
        problem = "a revision is a commit hash or a ref name: letters, digits, '_', '.', '-'"
    else:
        try:
            from huggingface_hub import snapshot_download
        except ImportError:  # pragma: no cover - it comes with transformers
            problem = "hub ids need the huggingface_hub package"
        else:
            try:
                found = Path(
                    snapshot_download(
                        repo_id, revision=revision, cache_dir=given, local_files_only=True
                    )
                )
            except Exception as exc:
                problem = _cache_problem(exc, revision)
            else:
                if (
                    found.is_dir()
                    and found.parent.name == "snapshots"
                    and _REVISION_SHAPE.fullmatch(found.name)
                ):
                    return _as_given(found, given)
                problem = "the cache's ref does not name a snapshot directory"
    pinned = f" at revision {revision[:80]!r}" if revision else ""
    raise DetectorUnavailableError(
        f"model {repo_id!r}{pinned} is neither a local directory nor a downloaded snapshot "
        f"({problem}; looked in {given if given is not None else _default_cache()}); "
        "polydeid never downloads models: download it first (e.g. `hf download`) and pass "
        "its directory"
    )


def _cache_problem(exc: Exception, revision: str | None) -> str:
    """What a failed cache look-up means (the library's message is not echoed)."""
    from huggingface_hub.errors import IncompleteSnapshotError, LocalEntryNotFoundError

    if isinstance(exc, IncompleteSnapshotError):
        return "the cached snapshot is incomplete"
    if isinstance(exc, LocalEntryNotFoundError):
        if revision and _COMMIT_PREFIX.fullmatch(revision):
            return (
                "no snapshot or ref of that name; a commit is named by its full 40-character "
                "hash, not a prefix"
            )
        return f"no snapshot for {'that revision' if revision else 'ref main'} in the cache"
    if isinstance(exc, ValueError):
        return f"not a valid hub id or revision ({type(exc).__name__})"
    return f"cache unreadable ({type(exc).__name__})"


def _default_cache() -> str:
    try:
        from huggingface_hub import constants
    except ImportError:  # pragma: no cover - it comes with transformers
        return "the Hugging Face cache"
    return str(constants.HF_HUB_CACHE)


def _as_given(found: Path, cache: Path | None) -> Path:
    """``found`` under ``cache`` as the caller spelled it (the hub resolves the cache path)."""
    if cache is not None:
        try:
            return cache / found.relative_to(cache.resolve())
        except ValueError:
            pass
    return found


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


def _classifier_rows(folder: Path) -> int | None:
    """Output size of the classification head, read from safetensors headers (no loading);
    None for weights in another format."""

    def unreadable(exc: Exception) -> DetectorUnavailableError:
        return DetectorUnavailableError(
            f"malformed checkpoint: weights unreadable ({type(exc).__name__})",
            location=str(folder),
        )

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
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise unreadable(exc) from None
    try:
        from safetensors import SafetensorError, safe_open
    except ImportError:  # pragma: no cover - it comes with transformers
        raise DetectorUnavailableError(
            "Hugging Face backends need torch and transformers (safetensors)"
        ) from None
    try:
        for path in files:
            with safe_open(str(path), framework="numpy") as weights:
                names = weights.keys()  # a safe_open handle is not iterable
                keys = [k for k in names if k.split(".")[-2:] == ["classifier", "bias"]]
                if len(keys) == 1:
                    return int(weights.get_slice(keys[0]).get_shape()[0])
    except (OSError, ValueError, KeyError, TypeError, IndexError, SafetensorError) as exc:
        raise unreadable(exc) from None
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
