"""Hugging Face token classifiers as detectors, loaded only from local directories.

* :class:`HfWordGridDetector` (:mod:`._wordgrid`) — per-language checkpoints on polydeid's word
  grid, routed by ``router_config.json`` (:mod:`._router`): the East African clinical layout.
* :class:`HfPipelineDetector` (:mod:`._pipeline`) — any token classifier through the
  transformers ``token-classification`` pipeline over overlapping character windows.

Both map checkpoint labels through a label map (:mod:`._labels`), record spans as
``backend.hf.<name>@<revision>``, and fail closed on a missing or malformed checkpoint; hub
ids come only from the local Hugging Face cache, never downloaded (:mod:`._checkpoint`).
"""

from ._checkpoint import (
    CONFIG_FILE,
    REVISION_FILE,
    ROUTER_FILE,
    Checkpoint,
    content_revision,
    declared_revision,
    inspect_checkpoint,
    pin_revision,
    resolve_local,
)
from ._labels import (
    DEFAULT_FALLBACK,
    LabelMap,
    LabelPlan,
    UnmappedLabel,
    label_map_names,
    load_label_map,
    plan_labels,
)
from ._pipeline import (
    PIPELINE_OVERLAP,
    PIPELINE_THRESHOLD,
    PIPELINE_WINDOW,
    HfPipelineDetector,
    WindowSpan,
    char_windows,
    merge_windows,
)
from ._pipeline import _snap as _snap  # private; the tests import it from here
from ._router import (
    WORDGRID_SUBFOLDERS,
    WORDGRID_THRESHOLD,
    LanguageRoute,
    RouterConfig,
    read_router_config,
)
from ._wordgrid import WORDGRID_MAX_TOKENS, HfWordGridDetector

__all__ = [
    "CONFIG_FILE",
    "DEFAULT_FALLBACK",
    "PIPELINE_OVERLAP",
    "PIPELINE_THRESHOLD",
    "PIPELINE_WINDOW",
    "REVISION_FILE",
    "ROUTER_FILE",
    "WORDGRID_MAX_TOKENS",
    "WORDGRID_SUBFOLDERS",
    "WORDGRID_THRESHOLD",
    "Checkpoint",
    "HfPipelineDetector",
    "HfWordGridDetector",
    "LabelMap",
    "LabelPlan",
    "LanguageRoute",
    "RouterConfig",
    "UnmappedLabel",
    "WindowSpan",
    "char_windows",
    "content_revision",
    "declared_revision",
    "inspect_checkpoint",
    "label_map_names",
    "load_label_map",
    "merge_windows",
    "pin_revision",
    "plan_labels",
    "read_router_config",
    "resolve_local",
]
