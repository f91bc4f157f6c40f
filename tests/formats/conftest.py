"""Shared fixtures for the structured-format tests: a rules-only de-identifier (fast and
deterministic) and a golden-file checker."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from polydeid.api import Deidentifier

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture(scope="session")
def deid() -> Deidentifier:
    """Rules only, ``tag`` policy: ``[PERSON]``, ``[DATE]`` …"""
    return Deidentifier(profile="rules", policy="tag")


def check_golden(deid: Deidentifier, fmt: str, name: str, **kwargs: object) -> bytes:
    """Redact ``golden/<fmt>/<name>`` and compare with ``golden/<fmt>/expected/<name>``.

    With ``POLYDEID_UPDATE_GOLDEN=1`` the expected file is (re)written instead — review the
    diff before committing it.
    """
    source = GOLDEN / fmt / name
    expected = GOLDEN / fmt / "expected" / name
    out = deid.redact_document(source.read_bytes(), format=fmt, source=str(source), **kwargs).output
    if os.environ.get("POLYDEID_UPDATE_GOLDEN") == "1":
        expected.parent.mkdir(parents=True, exist_ok=True)
        expected.write_bytes(out)
    assert out == expected.read_bytes(), f"golden mismatch for {fmt}/{name}"
    return out
