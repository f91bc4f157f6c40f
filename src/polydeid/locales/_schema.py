"""Shape checks shared by the locale data loaders (one loader per kind, see the sibling modules).

Each check reads one key of a raw TOML table and raises :class:`ConfigError` located at the
file and the key (``languages/en/ages.toml units.year.after``) when the value has the wrong
shape. A missing key reads as empty. Lists keep their items as written (blank ones too): what
a consumer does with them is the consumer's business.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from polydeid.core.errors import ConfigError


def at(file: str, path: str) -> str:
    """The location of ``path`` (dotted keys) in ``file``."""
    return f"{file} {path}" if path else file


def table(raw: Mapping[str, Any], key: str, file: str, path: str = "") -> Mapping[str, Any]:
    """The sub-table ``key`` of ``raw`` (empty when absent)."""
    value = raw.get(key, {})
    if not isinstance(value, Mapping):
        raise ConfigError("expected a table", location=at(file, f"{path}{key}"))
    return value


def tables(
    raw: Mapping[str, Any], key: str, file: str, path: str = ""
) -> tuple[Mapping[str, Any], ...]:
    """The array of tables ``key`` of ``raw`` (``[[key]]``; empty when absent)."""
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(t, Mapping) for t in value):
        raise ConfigError("expected an array of tables", location=at(file, f"{path}{key}"))
    return tuple(value)


def strings(raw: Mapping[str, Any], key: str, file: str, path: str = "") -> tuple[str, ...]:
    """The list of strings ``key`` of ``raw``, as written (empty when absent)."""
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError("expected a list of strings", location=at(file, f"{path}{key}"))
    return tuple(value)


def string(raw: Mapping[str, Any], key: str, file: str, path: str = "", default: str = "") -> str:
    value = raw.get(key, default)
    if not isinstance(value, str):
        raise ConfigError("expected a string", location=at(file, f"{path}{key}"))
    return value


def number(
    raw: Mapping[str, Any], key: str, file: str, path: str = "", default: float | None = None
) -> float:
    """A number (an integer or a float; required when ``default`` is None)."""
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError("expected a number", location=at(file, f"{path}{key}"))
    return float(value)


def integer(raw: Mapping[str, Any], key: str, file: str, path: str = "") -> int:
    """A required integer."""
    value = raw.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError("expected an integer", location=at(file, f"{path}{key}"))
    return value


def flag(raw: Mapping[str, Any], key: str, file: str, path: str = "") -> bool:
    """A boolean (false when absent)."""
    value = raw.get(key, False)
    if not isinstance(value, bool):
        raise ConfigError("expected true or false", location=at(file, f"{path}{key}"))
    return value


def word_values(raw: Mapping[str, Any], key: str, file: str, path: str = "") -> Mapping[str, int]:
    """A table of words and their integer values, in file order (empty when absent)."""
    value = raw.get(key, {})
    if not isinstance(value, Mapping) or not all(isinstance(v, int) for v in value.values()):
        raise ConfigError(
            "expected a table of words and integers", location=at(file, f"{path}{key}")
        )
    return MappingProxyType(dict(value))


def frozen(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    """A read-only copy of ``mapping``."""
    return MappingProxyType(dict(mapping))
