"""``router_config.json``: the languages, subfolders and thresholds of a word-grid directory.

Every key is optional::

    {"name": "eaclin-ner", "revision": "v1.2", "max_tokens": 256, "stride": 127,
     "default_threshold": 0.5,
     "thresholds": {"PERSON": 0.55, "lg": {"DATE": 0.7}, "sw": 0.6},
     "languages": {"lg": "lug", "sw": {"subfolder": "swa", "threshold": 0.5,
                                         "thresholds": {"PERSON": 0.6}},
                   "rw": "kin", "luo": "luo"}}

Language keys may be any code or alias polydeid knows (``lug`` = ``lg``); without
``languages`` the four standard subfolders are expected. A threshold is looked up per language
and category, then per language, then per category, then ``default_threshold`` (0.5).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from polydeid.core.errors import DetectorUnavailableError, PolydeidError
from polydeid.core.taxonomy import Category
from polydeid.locales import canonical_language

from ._checkpoint import _NAME_UNSAFE, _REVISION_SHAPE, ROUTER_FILE
from ._labels import _shown

#: The standard language → subfolder map of the word-grid layout.
WORDGRID_SUBFOLDERS: Mapping[str, str] = MappingProxyType(
    {"lg": "lug", "sw": "swa", "rw": "kin", "luo": "luo"}
)
WORDGRID_THRESHOLD = 0.5


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
