"""The one definition of scripts whose words are not set off by spaces."""

from __future__ import annotations

import pytest

from polydeid.text.scripts import UNSPACED


@pytest.mark.parametrize("letter", ["患", "か", "カ", "환", "ผ", "ຄ", "ក", "လ"])
def test_scripts_written_without_spaces_or_with_glued_particles(letter: str) -> None:
    assert UNSPACED.fullmatch(letter)


@pytest.mark.parametrize("letter", ["a", "é", "Ж", "ም", "م", "र", "ạ", "1", "-"])
def test_spaced_scripts_digits_and_punctuation_are_not(letter: str) -> None:
    assert not UNSPACED.fullmatch(letter)
