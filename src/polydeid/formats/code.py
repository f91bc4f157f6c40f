"""Code-aware reading: source files, logs, stack traces, git logs and tickets with pasted code.

Text that is or contains code is split so that only the parts that can hold a person's data
are scanned: comments, docstrings, string literals, log messages, exception messages,
commit authors and prose lines are ``text`` fields; identifiers, function/class/package
names, file paths, versions, hashes, log timestamps, levels, thread and logger names and
stack-frame lines are not fields at all and come out byte for byte.

How a text is read (``language=`` option, else the file name, else its content):

- **code** (a trusted Pygments lexer, see ``data/code.toml``): comment and string tokens
  become fields with their markers and quotes stripped, one field per line; backslash
  escapes in strings are decoded (``offsets`` map them back) and a replacement is escaped
  for the literal's quoting. In configuration languages (YAML, TOML, INI, properties, JSON)
  a value is judged by its key through :func:`polydeid.lexicon.fields.role_for_name`.
- **log** and **prose** (markdown, tickets, e-mails): line by line. Fenced blocks are lexed
  with their language; indented blocks that look like code are lexed with a guessed one;
  log lines keep their prefix and scan the message (a ``key=value`` pair in it whose key names
  an identifier, ``patient_name=Okello James``, ``mrn="4411"``, is a value field, so the
  whole value is replaced whether or not a detector would find it); stack-trace frames are
  skipped and only exception messages scanned; git ``Author:`` lines and commit trailers
  name a person; any other line is prose, scanned whole.

Anything the reader cannot place is scanned (fail closed): an unknown language or a block
whose language cannot be guessed is read line by line as prose.

Lexing (Pygments tokens to comments and literals) is :mod:`polydeid.formats._code_lex`; this
module chooses the mode and turns lines and lexed pieces into fields (``_Builder``).
"""

from __future__ import annotations

import codecs
import re
import tomllib
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from pathlib import PurePath

from pygments.lexers import get_lexer_for_filename
from pygments.util import ClassNotFound

from polydeid.core.errors import ConfigError
from polydeid.core.taxonomy import COARSE_GROUP, Category
from polydeid.formats._code_lex import (
    BLANK,
    CommentPiece,
    LiteralPiece,
    decode_escapes,
    lexer_family,
    pieces,
    tokenize,
)
from polydeid.formats.base import Document, Encoder, Field
from polydeid.formats.text import decode_utf8
from polydeid.lexicon.fields import (
    TEXT,
    Role,
    RoleKind,
    normalise_name,
    role_for_name,
    text_role,
    value_role,
)
from polydeid.lexicon.shapes import calendar_words
from polydeid.locales import check_data
from polydeid.locales.dates import name_key
from polydeid.text import frequency

#: How much of a file without a telling extension is looked at to choose its mode.
_SNIFF_CHARS = 20_000
#: ``key=value`` pairs in a log message (logfmt style): a quoted value, or bare words up to the
#: next pair, a ``,``/``;``/``&``, a double quote or the message's end (an apostrophe is part
#: of a name: ``Anyang' Nyong'o``); in a URL's query (the key right after ``?`` or ``&``) one
#: token only.
_PAIR = re.compile(
    r"""(?<![\w.-])(?P<key>[A-Za-z_][\w.-]{0,63})="""
    r"""(?:"(?P<dq>[^"\n]*)"|'(?P<sq>[^'\n]*)'|(?P<bare>[^\s"',;&=][^",;&=\n]*?))"""
    r"""(?=\s+[A-Za-z_][\w.-]{0,63}=|\s*[,;&"]|\s*$)"""
)
_QUERY_VALUE = re.compile(r"""[^\s&#"']+""")
#: A bare value of more words than this is a sentence, not a value: scanned as text.
_PAIR_WORDS = 4
#: What a pair's key may make a value field in a log message, by coarse group: names,
#: identifiers, contacts and dates ("patient_name=Rukundo Ikirezi", "mrn=123"). Other value
#: keys ("job=nightly-export") stay text, scanned like the rest of the message.
_PAIR_GROUPS = frozenset({"NAME", "ID", "CONTACT", "DATE"})


# --- data ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Layout:
    name: str
    pattern: re.Pattern[str]
    fields: dict[str, Role]


@dataclass(frozen=True, slots=True)
class _Rules:
    code: frozenset[str]
    config: frozenset[str]
    lines: frozenset[str]
    prose_lines: frozenset[str]
    no_escapes: frozenset[str]
    log_extensions: frozenset[str]
    prose_extensions: frozenset[str]
    guess_signals: tuple[tuple[str, tuple[re.Pattern[str], ...]], ...]
    guess_min_hits: int
    guess_min_fraction: float
    code_line: re.Pattern[str]
    skip_literal: tuple[re.Pattern[str], ...]
    skip_code_literal: tuple[re.Pattern[str], ...]
    unscanned: re.Pattern[str]
    timestamp: re.Pattern[str]
    level_first: re.Pattern[str]
    level_item: re.Pattern[str]
    bracket_item: re.Pattern[str]
    thread: re.Pattern[str]
    logger_item: re.Pattern[str]
    other_items: tuple[re.Pattern[str], ...]
    json_log_keys: frozenset[str]
    #: Matches at every position (possibly empty), so its ``.match()`` is never None; typeshed
    #: cannot know that, hence ``# type: ignore[union-attr]`` where one is read.
    separator: re.Pattern[str]
    layouts: tuple[_Layout, ...]
    python_start: re.Pattern[str]
    python_frame: re.Pattern[str]
    python_exception: re.Pattern[str]
    go_start: re.Pattern[str]
    go_frame: re.Pattern[str]
    frames: tuple[re.Pattern[str], ...]
    exceptions: tuple[re.Pattern[str], ...]
    git_skip: tuple[re.Pattern[str], ...]
    git_date: re.Pattern[str]
    attribution: re.Pattern[str]
    rcs_id: re.Pattern[str]
    mailbox: re.Pattern[str]
    particles: frozenset[str]
    organisation_words: frozenset[str]
    fence_open: re.Pattern[str]
    comment_prefix: re.Pattern[str]
    comment_suffix: re.Pattern[str]
    markers: frozenset[str]
    signature: re.Pattern[str]
    signature_inside: re.Pattern[str]
    signature_max_zipf: float


def _layout_role(group: str, spec: str) -> Role:
    if spec == "text":
        return text_role(" ".join(normalise_name(group)))
    return value_role(Category.parse(spec), context=" ".join(normalise_name(group)))


@cache
def _rules() -> _Rules:
    raw = check_data(
        tomllib.loads(
            resources.files("polydeid.formats").joinpath("data/code.toml").read_text("utf-8")
        ),
        "formats/data/code.toml",
    )
    lang, log, trace, git = raw["languages"], raw["log"], raw["trace"], raw["git"]
    levels = "|".join(re.escape(w) for w in log["levels"])
    timestamps = "|".join(f"(?:{p})" for p in log["timestamps"])
    return _Rules(
        code=frozenset(lang["code"]),
        config=frozenset(lang["config"]),
        lines=frozenset(lang["lines"]),
        prose_lines=frozenset(lang["prose"]),
        no_escapes=frozenset(lang["no_escapes"]),
        log_extensions=frozenset(lang["log_extensions"]),
        prose_extensions=frozenset(lang["prose_extensions"]),
        guess_signals=tuple(
            (name, tuple(re.compile(p, re.MULTILINE) for p in patterns))
            for name, patterns in raw["guess"]["signals"].items()
        ),
        guess_min_hits=int(raw["guess"]["min_hits"]),
        guess_min_fraction=float(raw["guess"]["min_fraction"]),
        code_line=re.compile("|".join(f"(?:{p})" for p in raw["code_lines"]["patterns"])),
        skip_literal=tuple(re.compile(p) for p in raw["literals"]["skip"]),
        skip_code_literal=tuple(re.compile(p) for p in raw["literals"]["code_skip"]),
        unscanned=re.compile(
            "|".join(f"(?:{p})" for p in (*raw["versions"]["patterns"], *raw["tokens"]["patterns"]))
        ),
        timestamp=re.compile(rf"[\[(]?(?:{timestamps})[\])]?(?=[\s|:,\-\]]|$)"),
        # A line opening with a level: bracketed in any case, bare only in upper case.
        level_first=re.compile(rf"(?:[\[<](?i:{levels})[\]>]|(?:{levels})):?(?=\s|$)"),
        level_item=re.compile(rf"[\[<(]?(?i:{levels})[\]>)]?:?(?=\s|$|\[)"),
        bracket_item=re.compile(r"\[([^\]\n]{1,80})\]:?(?=\s|$|\[)"),
        thread=re.compile(log["thread"]),
        logger_item=re.compile(rf"(?:{log['logger']})(?=\s*:(?:\s|$)|\s+-{{1,3}}\s|\s*$)"),
        other_items=tuple(re.compile(p) for p in log["items"]),
        json_log_keys=frozenset(k.casefold() for k in log["json_keys"]),
        separator=re.compile(r"[ \t]*(?:(?:-{1,3}|\||:)(?=[ \t]|$)[ \t]*)?"),
        layouts=tuple(
            _Layout(
                entry["name"],
                re.compile(entry["pattern"]),
                {g: _layout_role(g, spec) for g, spec in entry.get("fields", {}).items()},
            )
            for entry in log.get("layout", [])
        ),
        python_start=re.compile(trace["python_start"]),
        python_frame=re.compile(trace["python_frame"]),
        python_exception=re.compile(trace["python_exception"]),
        go_start=re.compile(trace["go_start"]),
        go_frame=re.compile(trace["go_frame"]),
        frames=tuple(re.compile(p) for p in trace["frames"]),
        exceptions=tuple(re.compile(p) for p in trace["exceptions"]),
        git_skip=tuple(re.compile(p) for p in git["skip"]),
        git_date=re.compile(git["header_date"]),
        attribution=re.compile(git["attribution_label"]),
        rcs_id=re.compile(git["rcs_id"]),
        mailbox=re.compile(git["mailbox"]),
        particles=frozenset(git["name_particles"]),
        organisation_words=frozenset(w.casefold() for w in git["organisation_words"]),
        fence_open=re.compile(raw["markdown"]["fence_open"]),
        comment_prefix=re.compile(raw["comments"]["line_prefix"]),
        comment_suffix=re.compile(raw["comments"]["line_suffix"]),
        markers=frozenset(raw["comments"]["markers"]),
        signature=re.compile(raw["comments"]["signature"]),
        signature_inside=re.compile(raw["comments"]["signature_inside"]),
        signature_max_zipf=_zipf_threshold(raw["comments"]["signature_max_zipf"]),
    )


def _zipf_threshold(value: object) -> float:
    """``signature_max_zipf``: a Zipf frequency no lower than the floor frequencies are read
    exactly from (:data:`polydeid.text.frequency.ZIPF_FLOOR`)."""
    threshold = float(value)  # type: ignore[arg-type]
    if threshold < frequency.ZIPF_FLOOR:
        raise ConfigError(
            f"signature_max_zipf {threshold} is below {frequency.ZIPF_FLOOR}, the least "
            "frequency read exactly",
            location="formats/data/code.toml",
        )
    return threshold


def _trusted(name: str) -> bool:
    rules = _rules()
    return name in rules.code or name in rules.config


# --- encoders ------------------------------------------------------------------------------


def _one_line(new: str) -> str:
    return new.replace("\r", " ").replace("\n", " ")


def _comment_encoder(new: str) -> str:
    return _one_line(new).replace("*/", "* /").replace("-->", "- ->")


@cache
def _string_encoder(quote: str, *, doubled: bool, raw: bool) -> Encoder:
    """Escape a replacement for a string literal quoted with ``quote``."""

    def encode(new: str) -> str:
        if not raw and not doubled:
            new = new.replace("\\", "\\\\")
        if quote:
            new = new.replace(quote, quote * 2 if doubled else "\\" + quote)
        return _one_line(new)

    return encode


# --- the reader ----------------------------------------------------------------------------


class CodeReader:
    """Source code, logs, stack traces and text with pasted code (see the module docstring).

    ``language`` is a Pygments lexer name (``python``, ``java``, ``yaml`` …) or one of the
    line-mode names in ``data/code.toml`` (``log``, ``markdown``, ``text`` …); without it the
    file name given as ``source`` decides, then the content.
    """

    name = "code"

    def __init__(self, *, language: str | None = None) -> None:
        self.language = language.strip().lower() if language else None
        if self.language in (None, "auto"):
            self.language = None
            return
        rules = _rules()
        if self.language not in rules.lines and not _trusted(self.language):
            known = sorted(rules.code | rules.config | rules.lines)
            raise ConfigError(
                f"unknown or unsupported code language {self.language!r}; known: "
                + ", ".join(known)
            )

    def decode(self, data: bytes, *, source: str) -> tuple[str, str]:
        return decode_utf8(data, source=source), "utf-8"

    def read(self, text: str, *, source: str) -> Document:
        builder = _Builder(text)
        begin = 1 if text.startswith("\ufeff") else 0
        mode, lexer = self.mode(text, source=source)
        if mode == "code" and lexer is not None:
            builder.lex(begin, len(text), lexer)
        else:
            builder.lines(begin, len(text), fences=True, indented_code=mode == "prose")
        doc = Document(text, builder.result(), self.name)
        doc.check()
        return doc

    def mode(self, text: str, *, source: str) -> tuple[str, str | None]:
        """("code", lexer name), ("log", None) or ("prose", None) for ``text``."""
        rules = _rules()
        if self.language is not None:
            if self.language in rules.lines:
                return ("prose" if self.language in rules.prose_lines else "log"), None
            return "code", self.language
        by_name = _mode_for_name(source)
        if by_name is not None:
            return by_name
        return _mode_for_content(text)


def _mode_for_name(source: str) -> tuple[str, str | None] | None:
    if not source or source.startswith("<") or source == "-":
        return None
    rules = _rules()
    path = PurePath(source)
    suffix = path.suffix.lower()
    if suffix in rules.log_extensions:
        return "log", None
    if suffix in rules.prose_extensions:
        return "prose", None
    try:
        lexer = get_lexer_for_filename(path.name)
    except ClassNotFound:
        return None
    for alias in lexer.aliases:
        if _trusted(alias):
            return "code", alias
    return "prose", None  # a language whose text Pygments does not split out: scan it all


def _mode_for_content(text: str) -> tuple[str, str | None]:
    sample = text[:_SNIFF_CHARS]
    lines = [ln for ln in sample.splitlines() if ln.strip(BLANK)]
    if not lines:
        return "prose", None
    rules = _rules()
    structured = sum(1 for ln in lines if _is_log_or_trace(ln))
    if structured >= 0.5 * len(lines):
        return "log", None
    if any(rules.fence_open.match(ln) for ln in lines):
        return "prose", None
    guessed = _guess(sample, lines)
    if guessed is not None:
        return "code", guessed
    return "prose", None


def _is_log_or_trace(line: str) -> bool:
    rules = _rules()
    stripped = line.lstrip("\ufeff")
    return (
        _log_prefix(stripped) is not None
        or any(p.match(stripped) for p in rules.frames)
        or any(p.match(stripped) for p in rules.exceptions)
        or bool(rules.python_start.match(stripped) or rules.python_frame.match(stripped))
        or any(layout.pattern.match(stripped) for layout in rules.layouts)
    )


def _guess(block: str, lines: Sequence[str]) -> str | None:
    """The language of a block that looks like code, or None (then it is read as prose)."""
    rules = _rules()
    nonblank = [ln for ln in lines if ln.strip(BLANK)]
    if not nonblank:
        return None
    code_like = sum(1 for ln in nonblank if rules.code_line.search(ln))
    if code_like < 0.5 * len(nonblank):
        return None
    best, best_score = None, 0
    for name, patterns in rules.guess_signals:
        score = sum(len(p.findall(block)) for p in patterns)
        if score > best_score:
            best, best_score = name, score
    if best is None or best_score < rules.guess_min_hits:
        return None
    if best_score < rules.guess_min_fraction * len(nonblank):
        return None
    return best


def _log_prefix(line: str) -> int | None:
    """The length of a log line's prefix (timestamp, level, thread, logger), or None."""
    rules = _rules()
    pos = 0
    seen_level = False
    m = rules.level_first.match(line)
    if m:
        pos, seen_level = m.end(), True
        pos = _skip_blank(line, pos)
    m = rules.timestamp.match(line, pos)
    if m:
        pos = m.end()
    elif not seen_level:
        return None
    seen_logger = False
    while True:
        item_at = rules.separator.match(line, pos).end()  # type: ignore[union-attr]
        m = rules.level_item.match(line, item_at)
        if m:
            pos, seen_level = m.end(), True
            continue
        m = rules.bracket_item.match(line, item_at)
        if m:
            if not rules.thread.match(m.group(1).strip()):
                break  # a bracketed item that is not a thread name: part of the message
            pos = m.end()
            continue
        m = next(
            (p.match(line, item_at) for p in rules.other_items if p.match(line, item_at)), None
        )
        if m:
            pos = m.end()
            continue
        m = rules.logger_item.match(line, item_at)
        if m and not seen_logger:
            after = rules.separator.match(line, m.end()).end()  # type: ignore[union-attr]
            if seen_level or rules.level_item.match(line, after):
                pos, seen_logger = m.end(), True
                continue
        break
    return rules.separator.match(line, pos).end()  # type: ignore[union-attr]


def _skip_blank(line: str, pos: int) -> int:
    while pos < len(line) and line[pos] in " \t":
        pos += 1
    return pos


# --- line attribution ----------------------------------------------------------------------


class _Builder:
    """Line attribution: turns the pieces of one document into its fields.

    Contract: :meth:`lex` (code, through :mod:`polydeid.formats._code_lex`) and :meth:`lines`
    (logs, traces, prose) decide which part of each line is a field, with which role and
    encoder, and append it through :meth:`add`; nothing else writes ``fields``. :meth:`result`
    gives them sorted and without overlaps.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.fields: list[Field] = []
        self._line_starts = [0, *(m.end() for m in re.finditer("\n", text))]
        self.rules = _rules()

    # -- fields --------------------------------------------------------------------------

    def line_no(self, pos: int) -> int:
        return bisect_right(self._line_starts, pos)

    def add(
        self, start: int, end: int, path: str, role: Role = TEXT, encode: Encoder = _one_line
    ) -> None:
        """A verbatim field over ``text[start:end]`` (blank ends trimmed; empty: none)."""
        start, end = _trim(self.text, start, end)
        if start >= end:
            return
        if role.kind is RoleKind.SKIP:
            return
        if role.kind is RoleKind.TEXT:
            # version numbers after a version marker, standards, codec and file names, bug
            # references and copyright years are not scanned (code.toml [versions], [tokens])
            for cut_start, cut_end in _unscanned(self.text, start, end, self.rules):
                self.add(start, cut_start, path, role, encode)
                start = cut_end
            start, end = _trim(self.text, start, end)
            if start >= end:
                return
        self.fields.append(
            Field(start, end, self.text[start:end], path, role, self.line_no(start), encode=encode)
        )

    def result(self) -> list[Field]:
        """The fields sorted; overlapping ones (a reader bug) merge into one text field, so
        nothing goes unscanned."""
        out: list[Field] = []
        for f in sorted(self.fields, key=lambda f: f.start):
            if out and f.start < out[-1].end:
                prev = out.pop()
                start, end = prev.start, max(prev.end, f.end)
                f = Field(start, end, self.text[start:end], prev.path, TEXT, prev.line)
            out.append(f)
        return out

    def add_text_line(self, start: int, end: int, path: str) -> None:
        """A prose, comment or message line: attribution lines name a person; else text."""
        start, end = _trim(self.text, start, end)
        if start >= end:
            return
        if not self.attribution(start, end, path):
            self.add(start, end, path)

    def attribution(self, start: int, end: int, path: str, encode: Encoder = _one_line) -> bool:
        """``Author: Jane Doe <jane@example.org>``, a list of authors, commit trailers and a
        version-control ``$Id:`` line's committer; False if not one."""
        line = self.text[start:end]
        rcs = self.rules.rcs_id.match(line)
        if rcs:
            who = value_role(Category.PERSON)
            self.add(
                start + rcs.start("who"), start + rcs.end("who"), f"{path}.person", who, encode
            )
            return True
        authors = _author_list(line, self.rules)
        if authors:
            person = value_role(Category.PERSON)
            pos = 0
            for person_start, person_end in authors:
                self.add(start + pos, start + person_start, path, TEXT, encode)
                self.add(start + person_start, start + person_end, f"{path}.person", person, encode)
                pos = person_end
            self.add(start + pos, end, path, TEXT, encode)
            return True
        found = _attribution(line, self.rules)
        if found is None:
            return self._mailbox(start, end, path, encode)
        (person_start, person_end), email, rest = found
        person = value_role(Category.PERSON)
        self.add(start + person_start, start + person_end, f"{path}.person", person, encode)
        if email is not None:
            contact = value_role(Category.CONTACT_OTHER)
            self.add(start + email[0], start + email[1], f"{path}.email", contact, encode)
        # the rest may name more people: "… and John Roe <john@example.org>"
        if not self._mailbox(start + rest, end, path, encode):
            self.add(start + rest, end, path, TEXT, encode)
        return True

    def _mailbox(self, start: int, end: int, path: str, encode: Encoder) -> bool:
        """Every name-like ``Jane Doe <jane@example.org>`` inside the line: each name a
        PERSON, each address a contact, the rest text; False if there is none."""
        pos = start
        for m in self.rules.mailbox.finditer(self.text, start, end):
            words = m.group("who").split()
            while words and not _name_like(words, self.rules):
                words = words[1:]  # "support by Jane Doe": the name is the capitalised tail
            if len(words) < 2:
                continue
            who_start = m.end("who") - len(" ".join(words))
            if self.text[who_start : m.end("who")].split() != words:
                continue
            person = value_role(Category.PERSON)
            contact = value_role(Category.CONTACT_OTHER)
            self.add(pos, who_start, path, TEXT, encode)
            self.add(who_start, m.end("who"), f"{path}.person", person, encode)
            self.add(m.start("email"), m.end("email"), f"{path}.email", contact, encode)
            pos = m.end("email") + 1
        if pos == start:
            return False
        self.add(pos, end, path, TEXT, encode)
        return True

    # -- code ----------------------------------------------------------------------------

    def lex(
        self, start: int, end: int, language: str, *, skip_keys: frozenset[str] = frozenset()
    ) -> None:
        """Fields of ``text[start:end]`` lexed as ``language``; string values under a key in
        ``skip_keys`` (case-folded) are left untouched."""
        config = language in self.rules.config
        tokens = tokenize(self.text, start, end, language, config=config)
        if tokens is None:
            self.lines(start, end, fences=False, indented_code=False)
            return
        escapes = not (lexer_family(language) & self.rules.no_escapes)
        found = list(pieces(self.text, tokens, config=config, escapes=escapes, skip_keys=skip_keys))
        tables = _calendar_tables(self.text, found)
        signers = self._signers(found)
        for piece in found:
            if isinstance(piece, CommentPiece):
                self._comment(piece.start, piece.end, signers)
            elif id(piece) not in tables:
                self._literal(piece, config)

    def _comment_lines(self, start: int, end: int) -> Iterator[tuple[int, int]]:
        """``(start, end)`` of each line of the comment ``text[start:end]`` without its markers
        and blank ends (empty lines left out)."""
        rules = self.rules
        for ls, le in _split_lines(self.text, start, end):
            line = self.text[ls:le]
            m = rules.comment_prefix.match(line)
            cs = ls + (m.end() if m else 0)
            s = rules.comment_suffix.search(self.text, cs, le)
            ce = max(s.start() if s else le, cs)
            cs, ce = _trim(self.text, cs, ce)
            if cs < ce:
                yield cs, ce

    def _signatures(self, cs: int, ce: int) -> Iterator[tuple[str, int, int, bool]]:
        """(initials, start, end, with a colon) of each place where the comment line
        ``text[cs:ce]`` may be signed: its opening token, and a token after a sentence."""
        line = self.text[cs:ce]
        m = self.rules.signature.match(line)
        if m:
            yield m.group("who"), cs + m.start("who"), cs + m.end("who"), ":" in m.group(0)
        for m in self.rules.signature_inside.finditer(line):
            yield m.group("who"), cs + m.start("who"), cs + m.end("who"), True

    def _signers(self, found: Sequence[CommentPiece | LiteralPiece]) -> frozenset[str]:
        """The initials that sign comments here (``# BAW: should we…``): a capitalised token
        that signs a comment with a colon somewhere, is no comment marker and no common word,
        and occurs nowhere else in the document (code.toml ``[comments]``)."""
        rules = self.rules
        places: dict[str, int] = {}
        with_colon: set[str] = set()
        for piece in found:
            if not isinstance(piece, CommentPiece):
                continue
            for cs, ce in self._comment_lines(piece.start, piece.end):
                for who, _s, _e, colon in self._signatures(cs, ce):
                    if who in rules.markers:
                        continue
                    places[who] = places.get(who, 0) + 1
                    if colon:
                        with_colon.add(who)
        return frozenset(
            who
            for who in with_colon
            if len(re.findall(rf"\b{who}\b", self.text)) == places[who]
            and frequency.zipf(who, "en") < rules.signature_max_zipf
        )

    def _comment(self, start: int, end: int, signers: frozenset[str] = frozenset()) -> None:
        """A comment: one field a line, its markers left out; initials in ``signers`` where
        they sign it are a person."""
        person = value_role(Category.PERSON)
        for cs, ce in self._comment_lines(start, end):
            signed = [(s, e) for who, s, e, _c in self._signatures(cs, ce) if who in signers]
            if not signed:
                if not self.attribution(cs, ce, "comment", _comment_encoder):
                    self.add(cs, ce, "comment", TEXT, _comment_encoder)
                continue
            pos = cs
            for s, e in signed:
                self.add(pos, s, "comment", TEXT, _comment_encoder)
                self.add(s, e, "comment.person", person, _comment_encoder)
                pos = e
            self.add(pos, ce, "comment", TEXT, _comment_encoder)

    def _literal(self, piece: LiteralPiece, config: bool) -> None:
        """A string literal or configuration value: one field a line, its escapes decoded;
        none where the content is a version, hash … (``literals.skip``) or its key says so."""
        start, end = piece.start, piece.end
        content = self.text[start:end].strip(BLANK)
        if any(p.match(content) for p in self.rules.skip_literal):
            return
        if (
            not config
            and piece.kind == "string"
            and any(p.match(content) for p in self.rules.skip_code_literal)
            and (piece.key is None or role_for_name(piece.key).category is None)
        ):
            return
        role = _literal_role(piece.key, config)
        if role.kind is RoleKind.SKIP:
            return
        path = piece.kind
        encode = _string_encoder(piece.quote, doubled=piece.doubled, raw=piece.raw)
        doctest = False
        for ls, le in _split_lines(self.text, start, end):
            ls, le = _trim(self.text, ls, le)
            if ls >= le:
                doctest = False
                continue
            if piece.kind == "docstring":
                # a doctest (a prompt line, its continuations and output, up to a blank line)
                # is code: lexed as Python
                prompt = _DOCTEST_PROMPT.match(self.text, ls, le)
                if prompt is not None and (doctest or prompt.group().startswith(">")):
                    doctest = True
                    self.lex(prompt.end(), le, "python")
                    continue
                if doctest:
                    self.lex(ls, le, "python")
                    continue
            decoded = decode_escapes(self.text[ls:le], ls) if piece.decode else None
            if decoded is None:
                if role.kind is RoleKind.TEXT and self.attribution(ls, le, path, encode):
                    continue
                self.add(ls, le, path, role, encode)
            else:
                value, offsets = decoded
                if value.strip(BLANK):
                    self.fields.append(
                        Field(ls, le, value, path, role, self.line_no(ls), offsets, encode)
                    )

    # -- lines ---------------------------------------------------------------------------

    def lines(self, start: int, end: int, *, fences: bool, indented_code: bool) -> None:
        """Fields of ``text[start:end]`` read line by line (logs, traces, prose)."""
        rules = self.rules
        spans = list(_split_lines(self.text, start, end))
        state = ""  # "python" / "go" inside a traceback, "git" in a commit header
        frame_indent = -1
        previous_blank = True
        i = 0
        while i < len(spans):
            ls, le = spans[i]
            line = self.text[ls:le]
            blank = not line.strip(BLANK)
            if fences and (m := rules.fence_open.match(line)):
                close = _fence_close(m.group("fence"))
                j = i + 1
                while j < len(spans) and not close.match(self.text[spans[j][0] : spans[j][1]]):
                    j += 1
                if j > i + 1:
                    self._block(m.group("info").lower(), spans[i + 1][0], spans[j - 1][1])
                i, state, previous_blank = j + 1, "", False
                continue
            if state == "python":
                if rules.python_frame.match(line):
                    frame_indent = len(line) - len(line.lstrip())
                    i += 1
                    continue
                indent = len(line) - len(line.lstrip())
                if not blank and frame_indent >= 0 and indent > frame_indent:
                    if not any(p.match(line) for p in rules.frames):
                        self.lex(ls + indent, le, "python")  # the source line echoed
                    i += 1
                    continue
                if blank or any(p.match(line) for p in rules.frames):
                    i += 1
                    continue
                state = ""
                m = rules.python_exception.match(line)
                if m and not rules.python_start.match(line):
                    self._message(ls, m, "exception.message")
                    i += 1
                    previous_blank = False
                    continue
            if state == "go":
                if rules.go_frame.match(line):
                    i += 1
                    continue
                state = ""
            if state == "git" and rules.git_date.match(line):
                i += 1
                continue
            if blank:
                if state == "git":
                    state = ""
                previous_blank = True
                i += 1
                continue
            if indented_code and previous_blank and (line[:1] == "\t" or line.startswith("    ")):
                block_end = self._indented_block(spans, i)
                if block_end is not None:
                    i, previous_blank = block_end, False
                    continue
            previous_blank = False
            if rules.python_start.match(line):
                state, frame_indent = "python", -1
            elif rules.python_frame.match(line):  # a traceback pasted without its header
                state, frame_indent = "python", len(line) - len(line.lstrip())
            elif rules.go_start.match(line):
                state = "go"
            elif any(p.match(line) for p in rules.git_skip):
                state = "git"
            else:
                self.line(ls, le)
            i += 1

    def line(self, ls: int, le: int) -> None:
        """One line outside any block: a frame, exception, log line, attribution or prose."""
        rules = self.rules
        line = self.text[ls:le]
        if any(p.match(line) for p in rules.frames):
            return
        for p in rules.exceptions:
            m = p.match(line)
            if m:
                self._message(ls, m, "exception.message")
                return
        for layout in rules.layouts:
            m = layout.pattern.match(line)
            if m:
                for group, role in layout.fields.items():
                    if m.group(group) is not None:
                        self.add(ls + m.start(group), ls + m.end(group), f"log.{group}", role)
                if "message" in m.groupdict() and m.group("message") is not None:
                    self._log_message(ls + m.start("message"), le)
                return
        prefix = _log_prefix(line)
        if prefix is not None:
            self._log_message(ls + prefix, le)
            return
        stripped = line.strip(BLANK)
        if stripped.startswith("{") and stripped.endswith("}"):
            self.lex(ls, le, "json", skip_keys=rules.json_log_keys)
            return
        self.add_text_line(ls, le, "prose")

    def _log_message(self, start: int, end: int) -> None:
        """A log message: an exception line inside it keeps its class name unscanned; the
        value of a ``key=value`` pair whose key names an identifier (:func:`_log_pairs`) is a
        value field, the rest is text."""
        line = self.text[start:end]
        for p in self.rules.exceptions[:1]:
            m = p.match(line)
            if m:
                self._message(start, m, "log.message")
                return
        pos = start
        for key, role, value_start, value_end in _log_pairs(line):
            self.add(pos, start + value_start, "log.message")
            self.add(start + value_start, start + value_end, f"log.{key}", role)
            pos = start + value_end
        self.add(pos, end, "log.message")

    def _message(self, ls: int, m: re.Match[str], path: str) -> None:
        if "message" in m.groupdict() and m.group("message") is not None:
            self.add(ls + m.start("message"), ls + m.end("message"), path)

    def _block(self, info: str, start: int, end: int) -> None:
        """A fenced block: lexed if its language is trusted or guessed, else line by line."""
        language = _block_language(info, self.text[start:end])
        if language is not None:
            self.lex(start, end, language)
        else:
            self.lines(start, end, fences=False, indented_code=False)

    def _indented_block(self, spans: Sequence[tuple[int, int]], i: int) -> int | None:
        """Lex an indented block that looks like code; the index after it, or None."""
        found = _indented_code(self.text, spans, i)
        if found is None:
            return None
        start, end, language, after = found
        self.lex(start, end, language)
        return after


# --- attribution helpers (pure) ------------------------------------------------------------


#: A token that may name a codec: letters and digits joined by ``-`` or ``_``, with a digit or
#: a joiner (``gb2312``, ``ks_c_5601-1987``, ``euc-jp``), not inside a path or an address.
_CODEC_TOKEN = re.compile(r"(?<![\w@./\\-])[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*(?![\w@/\\-])")
#: A doctest prompt opening a docstring line (``>>> `` or, inside a doctest, ``... ``).
_DOCTEST_PROMPT = re.compile(r"(?:>>>|\.\.\.)(?:[ \t]|$)")
_CALENDAR_WORD = re.compile(r"[^\W\d_]+")
_CALENDAR_GLUE = re.compile(r"[\s,;.|/]*")


@lru_cache(maxsize=4096)
def _is_codec(token: str) -> bool:
    """Whether Python's codec registry knows ``token`` (a codec name or alias)."""
    if not any(c.isdigit() or c in "-_" for c in token):
        return False
    try:
        codecs.lookup(token)
    except (LookupError, ValueError):
        return False
    return True


def _unscanned(text: str, start: int, end: int, rules: _Rules) -> list[tuple[int, int]]:
    """The parts of ``text[start:end]`` that are never scanned, in order and apart: version
    numbers, standards, file names, bug references and copyright years (group 1 of
    ``[versions]`` and ``[tokens]``) and codec names."""
    cuts: list[tuple[int, int]] = []
    for m in rules.unscanned.finditer(text, start, end):
        group = next(i for i in range(1, len(m.groups()) + 1) if m.group(i))
        cuts.append(m.span(group))
    for m in _CODEC_TOKEN.finditer(text, start, end):
        if _is_codec(m.group()):
            cuts.append(m.span())
    out: list[tuple[int, int]] = []
    for s, e in sorted(cuts):
        if out and s < out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def _calendar_only(content: str) -> int:
    """How many month or weekday names ``content`` holds if it holds nothing else (names
    separated by blanks or punctuation), else 0."""
    words = _CALENDAR_WORD.findall(content)
    known = calendar_words()
    if not words or any(name_key(w) not in known for w in words):
        return 0
    rest = _CALENDAR_WORD.sub(" ", content)
    return len(words) if _CALENDAR_GLUE.fullmatch(rest) else 0


#: What stands between two items of one list or tuple of literals.
_LIST_GLUE = re.compile(r"""[\s,'"`\[\](){}]*""")


def _listed(text: str, first: LiteralPiece, second: LiteralPiece) -> bool:
    """Whether two literals are neighbouring items of one list (only quotes, commas, brackets
    and blanks between them)."""
    return bool(_LIST_GLUE.fullmatch(text, first.end, second.start))


def _calendar_tables(text: str, found: Sequence[CommentPiece | LiteralPiece]) -> set[int]:
    """The ids of the literals that are entries of a month or weekday table: a literal of
    calendar names only, listed next to another such literal (``["Jan", "Feb", …]``) or holding
    two names or more itself. A lone ``"May"`` is not a table."""
    literals = [p for p in found if isinstance(p, LiteralPiece)]
    counts = [_calendar_only(text[p.start : p.end]) for p in literals]
    tables: set[int] = set()
    for i, (piece, n) in enumerate(zip(literals, counts, strict=True)):
        if not n:
            continue
        beside = (i > 0 and counts[i - 1] > 0 and _listed(text, literals[i - 1], piece)) or (
            i + 1 < len(counts) and counts[i + 1] > 0 and _listed(text, piece, literals[i + 1])
        )
        if n >= 2 or beside:
            tables.add(id(piece))
    return tables


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """``start:end`` without the blank characters at its ends."""
    while start < end and text[start] in BLANK:
        start += 1
    while end > start and text[end - 1] in BLANK:
        end -= 1
    return start, end


def _literal_role(key: str | None, config: bool) -> Role:
    """The role of a literal assigned to ``key``: in a configuration language, what the key
    names; else text (scanned), with the key's last words as context."""
    if key is None:
        return TEXT
    if config:
        return role_for_name(key)
    return text_role(" ".join(normalise_name(key)[-4:]))


#: What separates the names of a list of authors ("Ben Gertzfield, Barry Warsaw",
#: "Baxter, Wouters and Warsaw").
_AUTHOR_SEPARATOR = re.compile(r"\s*,\s*(?:and\s+)?|\s+(?:and|&)\s+")


def _author_list(line: str, rules: _Rules) -> list[tuple[int, int]]:
    """Where an attribution line that credits two people or more (``Authors: Baxter, Wouters
    and Warsaw``) names each, relative to ``line``; empty if it is no such list (fewer than
    two names, a word that is not name-like, an organisation, an e-mail address)."""
    m = rules.attribution.match(line)
    if not m:
        return []
    rest_at = m.end()
    stop = len(line)
    for mark in ("<", "(", ";", " - ", "\t", "."):
        i = line.find(mark, rest_at)
        if i != -1 and not (mark == "." and i > 0 and line[i - 1 : i].isupper()):
            stop = min(stop, i)
    stop = len(line[:stop].rstrip())
    names: list[tuple[int, int]] = []
    pos = rest_at
    for sep in [*_AUTHOR_SEPARATOR.finditer(line, rest_at, stop), None]:
        end = stop if sep is None else sep.start()
        words = line[pos:end].split()
        if not words or len(words) > 5 or not _name_like(words, rules):
            return []
        names.append((pos, end))
        if sep is not None:
            pos = sep.end()
    return names if len(names) >= 2 else []


def _name_like(words: Sequence[str], rules: _Rules) -> bool:
    """Capitalised words (apart from name particles), none an organisation word or a bot."""
    if any(w.casefold() in rules.organisation_words or w.endswith("[bot]") for w in words):
        return False
    return not words[0][:1].islower() and all(
        not w[:1].islower() or w in rules.particles for w in words
    )


def _attribution(
    line: str, rules: _Rules
) -> tuple[tuple[int, int], tuple[int, int] | None, int] | None:
    """Where an attribution line (``Author: Jane Doe <jane@example.org>``, a commit trailer)
    names its person and e-mail address, and where the text after them begins, all relative
    to ``line``; None if it is not one (no name-like words, an organisation, a bot)."""
    m = rules.attribution.match(line)
    if not m:
        return None
    rest_at = m.end()
    email_at = line.find("<", rest_at)
    stop = len(line)
    for mark in (",", ";", "(", " - ", "\t"):
        i = line.find(mark, rest_at)
        if i != -1:
            stop = min(stop, i)
    if email_at != -1 and email_at < stop:
        stop = email_at
    who = line[rest_at:stop].rstrip()
    words = who.split()
    email_end = -1
    if email_at != -1 and email_at == _skip_blank(line, rest_at + len(who)):
        close = line.find(">", email_at)
        if close != -1 and " " not in line[email_at:close]:
            email_end = close
    if not words or len(words) > 5:
        return None
    if any(w.casefold() in rules.organisation_words or w.endswith("[bot]") for w in words):
        return None
    particles = rules.particles
    name_like = not words[0][:1].islower() and all(
        not w[:1].islower() or w in particles for w in words
    )
    if email_end != -1:
        if not (name_like or len(words) == 1):
            return None
    elif not (name_like and len(words) >= 2):
        return None
    person = (rest_at, rest_at + len(who))
    if email_end == -1:
        return person, None, person[1]
    return person, (email_at + 1, email_end), email_end + 1


def _log_pairs(line: str) -> Iterator[tuple[str, Role, int, int]]:
    """(key, role, value start, value end) of each ``key=value`` pair of a log message whose
    value is a value field: its key names an identifier (``patient_name=``, ``mrn=``,
    :data:`_PAIR_GROUPS`) and it has a few words at most."""
    for m in _PAIR.finditer(line):
        role = role_for_name(m.group("key"))
        group = next(g for g in ("dq", "sq", "bare") if m.group(g) is not None)
        value_start, value_end = m.span(group)
        if group == "bare" and line[m.start() - 1 : m.start()] in ("?", "&"):
            token = _QUERY_VALUE.match(line, value_start)
            value_end = token.end() if token else value_start
        words = len(line[value_start:value_end].split())
        group_name = None if role.category is None else COARSE_GROUP.get(role.category)
        if group_name not in _PAIR_GROUPS or not 0 < words <= _PAIR_WORDS:
            continue
        yield m.group("key"), role, value_start, value_end


def _block_language(info: str, block: str) -> str | None:
    """The language a fenced block with info string ``info`` is lexed as: a trusted ``info``,
    else one guessed for an unlabelled block without log or trace lines; None: read it line by
    line."""
    if info and _trusted(info):
        return info
    if not info:
        lines = block.splitlines()
        if not any(_is_log_or_trace(ln) for ln in lines):
            return _guess(block, lines)
    return None


def _indented_code(
    text: str, spans: Sequence[tuple[int, int]], i: int
) -> tuple[int, int, str, int] | None:
    """(start, end, language, index after it) of the indented block of ``text`` that begins
    at line ``spans[i]``, if it looks like code (no log or trace lines, a language guessed);
    else None."""
    j = i
    last = i
    while j < len(spans):
        line = text[spans[j][0] : spans[j][1]]
        if line.strip(BLANK):
            if not (line[:1] == "\t" or line.startswith("    ")):
                break
            last = j
        j += 1
    block_lines = [text[s:e] for s, e in spans[i : last + 1]]
    if any(_is_log_or_trace(ln.strip()) for ln in block_lines):
        return None
    start, end = spans[i][0], spans[last][1]
    guessed = _guess(text[start:end], block_lines)
    if guessed is None:
        return None
    return start, end, guessed, last + 1


def _split_lines(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """``(line_start, line_end)`` of each line of ``text[start:end]``, without line breaks."""
    pos = start
    while pos < end:
        nl = text.find("\n", pos, end)
        stop = end if nl == -1 else nl
        line_end = stop - 1 if stop > pos and text[stop - 1] == "\r" else stop
        yield pos, line_end
        if nl == -1:
            break
        pos = nl + 1


@cache
def _fence_close(fence: str) -> re.Pattern[str]:
    return re.compile(rf" {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
