"""Policies: which operator replaces each category, loaded from TOML and validated on load.

Schema::

    [meta]
    name = "surrogate"              # optional; defaults to the file name
    description = "..."             # optional

    [default]                       # required: the operator for categories not listed
    operator = "tag"

    [categories.PERSON]             # one table per category (canonical names, any case)
    operator = "surrogate"
    max_attempts = 60               # operator options sit beside `operator`

    [categories.DATE]
    operator = "dateshift"
    max_days = 365

Operators and their options are listed in :mod:`polydeid.transform.operators`. Every error
names the file and the offending key: malformed TOML and wrong option types raise
:class:`PolicyError`, unknown categories :class:`UnknownCategoryError`, unknown operators
:class:`UnknownOperatorError`. ``load_policy("surrogate")`` loads a shipped policy
(``src/polydeid/policies/<name>.toml``).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from polydeid.core.errors import (
    PolicyError,
    UnknownCategoryError,
    UnknownOperatorError,
)
from polydeid.core.taxonomy import Category
from polydeid.transform.operators import (
    OperatorSpec,
    describe_validation,
    known_operators,
    operator_info,
)

_TOP_LEVEL = frozenset({"meta", "default", "categories"})


class _Meta(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    name: str | None = None
    description: str = ""


@dataclass(frozen=True, slots=True)
class Policy:
    """An operator per category, with a default for the rest."""

    name: str
    default: OperatorSpec
    categories: Mapping[Category, OperatorSpec] = field(default_factory=dict)
    description: str = ""
    source: str = "<memory>"

    def operator_for(self, category: Category) -> OperatorSpec:
        """The operator spec for ``category`` (the default when the policy does not list it)."""
        return self.categories.get(category, self.default)

    def specs(self) -> tuple[OperatorSpec, ...]:
        """Every spec the policy can use (default first)."""
        return (self.default, *self.categories.values())

    @property
    def needs_key(self) -> bool:
        return any(spec.needs_key for spec in self.specs())

    def __repr__(self) -> str:
        n = len(self.categories)
        return f"Policy({self.name!r}, default={self.default.name}, categories={n})"


def shipped_policies() -> tuple[str, ...]:
    """Names of the policies shipped with polydeid."""
    folder = resources.files("polydeid") / "policies"
    names = (p.name.removesuffix(".toml") for p in folder.iterdir() if p.name.endswith(".toml"))
    return tuple(sorted(names))


def load_policy(path_or_name: str | Path) -> Policy:
    """Load a policy file, or the shipped policy of that name (``"tag"``, ``"surrogate"``, …)."""
    if isinstance(path_or_name, str) and path_or_name in shipped_policies():
        return _shipped(path_or_name)
    path = Path(path_or_name)
    if not path.is_file():
        raise PolicyError(
            "no policy file there, and not a shipped policy "
            f"(shipped: {', '.join(shipped_policies())})",
            location=str(path),
        )
    return parse_policy(path.read_text("utf-8"), source=str(path), default_name=path.stem)


@cache
def _shipped(name: str) -> Policy:
    text = (resources.files("polydeid") / "policies" / f"{name}.toml").read_text("utf-8")
    return parse_policy(text, source=f"policies/{name}.toml", default_name=name)


def parse_policy(text: str, *, source: str = "<memory>", default_name: str = "policy") -> Policy:
    """Parse and validate policy TOML ``text``; errors are located at ``source``."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PolicyError(f"malformed TOML: {exc}", location=source) from None
    return policy_from_dict(raw, source=source, default_name=default_name)


def policy_from_dict(
    raw: Mapping[str, Any], *, source: str = "<memory>", default_name: str = "policy"
) -> Policy:
    """Validate an already-parsed policy table."""
    unknown = sorted(set(raw) - _TOP_LEVEL)
    if unknown:
        raise PolicyError(
            f"unknown top-level key {unknown[0]!r}; allowed: {sorted(_TOP_LEVEL)}", location=source
        )
    try:
        meta = _Meta.model_validate(raw.get("meta", {}))
    except ValidationError as exc:
        raise PolicyError(describe_validation(exc, "meta"), location=source) from None
    if "default" not in raw:
        raise PolicyError("missing [default] table (with operator = …)", location=source)
    default = _spec(raw["default"], "default", source)
    tables = raw.get("categories", {})
    if not isinstance(tables, Mapping):
        raise PolicyError("'categories' must be a table of tables", location=source)
    categories: dict[Category, OperatorSpec] = {}
    for name, table in tables.items():
        try:
            category = Category.parse(name)
        except UnknownCategoryError as exc:
            raise exc.at(f"{source}:categories") from None
        if category in categories:
            raise PolicyError(f"categories.{name}: category listed twice", location=source)
        categories[category] = _spec(table, f"categories.{name}", source)
    return Policy(
        name=meta.name or default_name,
        default=default,
        categories=MappingProxyType(categories),
        description=meta.description,
        source=source,
    )


def _spec(table: Any, where: str, source: str) -> OperatorSpec:
    if not isinstance(table, Mapping):
        raise PolicyError(f"{where}: must be a table with operator = …", location=source)
    options = dict(table)
    name = options.pop("operator", None)
    if not isinstance(name, str):
        raise PolicyError(
            f"{where}.operator: missing or not a string; known: {', '.join(known_operators())}",
            location=source,
        )
    try:
        info = operator_info(name)
    except UnknownOperatorError as exc:
        raise exc.at(f"{source}:{where}.operator") from None
    try:
        return OperatorSpec(name, info.options.model_validate(options))
    except ValidationError as exc:
        raise PolicyError(describe_validation(exc, where), location=source) from None
