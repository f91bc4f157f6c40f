"""Word frequencies from the frequent part of wordfreq's lists: wordfreq's own values."""

from __future__ import annotations

import random

import pytest
import wordfreq

from polydeid.detect import vocabulary
from polydeid.detect.rules import dates
from polydeid.formats import code
from polydeid.locales import gazetteer
from polydeid.text import frequency

LANGS = ("en", "de", "fr", "es", "ru", "vi")


def _sample(lang: str, rng: random.Random) -> list[str]:
    top = wordfreq.top_n_list(lang, 150_000)
    words = top[:600] + rng.sample(top, 600) + top[-300:]  # the rarest of the list too
    pairs = zip(rng.sample(top[:3000], 250), rng.sample(top, 250), strict=True)
    words += [f"{a}{' ' if i % 3 else '-'}{b}" for i, (a, b) in enumerate(pairs)]
    words += ["2024", "3rd", "12:30", "", "  ", "HOUSE", "Straße", "l'hôpital", "x1y2", "zqxj"]
    words += [w.upper() for w in rng.sample(top, 100)] + [w.title() for w in rng.sample(top, 100)]
    return words


def test_a_word_reads_what_wordfreq_reads_from_the_floor_up() -> None:
    above = below = 0
    for lang in LANGS:
        rng = random.Random(f"frequency:{lang}")
        for word in _sample(lang, rng):
            exact = wordfreq.zipf_frequency(word, lang)
            ours = frequency.zipf(word, lang)
            if exact >= frequency.ZIPF_FLOOR:
                assert ours == exact, (lang, word)
                above += 1
            else:
                assert ours in (0.0, exact), (lang, word)
                below += 1
    assert above > 5000 and below > 1000  # both sides of the floor are reached


def test_the_frequent_lists_are_read_without_wordfreq_keeping_the_whole_list() -> None:
    wordfreq.get_frequency_dict.cache_clear()
    wordfreq.get_frequency_list.cache_clear()
    frequency._frequent.cache_clear()
    frequency.zipf.cache_clear()
    assert frequency.zipf("house", "en") > 5
    assert wordfreq.get_frequency_list.cache_info().currsize == 0
    assert wordfreq.get_frequency_dict.cache_info().currsize == 0
    floor = 10 ** (frequency.ZIPF_FLOOR - 9)
    assert min(frequency._frequent("en").values()) >= floor * 0.999


def test_every_threshold_read_is_at_or_above_the_floor() -> None:
    """A threshold below the floor would read a rarer word as 0.0 rather than its value."""
    for threshold in (
        gazetteer.COMMON_ZIPF,
        vocabulary.COMMON_ZIPF,
        dates._CLAUSE_MAX_ZIPF,
        code._rules().signature_max_zipf,
    ):
        assert threshold >= frequency.ZIPF_FLOOR
    with pytest.raises(Exception, match="below"):
        code._zipf_threshold(frequency.ZIPF_FLOOR - 0.5)
