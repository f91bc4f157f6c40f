"""Every place where a format hands text to detection, format by format.

An invented patient's name and phone number (with the label that lets the rules profile find
a name) is planted in one place per case: XML text, attributes, comments, CDATA and processing
instructions; CDA narrative; FHIR narrative (text, attributes, comments, CDATA, processing
instructions, JSON escapes), extensions and contained resources; JSON strings in nested
arrays and keys; chat turns; CSV/TSV quoted cells with line breaks, quotes and delimiters;
HL7 v2 notes with every escape the standard defines around and inside the identifiers; code
comments, strings and log messages. Each case checks first that a standard parser reads the
plant out of the input (so the case cannot pass by planting nothing), then that neither the
name nor the number is left in what the same parser reads out of the output of the
``redact_document`` API and of ``polydeid redact --format X`` (rules profile), and that the
output still parses.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from xml.etree import ElementTree

import pytest

from polydeid.api import Deidentifier
from polydeid.cli import main

NAME = "Zebedee Quartermain"
PHONE = "0712 345678"
PLANT = f"Patient name: {NAME}, phone {PHONE}"
#: What must not survive: each word of the name, each group of the number.
NEEDLES = ("Zebedee", "Quartermain", "0712", "345678")


# --- readers of the output, independent of polydeid -----------------------------------------


def _xml_texts(text: str) -> list[str]:
    """Every text, attribute value, comment and processing instruction of an XML text."""
    builder = ElementTree.TreeBuilder(insert_comments=True, insert_pis=True)
    parser = ElementTree.XMLParser(target=builder)
    parser.feed(text)
    root = parser.close()
    out: list[str] = []
    for node in root.iter():
        out.append(node.text or "")
        out.append(node.tail or "")
        out.extend(node.attrib.values())
    # top-level comments and instructions are outside the root element: read them raw
    out.extend(re.findall(r"<!--(.*?)-->|<\?(.*?)\?>", text[: text.find("<", 1)] or ""))
    return [str(t) for t in out]


def _json_texts(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _json_texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _json_texts(item)
    elif value is not None:
        yield str(value)


def _read_json(text: str) -> list[str]:
    return list(_json_texts(json.loads(text)))


def _read_jsonl(text: str) -> list[str]:
    return [t for line in text.splitlines() if line.strip() for t in _read_json(line)]


def _read_fhir(text: str) -> list[str]:
    """The strings of a FHIR resource, each narrative read as XML."""
    out: list[str] = []
    for string in _read_json(text):
        out.append(string)
        if string.startswith("<div"):
            out.extend(_xml_texts(string))
    return out


def _read_csv(delimiter: str) -> Callable[[str], list[str]]:
    def read(text: str) -> list[str]:
        rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
        assert len({len(r) for r in rows}) == 1, "rows of different widths"
        return [cell for row in rows for cell in row]

    return read


_HL7_ESCAPE = re.compile(r"\\([^\\]*)\\")


def _read_hl7(text: str) -> list[str]:
    """The fields of an HL7 v2 message (``|^~\\&`` only), escapes decoded as the standard says
    (hex data as UTF-8)."""
    named = {"F": "|", "S": "^", "T": "&", "R": "~", "E": "\\", ".br": "\n", "H": "", "N": ""}

    def unescape(m: re.Match[str]) -> str:
        body = m.group(1)
        if body in named:
            return named[body]
        if body.startswith("X"):
            return bytes.fromhex(body[1:]).decode("utf-8")
        return m.group(0)

    segments = [s for s in re.split(r"\r\n?|\n", text) if s]
    assert all(re.match(r"[A-Z0-9]{3}\|", s) for s in segments), "a segment lost its name"
    return [_HL7_ESCAPE.sub(unescape, f) for s in segments for f in s.split("|")]


def _raw(text: str) -> list[str]:
    return [text]


# --- the cases --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    id: str
    format: str
    text: str
    read: Callable[[str], list[str]]
    filename: str = ""


def _xhtml(body: str) -> str:
    return f'<div xmlns="http://www.w3.org/1999/xhtml">{body}</div>'


def _fhir(resource: dict[str, Any]) -> str:
    return json.dumps({"resourceType": "Observation", "id": "o1", "status": "final", **resource})


def _narrative(body: str) -> str:
    return _fhir({"text": {"status": "generated", "div": _xhtml(body)}})


def _cda(section_text: str) -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<ClinicalDocument xmlns="urn:hl7-org:v3"><component><structuredBody><component>'
        f"<section><title>Notes</title><text>{section_text}</text></section>"
        "</component></structuredBody></component></ClinicalDocument>\n"
    )


_MSH = "MSH|^~\\&|LAB|HOSP|EHR|HOSP|20240301120000||ORU^R01|MSG0001|P|2.5\r"


def _hl7(note: str) -> str:
    return f"{_MSH}NTE|1||{note}\r"


_JSON_PLANT = json.dumps(PLANT)[1:-1]

CASES = [
    # XML: every kind of node that holds text
    Case("xml-text", "xml", f"<visit><remark>{PLANT}</remark></visit>", _xml_texts),
    Case("xml-attribute", "xml", f'<visit><entry remark="{PLANT}"/></visit>', _xml_texts),
    Case("xml-attribute-apos", "xml", f"<visit><entry remark='{PLANT}'/></visit>", _xml_texts),
    Case("xml-comment", "xml", f"<visit><!-- {PLANT} --><a>x</a></visit>", _xml_texts),
    Case(
        "xml-cdata", "xml", f"<visit><remark><![CDATA[{PLANT} <ok>]]></remark></visit>", _xml_texts
    ),
    Case("xml-pi", "xml", f"<visit><?remark {PLANT}?><a>x</a></visit>", _xml_texts),
    Case(
        "xml-references",
        "xml",
        "<visit><remark>Patient name: Zebedee&#32;Quartermain, phone 0712&#x20;345678"
        "</remark></visit>",
        _xml_texts,
    ),
    # CDA: narrative block, its attributes, comments and CDATA
    Case("cda-narrative", "cda", _cda(f"<paragraph>{PLANT}</paragraph>"), _xml_texts),
    Case("cda-comment", "cda", _cda(f"<paragraph>x</paragraph><!-- {PLANT} -->"), _xml_texts),
    Case("cda-cdata", "cda", _cda(f"<paragraph><![CDATA[{PLANT}]]></paragraph>"), _xml_texts),
    Case("cda-pi", "cda", _cda(f"<paragraph>x</paragraph><?note {PLANT}?>"), _xml_texts),
    Case(
        "cda-table-summary",
        "cda",
        _cda(f'<table summary="{PLANT}"><tbody><tr><td>x</td></tr></tbody></table>'),
        _xml_texts,
    ),
    Case(
        "cda-link-title",
        "cda",
        _cda(f'<paragraph><linkHtml href="#a" title="{PLANT}">x</linkHtml></paragraph>'),
        _xml_texts,
    ),
    # FHIR: narrative in every XHTML place, JSON escapes, extensions, contained resources
    Case("fhir-narrative-text", "fhir", _narrative(f"<p>{PLANT}</p>"), _read_fhir),
    Case("fhir-narrative-attribute", "fhir", _narrative(f'<p title="{PLANT}">x</p>'), _read_fhir),
    Case("fhir-narrative-comment", "fhir", _narrative(f"<p>x</p><!-- {PLANT} -->"), _read_fhir),
    Case("fhir-narrative-cdata", "fhir", _narrative(f"<p><![CDATA[{PLANT}]]></p>"), _read_fhir),
    Case("fhir-narrative-pi", "fhir", _narrative(f"<p>x</p><?note {PLANT}?>"), _read_fhir),
    Case(
        "fhir-narrative-img-alt", "fhir", _narrative(f'<img src="#i" alt="{PLANT}"/>'), _read_fhir
    ),
    Case(
        "fhir-narrative-json-escapes",
        "fhir",
        _narrative("<p>x</p>").replace(
            "<p>x</p>",
            '<p title=\\"Patient name: Zebedee\\u0020Quartermain, phone 0712\\u0020345678\\">x</p>',
        ),
        _read_fhir,
    ),
    Case(
        "fhir-extension",
        "fhir",
        _fhir({"extension": [{"url": "http://example.org/remark", "valueString": PLANT}]}),
        _read_fhir,
    ),
    Case(
        "fhir-contained",
        "fhir",
        _fhir(
            {"contained": [{"resourceType": "Observation", "id": "c1", "note": [{"text": PLANT}]}]}
        ),
        _read_fhir,
    ),
    Case("fhir-note", "fhir", _fhir({"note": [{"text": PLANT}]}), _read_fhir),
    Case(
        "fhir-nested-extension",
        "fhir",
        _fhir(
            {
                "extension": [
                    {
                        "url": "http://example.org/a",
                        "extension": [{"url": "b", "valueMarkdown": PLANT}],
                    }
                ]
            }
        ),
        _read_fhir,
    ),
    Case(
        "fhir-modifier-extension",
        "fhir",
        _fhir({"modifierExtension": [{"url": "http://example.org/m", "valueString": PLANT}]}),
        _read_fhir,
    ),
    Case(
        "fhir-primitive-extension",
        "fhir",
        _fhir(
            {
                "issued": "2024-03-01T10:00:00Z",
                "_issued": {"extension": [{"url": "http://example.org/p", "valueString": PLANT}]},
            }
        ),
        _read_fhir,
    ),
    Case(
        "fhir-bundle-entry-narrative",
        "fhir",
        json.dumps(
            {
                "resourceType": "Bundle",
                "type": "collection",
                "entry": [{"resource": json.loads(_narrative(f'<p title="{PLANT}">x</p>'))}],
            }
        ),
        _read_fhir,
    ),
    # JSON: strings at any depth, keys, escapes
    Case("json-nested-arrays", "json", json.dumps({"a": [[{"b": [[PLANT]]}]]}), _read_json),
    Case("json-top-level-array", "json", json.dumps([[PLANT]]), _read_json),
    Case("json-key", "json", json.dumps({"visits": {PLANT: 1}}), _read_json),
    Case(
        "json-escapes",
        "json",
        '{"remark": "Patient name: Zebedee\\u0020Quartermain,\\nphone 0712\\u0020345678"}',
        _read_json,
    ),
    Case(
        "json-escaped-key", "json", '{"' + _JSON_PLANT.replace(" ", "\\u0020") + '": 1}', _read_json
    ),
    # chat transcripts
    Case("chat-content", "chat", json.dumps([{"role": "user", "content": PLANT}]), _read_json),
    Case(
        "chat-content-parts",
        "chat",
        json.dumps([{"role": "user", "content": [{"type": "text", "text": PLANT}]}]),
        _read_json,
    ),
    Case(
        "chat-jsonl",
        "chat",
        json.dumps({"role": "assistant", "content": "ok"})
        + "\n"
        + json.dumps({"role": "user", "content": PLANT})
        + "\n",
        _read_jsonl,
    ),
    # CSV and TSV: quoted cells with line breaks, doubled quotes and delimiters
    Case("csv-plain", "csv", f"id,notes\n1,{PLANT.replace(',', ';')}\n", _read_csv(",")),
    Case(
        "csv-quoted-line-breaks",
        "csv",
        'id,notes\r\n1,"first\r\nPatient name: Zebedee Quartermain\nphone 0712 345678"\r\n',
        _read_csv(","),
    ),
    Case(
        "csv-doubled-quotes",
        "csv",
        'id,notes\n1,"said ""Patient name: Zebedee Quartermain"", phone ""0712 345678"""\n',
        _read_csv(","),
    ),
    Case("csv-quoted-delimiter", "csv", f'id,notes\n1,"{PLANT}, ok"\n', _read_csv(",")),
    Case("csv-semicolon", "csv", f'id;notes\n1;"{PLANT.replace(",", ";")}"\n', _read_csv(";")),
    Case(
        "tsv-quoted-tab", "tsv", f'id\tnotes\n1\t"{PLANT.replace(",", chr(9))}"\n', _read_csv("\t")
    ),
    # HL7 v2: escapes around and inside the identifiers
    Case("hl7-note", "hl7", _hl7(PLANT), _read_hl7),
    Case("hl7-obx-text", "hl7", f"{_MSH}OBX|1|TX|11492-6^Note^LN||{PLANT}||||||F\r", _read_hl7),
    Case("hl7-field-escape", "hl7", _hl7(f"a \\F\\ {PLANT} \\F\\ b"), _read_hl7),
    Case("hl7-component-escape", "hl7", _hl7(f"a \\S\\ {PLANT} \\S\\ b"), _read_hl7),
    Case("hl7-subcomponent-escape", "hl7", _hl7(f"a \\T\\ {PLANT} \\T\\ b"), _read_hl7),
    Case("hl7-repetition-escape", "hl7", _hl7(f"a \\R\\ {PLANT} \\R\\ b"), _read_hl7),
    Case("hl7-escape-escape", "hl7", _hl7(f"a \\E\\ {PLANT} \\E\\ b"), _read_hl7),
    Case("hl7-line-break", "hl7", _hl7(PLANT.replace(", ", "\\.br\\")), _read_hl7),
    Case(
        "hl7-hex-space-inside",
        "hl7",
        _hl7("Patient name: Zebedee\\X20\\Quartermain, phone 0712\\X20\\345678"),
        _read_hl7,
    ),
    Case(
        "hl7-hex-digits-inside",
        "hl7",
        _hl7("Patient name: Zebedee Quartermain, phone \\X30373132\\ 345678"),
        _read_hl7,
    ),
    Case(
        "hl7-hex-utf8-inside",
        "hl7",
        _hl7("Patient name: Zebedee Quarterm\\XC3A1\\in, phone 0712 345678"),
        _read_hl7,
    ),
    Case(
        "hl7-highlight-inside",
        "hl7",
        _hl7("Patient name: Zebedee Quartermain, phone 0712\\H\\ 345678\\N\\"),
        _read_hl7,
    ),
    # code: comments, strings, log messages, prose
    Case("code-comment", "code", f"x = 1  # {PLANT}\n", _raw, "case.py"),
    Case("code-string", "code", f'message = "{PLANT}"\n', _raw, "case.py"),
    Case("code-docstring", "code", f'def f():\n    """{PLANT}"""\n', _raw, "case.py"),
    Case(
        "code-log",
        "code",
        f"2024-03-01 12:00:01,123 INFO [main] app.visit - {PLANT}\n",
        _raw,
        "case.log",
    ),
    Case("code-yaml", "code", f'visit:\n  remark: "{PLANT}"\n', _raw, "case.yaml"),
    Case("code-prose", "code", f"# Ticket\n\n{PLANT}\n", _raw, "case.md"),
]

_IDS = [c.id for c in CASES]
assert len(set(_IDS)) == len(_IDS)


def _left(texts: list[str]) -> list[str]:
    """The needles found in ``texts`` (case-insensitive; the \\xe1 of one case folded)."""
    joined = "\n".join(texts).replace("á", "a").casefold()
    return [n for n in NEEDLES if n.casefold() in joined]


@pytest.fixture(scope="module")
def deid() -> Deidentifier:
    return Deidentifier(profile="rules", policy="tag")


@pytest.mark.parametrize("case", CASES, ids=_IDS)
def test_the_plant_is_read_from_the_input(case: Case) -> None:
    assert _left(case.read(case.text)) == list(NEEDLES)


@pytest.mark.parametrize("case", CASES, ids=_IDS)
def test_api_leaves_neither_name_nor_number(case: Case, deid: Deidentifier) -> None:
    result = deid.redact_document(
        case.text, format=case.format, source=case.filename or "<input>", lang="en"
    )
    assert _left(case.read(result.text)) == []


@pytest.mark.parametrize("case", CASES, ids=_IDS)
def test_cli_leaves_neither_name_nor_number(case: Case, tmp_path, capsys) -> None:
    src = tmp_path / (case.filename or f"case.{case.format}")
    src.write_bytes(case.text.encode("utf-8"))
    out = tmp_path / "out"
    args = ["redact", str(src), "-o", str(out), "--format", case.format]
    rc = main([*args, "--profile", "rules", "--lang", "en"])
    err = capsys.readouterr().err
    assert rc == 0, err
    text = out.read_bytes().decode("utf-8")
    assert _left(case.read(text)) == []
    assert not any(n in err for n in NEEDLES)
