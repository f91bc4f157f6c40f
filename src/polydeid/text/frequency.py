"""How common a word is: ``wordfreq``'s Zipf frequency, from the frequent part of its lists.

``wordfreq`` (Apache-2.0; data CC BY-SA 4.0) keeps every word of a language's list in memory
once asked about it: over 30 MB a language, over half a gigabyte for the languages polydeid
reads. Every question polydeid asks compares a word with a threshold of
:data:`ZIPF_FLOOR` or more (once in a million words), so only the tokens that frequent are
kept here, read from wordfreq's own list of the language (the list wordfreq chooses for it)
bucket by bucket, up to the floor's, without its cache: the rarer words are never
decompressed or built, and leave no freed memory behind. A word's
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
    """wordfreq's frequencies of the tokens of ``lang`` at :data:`ZIPF_FLOOR` or more, from
    the list ``wordfreq.get_frequency_list(lang)`` reads (its ``read_cBpack`` format: a
    header, then one list of words per centibel from 0 down), read only as far as the floor."""
    import gzip

    import langcodes
    import msgpack
    from wordfreq import available_languages, cB_to_freq

    available = available_languages("best")
    # wordfreq's own choice of list for a language code (closest match, as it asks)
    best, _distance = langcodes.closest_match(lang, list(available), max_distance=60)
    if best == "und":
        raise LookupError(f"wordfreq has no list for language {lang!r}")
    frequent: dict[str, float] = {}
    with gzip.open(available[best], "rb") as infile:
        unpacker = msgpack.Unpacker(infile, raw=False)
        size = unpacker.read_array_header()
        header = unpacker.unpack() if size else None
        if not isinstance(header, dict) or header.get("format") != "cB":
            raise ValueError(f"unexpected wordfreq list header for {lang!r}")
        for index in range(min(size - 1, _FLOOR_BUCKET + 1)):
            freq = cB_to_freq(-index)
            for word in unpacker.unpack():
                frequent[word] = freq
    return frequent


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
