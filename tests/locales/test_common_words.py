"""German nouns read once into the sets the common-word prior and the gazetteer ask about."""

from __future__ import annotations

import inspect

from polydeid.locales import common_words


def test_german_noun_sets_hold_what_each_reader_asks_and_keep_no_entries() -> None:
    sets = common_words.german_noun_sets()
    assert not sets.forms & sets.named_forms  # a form any entry marks as a name is no noun
    assert {"leber", "lebern", "fieber", "heroin"} <= sets.forms
    assert "mutter" in sets.named_forms and not common_words.german_noun("Mutter")
    assert common_words.german_noun("Leber") and common_words.german_noun("FIEBER")
    assert {"leber", "fieber"} <= sets.lemmas and "berlin" not in sets.lemmas
    assert {"berlin", "hamburg"} <= sets.toponyms
    assert len(sets.forms) > 200_000 and len(sets.toponyms) > 1_000
    # the table's entries are read as they are needed, not kept
    assert inspect.isgeneratorfunction(common_words.german_noun_entries)
