"""The installed polydeid version, read once from the package metadata (``pyproject.toml``)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("polydeid")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "unknown"
