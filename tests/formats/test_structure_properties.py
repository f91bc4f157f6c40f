"""Property tests: random JSON, FHIR, CSV and HL7 v2 structures keep their shape.

Random documents (random nesting, keys, quoting, delimiters, escapes and Unicode, with
invented identifiers mixed into their values) are redacted with the rules profile. Either
the output parses with a standard parser and has the input's shape — the same members in the
same order (keys changed only where they may be data), the same array lengths, the same rows
and columns, the same segments, fields, repetitions, components and subcomponents, every
escape well-formed — or the reader refuses the input with a coded
:class:`~polydeid.core.errors.PolydeidError`. No input raises anything else.
"""

from __future__ import annotations

import csv
import io
import json
import re
from typing import Any
from xml.etree import ElementTree

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from polydeid.api import Deidentifier
from polydeid.core.errors import PolydeidError
from polydeid.formats.json import is_data_key
from polydeid.lexicon.tables import sniff_delimiter

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: Invented identifiers and the text around them that the rules profile finds.
PLANTS = (
    "Patient name: Zebedee Quartermain",
    "0712 345678",
    "+256 772 123456",
    "zq@example.org",
    "MRN 4482913",
    "born 12/03/1984",
    "2024-03-01",
    "Dr. Amani Okello",
    "Kisumu",
)


@pytest.fixture(scope="module")
def deid() -> Deidentifier:
    return Deidentifier(profile="rules", policy="tag")


def _redact(deid: Deidentifier, data: str | bytes, fmt: str, **options: Any) -> str | None:
    """The redacted text, or None when the input was refused with a coded error."""
    try:
        return deid.redact_document(data, format=fmt, lang="en", **options).text
    except PolydeidError as exc:
        assert re.fullmatch(r"PD\d{3}", exc.code), exc.code
        return None


_TEXT = st.one_of(
    st.text(max_size=24),
    st.sampled_from(PLANTS),
    st.builds(
        lambda a, p, b: f"{a}{p}{b}",
        st.text(max_size=8),
        st.sampled_from(PLANTS),
        st.text(max_size=8),
    ),
)


# --- JSON and FHIR ---------------------------------------------------------------------------

_KEYS = st.one_of(
    st.text(max_size=12),
    st.sampled_from(
        ["phone", "birthDate", "name", "family", "mrn", "notes", "items", "resourceType", "x"]
    ),
    st.sampled_from(PLANTS),
)
_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    _TEXT,
)
_JSON = st.recursive(
    _LEAVES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=4),
    max_leaves=24,
)


def _pairs(text: str) -> Any:
    """The document parsed with every object as its list of (key, value) pairs (a leading
    byte-order mark skipped, as the formats skip it)."""
    return json.loads(
        text.removeprefix("\ufeff"), object_pairs_hook=lambda pairs: ("object", pairs)
    )


def _same_json_shape(before: Any, after: Any, *, keys_fixed: bool) -> None:
    if isinstance(before, tuple):  # an object
        assert isinstance(after, tuple)
        assert len(after[1]) == len(before[1])
        for (k1, v1), (k2, v2) in zip(before[1], after[1], strict=True):
            if keys_fixed or not is_data_key(k1):
                assert k2 == k1
            _same_json_shape(v1, v2, keys_fixed=keys_fixed)
    elif isinstance(before, list):
        assert isinstance(after, list) and len(after) == len(before)
        for v1, v2 in zip(before, after, strict=True):
            _same_json_shape(v1, v2, keys_fixed=keys_fixed)
    elif isinstance(before, str):
        assert isinstance(after, str)
    elif isinstance(before, bool) or before is None:
        assert after == before
    else:  # a number stays a number, or becomes a string (a tag)
        assert isinstance(after, int | float | str)
        if not isinstance(after, str):
            assert after == before


_XHTML = 'xmlns="http://www.w3.org/1999/xhtml"'


def _dump(tree: Any, ascii_only: bool, indent: int | None) -> str:
    return json.dumps(tree, ensure_ascii=ascii_only, indent=indent)


@SETTINGS
@given(tree=_JSON, ascii_only=st.booleans(), indent=st.sampled_from([None, 0, 2]))
def test_random_json_keeps_its_shape(deid, tree, ascii_only, indent):
    text = _dump(tree, ascii_only, indent)
    out = _redact(deid, text, "json")
    assert out is not None  # valid JSON is never refused
    _same_json_shape(_pairs(text), _pairs(out), keys_fixed=False)


@SETTINGS
@given(
    body=st.dictionaries(_KEYS.filter(lambda k: k != "resourceType"), _JSON, max_size=5),
    rtype=st.sampled_from(["Patient", "Observation", "Bundle", "RelatedPerson", "Organization"]),
    div=st.one_of(st.none(), _TEXT),
)
def test_random_fhir_keeps_its_shape(deid, body, rtype, div):
    resource: dict[str, Any] = {"resourceType": rtype, **body}
    if div is not None:
        escaped = div.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;")
        xhtml = f'<p title="{escaped}">{escaped}</p><!-- {div.replace("-", " ")} -->'
        resource["text"] = {"status": "generated", "div": f"<div {_XHTML}>{xhtml}</div>"}
    text = json.dumps(resource, ensure_ascii=False)
    out = _redact(deid, text, "fhir")
    assert out is not None
    _same_json_shape(_pairs(text), _pairs(out), keys_fixed=True)
    if div is not None and _well_formed(resource["text"]["div"]):
        assert _well_formed(json.loads(out)["text"]["div"])


def _well_formed(xml: str) -> bool:
    try:
        ElementTree.fromstring(xml)
    except ElementTree.ParseError:
        return False
    return True


_JSON_TOKENS = st.sampled_from(
    [
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        " ",
        "\n",
        '"a"',
        '"0712 345678"',
        '"\\u00e9"',
        '"\\ud800"',
        '"\\n"',
        '"\\',
        '"x',
        "1",
        "-",
        "1e5",
        "0.5",
        "1" * 40,
        "true",
        "nul",
        "NaN",
        '"resourceType"',
        '"Patient"',
        "\ufeff",
    ]
)


@SETTINGS
@given(tokens=st.lists(_JSON_TOKENS, max_size=30), fmt=st.sampled_from(["json", "fhir", "chat"]))
@example(tokens=["\ufeff", '"a"'], fmt="json")  # a byte-order mark before the document
def test_random_json_tokens_parse_or_fail_with_a_code(deid, tokens, fmt):
    text = "".join(tokens)
    out = _redact(deid, text, fmt)
    if out is not None:
        _same_json_shape(_pairs(text), _pairs(out), keys_fixed=fmt == "fhir")


@pytest.mark.parametrize("fmt", ["json", "fhir", "chat"])
@pytest.mark.parametrize(
    "text",
    [
        '{"resourceType": "Patient", "n": ' + "1" * 5000 + "}",
        '{"resourceType": "Patient", "n": [' + "1" * 5000 + ", 1e999]}",
        '[{"role": "user", "content": "hi", "n": ' + "9" * 100_000 + "}]",
    ],
    ids=["5000-digits", "5000-digits-and-huge-float", "100000-digits"],
)
def test_huge_numbers_parse_or_fail_with_a_code(deid, text, fmt):
    out = _redact(deid, text, fmt)
    if out is not None:
        assert re.sub(r"\d{5000,}", "N", out) == re.sub(r"\d{5000,}", "N", text)


# --- CSV ---------------------------------------------------------------------------------------

_CELL = st.one_of(
    st.text(max_size=16),
    st.text(alphabet=st.sampled_from(',;\t|"\r\n xé0'), max_size=10),
    _TEXT,
)


@SETTINGS
@given(
    width=st.integers(min_value=1, max_value=5),
    data=st.data(),
    delimiter=st.sampled_from([",", ";", "\t", "|"]),
    quoting=st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL]),
    terminator=st.sampled_from(["\r\n", "\n"]),
    given_delimiter=st.booleans(),
)
def test_random_csv_keeps_its_rows_and_columns(
    deid, width, data, delimiter, quoting, terminator, given_delimiter
):
    header = data.draw(
        st.lists(
            st.sampled_from(["id", "Name", "Phone", "notes", "x", "DOB", "Ort"])
            | st.text(max_size=8),
            min_size=width,
            max_size=width,
        )
    )
    rows = data.draw(st.lists(st.lists(_CELL, min_size=width, max_size=width), max_size=6))
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, delimiter=delimiter, quoting=quoting, lineterminator=terminator)
    writer.writerows([header, *rows])
    text = buffer.getvalue()
    options = {"delimiter": delimiter} if given_delimiter else {}
    used = delimiter if given_delimiter else sniff_delimiter(text)
    out = _redact(deid, text, "csv", **options)
    if out is None:
        return  # e.g. a blank-looking row makes the table ragged: refused, coded
    before = list(csv.reader(io.StringIO(text, newline=""), delimiter=used))
    after = list(csv.reader(io.StringIO(out, newline=""), delimiter=used))
    assert [len(r) for r in after] == [len(r) for r in before]
    assert after[0] == before[0]  # the header is never a field


@SETTINGS
@given(text=st.text(alphabet=st.sampled_from(',;\t|"\r\n ab0é'), max_size=60))
def test_random_csv_text_parses_or_fails_with_a_code(deid, text):
    out = _redact(deid, text, "csv")
    if out is not None:
        used = sniff_delimiter(text)
        before = list(csv.reader(io.StringIO(text, newline=""), delimiter=used))
        after = list(csv.reader(io.StringIO(out, newline=""), delimiter=used))
        assert [len(r) for r in after] == [len(r) for r in before]


# --- HL7 v2 ------------------------------------------------------------------------------------

_PUNCTUATION = "|^~\\&#!@$%*+/:;=?"


@st.composite
def _delimiters(draw: st.DrawFn) -> tuple[str, str]:
    """(field separator, encoding characters): the standard ones or others, 1 to 4 of them."""
    if draw(st.booleans()):
        return "|", "^~\\&"
    chars = draw(st.permutations(_PUNCTUATION))
    size = draw(st.integers(min_value=1, max_value=4))
    return chars[0], "".join(chars[1 : 1 + size])


def _escapes(fs: str, enc: str) -> list[str]:
    """Well-formed escape sequences of a message with these delimiters (none without one)."""
    if len(enc) < 3:
        return []
    e = enc[2]
    letters = ["F", "S", "E", ".br", "H", "N", "X41", "X30373132", "XC3A9", "X0D0A", "Zabc"]
    letters += ["R"] if len(enc) > 1 else []
    letters += ["T"] if len(enc) > 3 else []
    return [f"{e}{letter}{e}" for letter in letters]


@st.composite
def _messages(draw: st.DrawFn) -> tuple[str, str, str, str]:
    fs, enc = draw(_delimiters())
    escapes = _escapes(fs, enc)
    plain = st.text(
        alphabet=st.characters(blacklist_characters=fs + enc + "\r\n\x0b\x1c"), max_size=10
    )
    plants = [p for p in PLANTS if not set(p) & set(fs + enc)]
    pieces = st.one_of(
        plain, st.sampled_from(plants), *([st.sampled_from(escapes)] if escapes else [])
    )
    unit = st.lists(pieces, max_size=4).map("".join)

    def joined(parts: list[str], sep: str | None) -> str:
        return parts[0] if sep is None else sep.join(parts)

    comp_sep = enc[0]
    rep_sep = enc[1] if len(enc) > 1 else None
    sub_sep = enc[3] if len(enc) > 3 else None
    sub = st.lists(unit, min_size=1, max_size=3 if sub_sep else 1).map(lambda p: joined(p, sub_sep))
    comp = st.lists(sub, min_size=1, max_size=3).map(lambda p: joined(p, comp_sep))
    field = st.lists(comp, min_size=1, max_size=3 if rep_sep else 1).map(
        lambda p: joined(p, rep_sep)
    )
    segment = st.tuples(
        st.sampled_from(["PID", "NK1", "NTE", "OBX", "PV1", "ZXX", "EVN", "OBR", "AL1"]),
        st.lists(field, max_size=8),
    ).map(lambda s: fs.join([s[0], *s[1]]))
    terminator = draw(st.sampled_from(["\r", "\n", "\r\n"]))
    header = (
        f"MSH{fs}{enc}{fs}LAB{fs}HOSP{fs}{fs}{fs}20240301{fs}{fs}ORU{comp_sep}R01{fs}1{fs}P{fs}2.5"
    )
    body = draw(st.lists(segment, max_size=5))
    return terminator.join([header, *body]) + terminator, fs, enc, terminator


def _hl7_shape(text: str, fs: str, enc: str, terminator: str) -> list[Any]:
    comp, rep = enc[0], enc[1] if len(enc) > 1 else None
    sub = enc[3] if len(enc) > 3 else None
    shape = []
    for segment in text.split(terminator):
        if not segment:
            continue
        fields = segment.split(fs)
        shape.append(
            (
                fields[0],
                [
                    [
                        [len(c.split(sub)) if sub else 1 for c in r.split(comp)]
                        for r in (f.split(rep) if rep else [f])
                    ]
                    for f in fields[1:]
                ],
            )
        )
    return shape


def _escape_problems(text: str, enc: str) -> list[str]:
    """Escape sequences that are not well-formed (an escape character left unpaired); MSH-2,
    which names the escape character, is left out."""
    if len(enc) < 3:
        return []
    text = text.replace(enc, "", 1)
    e = re.escape(enc[2])
    rest = re.sub(rf"{e}[^{e}\r\n]*{e}", "", text)
    return [m.group() for m in re.finditer(e, rest)]


@SETTINGS
@given(message=_messages())
def test_random_hl7_keeps_segments_fields_and_escapes(deid, message):
    text, fs, enc, terminator = message
    out = _redact(deid, text, "hl7")
    assert out is not None
    assert _hl7_shape(out, fs, enc, terminator) == _hl7_shape(text, fs, enc, terminator)
    assert _escape_problems(text, enc) == []  # well-formed by construction
    assert _escape_problems(out, enc) == []


@SETTINGS
@given(
    head=st.sampled_from(["MSH|^~\\&|", "MSH|", "MSH", "MSH|^~\\&\r", "FHS|^~\\&|", "", "PID|"]),
    body=st.text(alphabet=st.sampled_from("|^~\\&\r\nMSHPIDXF0123 é\x0b\x1c"), max_size=60),
)
def test_random_hl7_text_parses_or_fails_with_a_code(deid, head, body):
    text = head + body
    _redact(deid, text, "hl7")
    _redact(deid, text.encode("latin-1", "replace"), "hl7")


# --- any bytes, any format ---------------------------------------------------------------------


@SETTINGS
@given(
    data=st.binary(max_size=80),
    fmt=st.sampled_from(["json", "fhir", "chat", "csv", "tsv", "hl7", "xml", "cda", "code"]),
)
def test_any_bytes_are_read_or_refused_with_a_code(deid, data, fmt):
    _redact(deid, data, fmt)
