"""E-mail addresses (plain and obfuscated), URLs, IP addresses and social-media handles.

Each kind has an anchor that is rare in clinical prose, found by a pattern that begins with a
literal (the ``regex`` engine skips ahead fast only then) and only when a plain substring test
says the anchor can occur; around each anchor a short anchored pattern reads the rest:

- **e-mail** ``name@example.org``: anchored on ``@`` (source ``rule.contact.email.v1``);
- **obfuscated e-mail** ``nguyen dot an at gmail dot com``, ``juan [at] hospital [punto] es``,
  ``name(at)example(dot)org``, ``mwangi at gmail.com``, ``juan @ hospital.es``,
  ``john @ example . com``
  (``rule.contact.email_obfuscated.v1``): anchored on an "at" word of the language's list, a
  bracketed "at" or a spaced ``@``; the local part is read backwards from there, the domain
  forwards, and the domain must end in a known top-level domain. When the only sign of
  obfuscation is a bare word ``at`` (``mwangi at gmail.com``) the domain must be a known
  webmail domain or an e-mail context word must precede, and neither part may be a
  determiner ("look at the dot com"), so prose such as "seen at home" is never hit;
- **URL** ``http(s)://…``, ``ftp://…``, ``www.…`` with trailing punctuation left out
  (``rule.contact.url.v1``); not a URL on a standards body's host (``[urls]
  standard_hosts``: ``http://loinc.org``, the XHTML namespace ``http://www.w3.org/1999/xhtml``),
  which names a code system or a namespace, never a person;
- **IP address** IPv4 and IPv6, validated by :mod:`ipaddress`; version numbers (``1.2.3.4``
  with one-digit parts, ``version 10.0.0.1``) and dotted dates never match
  (``rule.contact.ip.v1``);
- **social handle** ``@mwangi_j`` after a space or an opening bracket, not inside an e-mail
  (``rule.contact.handle.v1``). After a social-media context word (twitter, instagram,
  whatsapp…) any handle counts; without one the handle must contain ``_``, ``.`` or a digit,
  because clinical shorthand writes ``@home`` and ``@night``.

Spans of different kinds never overlap: the earliest, then longest, wins (a URL keeps the
e-mail address in its query string).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from urllib.parse import urlsplit

import phonenumbers
import regex

from polydeid.core.errors import RuleTimeoutError
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.detect.rules._base import RuleDetector
from polydeid.locales import segment_languages
from polydeid.locales.contacts import contact_table, contact_words
from polydeid.text.patterns import (
    PATTERN_TIMEOUT_S,
    ContextLexicon,
    Match,
    Pattern,
    compile_pattern,
    guarded_finditer,
    phrase_alternation,
)
from polydeid.text.scripts import UNSPACED

SOURCE_EMAIL = "rule.contact.email.v1"
SOURCE_EMAIL_OBFUSCATED = "rule.contact.email_obfuscated.v1"
SOURCE_URL = "rule.contact.url.v1"
SOURCE_IP = "rule.contact.ip.v1"
SOURCE_HANDLE = "rule.contact.handle.v1"

#: How far before a candidate a context word may be.
_CONTEXT_CHARS = 40
#: Characters that end a URL when they are its last character (sentence punctuation).
_URL_TRAILING = ".,;:!?'\"»”’)]}>*"
_CLOSERS = {")": "(", "]": "[", "}": "{"}
_LABEL = r"[\p{L}\p{N}][\p{L}\p{N}\-]{0,62}+"
_SPACES = " \t"

_AT_SIGN = compile_pattern("@")
_EMAIL_LOCAL = compile_pattern(r"(?r)[\p{L}\p{N}._%+\-]{1,64}")
_EMAIL_DOMAIN = compile_pattern(
    rf"(?:{_LABEL}\.)+(?:\p{{L}}{{2,24}}|xn--[\p{{L}}\p{{N}}\-]{{1,59}})(?![\p{{L}}\p{{N}}\-])"
)
_HANDLE = compile_pattern(r"@[A-Za-z_][A-Za-z0-9_.]{0,29}+(?![A-Za-z0-9_@])")
#: Sentence punctuation of scripts written without spaces or with their own marks (Chinese,
#: Japanese, Ethiopic, Arabic): never part of a URL, so a URL glued to it ends there
#: ("…?mrn=977050። CBC", "https://x.org/a。请查收").
_URL_STOPS = "。，、；：！？」』።፣፤፥،؛"
_URL = compile_pattern(
    r"(?:[Hh][Tt][Tt][Pp][Ss]?://|[Ff][Tt][Pp]://|[Ww]{3}\.)"
    rf"[^\s<>\"'`{{}}|\\^\[\]{_URL_STOPS}]+"
)
_URL_HOST = compile_pattern(
    r"(?i:(?:https?|ftp)://[^\s/?#]*[\p{L}\p{N}]|www\.[\p{L}\p{N}\-]+\.[\p{L}\p{N}])"
)
_IPV4 = compile_pattern(r"[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}(?:/[0-9]{1,2})?")
_IPV6 = compile_pattern(
    r"(?:[0-9A-Fa-f]{1,4}:|:)(?:[0-9A-Fa-f]{0,4}:){1,7}+"
    r"(?:[0-9A-Fa-f]{1,4}|(?:[0-9]{1,3}\.){3}[0-9]{1,3})?(?:/[0-9]{1,3})?"
)
#: Characters that may sit right before a handle's ``@``.
_HANDLE_OPENERS = "([{\"'«“‘"
#: A dot written with spaces around it (``john @ example . com``): a dot, not a spelled one.
_SPACED_DOT = regex.compile(r"[ \t]+\.[ \t]+")


@dataclass(frozen=True, slots=True)
class _ContactLocale:
    """Patterns, context words and domain lists for one set of languages."""

    at_words: tuple[Pattern, ...]
    bracket_at: Pattern
    local_part: Pattern
    domain: Pattern
    email_context: ContextLexicon
    social_context: ContextLexicon
    ip_context: ContextLexicon
    version_context: ContextLexicon
    webmail: frozenset[str]
    stopwords: frozenset[str]
    tlds: frozenset[str]


def _alternation(words: Sequence[str]) -> str:
    """A case-insensitive alternation of ``words``, longest first, spaces matching any run."""
    return phrase_alternation(words, fold_case=True, spaces=r"[ \t]+")


@cache
def _tlds() -> frozenset[str]:
    """Generic TLDs from the data files plus every ISO 3166 region code as a ccTLD."""
    english = contact_words("en")
    names = [*english.generic_tlds, *english.extra_cctlds]
    names.extend(region.lower() for region in phonenumbers.SUPPORTED_REGIONS)
    return frozenset(n.lower() for n in names)


@cache
def _standard_hosts() -> frozenset[str]:
    """Hosts of standards' namespaces and code systems (``[urls] standard_hosts``)."""
    return frozenset(h.lower() for h in contact_words("en").standard_hosts)


def _is_standard(url: str) -> bool:
    """Whether ``url`` lies on a standards body's host or a subdomain of one
    ("http://www.w3.org/1999/xhtml", "http://terminology.hl7.org/CodeSystem/v3-ActCode"):
    a namespace or a code system, which names no one."""
    try:
        host = urlsplit(url if "://" in url else f"http://{url}").hostname or ""
    except ValueError:  # a malformed host ("http://[::1"): not a standard's
        return False
    labels = host.split(".")
    hosts = _standard_hosts()
    return any(".".join(labels[i:]) in hosts for i in range(len(labels) - 1))


@cache
def _locale(langs: tuple[str, ...]) -> _ContactLocale:
    """Compile the obfuscation patterns and load context words for ``langs``."""
    at_list = sorted({w.strip() for w in contact_table(langs, lambda w: w.at)} - {""})
    at_words = _alternation(at_list)
    dot_words = _alternation(contact_table(langs, lambda w: w.dot))
    dot_sep = (
        rf"(?:\.|[ \t]*[\[({{<][ \t]*(?:{dot_words}|\.)[ \t]*[\])}}>][ \t]*"
        rf"|[ \t]+{dot_words}[ \t]+|[ \t]+\.[ \t]+)"
    )
    local_word = r"[\p{L}\p{N}_%+\-]{1,64}"
    return _ContactLocale(
        # One literal pattern per word (" at ", " arroba "): far faster than an alternation.
        at_words=tuple(compile_pattern(rf"(?i) {regex.escape(w)} ") for w in at_list),
        bracket_at=compile_pattern(rf"[\[({{<][ \t]*(?:{at_words}|@)[ \t]*[\])}}>]"),
        local_part=compile_pattern(rf"(?r){local_word}(?:{dot_sep}{local_word}){{0,4}}"),
        domain=compile_pattern(rf"(?P<lab>{_LABEL})(?:(?P<sep>{dot_sep})(?P<lab>{_LABEL})){{1,5}}"),
        email_context=ContextLexicon(contact_table(langs, lambda w: w.email)),
        social_context=ContextLexicon(contact_table(langs, lambda w: w.social)),
        ip_context=ContextLexicon(contact_table(langs, lambda w: w.ip)),
        version_context=ContextLexicon(contact_table(langs, lambda w: w.ip_version)),
        webmail=frozenset(d.lower() for d in contact_table(langs, lambda w: w.webmail_domains)),
        stopwords=frozenset(w.lower() for w in contact_table(langs, lambda w: w.stopwords)),
        tlds=_tlds(),
    )


class ContactRule(RuleDetector):
    """E-mail addresses, obfuscated e-mails, URLs, IP addresses and social handles."""

    id = "rules.contacts.v1"
    labels: frozenset[Category | Fact] = frozenset({Category.CONTACT_OTHER})

    def find(self, segment: Segment) -> list[Span]:
        scan = _Scan(segment, _locale(tuple(segment_languages(segment))), self.id)
        text = segment.text
        spans: list[Span] = []
        if "@" in text:
            spans.extend(scan.at_signs())
        if "://" in text or "ww." in text or "WW." in text:
            spans.extend(scan.urls())
        if "." in text:
            spans.extend(scan.ipv4())
        if "::" in text or text.count(":") >= 7:
            spans.extend(scan.ipv6())
        spans.extend(scan.obfuscated_words())
        if any(c in text for c in "[({<"):
            spans.extend(scan.obfuscated_brackets())
        return _without_overlaps(spans)


def _without_overlaps(spans: list[Span]) -> list[Span]:
    """Earliest, then longest, span wins where spans overlap."""
    kept: list[Span] = []
    for span in sorted(spans, key=lambda s: (s.start, -s.end)):
        if not kept or span.start >= kept[-1].end:
            kept.append(span)
    return kept


@dataclass(frozen=True, slots=True)
class _Scan:
    """One segment's scan: the segment, its languages' patterns and words, the rule id."""

    segment: Segment
    locale: _ContactLocale
    rule_id: str

    @property
    def text(self) -> str:
        return self.segment.text

    def _finditer(self, pattern: Pattern) -> Iterator[Match]:
        return guarded_finditer(pattern, self.segment, self.rule_id)

    def _match(self, pattern: Pattern, pos: int, endpos: int | None = None) -> Match | None:
        """``pattern.match`` within ``[pos, endpos)``, failing closed on a timeout."""
        end = len(self.text) if endpos is None else endpos
        try:
            return pattern.match(self.text, pos, end, timeout=PATTERN_TIMEOUT_S)
        except TimeoutError:
            raise RuleTimeoutError(
                f"rule {self.rule_id} exceeded {PATTERN_TIMEOUT_S}s on a segment of "
                f"{len(self.text)} chars",
                location=str(self.segment.origin),
            ) from None

    def _context(self, lexicon: ContextLexicon, start: int) -> bool:
        return lexicon.search(self.text, start - _CONTEXT_CHARS, start)

    # -- @: e-mail addresses, handles, spaced "@" -------------------------------------------

    def at_signs(self) -> Iterator[Span]:
        text = self.text
        for match in self._finditer(_AT_SIGN):
            at = match.start()
            before = text[at - 1] if at else " "
            after = text[at + 1] if at + 1 < len(text) else " "
            if after in _SPACES:
                span = self._obfuscated(_spread(text, at, at + 1), bare_word=False)
            elif before.isspace() or before in _HANDLE_OPENERS or at == 0:
                span = self._handle(at)
            else:
                span = self._email(at)
            if span is not None:
                yield span

    def _email(self, at: int) -> Span | None:
        """A plain e-mail address around the ``@`` at ``at``."""
        local = self._match(_EMAIL_LOCAL, max(0, at - 64), at)
        domain = self._match(_EMAIL_DOMAIN, at + 1)
        if local is None or domain is None:
            return None
        part = local.group()
        start = local.start()
        if part.startswith(".") or part.endswith(".") or ".." in part:
            return None
        if start > 0 and _is_local_char(self.text[start - 1]):
            return None  # longer than 64 characters: not an address
        glued = max((i for i, c in enumerate(part) if UNSPACED.match(c)), default=-1)
        if 0 <= glued < len(part) - 1 and part[glued + 1 :].isascii():
            # Chinese or Japanese text runs into an ASCII address with no space between
            # ("报告已发送至vickie_j@example.org"): the address begins after the last character
            # of that script ("张伟@example.cn", all of that script, stays whole)
            start += glued + 1
            if self.text[start] == ".":
                return None
        return Span(start, domain.end(), Category.CONTACT_OTHER, SOURCE_EMAIL, 0.99)

    def _handle(self, at: int) -> Span | None:
        """A social handle: always after a social context word, otherwise only distinctive ones."""
        match = self._match(_HANDLE, at)
        if match is None:
            return None
        end = match.end()
        while self.text[end - 1] == ".":
            end -= 1
        name = self.text[at + 1 : end]
        if len(name) < 2:
            return None
        if self._context(self.locale.social_context, at):
            return Span(at, end, Category.CONTACT_OTHER, SOURCE_HANDLE, 0.9)
        if "_" in name or "." in name or any(c.isdigit() for c in name[1:]):
            return Span(at, end, Category.CONTACT_OTHER, SOURCE_HANDLE, 0.6)
        return None

    # -- URLs and IP addresses -------------------------------------------------------------

    def urls(self) -> Iterator[Span]:
        text = self.text
        for match in self._finditer(_URL):
            start, end = match.span()
            before = text[start - 1] if start else " "
            if (_is_local_char(before) and not UNSPACED.match(before)) or before == "@":
                continue  # inside a word ("xhttp://"), not after Chinese text ("见https://")
            end = _trim_url(text, start, end)
            if self._match(_URL_HOST, start, end) and not _is_standard(text[start:end]):
                yield Span(start, end, Category.CONTACT_OTHER, SOURCE_URL, 0.95)

    def ipv4(self) -> Iterator[Span]:
        text = self.text
        for match in self._finditer(_IPV4):
            start, end = match.span()
            if start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_.:/-"):
                continue
            if end < len(text) and (_is_word(text[end]) or _dot_digit(text, end)):
                continue  # 1.2.3.4.5, 10.0.0.1a
            span = self._ip(start, end)
            if span is not None:
                yield span

    def ipv6(self) -> Iterator[Span]:
        text = self.text
        for match in self._finditer(_IPV6):
            start, end = match.span()
            if start > 0 and (_is_word(text[start - 1]) or text[start - 1] in ":."):
                continue
            if end < len(text) and (_is_word(text[end]) or text[end] in ":."):
                continue
            span = self._ip(start, end)
            if span is not None:
                yield span

    def _ip(self, start: int, end: int) -> Span | None:
        """A valid IPv4/IPv6 address (optionally with a prefix length), not a version number."""
        address, _, prefix = self.text[start:end].partition("/")
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return None
        if prefix and int(prefix) > ip.max_prefixlen:
            return None
        if ip.version == 6 and address.count(":") < 3 and "::" not in address:
            return None
        if ip.version == 4 and not self._context(self.locale.ip_context, start):
            one_digit_parts = all(len(p) == 1 for p in address.split("."))
            if one_digit_parts or self._context(self.locale.version_context, start):
                return None  # 1.2.3.4 or "version 10.0.0.1": a version number, not an address
        return Span(start, end, Category.CONTACT_OTHER, SOURCE_IP, 0.9)

    # -- obfuscated e-mail addresses -------------------------------------------------------

    def obfuscated_words(self) -> Iterator[Span]:
        """E-mails whose ``@`` is a word: ``nguyen dot an at gmail dot com``."""
        for pattern in self.locale.at_words:
            for match in self._finditer(pattern):
                at_start, at_end = _spread(self.text, match.start() + 1, match.end() - 1)
                span = self._obfuscated((at_start, at_end), bare_word=True)
                if span is not None:
                    yield span

    def obfuscated_brackets(self) -> Iterator[Span]:
        """E-mails whose ``@`` is bracketed: ``juan [at] hospital [punto] es``."""
        for match in self._finditer(self.locale.bracket_at):
            span = self._obfuscated(_spread(self.text, *match.span()), bare_word=False)
            if span is not None:
                yield span

    def _obfuscated(self, at: tuple[int, int], *, bare_word: bool) -> Span | None:
        """An e-mail around the "at" at ``at`` (with its surrounding spaces)."""
        at_start, at_end = at
        domain = self._domain(at_end)
        if domain is None:
            return None
        local = self._match(self.locale.local_part, max(0, at_start - 200), at_start)
        if local is None:
            return None
        start = local.start()
        if start > 0 and (_is_local_char(self.text[start - 1]) or self.text[start - 1] in ".@"):
            return None
        spelled = domain.spelled_dot or _spells_dot(local.group())
        if bare_word and not self._plausible_bare(domain, spelled, start):
            return None
        score = 0.8 if bare_word and not spelled else 0.9
        return Span(start, domain.end, Category.CONTACT_OTHER, SOURCE_EMAIL_OBFUSCATED, score)

    def _plausible_bare(self, domain: _Domain, spelled: bool, start: int) -> bool:
        """``name at domain``: no determiner as domain, and a spelled dot, webmail or context."""
        if domain.name.split(".", 1)[0] in self.locale.stopwords:
            return False
        if spelled or domain.name in self.locale.webmail:
            return True
        return self._context(self.locale.email_context, start)

    def _domain(self, pos: int) -> _Domain | None:
        """The longest run of labels from ``pos`` that ends in a known top-level domain."""
        match = self._match(self.locale.domain, pos)
        if match is None:
            return None
        labels, seps = match.spans("lab"), match.captures("sep")
        for count in range(len(labels), 1, -1):
            s, e = labels[count - 1]
            if self.text[s:e].lower() in self.locale.tlds:
                names = [self.text[a:b].lower() for a, b in labels[:count]]
                if names[0] == "www":
                    return None
                spelled = any(sep.strip(_SPACES) != "." for sep in seps[: count - 1])
                return _Domain(e, ".".join(names), spelled)
        return None


@dataclass(frozen=True, slots=True)
class _Domain:
    """The domain after an obfuscated "at": its end, its name, whether a dot was spelled out."""

    end: int
    name: str
    spelled_dot: bool


def _spread(text: str, start: int, end: int) -> tuple[int, int]:
    """Widen ``[start, end)`` over the spaces and tabs around it."""
    while start > 0 and text[start - 1] in _SPACES:
        start -= 1
    while end < len(text) and text[end] in _SPACES:
        end += 1
    return start, end


def _trim_url(text: str, start: int, end: int) -> int:
    """The end of a URL without trailing punctuation (a ``)`` closing a ``(`` is kept)."""
    while end > start and text[end - 1] in _URL_TRAILING:
        opener = _CLOSERS.get(text[end - 1])
        if opener and text.count(opener, start, end) >= text.count(text[end - 1], start, end):
            break
        end -= 1
    return end


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _dot_digit(text: str, pos: int) -> bool:
    return text[pos] == "." and text[pos + 1 : pos + 2].isdigit()


def _is_local_char(char: str) -> bool:
    return char.isalnum() or char in "_%+-"


def _spells_dot(local: str) -> bool:
    """Whether a local part spells a dot out (``nguyen dot an``) rather than writing ``.``
    (spaced or not: ``john . doe``)."""
    local = _SPACED_DOT.sub(".", local)
    return any(not c.isalnum() and c not in "._%+-" for c in local)
