"""Code-aware reading: source files, logs, stack traces, git logs and tickets.

Names are found by a small gazetteer detector (invented names) on top of the rules-only
profile, so that the tests exercise which parts of a file are scanned without the tagger.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.formats.conftest import GOLDEN, check_golden

from polydeid import DecodingError
from polydeid.api import Deidentifier
from polydeid.core.errors import ConfigError
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.detect.profiles import profile_detectors
from polydeid.formats.base import Document
from polydeid.formats.code import CodeReader
from polydeid.formats.registry import detect_format, read_document
from polydeid.lexicon.fields import RoleKind

NAMES = (
    "Halima Odhiambo",
    "Baraka Mwangi",
    "Zawadi Njoroge",
    "Otieno Ouma",
    "Amani Kiprop",
    "Neema Chebet",
    "Jos\u00e9 Garc\u00eda",
    "Wairimu Gathoni",
)


class Gazetteer:
    """Finds the invented test names (a stand-in for the tagger)."""

    id = "test.gazetteer.v1"
    languages: frozenset[str] = frozenset()
    labels: frozenset[Category | Fact] = frozenset({Category.PERSON})

    def __init__(self, names: Iterable[str] = NAMES) -> None:
        ordered = sorted(names, key=len, reverse=True)
        self._pattern = re.compile("|".join(re.escape(n) for n in ordered))

    def detect(self, segment: Segment) -> list[Span]:
        return [
            Span(m.start(), m.end(), Category.PERSON, self.id, 0.9)
            for m in self._pattern.finditer(segment.text)
        ]


@pytest.fixture(scope="module")
def deid_names() -> Deidentifier:
    return Deidentifier(detectors=[*profile_detectors("rules"), Gazetteer()], policy="tag")


def read(text: str, source: str = "<input>", **options: object) -> Document:
    return read_document(text.encode("utf-8"), "code", source=source, **options)


def covered(doc: Document, pos: int) -> bool:
    return any(f.start <= pos < f.end for f in doc.fields)


def assert_untouched(doc: Document, *needles: str) -> None:
    """Every occurrence of each needle lies outside every field."""
    for needle in needles:
        starts = [m.start() for m in re.finditer(re.escape(needle), doc.text)]
        assert starts, "needle missing from the test input"
        for start in starts:
            hit = [p for p in range(start, start + len(needle)) if covered(doc, p)]
            assert not hit, f"a protected token at offset {start} lies inside a field"


def assert_scanned(doc: Document, *needles: str) -> None:
    for needle in needles:
        start = doc.text.index(needle)
        assert all(covered(doc, p) for p in range(start, start + len(needle))), (
            f"text at offset {start} is not inside a field"
        )


def assert_preserved(original: str, output: str, replaced: Sequence[tuple[int, int]]) -> None:
    """``output`` is ``original`` with only the ``replaced`` raw ranges rewritten."""
    pattern = []
    pos = 0
    for start, end in sorted(replaced):
        pattern.append(re.escape(original[pos:start]))
        pattern.append("[^\n]*?")
        pos = end
    pattern.append(re.escape(original[pos:]))
    assert re.fullmatch("".join(pattern), output, re.DOTALL), "bytes outside replacements changed"


# --- goldens -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["scoring.py", "service.log", "ticket.md"])
def test_golden(deid_names: Deidentifier, name: str) -> None:
    out = check_golden(deid_names, "code", name)
    original = (GOLDEN / "code" / name).read_bytes()
    spans = deid_names.detect_document(original, format="code", source=str(GOLDEN / "code" / name))
    text = original.decode("utf-8")
    assert_preserved(text, out.decode("utf-8"), [fs.raw() for fs in spans])
    for person in NAMES:
        assert person not in out.decode("utf-8")


def test_golden_python_keeps_code(deid_names: Deidentifier) -> None:
    out = check_golden(deid_names, "code", "scoring.py").decode("utf-8")
    for kept in (
        "class KamauScore:",
        '__version__ = "2.4.1"',
        "9fceb02d0ae598e95dc970b74767f19372d61af8",
        "123e4567-e89b-12d3-a456-426614174000",
        'Path("/srv/clinic/data")',
        'logging.getLogger("clinic.scoring")',
        "[CONTACT_PHONE]",
    ):
        assert kept in out


def test_golden_log_keeps_prefixes(deid_names: Deidentifier) -> None:
    out = check_golden(deid_names, "code", "service.log").decode("utf-8")
    assert "2024-03-05 08:14:22,908 INFO [http-nio-8080-exec-3] org.clinic.web." in out
    assert "\tat org.clinic.jobs.Reminder.send(Reminder.java:88)" in out
    assert "Caused by: org.clinic.ConsentException: consent revoked by [PERSON]" in out
    assert "Mar  5 08:17:02 node-7 sshd[20431]: " in out


# --- what is a field -----------------------------------------------------------------------


def test_python_fields_and_untouched_tokens() -> None:
    doc = read((GOLDEN / "code" / "scoring.py").read_text("utf-8"), "scoring.py")
    assert_untouched(
        doc,
        "KamauScore",
        "def compute",
        "from __future__ import annotations",
        "9fceb02d0ae598e95dc970b74767f19372d61af8",
        "123e4567-e89b-12d3-a456-426614174000",
        '"2.4.1"',
        "logger.info",
        "#!/usr/bin/env python3",
    )
    assert_scanned(
        doc,
        "Halima Odhiambo asked for the 2-point bonus",
        "Reviewed by Baraka Mwangi",
        "Support line: +254 712 345 678",
        "scoring",
        "(schema",
    )
    assert_untouched(doc, "%s")  # format specifiers are interpolation, not text
    kinds = {f.path for f in doc.fields}
    assert {"comment", "docstring", "string", "docstring.person", "docstring.email"} <= kinds
    person = next(f for f in doc.fields if f.path == "docstring.person")
    assert person.role.kind is RoleKind.VALUE and person.role.category is Category.PERSON


def test_comment_markers_and_quotes_are_not_in_fields() -> None:
    text = (
        "/* Block by Wairimu Gathoni */\n"
        "/**\n * Javadoc line\n * @author Baraka Mwangi\n */\n"
        'String s = "Otieno Ouma"; // trailing note\n'
        "char c = 'x';\n"
    )
    doc = read(text, "Note.java")
    values = [f.value for f in doc.fields]
    assert values == [
        "Block by Wairimu Gathoni",
        "Javadoc line",
        "Baraka Mwangi",
        "Otieno Ouma",
        "trailing note",
        "x",
    ]
    for f in doc.fields:
        assert f.value == doc.text[f.start : f.end]


def test_string_escapes_map_back_to_raw_ranges(deid_names: Deidentifier) -> None:
    text = 'String n = "Jos\\u00e9 Garc\\u00eda";\nString m = "Dear\\nZawadi Njoroge";\n'
    doc = read(text, "A.java")
    decoded = [f for f in doc.fields if f.offsets is not None]
    assert [f.value for f in decoded] == ["Jos\u00e9 Garc\u00eda", "Dear\nZawadi Njoroge"]
    out = deid_names.redact_document(text, format="code", source="A.java").output
    assert out == 'String n = "[PERSON]";\nString m = "Dear\\n[PERSON]";\n'


def test_replacement_is_escaped_for_the_literal() -> None:
    doc = read("a = 'x'\nb = \"y\"\n", "a.py")
    single, double = doc.fields
    assert single.encode('O\'Neil "Jr"') == 'O\\\'Neil "Jr"'
    assert double.encode('O\'Neil "Jr"') == 'O\'Neil \\"Jr\\"'
    assert double.encode("a\\b\nc") == "a\\\\b c"
    sql = read("SELECT 1 WHERE n = 'x';\n", "q.sql").fields[0]
    assert sql.encode("O'Neil") == "O''Neil"
    comment = read("/* x */\n", "a.c").fields[0]
    assert "*/" not in comment.encode("a */ b")


def test_interpolation_is_code_not_text() -> None:
    doc = read('msg = f"Hello {patient.name}, see {room}"\n', "a.py")
    assert [f.value for f in doc.fields] == ["Hello", ", see"]
    assert_untouched(doc, "patient.name", "room")
    js = read("const s = `Dear ${user.name}, hi`;\n", "a.js")
    assert [f.value for f in js.fields] == ["Dear", ", hi"]


def test_config_values_are_judged_by_key() -> None:
    text = (
        "name: clinic-app\nversion: 3.2.0\npatient_name: Neema Chebet\n"
        "contact_phone: 0712 345 678\nnotes: seen by Amani Kiprop\n# owner Otieno Ouma\n"
    )
    doc = read(text, "app.yaml")
    by_value = {f.value: f for f in doc.fields}
    assert by_value["Neema Chebet"].role.category is Category.PERSON
    assert by_value["0712 345 678"].role.category is Category.CONTACT_PHONE
    assert by_value["seen by Amani Kiprop"].role.kind is RoleKind.TEXT
    assert "owner Otieno Ouma" in by_value
    assert "3.2.0" not in by_value
    assert_untouched(doc, "patient_name", "contact_phone", "version")


def test_yaml_block_and_flow_scalars_are_scanned() -> None:
    text = 'notes: |\n  Seen by Neema Chebet\nlist: [a, "Otieno Ouma"]\nother: >\n  folded Amani\n'
    values = [f.value for f in read(text, "a.yaml").fields]
    assert values == ["Seen by Neema Chebet", "a", "Otieno Ouma", "folded Amani"]


def test_shell_words_are_scanned() -> None:
    doc = read("echo Visit for Neema Chebet\ncurl -u nchebet https://x.example\n", "run.sh")
    assert_scanned(doc, "Neema Chebet", "nchebet")


def test_log_prefixes_are_untouched_and_messages_scanned() -> None:
    doc = read((GOLDEN / "code" / "service.log").read_text("utf-8"), "service.log")
    assert_untouched(
        doc,
        "2024-03-05 08:14:22,908",
        "2024-03-05T08:16:45.120Z",
        "INFO",
        "WARN",
        "[http-nio-8080-exec-3]",
        "org.clinic.web.VisitController",
        "org.clinic.mail.Sender",
        "java.lang.IllegalStateException",
        "at org.clinic.jobs.Reminder.send(Reminder.java:88)",
        "... 3 more",
        "sshd[20431]",
    )
    assert_scanned(
        doc,
        "Check-in for Zawadi Njoroge, phone 0722 111 222",
        "no consent on file for Otieno Ouma",
        "consent revoked by Otieno Ouma",
        "queued message to zawadi.n@example.com",
        "Accepted publickey for deploy from 10.20.30.40 port 52144",
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("2024-03-05 14:22:01,123 - app.db - ERROR - lost Neema Chebet", "lost Neema Chebet"),
        ("2024-03-05 14:22:01 ERROR app.db: lost Neema Chebet", "lost Neema Chebet"),
        ("[2024-03-05 14:22:01] [error] lost Neema Chebet", "lost Neema Chebet"),
        ("INFO:root:lost Neema Chebet", "lost Neema Chebet"),
        ("[WARN] lost Neema Chebet", "lost Neema Chebet"),
        ("2009/11/10 23:00:00 lost Neema Chebet", "lost Neema Chebet"),
        ("I0305 14:22:01.123456    7 main.go:12] lost Neema Chebet", "lost Neema Chebet"),
        (
            "03-05 14:22:01.123  1234  1234 I ActivityManager: lost Neema Chebet",
            "lost Neema Chebet",
        ),
        (
            "2024-03-05 14:22:01.000  INFO 12345 --- [           main] o.s.b.App : lost Neema",
            "lost Neema",
        ),
        ("2024-03-05 14:22:01 INFO 0712345678 called back", "0712345678 called back"),
        ("2024-03-05 14:22:01 INFO [Neema Chebet] called", "[Neema Chebet] called"),
    ],
    ids=range(11),
)
def test_log_layouts(line: str, message: str) -> None:
    doc = read(line + "\n", "x.log")
    assert [f.value for f in doc.fields] == [message]


def test_log_key_value_pairs_with_identifying_keys_are_value_fields() -> None:
    line = (
        '2024-03-05 14:22:01 INFO visit patient_name=Kato Ssali mrn="4411" '
        "job=nightly-export phone=0722 111 222, ok\n"
    )
    doc = read(line, "x.log")
    values = {f.value: f.role.category for f in doc.fields if f.role.kind is RoleKind.VALUE}
    assert values == {
        "Kato Ssali": Category.PERSON,
        "4411": Category.ID_RECORD,
        "0722 111 222": Category.CONTACT_PHONE,
    }
    # the rest of the message is still scanned, keys included; no byte is in two fields
    assert_scanned(doc, "visit patient_name=", 'mrn="', '" job=nightly-export phone=', ", ok")
    assert all(a.end <= b.start for a, b in itertools.pairwise(doc.fields))


def test_an_apostrophe_in_a_log_pairs_name_is_part_of_it() -> None:
    doc = read("2024-03-05 14:22:01 INFO patient_name=Anyang' Nyong'o\n", "x.log")
    assert [f.value for f in doc.fields if f.role.kind is RoleKind.VALUE] == ["Anyang' Nyong'o"]


def test_a_log_pair_in_a_urls_query_is_one_token() -> None:
    doc = read('INFO GET "/v?mrn=4411&phone=0722111222" done in 3 ms\n', "x.log")
    values = [f.value for f in doc.fields if f.role.kind is RoleKind.VALUE]
    assert values == ["4411", "0722111222"]
    assert_scanned(doc, '" done in 3 ms')


@pytest.mark.parametrize(
    "line",
    [
        "INFO patient_name=Kato Ssali admitted to the medical ward today",  # a sentence
        "INFO job=nightly-export status=ok",  # keys that name no identifier
        "INFO patient_name=",  # no value
    ],
    ids=["sentence", "other-keys", "empty"],
)
def test_log_pairs_that_are_no_identifier_values_stay_text(line: str) -> None:
    doc = read(line + "\n", "x.log")
    assert all(f.role.kind is RoleKind.TEXT for f in doc.fields)


def test_a_log_name_value_is_replaced_whole_without_any_detector_knowing_it() -> None:
    deid = Deidentifier(profile="rules", policy="tag")
    line = "2024-03-05 14:22:01 INFO lab_report: patient_name=Kato Ssali\n"
    out = deid.redact_document(line, format="code", source="x.log").output
    assert out == "2024-03-05 14:22:01 INFO lab_report: patient_name=[PERSON]\n"


def test_apache_access_log_fields() -> None:
    line = (
        '10.1.2.3 - wgathoni [10/Oct/2023:13:55:36 -0700] "GET /visits?name=Neema HTTP/1.1" '
        '200 2326 "-" "Mozilla/5.0"\n'
    )
    doc = read(line, "access.log")
    got = {f.path: f for f in doc.fields}
    assert got["log.user"].value == "wgathoni"
    assert got["log.user"].role.category is Category.CONTACT_OTHER
    assert got["log.client"].value == "10.1.2.3"
    assert got["log.request"].value == "GET /visits?name=Neema HTTP/1.1"
    assert_untouched(doc, "10/Oct/2023:13:55:36 -0700", "Mozilla/5.0")


def test_stack_traces_of_several_languages() -> None:
    text = (
        "TypeError: Cannot read properties of undefined (reading 'Neema')\n"
        "    at Object.<anonymous> (/app/index.js:3:9)\n"
        "    at Module._compile (node:internal/modules/cjs/loader:1105:14)\n"
        "    at async Promise.all (index 0)\n"
        "    at /app/lib/x.js:10:2\n"
        "panic: runtime error for Zawadi\n\n"
        "goroutine 1 [running]:\n"
        "main.main()\n"
        "\t/home/dev/main.go:12 +0x1d\n"
        "   at Clinic.Visits.Load(String id) in C:\\src\\Visits.cs:line 42\n"
        "/app/visits.rb:12:in `load': no ward for Otieno (RuntimeError)\n"
        "\tfrom /app/main.rb:3:in `<main>'\n"
    )
    doc = read(text, "crash.log")
    assert [f.value for f in doc.fields] == [
        "Cannot read properties of undefined (reading 'Neema')",
        "runtime error for Zawadi",
        "no ward for Otieno",
    ]


def test_ticket_blocks(deid_names: Deidentifier) -> None:
    doc = read((GOLDEN / "code" / "ticket.md").read_text("utf-8"), "ticket.md")
    assert_untouched(
        doc,
        'File "/opt/clinic/lib/python3.11/site-packages/clinic/importer.py", line 118, in run',
        "parse_visit(row, clinician=",
        "ValueError:",
        "commit 2f1e3d4c5b6a79880716253443526170819a0b1c",
        "Date:   Tue Mar 5 09:12:44 2024 +0300",
        "```python",
        "Visit(ward=row[",
    )
    assert_scanned(
        doc,
        "Reported by Amani Kiprop on the support channel.",
        "Dr. Neema Chebet",
        "unknown ward for Neema Chebet",
        "Amani Kiprop: the ward code may be empty on old exports",
        "Validate ward codes on import",
        "Thanks, Amani Kiprop (ext. 0733 444 555)",
    )
    author = [f for f in doc.fields if f.path == "prose.person"]
    assert [f.value for f in author] == ["Amani Kiprop"]


def test_indented_prose_is_not_taken_for_code() -> None:
    text = "Notes:\n\n    Seen by Neema Chebet in the morning\n    and again at noon\n"
    doc = read(text, "notes.md")
    assert_scanned(doc, "Seen by Neema Chebet in the morning", "and again at noon")
    code = "Example:\n\n    def f(x):\n        return x  # by Neema Chebet\n"
    doc = read(code, "notes.md")
    assert [f.value for f in doc.fields] == ["Example:", "by Neema Chebet"]


def test_unknown_fence_language_is_read_as_prose() -> None:
    text = "```diff\n- removed by Neema Chebet\n+ added\n```\n```text\nplain Otieno\n```\n"
    doc = read(text, "t.md")
    assert [f.value for f in doc.fields] == ["- removed by Neema Chebet", "+ added", "plain Otieno"]


def test_attribution_lines() -> None:
    text = (
        "Signed-off-by: Baraka Mwangi <baraka@example.org>\n"
        "Co-authored-by: bmwangi <b@example.org>\n"
        "Author: see the README\n"
        "Cc: Otieno Ouma\n"
    )
    doc = read(text, "msg.txt")
    got = [(f.path, f.value) for f in doc.fields]
    assert got == [
        ("prose.person", "Baraka Mwangi"),
        ("prose.email", "baraka@example.org"),
        ("prose.person", "bmwangi"),
        ("prose.email", "b@example.org"),
        ("prose", "Author: see the README"),
        ("prose.person", "Otieno Ouma"),
    ]


# --- inserted identifiers are found ----------------------------------------------------------


CARRIERS = {
    "a.py": '# note: {x}\ns = \'about {x}\'\ndef f():\n    """For {x}."""\n',
    "A.java": '// note: {x}\nString s = "about {x}";\n/* For {x}. */\n',
    "a.js": "// note: {x}\nconst s = `about {x}`;\nlet t = 'For {x}.';\n",
    "a.go": '// note: {x}\ns := "about {x}"\n/* For {x}. */\n',
    "a.sh": "# note: {x}\necho \"about {x}\"\nA='For {x}.'\n",
    "a.sql": "-- note: {x}\nSELECT 'about {x}';\n/* For {x}. */\n",
    "a.rb": "# note: {x}\nputs \"about {x}\"\nx = 'For {x}.'\n",
    "app.log": "2024-01-02 03:04:05 INFO app.x - note: {x}\n"
    "2024-01-02 03:04:06 ERROR [main] c.x.Y - about {x}\n"
    "ValueError: For {x}.\n",
    "t.md": "note: {x}\n\n```js\nconst s = 'about {x}';\n```\n\n"
    "commit 0a1b2c3d\nAuthor: {x} <a@b.example>\n",
}


@pytest.mark.parametrize("source", sorted(CARRIERS))
def test_inserted_names_are_found(deid_names: Deidentifier, source: str) -> None:
    text = CARRIERS[source].replace("{x}", "Wairimu Gathoni")
    out = deid_names.redact_document(text, format="code", source=source).output
    assert "Wairimu" not in out
    assert out.count("[PERSON]") == text.count("Wairimu Gathoni")


@pytest.mark.parametrize("source", sorted(CARRIERS))
def test_inserted_phones_and_emails_are_found(deid: Deidentifier, source: str) -> None:
    text = CARRIERS[source].replace("{x}", "call +254 712 345 678 or mail w.g@example.org")
    out = deid.redact_document(text, format="code", source=source).output
    assert "712 345" not in out and "w.g@example.org" not in out


# --- bytes ---------------------------------------------------------------------------------


def test_bytes_outside_replacements_are_kept(deid_names: Deidentifier) -> None:
    text = (
        "\ufeff# -*- coding: utf-8 -*-\r\n"
        "x = 'Neema Chebet'\t  \r\n"
        "\r\n"
        "def  f( a ,b ):   # Otieno Ouma\r\n"
        '    return  "\\tZawadi Njoroge\\n"  \r\n'
        "    # trailing spaces   \r\n"
        "y = 1"
    )
    data = text.encode("utf-8")
    out = deid_names.redact_document(data, format="code", source="a.py").output
    assert out.startswith(b"\xef\xbb\xbf")
    spans = deid_names.detect_document(data, format="code", source="a.py")
    assert len(spans) == 3
    assert_preserved(text, out.decode("utf-8"), [fs.raw() for fs in spans])
    assert out.decode("utf-8").count("\r\n") == text.count("\r\n")


def test_text_without_identifiers_round_trips(deid: Deidentifier) -> None:
    log = (GOLDEN / "code" / "service.log").read_bytes()
    for old, new in (
        (b"Zawadi Njoroge", b"the visitor"),
        (b"Otieno Ouma", b"the visitor"),
        (b"0722 111 222", b"on file"),
        (b"zawadi.n@example.com", b"the queue"),
        (b"10.20.30.40", b"the bastion"),
    ):
        log = log.replace(old, new)
    code = (
        "\ufeff#!/usr/bin/env python3\r\n"
        '"""Module docstring."""\r\n\r\n'
        "def f(a,\tb):  # trailing comment   \r\n"
        '    return {"k": f"{a!r:>10}", "v": b"\\x00", "p": r"C:\\tmp"}\r\n'
        "x = 1"
    ).encode("utf-8")
    for data, source in ((log, "service.log"), (code, "mod.py")):
        assert deid.detect_document(data, format="code", source=source) == []
        assert deid.redact_document(data, format="code", source=source).output == data


# --- modes and errors ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "text", "mode"),
    [
        ("x.py", "x = 1\n", ("code", "python")),
        ("x.yml", "a: 1\n", ("code", "yaml")),
        ("x.log", "hello\n", ("log", None)),
        ("x.md", "hello\n", ("prose", None)),
        ("x.html", "<p>hello</p>\n", ("prose", None)),
        ("<input>", "2024-01-01 10:00:00 INFO a\n2024-01-01 10:00:01 INFO b\n", ("log", None)),
        (
            "<input>",
            "import os\n\ndef f(x):\n    return x\n\nclass A:\n    pass\n",
            ("code", "python"),
        ),
        ("<input>", "Hello team,\nthe app crashed.\n", ("prose", None)),
        ("<input>", "text\n```py\nx = 1\n```\n", ("prose", None)),
    ],
)
def test_mode_selection(source: str, text: str, mode: tuple[str, str | None]) -> None:
    assert CodeReader().mode(text, source=source) == mode


def test_language_option_overrides_the_name() -> None:
    assert CodeReader(language="java").mode("x", source="a.py") == ("code", "java")
    assert CodeReader(language="log").mode("x", source="a.py") == ("log", None)
    assert CodeReader(language="markdown").mode("x", source="a.py") == ("prose", None)


def test_unknown_language_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        CodeReader(language="no-such-language")
    with pytest.raises(ConfigError):
        CodeReader(language="html")  # Pygments leaves its text unsplit: not trusted


def test_registry_and_detection() -> None:
    assert detect_format("svc.log", b"x") == "code"
    assert detect_format("a.py", b"x") == "code"
    doc = read_document(b"x = 1  # hi\n", "code", source="a.py")
    assert doc.format == "code" and [f.value for f in doc.fields] == ["hi"]


def test_invalid_utf8_is_located_without_content() -> None:
    with pytest.raises(DecodingError) as info:
        read_document(b"ok = 1\nname = 'Ne\xffema'\n", "code", source="bad.py")
    message = str(info.value)
    assert "bad.py:2" in message and "Ne" not in message


def test_fields_are_sorted_disjoint_and_verbatim_or_mapped() -> None:
    for name in ("scoring.py", "service.log", "ticket.md"):
        doc = read((GOLDEN / "code" / name).read_text("utf-8"), name)
        doc.check()
        starts = [f.start for f in doc.fields]
        assert starts == sorted(starts)
        for f in doc.fields:
            if f.offsets is None:
                assert doc.text[f.start : f.end] == f.value
            else:
                assert f.offsets[0] == f.start and f.offsets[-1] == f.end


# --- robustness ----------------------------------------------------------------------------

_PIECES = (
    "x = 'a\\'b'  # c",
    '"""doc',
    "/* open",
    "*/",
    "```",
    "```py",
    "    indented = 1;",
    "\tat a.B.c(B.java:1)",
    "Traceback (most recent call last):",
    '  File "f.py", line 1, in g',
    "ValueError: m",
    "2024-01-01 00:00:00 INFO [main] a.b - msg",
    '{"ts": "t", "msg": "m"}',
    "commit 0123456789abcdef",
    "Author: Neema Chebet <n@example.org>",
    's = "\\u00e9\\x41\\N{BULLET}\\q\\',
    "`tpl ${a} b`",
    "\r",
    "",
    "plain words",
)


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(st.sampled_from(_PIECES), max_size=12),
    source=st.sampled_from(["a.py", "a.js", "a.log", "t.md", "a.yaml", "<input>", "A.java"]),
)
def test_any_mix_reads_into_valid_fields(lines: list[str], source: str) -> None:
    text = "\n".join(lines)
    doc = read(text, source)
    doc.check()
    for f in doc.fields:
        if f.offsets is None:
            assert doc.text[f.start : f.end] == f.value
        else:
            assert list(f.offsets) == sorted(f.offsets)
            assert f.start == f.offsets[0] and f.end == f.offsets[-1]


def test_data_file_has_provenance_and_known_lexers() -> None:
    import tomllib
    from importlib import resources

    from polydeid.formats._code_lex import lexer

    raw = tomllib.loads(
        resources.files("polydeid.formats").joinpath("data/code.toml").read_text("utf-8")
    )
    assert raw["meta"]["sources"] and raw["meta"]["licence"]
    for name in [*raw["languages"]["code"], *raw["languages"]["config"]]:
        assert lexer(name) is not None
    for name in raw["guess"]["signals"]:
        assert name in raw["languages"]["code"] or name in raw["languages"]["config"]


def test_versions_after_a_marker_are_not_dates_but_dates_after_equals_are(deid):
    src = (
        "# pinned lodash@4.17.21, requests==2.31.0, ^1.2.3, v5.7.19, version 3.28.36\n"
        'log.info("patient dob=12.03.1980 seen @ 12.03.2024")\n'
    )
    out = deid.redact_document(src, format="code", source="pins.py").output
    assert out.splitlines()[0] == src.splitlines()[0]
    assert out.splitlines()[1] == 'log.info("patient dob=[DATE] seen @ [DATE]")'
