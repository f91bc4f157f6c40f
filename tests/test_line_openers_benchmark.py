"""benchmarks/line_openers.py: which persons open a line, and its counts on a tiny corpus."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import line_openers

from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.corpora import AnnotatedDocument


def test_a_line_is_opened_after_only_spaces_bullets_or_dashes() -> None:
    text = "Intro line\n  - Baraka says\nSeen by Baraka\n• Amina\nx Amina"
    assert line_openers.opens_line(text, 0)
    assert line_openers.opens_line(text, text.index("Baraka says"))
    assert not line_openers.opens_line(text, text.index("Baraka\n"))
    assert line_openers.opens_line(text, text.index("Amina\n"))
    assert not line_openers.opens_line(text, text.rindex("Amina"))


@pytest.mark.torch
def test_counts_split_gold_persons_by_where_they_start() -> None:
    from polydeid.detect.tagger.model import MODEL_DIR, TaggerModel

    text = "Patient John Smith was seen today.\nJohn Smith called back at noon."
    first, second = text.index("John"), text.rindex("John")
    spans = (
        Span(first, first + 10, Category.PERSON, "gold"),
        Span(second, second + 10, Category.PERSON, "gold"),
    )
    doc = AnnotatedDocument(id="d1", text=text, lang="en", spans=spans)
    counts = line_openers.count([doc], TaggerModel.load(MODEL_DIR, precision="float32"))
    assert counts["opens"][1] == 1 and counts["inside"][1] == 1
    assert counts["inside"][0] == 1  # a common name after "Patient" is found
