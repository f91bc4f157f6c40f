"""Regular expressions run the project's way: guarded by a time limit, whole words only.

Every pattern runs under a time limit (ReDoS guard, via the ``regex`` module's ``timeout``);
a timeout fails closed with :class:`RuleTimeoutError` naming the rule and the segment's origin.
Context words are matched as whole words or phrases, never as substrings ("lic" is not in
"public").
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import regex

from polydeid.core.errors import RuleTimeoutError
from polydeid.core.segments import Segment
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


def phrase_alternation(
    words: Iterable[str], *, fold_case: bool, spaces: str = r"[ \t\u00a0]+"
) -> str:
    """A regex alternation of ``words`` (blank ones left out), longest first, equal lengths in
    text order; the spaces inside a word match ``spaces``."""
    parts = []
    for word in sorted({w.strip() for w in words} - {""}, key=lambda w: (-len(w), w)):
        parts.append(spaces.join(regex.escape(w) for w in word.split()))
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
        self.phrases = tuple(sorted(unique, key=lambda p: (-len(p), p)))
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
