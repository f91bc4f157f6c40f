"""Label maps: a checkpoint's ``id2label`` tags onto canonical categories.

A tag is split into a BIO/BIOES prefix and a bare label, which the map (``labelmaps/<name>.toml``
in ``detect/backends``, or a TOML path) sends to a category or ``"O"``. Labels the map does not
know are reported (``unmapped``, one warning) and treated as ``fallback`` (``ID_OTHER``), or
refused with ``strict=True`` (:class:`ConfigError`); never dropped.
"""

from __future__ import annotations

import logging
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from types import MappingProxyType

from polydeid.core.errors import ConfigError, PolydeidError, UnknownCategoryError
from polydeid.core.taxonomy import OUTSIDE, Category, Scheme, scheme

#: The package's logger (``polydeid.detect.backends.hf``), shared by its modules.
log = logging.getLogger(__package__)

DEFAULT_FALLBACK = Category.ID_OTHER
#: The package whose ``labelmaps`` folder holds the shipped maps (package data).
_LABELMAPS_PACKAGE = "polydeid.detect.backends"

_LABEL_SHAPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,39}")
_PREFIX = re.compile(r"([BIESLU])[-_](.+)", re.IGNORECASE)
#: BIOES/BILOU prefixes read as BIO: a single or beginning tag starts a span, the rest continue.
_PREFIX_BIO = {"B": "B", "S": "B", "U": "B", "I": "I", "E": "I", "L": "I"}


def _shown(label: str) -> str:
    """A checkpoint label as it may appear in a message (only label-shaped names are echoed)."""
    return label if _LABEL_SHAPE.fullmatch(label) else "(a label not shown: not label-shaped)"


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
    folder = resources.files(_LABELMAPS_PACKAGE) / "labelmaps"
    return tuple(
        sorted(p.name.removesuffix(".toml") for p in folder.iterdir() if p.name.endswith(".toml"))
    )


def load_label_map(spec: str | Path | LabelMap) -> LabelMap:
    """A shipped label map by name, or one read from a TOML file."""
    if isinstance(spec, LabelMap):
        return spec
    if isinstance(spec, str) and spec in label_map_names():
        resource = resources.files(_LABELMAPS_PACKAGE) / "labelmaps" / f"{spec}.toml"
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


def warn_unmapped(
    folder: Path, label_map: LabelMap, unmapped: Sequence[str], fallback: Category
) -> None:
    """The one warning that names a checkpoint's unmapped labels."""
    log.warning(
        "%s: checkpoint labels not in label map %r: %s; treated as %s",
        folder,
        label_map.name,
        ", ".join(_shown(u) for u in unmapped),
        fallback.value,
    )
