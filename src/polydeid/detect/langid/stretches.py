"""The language of each part of a mixed record (East African notes switch between English and
Kiswahili, Luganda, Kinyarwanda or Dholuo inside one record).

``language_stretches(text, lang)`` cuts ``text`` into sentences and lines and names the
language of each piece of at least :data:`PIECE_LETTERS` letters (a shorter one continues the
piece before it); consecutive pieces of one language form a
:class:`~polydeid.core.segments.Stretch`. ``lang`` is the record's language
(from :func:`polydeid.detect.langid.identify`, or named by the caller) and the prior of every
piece: a piece leaves it only on clear evidence.

1. Our identifier (:mod:`polydeid.detect.langid`: py3langid with our n-gram model, over all
   the packs' languages, Dholuo and Kinyarwanda included) judges every piece. A piece whose
   best language is the record's stays in it; one whose best language is another with
   probability at least :data:`PIECE_CONFIDENCE` takes that language.
2. Otherwise ``lingua-language-detector`` gives a second opinion, restricted to the packs'
   languages it knows (it knows Ganda and Swahili; not Dholuo, Kinyarwanda or Amharic, whose
   share is that of the languages it takes them for, :data:`_STAND_INS`). The two
   distributions are multiplied and normalised; the piece takes the best language when it
   reaches :data:`PIECE_CONFIDENCE`, else it stays in the record's language.

So lingua (slow to load: its models are read at first use, about three seconds for the packs'
languages) runs only on pieces our identifier doubts and that lean away from the record's
language; a record clearly in one language never loads it.

Fail closed: a piece whose language cannot be named stays in the record's language, whose
rules and tagger read it, and the fixed-format rules (phones of every country, e-mail, URLs,
checksum-valid IDs) read every piece whatever its language; a record whose own language is
undetermined is refused (:func:`polydeid.detect.langid.resolve_language`), and a piece in a
language no detector is routed to fails in the pipeline
(:class:`~polydeid.core.errors.UnknownLanguageError`). No result or error carries text.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import regex

from polydeid.core.errors import DetectorUnavailableError
from polydeid.core.segments import Origin, Segment, Stretch
from polydeid.detect import langid
from polydeid.detect.langid import LanguageIdentifier, count_letters, resolve_language
from polydeid.locales import canonical_language, languages

#: Fewest letters of a piece judged on its own; shorter sentences and lines continue the last.
PIECE_LETTERS = 15
#: Least probability for a piece to leave the record's language.
PIECE_CONFIDENCE = 0.9
#: Floor of a probability in the product of the two opinions (neither vetoes alone).
_FLOOR = 1e-3
#: Languages lingua lacks and the ones it takes them for (its share of Dholuo or Kinyarwanda
#: text goes to the Bantu languages it knows, never to English).
_STAND_INS = {"luo": ("sw", "lg"), "rw": ("lg", "sw"), "am": ("ar",)}

#: Where a piece ends: after a sentence's end and space (not after ``Dr.``), after a full-width
#: sentence end (written with no space), at a line break.
_PIECE_END = regex.compile(r"(?<=[.!?;؟।።])(?<!\b\p{Lu}\p{Ll}{0,3}\.)\s+|(?<=[。！？；])\s*|\n\s*")


def pieces(text: str) -> list[tuple[int, int]]:
    """``text`` cut after sentence ends and line breaks into ``(start, end)`` pieces that cover
    it (none for empty text); a full stop after a short capitalised word (``Dr.``, ``Mrs.``)
    ends no sentence."""
    if not text:
        return []
    cuts = [m.end() for m in _PIECE_END.finditer(text) if 0 < m.end() < len(text)]
    return list(zip([0, *cuts], [*cuts, len(text)], strict=True))


def language_stretches(
    text: str, lang: str, *, identifier: LanguageIdentifier | None = None
) -> tuple[Stretch, ...]:
    """The stretches of ``text`` by language, or () when all of it stays in ``lang``."""
    lang = canonical_language(lang)
    identifier = identifier or langid.default_identifier()
    bounds = pieces(text)
    judged = [
        _piece_language(identifier, text[s:e], lang)
        if count_letters(text[s:e]) >= PIECE_LETTERS
        else None
        for s, e in bounds
    ]
    # A piece too short to judge continues the one before it; leading ones take the language
    # of the first piece judged.
    ahead = next((j for j in judged if j is not None), lang)
    found: list[Stretch] = []
    for (start, end), piece_lang in zip(bounds, judged, strict=True):
        piece_lang = piece_lang or (found[-1].lang if found else ahead)
        if found and found[-1].lang == piece_lang:
            found[-1] = Stretch(found[-1].start, end, piece_lang)
        else:
            found.append(Stretch(start, end, piece_lang))
    if len(found) <= 1 and all(s.lang == lang for s in found):
        return ()
    return tuple(found)


def mixed_segment(
    text: str,
    lang: str | None = None,
    *,
    origin: Origin | None = None,
    countries: Sequence[str] = (),
    hints: frozenset[str] = frozenset(),
    location: str | None = None,
) -> Segment:
    """A segment of ``text`` whose language is identified (``lang`` None or ``auto``: raises
    :class:`~polydeid.core.errors.RecordError` when undetermined) and whose parts in other
    languages carry their own (:func:`language_stretches`); a named ``lang`` is taken as is,
    for the whole text."""
    named = bool(lang) and str(lang).strip().lower() != "auto"
    record_lang = resolve_language(text, lang, location=location)
    stretches = () if named else language_stretches(text, record_lang)
    return Segment(
        text,
        record_lang,
        origin or Origin(),
        tuple(countries),
        hints,
        stretches,
    )


def _piece_language(identifier: LanguageIdentifier, piece: str, lang: str) -> str:
    probabilities = identifier.probabilities(piece)
    best, p = next(iter(probabilities.items()))
    if best == lang:
        return lang
    if p >= PIECE_CONFIDENCE:
        return best
    second = _lingua_probabilities(piece)
    if not second:
        return lang
    combined: dict[str, float] = {}
    for code, mine in probabilities.items():
        theirs = second.get(code)
        if theirs is None:
            theirs = max((second.get(k, 0.0) for k in _STAND_INS.get(code, ())), default=0.0)
        combined[code] = max(mine, _FLOOR) * max(theirs, _FLOOR)
    total = sum(combined.values())
    best = max(combined, key=lambda k: combined[k])
    return best if combined[best] / total >= PIECE_CONFIDENCE else lang


def _lingua_probabilities(piece: str) -> dict[str, float]:
    """lingua's confidence in each of the packs' languages it knows, for ``piece``."""
    detector, codes = _lingua()
    return {
        codes[value.language]: float(value.value)
        for value in detector.compute_language_confidence_values(piece)
    }


@cache
def _lingua() -> tuple[Any, dict[Any, str]]:
    """lingua's detector over the packs' languages it knows (built once; its models load at
    first use) and the canonical code of each of its languages."""
    try:
        from lingua import IsoCode639_1, Language, LanguageDetectorBuilder
    except ImportError:  # pragma: no cover - lingua-language-detector is a dependency
        raise DetectorUnavailableError(
            "per-part language identification needs lingua-language-detector"
        ) from None
    codes: dict[Any, str] = {}
    for code in languages():
        try:
            iso = IsoCode639_1.from_str(code)
        except ValueError:
            continue
        language = Language.from_iso_code_639_1(iso)
        if language is not None:
            codes[language] = code
    return LanguageDetectorBuilder.from_languages(*codes).build(), codes
