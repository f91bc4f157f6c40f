"""Where a word of a list starts in a text: the gate before a rule's exact pattern.

Most rules that look up word lists (eponyms, clinical terms, care roles, places) can match
only where one of a few thousand words starts, and most texts hold none of them. Scanning
the whole text with each rule's long alternation costs more than the rest of the rule.
:func:`gate_words` reads a text's words once (shared by every rule of one pipeline call,
:mod:`polydeid.text.memo`); :meth:`GateWords.starts` answers where words of a key set
start, and :func:`key_of` gives the key a phrase is looked up by.

A **gate word** is a run of letters (``\\p{L}+``) not preceded by a letter or digit; its key
is its ``str.casefold``. A pattern every match of which starts with a phrase written in
letters, matched as written or case-insensitively (the ``regex`` module's simple case
folding), and followed by a character that is no letter, starts where a gate word of the
phrase's key starts. :func:`polydeid.text.patterns.gated_finditer` matches only there.
"""

from __future__ import annotations

from collections.abc import Iterable

import regex

from polydeid.text.memo import remembered

#: A gate word: a run of letters not preceded by a letter or digit.
_GATE_WORD = regex.compile(r"(?<![\p{L}\p{N}])\p{L}+", regex.VERSION0)
_LETTERS = regex.compile(r"\p{L}+", regex.VERSION0)


def key_of(phrase: str) -> str | None:
    """The key a phrase's matches start with: its leading run of letters, casefolded;
    ``None`` when it does not start with a letter (no gate can find it)."""
    if phrase.isalpha():  # the common case: what ``str`` calls letters ``regex`` does too
        return phrase.casefold()
    run = _LETTERS.match(phrase)
    return run.group().casefold() if run is not None else None


def keys_of(phrases: Iterable[str]) -> frozenset[str] | None:
    """The keys of every phrase, or ``None`` when one of them has no key."""
    out: set[str] = set()
    for phrase in phrases:
        key = key_of(phrase)
        if key is None:
            return None
        out.add(key)
    return frozenset(out)


class GateWords:
    """The gate words of one text, read once (see the module docstring)."""

    __slots__ = ("_at", "_folded", "keys", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        #: The keys of every gate word of the text.
        self.keys = frozenset(map(str.casefold, _GATE_WORD.findall(text)))
        self._folded: str | None = None
        self._at: dict[str, list[int]] | None = None

    def starts(self, keys: frozenset[str]) -> list[int]:
        """Where a gate word whose key is in ``keys`` starts, in order."""
        return [start for start, _ in self.found(keys)]

    def found(self, keys: frozenset[str]) -> list[tuple[int, str]]:
        """Where a gate word whose key is in ``keys`` starts, and its key, in order."""
        hits = self.keys & keys
        if not hits:
            return []
        if self._folded is None:
            self._folded = self.text.casefold()
        out: list[tuple[int, str]] = []
        if len(self._folded) != len(self.text):
            # a character folds to several ("ß" -> "ss"): offsets differ, read word by word
            every = self._every()
            for key in hits:
                out.extend((start, key) for start in every.get(key, ()))
        else:
            for key in hits:
                out.extend((start, key) for start in self._found(key))
        out.sort()
        return out

    def _found(self, key: str) -> Iterable[int]:
        """Where a gate word of ``key`` starts, from the casefolded text (one character for
        one): each place the key is found inside no longer run of letters and digits is
        checked against the text's own word there (``str`` classes first: they are cheap,
        and they never call a letter what ``regex`` does not)."""
        text, folded, n = self.text, self._folded, len(key)
        assert folded is not None
        at = folded.find(key)
        while at != -1:
            if (at == 0 or not text[at - 1].isalnum()) and not text[at + n : at + n + 1].isalpha():
                word = _GATE_WORD.match(text, at)
                if word is not None and word.end() == at + n:
                    yield at
            at = folded.find(key, at + 1)

    def _every(self) -> dict[str, list[int]]:
        if self._at is None:
            at: dict[str, list[int]] = {}
            for word in _GATE_WORD.finditer(self.text):
                at.setdefault(word.group().casefold(), []).append(word.start())
            self._at = at
        return self._at


def gate_words(text: str) -> GateWords:
    """The gate words of ``text``, read once per pipeline call (:mod:`polydeid.text.memo`)."""
    return remembered("gate words", text, lambda: GateWords(text))
