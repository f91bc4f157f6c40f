"""Property (issue 34): random text with identifiers planted and obfuscated by the forms of
section 1 (invisible characters, odd spaces, fullwidth digits, the letter O for zero, the
letters l and I for one, Unicode dashes and minus signs between digit groups, the fullwidth
``＠``, spelled-out e-mails, names with invisible characters inside). With the rules profile
every planted identifier is covered by spans, nothing of it is left, and the redacted output
is the input with each span replaced: nothing outside the spans changes."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from polydeid.api import Deidentifier

INVISIBLE = ["\u200b", "\u2060", "\u00ad", "\ufeff", "\u200e"]
SPACES = [" ", "\u00a0", "\u2009", "\u202f"]
DASHES = ["\u2010", "\u2011", "\u2012", "\u2013", "\u2014", "\u2212", "\ufe63", "\uff0d"]
ONES = ["l", "I"]
FULLWIDTH = str.maketrans("0123456789@", "０１２３４５６７８９＠")
ASCII = str.maketrans("０１２３４５６７８９＠", "0123456789@")
FILLER = [
    "the",
    "patient",
    "was",
    "seen",
    "today",
    "and",
    "is",
    "stable",
    "with",
    "mild",
    "pain",
    ",",
    "no",
    "fever",
    ".",
    "review",
    "next",
    "week",
    "in",
    "clinic",
    ";",
    "tolerating",
    "diet",
    "well",
]
GIVEN = ["Zebedee", "Quillon", "Marivanne", "Oswinda", "Tarquil"]
FAMILY = ["Quartermain", "Vellacott", "Brightwater", "Abernathy", "Fenwright"]
LOCAL = "bcfghjklmnqrvwxyz"
DOMAINS = [("example", "com"), ("mailhost", "org"), ("healthnet", "co", "ug")]

RULES = Deidentifier(profile="rules")


@st.composite
def invisible_inside(draw: st.DrawFn, word: str) -> str:
    """``word`` with invisible characters at one or two places inside it."""
    chars = list(word)
    for _ in range(draw(st.integers(1, 2))):
        at = draw(st.integers(1, len(chars) - 1))
        chars.insert(at, draw(st.sampled_from(INVISIBLE)))
    return "".join(chars)


@st.composite
def phone(draw: st.DrawFn) -> tuple[str, str, str]:
    """(context, written number, plain digits) of a Ugandan mobile number."""
    groups = [
        draw(st.sampled_from(["0772", "0712", "0701", "0752"])),
        draw(st.from_regex(r"[1-9][0-9]{2}", fullmatch=True)),
        draw(st.from_regex(r"[0-9]{3}", fullmatch=True)),
    ]
    form = draw(
        st.sampled_from(["spaces", "invisible", "fullwidth", "letter-o", "letter-one", "dashes"])
    )
    if form == "letter-one":
        # a one after the network code, leading the next group: 0772 l23 456
        groups[1] = "1" + groups[1][1:]
    plain = "".join(groups)
    if form == "spaces":
        written = draw(st.sampled_from(SPACES[1:])).join(groups)
    elif form == "invisible":
        written = draw(st.sampled_from(INVISIBLE)).join(groups)
    elif form == "fullwidth":
        written = " ".join(groups).translate(FULLWIDTH)
    elif form == "letter-o":
        written = "O" + " ".join(groups)[1:]
    elif form == "letter-one":
        written = " ".join([groups[0], draw(st.sampled_from(ONES)) + groups[1][1:], groups[2]])
    else:
        written = draw(st.sampled_from(DASHES)).join(groups)
    return draw(st.sampled_from(["Call me on ", "phone ", "tel: "])), written, plain


@st.composite
def record_number(draw: st.DrawFn) -> tuple[str, str, str]:
    plain = draw(st.from_regex(r"[1-9][0-9]{6}", fullmatch=True))
    form = draw(st.sampled_from(["invisible", "dash", "letter-one"]))
    at = draw(st.integers(1, 5))
    if form == "invisible":
        written = draw(invisible_inside(plain))
    elif form == "dash":
        written = plain[:at] + draw(st.sampled_from(DASHES)) + plain[at:]
    else:
        plain = plain[:at] + "1" + plain[at + 1 :]
        written = plain[:at] + draw(st.sampled_from(ONES)) + plain[at + 1 :]
    return "MRN ", written, plain


@st.composite
def ssn(draw: st.DrawFn) -> tuple[str, str, str]:
    area = draw(st.integers(100, 665))
    group = draw(st.integers(10, 99))
    serial = draw(st.integers(1000, 9999))
    space = draw(st.sampled_from(SPACES[1:] + INVISIBLE[:2] + DASHES))
    written = f"{area}{space}{group}{space}{serial}"
    return "SSN ", written, f"{area}{group}{serial}"


@st.composite
def email(draw: st.DrawFn) -> tuple[str, str, str]:
    local = draw(st.text(alphabet=LOCAL, min_size=3, max_size=8))
    labels = draw(st.sampled_from(DOMAINS))
    form = draw(st.sampled_from(["invisible", "fullwidth", "spaced", "words", "brackets"]))
    if form == "invisible":
        written = f"{draw(invisible_inside(local))}@{'.'.join(labels)}"
    elif form == "fullwidth":
        written = f"{local}＠{'.'.join(labels)}"
    elif form == "spaced":
        written = f"{local} @ {' . '.join(labels)}"
    elif form == "words":
        written = f"{local} at {' dot '.join(labels)}"
    else:
        written = f"{local}[at]{'[.]'.join(labels)}"
    return "write to ", written, f"{local}@{'.'.join(labels)}"


@st.composite
def name(draw: st.DrawFn) -> tuple[str, str, str]:
    first, last = draw(st.sampled_from(GIVEN)), draw(st.sampled_from(FAMILY))
    written = f"{draw(invisible_inside(first))} {draw(invisible_inside(last))}"
    return "\nPatient name: ", written + "\n", f"{first} {last}"


IDENTIFIERS = st.one_of(phone(), record_number(), ssn(), email(), name())
WORDS = st.lists(st.sampled_from(FILLER), min_size=1, max_size=8).map(" ".join)


@st.composite
def planted(draw: st.DrawFn) -> tuple[str, list[tuple[int, int, str, str]]]:
    """Text with one to three identifiers planted: (text, [(start, end, plain, written)])."""
    text = draw(WORDS)
    where: list[tuple[int, int, str, str]] = []
    for _ in range(draw(st.integers(1, 3))):
        context, written, plain = draw(IDENTIFIERS)
        text += " " + context
        where.append((len(text), len(text) + len(written.rstrip("\n")), plain, written))
        text += written + " " + draw(WORDS)
    return text, where


def _parts(plain: str, written: str) -> list[str]:
    """The parts of an identifier that must not survive: names, e-mail parts, digit runs."""
    if "@" in plain:
        local, domain = plain.split("@")
        return [local, domain.split(".")[0]]
    if plain[0].isalpha():
        return plain.split()
    return re.findall(r"[0-9]{3,}", written.translate(ASCII))


@settings(max_examples=60, deadline=None)
@given(planted())
def test_planted_obfuscated_identifiers_are_covered_and_nothing_else_changes(
    case: tuple[str, list[tuple[int, int, str, str]]],
) -> None:
    text, where = case
    spans = RULES.detect(text, lang="en")
    covered = set()
    for span in spans:
        covered.update(range(span.start, span.end))
    for start, end, _, _ in where:
        assert set(range(start, end)) <= covered, "a planted identifier is not covered"
    expected, done = [], 0
    for span in spans:
        expected.append(text[done : span.start] + f"[{span.label.value}]")
        done = span.end
    expected.append(text[done:])
    output = RULES.redact(text, lang="en")
    assert output == "".join(expected)
    for _, _, plain, written in where:
        for part in _parts(plain, written):
            assert part.casefold() not in output.casefold(), "a part of an identifier survived"
