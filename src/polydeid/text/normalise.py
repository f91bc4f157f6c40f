"""Normalisation of identifier text for consistency keys (numbering, vault, hashing)."""

from __future__ import annotations

import re
import unicodedata

_SPACES = re.compile(r"\s+")


def normalise(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed: ``" John  SMITH "`` → ``"john smith"``."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def contains_original(candidate: str, original: str) -> bool:
    """Whether ``candidate`` equals or contains ``original`` (normalised, case-insensitive)."""
    needle = normalise(original)
    return bool(needle) and needle in normalise(candidate)
