"""The development part of a corpus the tagger also trains on.

A corpus that has no development split of its own (ASQ-PHI, GermEval 2014 dev, the
factRuEval-2016 devset) is split by a hash of each document's id: the 30 % that hash below
:data:`HOLDOUT_SHARE` are kept out of training and scored; the rest may be trained on. The
split depends on the id alone, so every reader and every run draws the same one.
"""

from __future__ import annotations

import hashlib

HOLDOUT_SHARE = 0.3


def in_holdout(doc_id: str) -> bool:
    """Whether a document of a split corpus is kept out of training (30 %, by a hash of its id)."""
    digest = hashlib.sha256(doc_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") / 2**32 < HOLDOUT_SHARE
