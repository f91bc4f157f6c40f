"""Shared machinery of the rule layer: guarded regexes, whole-word context, the base class.

Every pattern runs under a time limit (ReDoS guard, via the ``regex`` module's ``timeout``);
a timeout fails closed with :class:`RuleTimeoutError` naming the rule and the segment's origin.
Context words are matched as whole words or phrases, never as substrings ("lic" is not in
"public").
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import ClassVar

import regex

from polydeid.core.errors import RuleTimeoutError
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.text.scripts import UNSPACED

#: Seconds one pattern may run over one segment before the rule fails closed.
PATTERN_TIMEOUT_S = 2.0

Pattern = regex.Pattern[str]
Match = regex.Match[str]


def _needs_boundary(char: str) -> bool:
    """Whether a phrase edge needs a word boundary: a letter or digit of a spaced script."""
    return char.isalnum() and not UNSPACED.match(char)


def compile_pattern(pattern: str, flags: int = 0) -> Pattern:
    """Compile with the project's defaults (Unicode, VERSION0 semantics)."""
    return regex.compile(pattern, flags | regex.VERSION0)


def phrase_alternation(words: Iterable[str], *, fold_case: bool) -> str:
    """A regex alternation of ``words``, longest first; spaces match runs of spaces."""
    parts = []
    for word in sorted(set(words), key=len, reverse=True):
        parts.append(r"[ \t\u00a0]+".join(regex.escape(w) for w in word.split()))
    alternation = "|".join(parts)
    return f"(?i:{alternation})" if fold_case else alternation


def guarded_finditer(pattern: Pattern, segment: Segment, rule_id: str) -> Iterator[Match]:
    """``pattern.finditer`` over the segment text, failing closed on a timeout."""
    try:
        yield from pattern.finditer(segment.text, timeout=PATTERN_TIMEOUT_S)
    except TimeoutError:
        raise RuleTimeoutError(
            f"rule {rule_id} exceeded {PATTERN_TIMEOUT_S}s on a segment of "
            f"{len(segment.text)} chars",
            location=str(segment.origin),
        ) from None


class ContextLexicon:
    """Whole-word (or whole-phrase) matcher for context words near a candidate.

    Phrases are matched case-insensitively; a phrase matches only where it is not preceded or
    followed by a letter or digit. Internal whitespace in a phrase matches any run of spaces,
    and a trailing ``.`` in a phrase is optional.
    """

    def __init__(self, phrases: Iterable[str]) -> None:
        unique = {p.strip().lower() for p in phrases if p.strip()}
        self.phrases = tuple(sorted(unique, key=len, reverse=True))
        if self.phrases:
            alts = "|".join(self._phrase_pattern(p) for p in self.phrases)
            self._pattern: Pattern | None = compile_pattern(f"(?:{alts})", regex.IGNORECASE)
        else:
            self._pattern = None

    @staticmethod
    def _phrase_pattern(phrase: str) -> str:
        """Pattern of one phrase: a word boundary on each side that is a letter or digit of a
        script written with spaces (none next to Han, kana, Thai…, or punctuation like "№")."""
        parts = [regex.escape(w) for w in phrase.split()]
        body = r"[\s\-_]*".join(parts)
        if body.endswith(r"\."):
            body = body[:-2] + r"\.?"
        core = phrase.rstrip(".") or phrase
        left = r"(?<![\p{L}\p{N}])" if _needs_boundary(phrase[0]) else ""
        right = r"(?![\p{L}\p{N}])" if _needs_boundary(core[-1]) else ""
        return f"{left}{body}{right}"

    def __bool__(self) -> bool:
        return self._pattern is not None

    def search(self, text: str, start: int = 0, end: int | None = None) -> bool:
        """Whether a phrase occurs as a whole word within ``text[start:end]``."""
        if self._pattern is None:
            return False
        end = len(text) if end is None else end
        found = self._pattern.search(
            text, max(0, start), min(len(text), end), timeout=PATTERN_TIMEOUT_S
        )
        return found is not None

    def near(self, text: str, start: int, end: int, *, before: int = 40, after: int = 0) -> bool:
        """Whether a phrase ends up to ``before`` chars left of ``start`` (or ``after`` right)."""
        if self.search(text, start - before, start):
            return True
        return after > 0 and self.search(text, end, end + after)


class RuleDetector:
    """Base of rule detectors: subclasses implement :meth:`find`.

    ``detect`` checks that every span is inside the text and not empty, so a faulty rule fails
    loudly in tests instead of corrupting output.
    """

    id: ClassVar[str]
    languages: frozenset[str] = frozenset()
    labels: ClassVar[frozenset[Category | Fact]]

    def find(self, segment: Segment) -> Iterable[Span]:
        raise NotImplementedError

    def detect(self, segment: Segment) -> list[Span]:
        n = len(segment.text)
        spans = list(self.find(segment))
        for s in spans:
            if s.end > n:
                raise ValueError(f"rule {self.id} produced span {s!r} past the end ({n})")
        return spans

    def __repr__(self) -> str:
        return f"{type(self).__name__}(id={self.id!r})"


class PhraseFactRule(RuleDetector):
    """A rule whose facts are the matches of one pattern per set of languages (the segment's
    language and English), all of one kind: subclasses give ``kind`` and :meth:`pattern`."""

    kind: ClassVar[Fact]

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls.labels = frozenset({cls.kind})

    def __init__(self) -> None:
        from polydeid.locales import languages

        self.languages = frozenset(languages())

    def pattern(self, langs: tuple[str, ...]) -> Pattern | None:
        """The pattern for ``langs`` (cached by the subclass); None when they give no words."""
        raise NotImplementedError

    def find(self, segment: Segment) -> Iterable[Span]:
        pattern = self.pattern(tuple(segment_languages(segment)))
        if pattern is None:
            return []
        return [
            Span(m.start(), m.end(), self.kind, self.id)
            for m in guarded_finditer(pattern, segment, self.id)
        ]


def segment_languages(segment: Segment, *, with_english: bool = True) -> Sequence[str]:
    """The segment's language, plus English (clinical text mixes in English terms)."""
    from polydeid.locales import canonical_language

    lang = canonical_language(segment.lang)
    return (lang, "en") if with_english and lang != "en" else (lang,)


def segment_countries(segment: Segment) -> Sequence[str]:
    """The segment's countries, or its language's default countries."""
    from polydeid.locales import default_countries

    return segment.countries or default_countries(segment.lang)
