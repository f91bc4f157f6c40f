"""How common a word is: ``wordfreq``'s Zipf frequency, from the frequent part of its lists.

``wordfreq`` (Apache-2.0; data CC BY-SA 4.0) keeps every word of a language's list in memory
once asked about it: over 30 MB a language, over half a gigabyte for the languages polydeid
reads. Every question polydeid asks compares a word with a threshold of
:data:`ZIPF_FLOOR` or more (once in a million words), so only the tokens that frequent are
kept here, read from wordfreq's own list of the language without its cache, and a word's
frequency is computed from them exactly as ``wordfreq.zipf_frequency`` computes it (its
tokenizer, digit handling, combination of several tokens and rounding): the same value
wherever every token of the word is that frequent (tested against wordfreq), and ``0.0``, as
for an unknown word, where one is rarer.
"""

from __future__ import annotations

import math
from functools import cache, lru_cache

#: The least Zipf frequency read exactly; a rarer word reads 0.0.
ZIPF_FLOOR = 3.0
#: wordfreq's lists are buckets of one centibel each, from 0 cB (every word) down.
_FLOOR_BUCKET = round((9.0 - ZIPF_FLOOR) * 100)
#: wordfreq's frequency of an unknown word under ``zipf_frequency`` (Zipf 0).
_UNKNOWN = 1e-9


@cache
def _frequent(lang: str) -> dict[str, float]:
    """wordfreq's frequencies of the tokens of ``lang`` at :data:`ZIPF_FLOOR` or more."""
    from wordfreq import cB_to_freq, get_frequency_list

    # the undecorated reader: wordfreq would otherwise keep the whole list
    buckets = get_frequency_list.__wrapped__(lang, "best")
    return {
        word: cB_to_freq(-index)
        for index, bucket in enumerate(buckets[: _FLOOR_BUCKET + 1])
        for word in bucket
    }


@lru_cache(maxsize=1 << 16)
def zipf(word: str, lang: str) -> float:
    """``wordfreq.zipf_frequency(word, lang)`` where each token of ``word`` is at
    :data:`ZIPF_FLOOR` or more; else 0.0 (the word is rarer than the floor, or unknown).
    Kept per word as wordfreq keeps its answers: the rules ask again for the same words."""
    from wordfreq import INFERRED_SPACE_FACTOR
    from wordfreq.language_info import get_language_info
    from wordfreq.numbers import digit_freq, smash_numbers
    from wordfreq.tokens import lossy_tokenize

    tokens = lossy_tokenize(word, lang)
    if not tokens:
        return 0.0
    frequent = _frequent(lang)
    one_over = 0.0
    for token in tokens:
        smashed = smash_numbers(token)
        freq = frequent.get(smashed)
        if freq is None:
            return 0.0
        if smashed != token:
            freq *= digit_freq(token)
        one_over += 1.0 / freq
    freq = 1.0 / one_over
    if get_language_info(lang)["tokenizer"] == "jieba":
        freq *= INFERRED_SPACE_FACTOR ** -(len(tokens) - 1)
    unrounded = max(freq, _UNKNOWN)
    freq = round(unrounded, math.floor(-math.log(unrounded, 10)) + 3)
    return round(math.log(freq, 10) + 9, 2)
