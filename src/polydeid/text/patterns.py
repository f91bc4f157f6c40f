"""Regular expressions run the project's way: guarded by a time limit, whole words only.

Every pattern runs under a time limit (ReDoS guard, via the ``regex`` module's ``timeout``);
a timeout fails closed with :class:`RuleTimeoutError` naming the rule and the segment's origin.
A scan over a whole segment (:func:`guarded_finditer`) is limited by the CPU time of the
thread that runs it, so that waiting for the processor under load is not taken for work, and
it stops at the current work budget's checkpoints (:mod:`polydeid.core.budget`).
Context words are matched as whole words or phrases, never as substrings ("lic" is not in
"public").

Compiling the long patterns of a language's rules takes most of a second per language; a
compiled one is kept in polydeid's cache (:mod:`polydeid.core.cache`) and read back by later
processes in a millisecond (:func:`compile_pattern`).
"""

from __future__ import annotations

import hashlib
import io
import pickle
import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any

import regex

from polydeid.core.budget import checkpoint
from polydeid.core.cache import load_bytes, store_bytes
from polydeid.core.errors import RuleTimeoutError
from polydeid.core.segments import Segment
from polydeid.text.gate import gate_words
from polydeid.text.scripts import UNSPACED

#: Seconds one pattern may run over one segment before the rule fails closed (CPU seconds of
#: the scanning thread in :func:`guarded_finditer`).
PATTERN_TIMEOUT_S = 2.0

#: Longest window a context lexicon searches without a time limit.
_UNTIMED_CHARS = 256

#: Matches of a guarded scan between two work-budget checkpoints.
_CHECK_EVERY = 64
#: Matches a guarded scan finds between two readings of its clocks.
_BATCH = 32
#: A scan that reached the ``regex`` module's wall-clock limit while its thread waited is
#: resumed from its last match at most this many times.
_MAX_RESUMES = 8

Pattern = regex.Pattern[str]
Match = regex.Match[str]


def _needs_boundary(char: str) -> bool:
    """Whether a phrase edge needs a word boundary: a letter or digit of a spaced script."""
    return char.isalnum() and not UNSPACED.match(char)


def compile_pattern(pattern: str, flags: int = 0) -> Pattern:
    """Compile with the project's defaults (Unicode, VERSION0 semantics).

    For patterns built from polydeid's own code and data, never from a record's text: one of
    at least :data:`_KEPT_CHARS` characters is kept compiled in polydeid's cache, by the
    ``regex`` and Python versions, flags and text, and read back from there (checked: the
    same text and flags, nothing but a compiled pattern in the file)."""
    flags = int(flags | regex.VERSION0)
    if len(pattern) < _KEPT_CHARS:
        return regex.compile(pattern, flags)
    name = _kept_name(pattern, flags)
    kept = _read_kept(load_bytes(_KEPT_KIND, name), pattern, flags)
    if kept is not None:
        return kept
    compiled = regex.compile(pattern, flags)
    store_bytes(_KEPT_KIND, name, pickle.dumps((flags, compiled), protocol=5))
    return compiled


#: Shortest pattern kept compiled: shorter ones compile in about as long as a file is read.
_KEPT_CHARS = 200
#: The cache's kind for compiled patterns.
_KEPT_KIND = "regex"
#: The function ``regex`` rebuilds a pickled pattern with: the only one a kept file may name.
_REBUILD = ("regex._regex", "compile")


def _kept_name(pattern: str, flags: int) -> str:
    digest = hashlib.sha256(pattern.encode("utf-8", "surrogatepass")).hexdigest()
    python = ".".join(map(str, sys.version_info[:2]))
    return f"regex {regex.__version__}|python {python}|flags {flags}|{digest}"


class _PatternUnpickler(pickle.Unpickler):
    """Reads a kept pattern: a file naming any function but ``regex``'s own rebuilder of a
    pickled pattern is refused before anything runs."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) != _REBUILD:
            raise pickle.UnpicklingError("not a compiled pattern")
        return super().find_class(module, name)


def _read_kept(body: bytes | None, pattern: str, flags: int) -> Pattern | None:
    """The compiled ``pattern`` kept in ``body`` with the flags asked for, or ``None`` where
    there is none, or the file holds anything else (another pattern, other flags, a damaged
    or foreign file)."""
    if body is None:
        return None
    try:
        kept = _PatternUnpickler(io.BytesIO(body)).load()
    except Exception:  # any damaged or foreign file: compile again
        return None
    if not (isinstance(kept, tuple) and len(kept) == 2):
        return None
    kept_flags, compiled = kept
    if kept_flags != flags or not isinstance(compiled, regex.Pattern):
        return None
    return compiled if compiled.pattern == pattern else None


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
    """``pattern.finditer`` over the segment text, failing closed once the scan needs more
    than :data:`PATTERN_TIMEOUT_S` of its thread's CPU time; a checkpoint every few matches.

    The scan holds the interpreter while it matches (``concurrent=False``): left to itself,
    the ``regex`` module lets go of it during a scan and then waits to take it back behind
    every busy Python thread, so a scan of a few milliseconds beside one took seconds. Its
    own limit is wall-clock time. When it fires before the scan has
    done that much work (its thread was waiting for the processor), the scan resumes from its
    last match with a longer wall-clock limit, so a scan that passes alone passes under load.
    """
    text = segment.text
    budget = PATTERN_TIMEOUT_S
    done = 0.0  # CPU seconds of the scanner's completed steps (not the caller's work)
    wall = budget
    pos, last, count = 0, (-1, -1), 0
    for _ in range(_MAX_RESUMES + 1):
        scan_cpu = scan_wall = lost = 0.0
        try:
            scanner: Iterator[Match] | None = pattern.finditer(
                text, pos, timeout=wall, concurrent=False
            )
        except TimeoutError:  # a scanner that times out as it starts
            scanner = None
        while scanner is not None:
            # Matches are taken in batches, each timed as a whole: the clocks cost more than a
            # short match.
            batch: list[Match] = []
            finished = timed_out = False
            t0, w0 = time.thread_time(), time.perf_counter()
            try:
                for _ in range(_BATCH):
                    match = next(scanner, None)
                    if match is None:
                        finished = True
                        break
                    batch.append(match)
            except TimeoutError:
                timed_out = True
            step = time.thread_time() - t0
            scan_cpu += step
            scan_wall += time.perf_counter() - w0
            if timed_out:
                lost = step
            else:
                done += step
            for match in batch:
                if match.span() == last and match.start() == match.end():
                    continue  # the empty match a resumed scan finds again
                last, pos = match.span(), match.end()
                count += 1
                if count % _CHECK_EVERY == 0:
                    checkpoint()
                yield match
            if finished:
                return
            if timed_out:
                break
        if done + lost >= budget * 0.95:
            break  # the work itself reached the limit
        # The thread waited more than it worked: resume with the wall time the rest of the
        # CPU time takes at the slowdown seen (at least twice the last limit, at most 16 times
        # the budget).
        slowdown = scan_wall / max(scan_cpu, 1e-3)
        wall = min(max(2 * wall, (budget - done) * slowdown * 1.5), 16 * budget)
        checkpoint()
    raise _timeout(rule_id, segment)


def _timeout(rule_id: str, segment: Segment) -> RuleTimeoutError:
    return RuleTimeoutError(
        f"rule {rule_id} exceeded {PATTERN_TIMEOUT_S}s on a segment of {len(segment.text)} chars",
        location=str(segment.origin),
    )


def gated_finditer(
    pattern: Pattern, segment: Segment, rule_id: str, keys: frozenset[str] | None
) -> Iterator[Match]:
    """The matches :func:`guarded_finditer` finds, for a pattern every match of which starts
    where a gate word of ``keys`` starts (:mod:`polydeid.text.gate`): ``pattern.match`` is
    tried only there, each start inside the last match skipped, as ``finditer`` does.
    ``keys`` None (a phrase without a key): :func:`guarded_finditer` itself.

    The tries share one budget of :data:`PATTERN_TIMEOUT_S` of their thread's CPU time; a try
    stopped by its wall-clock limit while its thread waited for the processor is tried
    again with a longer one, and one that did that much work fails closed."""
    if keys is None:
        yield from guarded_finditer(pattern, segment, rule_id)
        return
    text = segment.text
    end = 0
    done = 0.0
    for count, start in enumerate(gate_words(text).starts(keys), 1):
        if start < end:
            continue
        if count % _CHECK_EVERY == 0:
            checkpoint()
        wall = PATTERN_TIMEOUT_S
        for _ in range(_MAX_RESUMES + 1):
            t0 = time.thread_time()
            try:
                match = pattern.match(text, start, timeout=wall, concurrent=False)
            except TimeoutError:
                done += time.thread_time() - t0
                if done >= PATTERN_TIMEOUT_S * 0.95:
                    raise _timeout(rule_id, segment) from None
                wall = min(2 * wall, 16 * PATTERN_TIMEOUT_S)
                continue
            done += time.thread_time() - t0
            break
        else:
            raise _timeout(rule_id, segment)
        if done >= PATTERN_TIMEOUT_S:
            raise _timeout(rule_id, segment)
        if match is not None:
            end = match.end()
            yield match


class ContextLexicon:
    """Whole-word (or whole-phrase) matcher for context words near a candidate.

    Phrases are matched case-insensitively; a phrase matches only where it is not preceded or
    followed by a letter or digit. Internal whitespace in a phrase matches any run of spaces,
    and a trailing ``.`` in a phrase is optional.
    """

    def __init__(self, phrases: Iterable[str]) -> None:
        unique = {p.strip().lower() for p in phrases if p.strip()}
        self.phrases = tuple(sorted(unique, key=lambda p: (-len(p), p)))
        self._pattern: Pattern | None = (
            compile_pattern(_phrase_tries(self.phrases), regex.IGNORECASE) if self.phrases else None
        )

    @staticmethod
    def _phrase_pattern(phrase: str) -> str:
        """Pattern of one phrase: a word boundary on each side that is a letter or digit of a
        script written with spaces (none next to Han, kana, Thai…, or punctuation like "№")."""
        return _edged("".join(_phrase_atoms(phrase)), *_edges(phrase))

    def __bool__(self) -> bool:
        return self._pattern is not None

    def search(self, text: str, start: int = 0, end: int | None = None) -> bool:
        """Whether a phrase occurs as a whole word within ``text[start:end]``. A window of at
        most :data:`_UNTIMED_CHARS` characters is searched without a time limit: a phrase
        pattern's work there is bounded by the window, and the limit's clock costs more than
        such a search."""
        if self._pattern is None:
            return False
        low, high = max(0, start), min(len(text), len(text) if end is None else end)
        if high - low <= _UNTIMED_CHARS:
            return self._pattern.search(text, low, high) is not None
        return self._pattern.search(text, low, high, timeout=PATTERN_TIMEOUT_S) is not None

    def near(self, text: str, start: int, end: int, *, before: int = 40, after: int = 0) -> bool:
        """Whether a phrase ends up to ``before`` chars left of ``start`` (or ``after`` right)."""
        if self.search(text, start - before, start):
            return True
        return after > 0 and self.search(text, end, end + after)


#: What the space between two words of a phrase matches.
_PHRASE_GAP = r"[\s\-_]*"


def _edges(phrase: str) -> tuple[bool, bool]:
    """Whether ``phrase`` needs a word boundary on its left and on its right (a trailing
    ``.`` is optional, so the letter before it decides)."""
    core = phrase.rstrip(".") or phrase
    return _needs_boundary(phrase[0]), _needs_boundary(core[-1])


def _edged(body: str, left: bool, right: bool) -> str:
    """``body`` with the word boundaries :func:`_edges` asks for."""
    return (r"(?<![\p{L}\p{N}])" if left else "") + body + (r"(?![\p{L}\p{N}])" if right else "")


def _phrase_atoms(phrase: str) -> list[str]:
    """The body of a phrase's pattern, one atom per character or gap: words joined by any
    run of spaces, hyphens or underscores, a trailing ``.`` optional."""
    atoms: list[str] = []
    for k, word in enumerate(phrase.split()):
        if k:
            atoms.append(_PHRASE_GAP)
        atoms.extend(regex.escape(c) for c in word)
    if atoms and atoms[-1] == regex.escape("."):
        atoms[-1] = r"\.?"
    return atoms


def _trie(sequences: Iterable[list[str]]) -> str:
    """A pattern matching exactly the atom sequences given, their common prefixes shared."""
    root: dict[str, Any] = {}
    for atoms in sequences:
        node = root
        for atom in atoms:
            node = node.setdefault(atom, {})
        node[""] = {}  # a sequence ends here

    def render(node: dict[str, Any]) -> str:
        alternatives = [atom + render(child) for atom, child in sorted(node.items()) if atom]
        if not alternatives:
            return ""
        body = "|".join(alternatives)
        if len(alternatives) > 1:
            body = f"(?:{body})"
        return f"(?:{body})?" if "" in node else body

    return render(root)


def _phrase_tries(phrases: Iterable[str]) -> str:
    """One pattern that matches where one of ``phrases`` matches as
    :meth:`ContextLexicon._phrase_pattern` writes it: the phrases of each kind of edge (a
    word boundary needed on the left, on the right) share one trie, so a search tries each
    position once per kind rather than once per phrase."""
    kinds: dict[tuple[bool, bool], list[list[str]]] = {}
    for phrase in phrases:
        kinds.setdefault(_edges(phrase), []).append(_phrase_atoms(phrase))
    alternatives = [
        _edged(f"(?:{_trie(sequences)})", *edges) for edges, sequences in sorted(kinds.items())
    ]
    return "(?:" + "|".join(alternatives) + ")"
