"""E-mails (plain and obfuscated), URLs, IP addresses and social handles.

Test ids are labels, never the addresses themselves.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polydeid.core.errors import RuleTimeoutError
from polydeid.core.segments import Segment
from polydeid.core.taxonomy import Category
from polydeid.detect.rules import contacts
from polydeid.detect.rules.contacts import (
    SOURCE_EMAIL,
    SOURCE_EMAIL_OBFUSCATED,
    SOURCE_HANDLE,
    SOURCE_IP,
    SOURCE_URL,
    ContactRule,
)
from polydeid.locales import language_data, languages

RULE = ContactRule()


def found(text: str, lang: str = "en") -> list[tuple[str, str]]:
    """(span text, source) of every contact found (for assertions only)."""
    spans = RULE.detect(Segment(text, lang=lang))
    assert all(s.label is Category.CONTACT_OTHER for s in spans)
    return [(text[s.start : s.end], s.source) for s in spans]


# (label, lang, text, expected span text, source)
POSITIVES = [
    ("email", "en", "Email john.smith@example.org today", "john.smith@example.org", SOURCE_EMAIL),
    (
        "email-subdomain",
        "de",
        "E-Mail a.b@c.d.example.co.uk.",
        "a.b@c.d.example.co.uk",
        SOURCE_EMAIL,
    ),
    (
        "email-plus",
        "en",
        "<jane+clinic@mail.example.com>",
        "jane+clinic@mail.example.com",
        SOURCE_EMAIL,
    ),
    (
        "email-unicode",
        "de",
        "Mail: jürgen.müller@beispiel.de",
        "jürgen.müller@beispiel.de",
        SOURCE_EMAIL,
    ),
    ("email-mailto", "en", "mailto:nurse@clinic.org", "nurse@clinic.org", SOURCE_EMAIL),
    (
        "obf-vi-words",
        "vi",
        "email nguyen dot an at gmail dot com.",
        "nguyen dot an at gmail dot com",
        SOURCE_EMAIL_OBFUSCATED,
    ),
    (
        "obf-en-upper",
        "en",
        "NAME AT GMAIL DOT COM",
        "NAME AT GMAIL DOT COM",
        SOURCE_EMAIL_OBFUSCATED,
    ),
    (
        "obf-es-brackets",
        "es",
        "correo juan [at] hospital [punto] es",
        "juan [at] hospital [punto] es",
        SOURCE_EMAIL_OBFUSCATED,
    ),
    (
        "obf-es-arroba",
        "es",
        "escribir a maria arroba correo punto es",
        "maria arroba correo punto es",
        SOURCE_EMAIL_OBFUSCATED,
    ),
    (
        "obf-parens",
        "en",
        "write to name(at)example(dot)org",
        "name(at)example(dot)org",
        SOURCE_EMAIL_OBFUSCATED,
    ),
    (
        "obf-sw-webmail",
        "sw",
        "barua pepe mwangi at gmail.com",
        "mwangi at gmail.com",
        SOURCE_EMAIL_OBFUSCATED,
    ),
    (
        "obf-sw-nukta",
        "sw",
        "mwangi at yahoo nukta com",
        "mwangi at yahoo nukta com",
        SOURCE_EMAIL_OBFUSCATED,
    ),
    (
        "obf-de",
        "de",
        "anna punkt mueller ät web punkt de",
        "anna punkt mueller ät web punkt de",
        SOURCE_EMAIL_OBFUSCATED,
    ),
    (
        "obf-fr",
        "fr",
        "jean point dupont arobase orange point fr",
        "jean point dupont arobase orange point fr",
        SOURCE_EMAIL_OBFUSCATED,
    ),
    (
        "obf-pt",
        "pt",
        "ana arroba sapo ponto pt",
        "ana arroba sapo ponto pt",
        SOURCE_EMAIL_OBFUSCATED,
    ),
    (
        "obf-it",
        "it",
        "mario chiocciola libero punto it",
        "mario chiocciola libero punto it",
        SOURCE_EMAIL_OBFUSCATED,
    ),
    (
        "obf-nl",
        "nl",
        "jan apenstaartje ziggo punt nl",
        "jan apenstaartje ziggo punt nl",
        SOURCE_EMAIL_OBFUSCATED,
    ),
    (
        "obf-ru",
        "ru",
        "почта ivan собака mail точка ru",
        "ivan собака mail точка ru",
        SOURCE_EMAIL_OBFUSCATED,
    ),
    ("obf-zh", "zh", "邮箱 zhang 艾特 qq 点 com", "zhang 艾特 qq 点 com", SOURCE_EMAIL_OBFUSCATED),
    (
        "obf-vi-acong",
        "vi",
        "an a còng gmail chấm com",
        "an a còng gmail chấm com",
        SOURCE_EMAIL_OBFUSCATED,
    ),
    ("obf-spaced-at-sign", "en", "john @ gmail.com", "john @ gmail.com", SOURCE_EMAIL_OBFUSCATED),
    (
        "obf-context",
        "en",
        "email: juan at hospital.es",
        "juan at hospital.es",
        SOURCE_EMAIL_OBFUSCATED,
    ),
    (
        "url-https",
        "en",
        "see https://example.org/a?b=1 now",
        "https://example.org/a?b=1",
        SOURCE_URL,
    ),
    ("url-www-period", "en", "see www.example.org.", "www.example.org", SOURCE_URL),
    (
        "url-paren-kept",
        "en",
        "(see https://example.org/a_(b))",
        "https://example.org/a_(b)",
        SOURCE_URL,
    ),
    ("url-comma", "en", "at http://x.example/z?q=1, then", "http://x.example/z?q=1", SOURCE_URL),
    ("url-keeps-email", "en", "http://x.org/?m=a@b.com", "http://x.org/?m=a@b.com", SOURCE_URL),
    # Chinese or Ethiopic text glued to an address or a URL is not part of it
    (
        "email-after-han",
        "zh",
        "报告已发送至vickie_j@example.org，请查收",
        "vickie_j@example.org",
        SOURCE_EMAIL,
    ),
    ("email-all-han-local", "zh", "邮箱 张伟@example.cn", "张伟@example.cn", SOURCE_EMAIL),
    (
        "url-ethiopic-stop",
        "am",
        "https://x.example/p?mrn=977050። CBC",
        "https://x.example/p?mrn=977050",
        SOURCE_URL,
    ),
    ("url-han-stop", "zh", "见https://x.example/a。请查收", "https://x.example/a", SOURCE_URL),
    # a host that only ends like a standards body's is no standard's
    ("url-lookalike-host", "en", "see http://myw3.org/p/1", "http://myw3.org/p/1", SOURCE_URL),
    (
        "url-standard-in-path",
        "en",
        "http://x.example/loinc.org",
        "http://x.example/loinc.org",
        SOURCE_URL,
    ),
    (
        "url-ftp",
        "en",
        "ftp://files.example.net/notes.txt;",
        "ftp://files.example.net/notes.txt",
        SOURCE_URL,
    ),
    ("ipv4", "en", "from 192.168.1.10 yesterday", "192.168.1.10", SOURCE_IP),
    ("ipv4-cidr", "en", "subnet 10.20.0.0/16.", "10.20.0.0/16", SOURCE_IP),
    ("ipv4-with-context", "en", "IP address 1.2.3.4", "1.2.3.4", SOURCE_IP),
    ("ipv6", "en", "host 2001:db8::1, down", "2001:db8::1", SOURCE_IP),
    ("ipv6-full", "en", "fe80::1ff:fe23:4567:890a", "fe80::1ff:fe23:4567:890a", SOURCE_IP),
    ("handle-context", "en", "twitter @mwangi_j", "@mwangi_j", SOURCE_HANDLE),
    ("handle-context-plain", "en", "instagram: @jdoe.", "@jdoe", SOURCE_HANDLE),
    ("handle-distinctive", "en", "ask @j_doe", "@j_doe", SOURCE_HANDLE),
    ("handle-in-parens", "en", "(whatsapp @mama_amina)", "@mama_amina", SOURCE_HANDLE),
]


@pytest.mark.parametrize(
    "lang,text,expected,source", [p[1:] for p in POSITIVES], ids=[p[0] for p in POSITIVES]
)
def test_finds_contact(lang: str, text: str, expected: str, source: str) -> None:
    assert found(text, lang) == [(expected, source)]


# (label, lang, text)
NEGATIVES = [
    ("prose-at-home", "en", "She was seen at home. Review at 10 am at the clinic."),
    ("prose-at-place", "en", "Reviewed at St. Mary's Hospital at noon."),
    ("prose-dot-com", "en", "She talked about the dot com bubble at the meeting."),
    ("prose-determiner", "en", "look at the dot com bubble"),
    ("prose-bare-at-no-context", "en", "juan at hospital.es"),
    ("dose-at-sign", "en", "Paracetamol 1g @ 8pm, then @10am"),
    ("clinic-shorthand-handle", "en", "rest @home, review @night"),
    ("handle-without-context", "en", "ok @jdoe"),
    ("time-at-decimal", "en", "arrived at 8.30 am"),
    ("es-prose-punto", "es", "el punto de vista del paciente en el hospital"),
    ("fr-prose-point", "fr", "le point de ponction au bras"),
    ("version-3-parts", "en", "software v1.2.3 installed"),
    ("version-4-parts-one-digit", "en", "release 1.2.3.4"),
    ("version-word", "en", "version 10.0.0.1 deployed"),
    ("dotted-date", "de", "am 12.03.2024 und 1.2.2024"),
    ("five-part-number", "en", "section 1.2.3.4.5"),
    ("time-colons", "en", "at 14:30:00 and 08:00"),
    ("ratio", "en", "ratio 1:2:3"),
    ("invalid-octet", "en", "value 300.1.2.3"),
    ("leading-zero-octets", "en", "id 01.02.03.04"),
    ("www-not-email-domain", "en", "juan at www.example"),
    ("email-dotted-local", "en", "a..b@example.org"),
    # a standards body's namespace or code system names no one
    ("xhtml-namespace", "en", '"div": "<div xmlns=\\"http://www.w3.org/1999/xhtml\\">Seen</div>"'),
    ("fhir-code-system", "en", '"system": "http://loinc.org", "code": "8480-6"'),
    ("hl7-subdomain", "en", "system http://terminology.hl7.org/CodeSystem/v3-ActCode"),
    ("snomed", "en", "http://snomed.info/sct|271649006"),
]


@pytest.mark.parametrize("lang,text", [n[1:] for n in NEGATIVES], ids=[n[0] for n in NEGATIVES])
def test_no_contact(lang: str, text: str) -> None:
    assert found(text, lang) == []


def test_handle_inside_email_is_not_a_handle() -> None:
    assert found("write to amina@example.org", "sw") == [("amina@example.org", SOURCE_EMAIL)]


def test_mixed_record() -> None:
    text = (
        "Patient John Smith. Phone (415) 555-2671, email john dot smith at gmail dot com, "
        "portal https://portal.example.org/p/123. Seen at home at 10 am."
    )
    assert found(text, "en") == [
        ("john dot smith at gmail dot com", SOURCE_EMAIL_OBFUSCATED),
        ("https://portal.example.org/p/123", SOURCE_URL),
    ]


class _TimingOutPattern:
    def finditer(self, *args: object, **kwargs: object) -> object:
        raise TimeoutError


def test_timeout_fails_closed_without_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(contacts, "_AT_SIGN", _TimingOutPattern())
    with pytest.raises(RuleTimeoutError) as info:
        RULE.detect(Segment("mail amina@example.org", lang="en"))
    assert "amina" not in str(info.value)


@pytest.mark.parametrize("code", languages())
def test_every_language_has_contact_words(code: str) -> None:
    data = language_data(code, "contacts")
    assert data["meta"]["sources"] and data["meta"]["licence"]
    assert data["phone"]["words"], "phone context words"
    assert data["obfuscation"]["at"] and data["obfuscation"]["dot"]
    for table in ("phone", "fax", "extension", "email", "social", "ip"):
        words = data.get(table, {}).get("words", [])
        assert all(isinstance(w, str) and w.strip() == w and w for w in words)


# -- properties ---------------------------------------------------------------------------

# Words the rule treats specially (determiners, spoken "at"/"dot") are not names here;
# their handling has its own tests above.
_RESERVED = {
    word.lower()
    for code in languages()
    for table in (language_data(code, "contacts").get("obfuscation", {}),)
    for key in ("at", "dot", "stopwords")
    for word in table.get(key, ())
}
_name = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=10).filter(
    lambda s: s not in _RESERVED
)
_tld = st.sampled_from(["com", "org", "net", "ug", "ke", "de", "es", "vn", "co.uk"])
_prose = st.sampled_from(
    ["Patient reviewed.", "Contact:", "seen at home at 10 am;", "BP 120/80, T 36.8.", ""]
)


@settings(max_examples=100, deadline=None)
@given(
    first=_name, last=_name, host=_name, tld=_tld, before=_prose, after=_prose, dotted=st.booleans()
)
def test_generated_email_is_found_exactly(
    first: str, last: str, host: str, tld: str, before: str, after: str, dotted: bool
) -> None:
    address = f"{first}.{last}@{host}.{tld}" if dotted else f"{first}@{host}.{tld}"
    text = f"{before} {address} {after}"
    assert found(text) == [(address, SOURCE_EMAIL)]


@settings(max_examples=100, deadline=None)
@given(
    lang=st.sampled_from(["en", "es", "fr", "de", "vi", "ru", "sw"]),
    first=_name,
    last=_name,
    host=_name,
    tld=st.sampled_from(["com", "org", "net", "ug", "de"]),
    brackets=st.booleans(),
)
def test_spelled_out_email_is_found_exactly(
    lang: str, first: str, last: str, host: str, tld: str, brackets: bool
) -> None:
    words = language_data(lang, "contacts")["obfuscation"]
    at, dot = words["at"][0], words["dot"][0]
    if brackets:
        address = f"{first} [{dot}] {last} [{at}] {host} [{dot}] {tld}"
    else:
        address = f"{first} {dot} {last} {at} {host} {dot} {tld}"
    text = f"Contact: {address}. Review in 2 weeks."
    assert found(text, lang) == [(address, SOURCE_EMAIL_OBFUSCATED)]


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=st.sampled_from("ab @.:/()[]-_w0129 atdo"), max_size=80))
def test_spans_are_in_bounds_and_disjoint(text: str) -> None:
    spans = RULE.detect(Segment(text, lang="en"))
    for span in spans:
        assert 0 <= span.start < span.end <= len(text)
    for a, b in itertools.pairwise(spans):
        assert a.end <= b.start
