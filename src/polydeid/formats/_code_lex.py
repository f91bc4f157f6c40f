"""Lexing for the code reader (:mod:`polydeid.formats.code`): source text to the pieces of it
that can hold a person's data.

Contract: everything here is a pure function of the text it is given (no fields, roles or
line numbers are made and nothing is collected). :func:`tokenize` lexes a chunk of a document
with Pygments into :class:`Token` objects at document offsets, each with the kind it has for
the reader (:func:`token_kind`); :func:`pieces` walks those tokens and yields, in document
order, the comments (:class:`CommentPiece`) and the string literals and configuration values
(:class:`LiteralPiece`: quotes stripped, with the key they are assigned to and how a
replacement must be quoted); :func:`decode_escapes` decodes a literal's backslash escapes,
with offsets back into the document. Which field each piece becomes, on which line and with
which role, is decided by the reader.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.token import (
    Comment,
    Error,
    Generic,
    Keyword,
    Literal,
    Name,
    Operator,
    Other,
    Punctuation,
    String,
    Text,
    Whitespace,
)

#: Characters trimmed from the ends of a field (and of a key).
BLANK = " \t\r\n\f\v\ufeff"
_ASSIGN = frozenset({"=", ":", ":=", "=>", "<-", "?="})
_KEY_SHAPE = re.compile(r"[\w.\-]{1,60}")
_VALUE_KINDS = ("string", "plain")
_OPEN_QUOTE = re.compile(r"(?:@\$?|\$@?|[rR]#*)?(\"\"\"|'''|\"|'|`)")
_CLOSE_QUOTE = re.compile(r"(\"\"\"|'''|\"|'|`)#*\Z")
_RAW_PREFIX = re.compile(r"@|[rR]")
_ESCAPE = re.compile(
    r"\\(u\{[0-9a-fA-F]{1,6}\}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|x[0-9a-fA-F]{2}|[0-7]{1,3}"
    r"|N\{[^}\n]{1,60}\}|\r?\n|.)",
    re.DOTALL,
)
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": " ", "b": " "}


# --- lexers --------------------------------------------------------------------------------


@cache
def lexer(name: str) -> Lexer:
    """The Pygments lexer called ``name``, keeping the text exactly as given."""
    return get_lexer_by_name(name, stripnl=False, stripall=False, ensurenl=False, tabsize=0)


def lexer_family(name: str) -> frozenset[str]:
    """Every alias of the lexer called ``name`` (so ``py`` and ``python3`` agree)."""
    return frozenset(lexer(name).aliases) | {name}


# --- tokens --------------------------------------------------------------------------------


@dataclass(slots=True)
class Token:
    """One Pygments token at document offsets ``start:end``, with its :func:`token_kind`."""

    start: int
    end: int
    kind: str | None
    ttype: Any
    value: str = field(repr=False)  # source text: may be a name


def token_kind(ttype: Any, value: str, config: bool) -> str | None:
    """What a token is to the reader: comment, string, plain (a configuration value),
    interp, affix, or None (code, never a field).

    In configuration languages only keys, punctuation, operators, keywords and whitespace
    are structure: every other token is a value, whatever Pygments calls it (its YAML lexer
    calls block scalars Name.Constant and flow scalars Name.Variable), so no value is left
    unscanned because of a token name.
    """
    if ttype in Comment:
        if ttype in Comment.Preproc or ttype in Comment.PreprocFile or ttype in Comment.Hashbang:
            return None
        return "comment"
    if ttype in String:
        if ttype in String.Interpol:
            return "interp"
        if ttype in String.Affix:
            return "affix"
        if not config and (ttype in String.Symbol or ttype in String.Regex):
            return None
        return "string"
    if (
        ttype in Error
        or ttype in Generic
        or ttype in Other
        or (ttype in Text and ttype not in Whitespace)
    ):
        # Shell words (echo Jane Doe), Dockerfile and Makefile arguments, HTML around PHP,
        # lexer errors: data, or text the lexer could not place. Whitespace is never a field.
        return "plain" if value.strip() else None
    if not config:
        return None
    if (
        ttype is Name
        or ttype in Name.Tag
        or ttype in Name.Attribute
        or ttype in Name.Namespace
        or ttype in Punctuation
        or ttype in Operator
        or ttype in Keyword
        or ttype in Text
        or ttype in Whitespace
    ):
        return None
    return "plain"


def _is_space(ttype: Any, value: str) -> bool:
    return (ttype in Text or ttype in Whitespace) and not value.strip()


def tokenize(text: str, start: int, end: int, language: str, *, config: bool) -> list[Token] | None:
    """The tokens of ``text[start:end]`` lexed as ``language`` (``config``: a configuration
    language, see :func:`token_kind`), or None when the lexer fails or its tokens do not cover
    the chunk exactly: a lexer bug must not lose text (the reader then reads it line by line).
    """
    chunk = text[start:end]
    try:
        raw_tokens = list(lexer(language).get_tokens_unprocessed(chunk))
    except Exception:
        raw_tokens = []
    tokens: list[Token] = []
    pos = 0
    for offset, ttype, value in raw_tokens:
        if offset != pos:
            break
        kind = token_kind(ttype, value, config)
        tokens.append(Token(start + pos, start + pos + len(value), kind, ttype, value))
        pos += len(value)
    if pos != len(chunk):
        return None
    return tokens


# --- pieces --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CommentPiece:
    """A comment, ``text[start:end]`` with its markers (a Rust doc comment lexed as a string
    is one too)."""

    start: int
    end: int


@dataclass(frozen=True, slots=True)
class LiteralPiece:
    """A string literal or configuration value: its body ``text[start:end]`` without quotes
    (never empty, possibly several lines)."""

    start: int
    end: int
    #: ``string``, ``docstring`` or ``value`` (a configuration value or a plain word run).
    kind: str
    #: The key it is assigned to (``name = "…"``, ``"phone": "…"``), if any.
    key: str | None
    #: The opening quote's character ("" if none): a replacement must escape it.
    quote: str
    #: No backslash escapes: a replacement's backslashes are kept as they are.
    raw: bool
    #: A quote inside is written twice (languages without backslash escapes).
    doubled: bool
    #: Whether backslash escapes in the body stand for other characters (decode them).
    decode: bool


def pieces(
    text: str,
    tokens: Sequence[Token],
    *,
    config: bool,
    escapes: bool,
    skip_keys: frozenset[str] = frozenset(),
) -> Iterator[CommentPiece | LiteralPiece]:
    """The comments and literals of ``tokens`` (from :func:`tokenize` over ``text``), in
    order. Adjacent value tokens make one literal (the words of a plain scalar, the parts of a
    string around nothing but its quotes); ``escapes``: the language's strings have backslash
    escapes. A literal under a key in ``skip_keys`` (case-folded) is not yielded."""
    significant: list[Token] = []  # the code tokens before a string, for its key
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.kind == "comment":
            yield CommentPiece(tok.start, tok.end)
            i += 1
            continue
        if tok.kind in _VALUE_KINDS:
            j = _run_end(tokens, i, config)
            before = tokens[i - 1] if i else None
            after = tokens[j] if j < len(tokens) else None
            key = _key_of(significant)
            if key is not None and key.casefold() in skip_keys:
                significant.append(tokens[j - 1])
                del significant[:-3]
                i = j
                continue
            piece = _literal(
                text,
                tokens[i:j],
                key=key,
                escapes=escapes,
                opened=not (before is not None and before.kind == "interp"),
                closed=not (after is not None and after.kind == "interp"),
                raw=before is not None
                and before.kind == "affix"
                and bool(_RAW_PREFIX.search(before.value)),
                doubled=not escapes,
            )
            if piece is not None:
                yield piece
            significant.append(
                Token(
                    start := tokens[i].start,
                    tokens[j - 1].end,
                    "string",
                    String,
                    text[start : tokens[j - 1].end],
                )
            )
            del significant[:-3]
            i = j
            continue
        if not _is_space(tok.ttype, tok.value) and tok.kind != "affix":
            significant.append(tok)
            if len(significant) > 3:
                del significant[0]
        i += 1


def _run_end(tokens: Sequence[Token], i: int, config: bool) -> int:
    """The index after the run of value tokens that begins at ``tokens[i]``."""
    kind = tokens[i].kind
    j = i + 1
    while j < len(tokens):
        nxt = tokens[j]
        if nxt.kind == kind or (config and nxt.kind in _VALUE_KINDS):
            j += 1
        elif (
            (config or kind == "plain")
            and nxt.kind is None
            and _is_space(nxt.ttype, nxt.value)
            and "\n" not in nxt.value
            and j + 1 < len(tokens)
            and tokens[j + 1].kind in (_VALUE_KINDS if config else (kind,))
        ):
            j += 2  # words of one plain scalar: John Smith
        else:
            break
    return j


def _literal(
    text: str,
    run: Sequence[Token],
    *,
    key: str | None,
    escapes: bool,
    opened: bool,
    closed: bool,
    raw: bool,
    doubled: bool,
) -> CommentPiece | LiteralPiece | None:
    """The piece a run of value tokens is: its quotes (``opened``/``closed``: not cut by an
    interpolation) stripped; None if nothing is left between them."""
    start, end = run[0].start, run[-1].end
    body = text[start:end]
    plain = run[0].kind == "plain"
    kind = "value" if plain else "string"
    quote = ""
    if not plain:
        if body.startswith(("///", "//!")):  # Rust doc comments are String.Doc tokens
            return CommentPiece(start, end)
        m = _OPEN_QUOTE.match(body) if opened else None
        if m:
            quote = m.group(1)
            raw = raw or bool(_RAW_PREFIX.match(body)) or (quote == "`" and not escapes)
            start += m.end()
            body = body[m.end() :]
        c = _CLOSE_QUOTE.search(body) if closed else None
        if c and (not quote or c.group(1) == quote) and c.start() >= 0:
            end -= len(body) - c.start()
        if run[0].ttype in String.Doc:
            kind = "docstring"
        elif run[0].ttype in String.Heredoc:
            raw = True
    if start >= end:
        return None
    return LiteralPiece(
        start,
        end,
        kind,
        key,
        quote[:1],
        raw=raw,
        doubled=doubled,
        decode=escapes and not raw,
    )


def _key_of(significant: Sequence[Token]) -> str | None:
    """The key a string is assigned to (``name = "…"``, ``"phone": "…"``), if any."""
    if len(significant) < 2:
        return None
    op, key = significant[-1], significant[-2]
    if op.value.strip() not in _ASSIGN or not (op.ttype in Operator or op.ttype in Punctuation):
        return None
    if key.ttype in Name or key.ttype in Literal or key.ttype in Text:
        word = key.value.strip(BLANK + "\"'`")
        if _KEY_SHAPE.fullmatch(word):
            return word
    return None


# --- escapes -------------------------------------------------------------------------------


def _decode_escape(body: str) -> str | None:
    """The character(s) an escape ``\\body`` stands for, or None to keep it as written."""
    head = body[0]
    if head in "\r\n":
        return ""
    if head in _SIMPLE_ESCAPES and len(body) == 1:
        return _SIMPLE_ESCAPES[head]
    try:
        if head == "u" and body.startswith("u{"):
            code = int(body[2:-1], 16)
        elif head in "uUx" and len(body) > 1:
            code = int(body[1:], 16)
        elif head in "01234567":
            code = int(body, 8)
        elif head == "N" and len(body) > 1:
            return unicodedata.lookup(body[2:-1])
        elif len(body) == 1 and not head.isalnum():
            return head  # \\ \" \' \` \$ …
        else:
            return None
    except (KeyError, ValueError):
        return None
    if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
        return None
    return chr(code) if code else " "


def decode_escapes(raw: str, base: int) -> tuple[str, tuple[int, ...]] | None:
    """(value, offsets) of ``raw`` (found at ``base`` in the document) with backslash
    escapes decoded, or None if it has none."""
    if "\\" not in raw:
        return None
    chars: list[str] = []
    offsets: list[int] = []
    pos = 0
    changed = False
    for m in _ESCAPE.finditer(raw):
        for i in range(pos, m.start()):
            chars.append(raw[i])
            offsets.append(base + i)
        new = _decode_escape(m.group(1))
        if new is None:
            new = m.group(0)
            for i, ch in enumerate(new):
                chars.append(ch)
                offsets.append(base + m.start() + i)
        else:
            changed = True
            for ch in new:
                chars.append(ch)
                offsets.append(base + m.start())
        pos = m.end()
    if not changed:
        return None
    for i in range(pos, len(raw)):
        chars.append(raw[i])
        offsets.append(base + i)
    offsets.append(base + len(raw))
    return "".join(chars), tuple(offsets)
