"""Normalisation of identifier text for consistency keys (numbering, vault, hashing)."""

from __future__ import annotations

import re
import unicodedata

from polydeid.text.reading import without_invisible

_SPACES = re.compile(r"\s+")


def normalise(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed, invisible characters removed (as the reading
    the detectors see removes them): ``" John  SMITH "``, ``"Jo\u200bhn Smith"`` →
    ``"john smith"``."""
    text = unicodedata.normalize("NFKC", without_invisible(text))
    return _SPACES.sub(" ", text.casefold()).strip()


def contains_original(candidate: str, original: str) -> bool:
    """Whether ``candidate`` equals or contains ``original`` (normalised, case-insensitive)."""
    needle = normalise(original)
    return bool(needle) and needle in normalise(candidate)
