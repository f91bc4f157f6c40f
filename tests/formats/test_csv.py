"""CSV / TSV reader: dialect, encodings, column roles, located errors, byte preservation."""

from __future__ import annotations

import codecs
import csv
import io
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.formats.conftest import GOLDEN, check_golden

from polydeid.core.errors import ConfigError, DecodingError, InputError, UnknownCategoryError
from polydeid.core.taxonomy import Category, Fact
from polydeid.engine import read_document
from polydeid.formats.base import splice
from polydeid.formats.csv import CsvReader, TsvReader, column_role, decode_table, shape_label
from polydeid.formats.registry import reader
from polydeid.lexicon.fields import RoleKind
from polydeid.lexicon.tables import scan, sniff_delimiter

GOLDENS = [
    ("csv", "patients.csv", {}),
    ("csv", "german_semicolon.csv", {}),
    ("tsv", "visits.tsv", {}),
    ("csv", "no_header.csv", {"header": False}),
]
_TAG = re.compile(r"\[[A-Z_]+\]")


def _read(text: str, fmt: str = "csv", **options):
    return read_document(text.encode("utf-8"), fmt, source="t.csv", **options)


def _by_path(doc):
    return {f.path: f for f in doc.fields}


def _rows(text: str, delimiter: str = ",") -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))


def _shape(rows: list[list[str]]) -> list[int]:
    return [len(r) for r in rows]


# --- goldens ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("fmt", "name", "options"), GOLDENS, ids=[g[1] for g in GOLDENS])
def test_golden(deid, fmt, name, options):
    check_golden(deid, fmt, name, **options)


@pytest.mark.parametrize(("fmt", "name", "options"), GOLDENS, ids=[g[1] for g in GOLDENS])
def test_bytes_outside_replacements_are_kept(deid, fmt, name, options):
    """Every character outside a replaced raw range (quotes, delimiters, line ends, BOM,
    untouched cells) comes out as it went in, and each replaced range became one tag."""
    data = (GOLDEN / fmt / name).read_bytes()
    text, encoding = reader(fmt, **options).decode(data, source=name)
    spans = deid.detect_document(data, format=fmt, source=name, **options)
    assert spans
    result = deid.redact_document(data, format=fmt, source=name, **options)
    out, out_encoding = result.text, result.encoding
    assert out_encoding == encoding
    pattern, pos = [], 0
    for fs in sorted(spans, key=lambda fs: fs.raw()):
        start, end = fs.raw()
        pattern.append(re.escape(text[pos:start]))
        pattern.append(r"(\[[A-Z_]+\])")
        pos = end
    pattern.append(re.escape(text[pos:]))
    assert re.fullmatch("".join(pattern), out, re.DOTALL)
    assert out.count("\r\n") == text.count("\r\n") and out.count("\n") == text.count("\n")


@pytest.mark.parametrize(("fmt", "name", "options"), GOLDENS, ids=[g[1] for g in GOLDENS])
def test_output_parses_to_the_same_shape(deid, fmt, name, options):
    data = (GOLDEN / fmt / name).read_bytes()
    text, _ = reader(fmt, **options).decode(data, source=name)
    out = deid.redact_document(data, format=fmt, source=name, **options).text
    delimiter = {"patients.csv": ",", "german_semicolon.csv": ";", "visits.tsv": "\t"}.get(
        name, ","
    )
    before, after = _rows(text, delimiter), _rows(out, delimiter)
    assert _shape(before) == _shape(after)
    for row_before, row_after in zip(before, after, strict=True):
        for cell_before, cell_after in zip(row_before, row_after, strict=True):
            if cell_before != cell_after:
                assert _TAG.search(cell_after)


def test_clinical_columns_unchanged(deid):
    data = (GOLDEN / "csv" / "patients.csv").read_bytes()
    out = deid.redact_document(data, format="csv", source="patients.csv").output.decode("utf-8")
    before, after = _rows(data.decode("utf-8")), _rows(out)
    header = before[0]
    for name in ("Diagnosis", "Dose", "Weight (kg)"):
        j = header.index(name)
        assert [r[j] for r in before] == [r[j] for r in after]
    for name in ("Patient Name", "DOB", "MRN", "Village", "Visit"):
        j = header.index(name)
        assert all(_TAG.fullmatch(r[j]) for r in after[1:])


def test_roles_and_paths_of_the_patient_list():
    doc = read_document(
        (GOLDEN / "csv" / "patients.csv").read_bytes(), "csv", source="patients.csv"
    )
    fields = _by_path(doc)
    assert fields["row 2, column 1 (Patient Name)"].role.category is Category.PERSON
    assert fields["row 2, column 3 (Phone)"].role.category is Category.CONTACT_PHONE
    assert fields["row 2, column 6 (Diagnosis)"].role.kind is RoleKind.TEXT
    assert fields["row 2, column 8 (Notes)"].role.context == "Notes"
    # the Visit header says nothing: its dates make it a date column
    assert fields["row 2, column 9 (Visit)"].role.category is Category.DATE
    # Dose (header) and Weight (sampled readings) are skipped: no fields
    assert not any("(Dose)" in p or "(Weight (kg))" in p for p in fields)
    # a row after a note with a line break inside its quotes starts one line later
    assert fields["row 3, column 9 (Visit)"].line == 4
    assert fields["row 4, column 1 (Patient Name)"].line == 5
    assert doc.encoding == "utf-8"


# --- scanning ---------------------------------------------------------------------------------


def test_quoted_cell_offsets_map_doubled_quotes():
    text = 'a,b\n1,"say ""hi"", then go"\n'
    doc = _read(text, columns={"b": "text"})
    f = _by_path(doc)["row 2, column 2 (b)"]
    assert f.value == 'say "hi", then go'
    assert f.offsets is not None and f.offsets[0] == text.index("say")
    start, end = f.raw(4, 8)  # the decoded '"hi"'
    assert text[start:end] == '""hi""'
    assert f.encode('x"y') == 'x""y'


def test_line_ends_and_blank_rows():
    text = "h1,h2\r\n\r\nx,1\rdate,2024-01-02\n"
    records = list(scan(text, ",", source="s"))
    assert [r.row for r in records] == [1, 2, 3, 4]
    assert [r.line for r in records] == [1, 2, 3, 4]
    assert records[1].blank
    assert [c.value for c in records[3].cells] == ["date", "2024-01-02"]


def test_bom_is_not_part_of_the_first_header():
    data = codecs.BOM_UTF8 + b"DOB,Notes\n1990-01-02,ok\n"
    doc = read_document(data, "csv", source="t.csv")
    assert _by_path(doc)["row 2, column 1 (DOB)"].role.category is Category.DATE


def test_trailing_delimiter_and_no_final_newline():
    records = list(scan("a,b,\n1,2,", ",", source="s"))
    assert [len(r.cells) for r in records] == [3, 3]


def test_unterminated_quote_is_located():
    text = 'Name,Notes\nSecretname,"never closed\nmore\n'
    with pytest.raises(InputError) as info:
        _read(text)
    assert info.value.location == "t.csv:2:12"
    assert "Secret" not in str(info.value) and "more" not in str(info.value)


def test_text_after_closing_quote_is_located():
    with pytest.raises(InputError) as info:
        _read('a,b\n"Secret"name,2\n')
    assert info.value.location == "t.csv:2:9"
    assert "Secret" not in str(info.value)


# --- ragged rows ------------------------------------------------------------------------------


def test_ragged_row_error_names_row_and_line():
    text = 'Name,Phone\nAmina Otieno,0712 345 678\n"Jonas\nWekesa",0722,extra\n'
    with pytest.raises(InputError) as info:
        _read(text)
    assert info.value.location == "t.csv:3"
    assert info.value.message == "row 3 has 3 fields, the header has 2"
    assert "Wekesa" not in str(info.value) and "0722" not in str(info.value)


def test_ragged_row_without_header():
    with pytest.raises(InputError, match="row 2 has 3 fields, row 1 has 2"):
        _read("a,b\nc,d,e\n", header=False)


def test_ragged_allowed(deid):
    text = "Patient Name,Phone\nAmina Otieno,0712 345 678,amina@example.org\nJonas Wekesa\n"
    out = deid.redact_document(text, format="csv", ragged="allow").output
    assert out == "Patient Name,Phone\n[PERSON],[CONTACT_PHONE],[CONTACT_OTHER]\n[PERSON]\n"


# --- options ----------------------------------------------------------------------------------


def test_column_override(deid):
    text = "Patient Name,Village,Code,Notes\nAmina Otieno,Lwanda,QX-77,see 2024-02-01\n"
    out = deid.redact_document(
        text, format="csv", columns={"village": "skip", 3: "ID_OTHER", "Notes": "skip"}
    ).output
    assert out == "Patient Name,Village,Code,Notes\n[PERSON],Lwanda,[ID_OTHER],see 2024-02-01\n"
    # a value column made text is scanned, its header as the label ("Patient Name: …"), so
    # the rule layer still reads the name; a name with a digit is no name to it
    out = deid.redact_document(text, format="csv", columns={"Patient Name": "text"}).output
    assert out.splitlines()[1].startswith("[PERSON],[LOCATION_VILLAGE]")
    odd = text.replace("Amina Otieno", "Amina Otieno2")
    out = deid.redact_document(odd, format="csv", columns={"Patient Name": "text"}).output
    assert out.splitlines()[1].startswith("Amina Otieno2,[LOCATION_VILLAGE]")


def test_column_override_errors():
    with pytest.raises(ConfigError, match="names no column"):
        _read("a,b\n1,2\n", columns={"Nonesuch": "skip"})
    with pytest.raises(ConfigError, match="names no column"):
        _read("a,b\n1,2\n", columns={3: "skip"})
    with pytest.raises(UnknownCategoryError):
        CsvReader(columns={"a": "NOT_A_CATEGORY"})
    with pytest.raises(ConfigError):
        CsvReader(ragged="sometimes")
    with pytest.raises(ConfigError):
        CsvReader(delimiter='"')


def test_columns_by_number_without_header(deid):
    out = deid.redact_document(
        "Amina,12\nJonas,15\n", format="csv", header=False, columns={1: "PERSON"}
    ).output
    assert out == "[PERSON],12\n[PERSON],15\n"


def test_sampler_option(deid):
    def words_are_names(value):
        return Category.PERSON if value.isalpha() else None

    out = deid.redact_document("Who,Count\nAmina,1\n", format="csv", sampler=words_are_names).output
    assert out == "Who,Count\n[PERSON],1\n"


# --- dialect sniffing -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a,b,c\n1,2,3\n", ","),
        ("Name, Vorname;Gewicht\nX, Y;72,5\nZ, W;80,1\n", ";"),
        ("a\tb\n1\t2\n", "\t"),
        ("a|b|c\n1|2|3\n", "|"),
        ('a;b\n"x,y,z";2\n"p,q";3\n', ";"),
        ("single\ncolumn\n", ","),
    ],
    ids=["comma", "semicolon-with-decimal-commas", "tab", "pipe", "quoted-commas", "one-column"],
)
def test_sniff_delimiter(text, expected):
    assert sniff_delimiter(text) == expected


def test_delimiter_option_overrides_sniffing():
    doc = _read("DOB;x,y\n1990-01-02;a,b\n", delimiter=",", columns={2: "PERSON"})
    fields = _by_path(doc)
    assert fields["row 2, column 1 (DOB;x)"].value == "1990-01-02;a"
    assert fields["row 2, column 2 (y)"].role.category is Category.PERSON


def test_tsv_reader_is_tab_separated():
    assert isinstance(reader("tsv"), TsvReader)
    doc = _read("DOB\tNotes\n1990-01-02\ta,b;c\n", fmt="tsv")
    assert [f.value for f in doc.fields] == ["1990-01-02", "a,b;c"]


# --- encodings --------------------------------------------------------------------------------


def test_utf8_bom_is_kept(deid):
    data = codecs.BOM_UTF8 + b"DOB,Note\r\n1990-01-02,ok\r\n"
    out = deid.redact_document(data, format="csv").output
    assert out == codecs.BOM_UTF8 + b"DOB,Note\r\n[DATE],ok\r\n"


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_utf16_with_bom_round_trips(deid, encoding):
    data = "\ufeffPatient Name;Wohnort\r\nJürgen Müller;Großdorf\r\n".encode(encoding)
    assert decode_table(data, source="x")[1] == encoding
    out = deid.redact_document(data, format="csv").output
    assert out == "\ufeffPatient Name;Wohnort\r\n[PERSON];[LOCATION_VILLAGE]\r\n".encode(encoding)


def test_cp1252_fallback_and_output_encoding(deid):
    data = "Name, Vorname;Diagnose\nMüller, Jürgen;Hüftschmerz €\n".encode("cp1252")
    assert decode_table(data, source="x") == (data.decode("cp1252"), "cp1252")
    out = deid.redact_document(data, format="csv").output
    assert out == "Name, Vorname;Diagnose\n[PERSON];Hüftschmerz €\n".encode("cp1252")


def test_undecodable_bytes_are_located():
    with pytest.raises(DecodingError) as info:
        decode_table(b"a,b\n\xc3\x28,\x81\n", source="x.csv")
    assert info.value.location == "x.csv:2"


def test_cp1252_replacement_is_folded_to_the_encoding():
    text = "Notes\nhello\n"
    r = CsvReader()
    r.decode(text.encode("cp1252") + b"\xe9\n", source="x")  # not UTF-8: cp1252
    doc = r.read(text, source="x")
    assert doc.fields[0].encode("Dvořák Łódź 北") == "Dvorák ?ódz ?"


# --- writing replacements ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "options"),
    [("patients.csv", {}), ("german_semicolon.csv", {}), ("no_header.csv", {"header": False})],
    ids=["patients", "german", "no-header"],
)
def test_any_replacement_keeps_the_table_valid(name, options):
    """Replacements holding delimiters, quotes and line breaks, written into every field,
    quoted or not, still parse back (stdlib csv) into the same rows and columns."""
    path = GOLDEN / "csv" / name
    data = path.read_bytes()
    r = CsvReader(**options)
    text, _ = r.decode(data, source=name)
    doc = r.read(text, source=name)
    nasty = 'Ann, "Bo";\nCy\r\n|\tDee'
    edits = []
    for f in doc.fields:
        start, end = f.raw(0, min(3, len(f.value)))
        edits.append((start, end, f.encode(nasty)))
    out = splice(text, edits)
    delimiter = sniff_delimiter(text)
    assert _shape(_rows(out, delimiter)) == _shape(_rows(text, delimiter))


def test_unquoted_encoder_choices():
    doc = _read("Notes\nhello\n")
    encode = doc.fields[0].encode
    assert encode('a , b"c\r\nd') == "a b'c d"
    doc = _read('Notes\n"hello"\n')
    assert doc.fields[0].encode('a , b"c\r\nd') == 'a , b""c\r\nd'


# --- sampling ---------------------------------------------------------------------------------


def _sampler(value):
    return None


@pytest.mark.parametrize(
    ("values", "kind", "category"),
    [
        (["1984-03-12", "02/11/1990", "12 Mar 1979"], RoleKind.VALUE, Category.DATE),
        (["+254 712 345 678", "+254 722 100 200"], RoleKind.VALUE, Category.CONTACT_PHONE),
        (["a.b@example.org", "c@example.com", "n/a"], RoleKind.VALUE, Category.CONTACT_OTHER),
        (["88812345", "88812346", "KNH-2023-0012"], RoleKind.VALUE, Category.ID_RECORD),
        (["37.2", "98 %", "120/80", "500 mg", "5.6 mmol/L", "72,5"], RoleKind.SKIP, None),
        (["Malaria", "Hypertension, stage 1", "2024-01-01"], RoleKind.TEXT, None),
        ([], RoleKind.TEXT, None),
    ],
    ids=["dates", "phones", "emails", "ids", "clinical", "free-text", "empty"],
)
def test_column_role_from_values(values, kind, category):
    from polydeid.engine import rule_sampler

    role = column_role(values, rule_sampler(), context="X")
    assert role.kind is kind and role.category is category


def test_shape_labels():
    assert shape_label(" 37.5 ") is Fact.QUANTITY
    assert shape_label("0712") is None  # a leading zero is not a reading
    assert shape_label("12345") is Category.ID_RECORD
    assert shape_label("AB-1234") is None
    assert shape_label("12 Main Street") is None


def test_mostly_dates_column_is_a_date_column():
    values = ["2024-01-0" + str(i) for i in range(1, 9)] + ["pending", "see letter"]
    from polydeid.engine import rule_sampler

    role = column_role(values, rule_sampler())
    assert role.category is Category.DATE


def test_empty_and_header_only_tables():
    assert _read("").fields == []
    assert _read("Name,Phone\r\n").fields == []
    assert _read("Name,Phone\n,\n").fields == []


# --- property ---------------------------------------------------------------------------------

_phones = st.builds(
    lambda a, b, c: f"+254 7{a:02d} {b:03d} {c:03d}",
    st.integers(10, 29),
    st.integers(100, 999),
    st.integers(100, 999),
)
_ids = st.builds(
    lambda p, n: f"{p}-{n}", st.sampled_from(["KNH", "RH", "MTRH"]), st.integers(10**5, 10**8)
)
_emails = st.builds(
    lambda u, d, t: f"{u}@{d}.{t}",
    st.from_regex(r"[a-z]{2,8}(\.[a-z]{2,6})?", fullmatch=True),
    st.from_regex(r"[a-z]{3,9}", fullmatch=True),
    st.sampled_from(["org", "com", "net"]),
)
_notes = st.sampled_from(["stable", "reviewed, no change", 'said "fine"', "BP 120/80\nHb 11.2"])


@st.composite
def _tables(draw):
    n = draw(st.integers(1, 8))
    rows = []
    placed = []
    for _ in range(n):
        phone = draw(st.one_of(st.none(), _phones))
        mrn = draw(st.one_of(st.none(), _ids))
        email = draw(_emails)
        cells = [phone or "", mrn or "", email, draw(_notes)]
        placed += [v for v in (phone, mrn, email) if v]
        quote = draw(st.lists(st.booleans(), min_size=4, max_size=4))
        rows.append(
            [
                f'"{c.replace(chr(34), chr(34) * 2)}"' if q or any(x in c for x in ',"\n') else c
                for c, q in zip(cells, quote, strict=True)
            ]
        )
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    # "Reach" says nothing: its e-mails make it an e-mail column by sampling
    lines = ["Phone,MRN,Reach,Notes"] + [",".join(r) for r in rows]
    return newline.join(lines) + newline, placed


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_tables())
def test_identifiers_in_identifying_columns_are_all_replaced(deid, table):
    text, placed = table
    out = deid.redact_document(text, format="csv").output
    for value in placed:
        assert value not in out
    before, after = _rows(text), _rows(out)
    assert _shape(before) == _shape(after)
    assert [r[3] for r in before] == [r[3] for r in after]  # notes hold no identifiers


def test_tables_pasted_into_text_give_their_value_columns_cells() -> None:
    from polydeid.lexicon.tables import pasted_column_categories

    table = "Patient name;Phone;Notes\nAmina Wanjiru;0712 345 678;stable\nOkello James;;\n"
    text = "Ward round.\n\n" + table + "\nSeen by the nurse, the doctor, the family.\n"
    cells = [(text[s:e], c) for s, e, c in pasted_column_categories(text)]
    assert cells == [
        ("Amina Wanjiru", Category.PERSON),
        ("0712 345 678", Category.CONTACT_PHONE),
        ("Okello James", Category.PERSON),
    ]  # empty cells are none; the notes column is text, not a value
    # no table: a sentence with commas, a header with digits, two columns only, a row of
    # another width ends the table
    prose = "Seen today, patient stable, family informed\nAmina left, Okello stayed, all well"
    assert pasted_column_categories(prose) == []  # no header names a value column
    assert pasted_column_categories("Name,Phone 2,Ward\nAmina,0712,B") == []
    assert pasted_column_categories("Patient name,Ward\nAmina,B\n") == []
    rows = "Patient name,Ward,Bed\nAmina Wanjiru,B,4\nOkello James was moved, then discharged\n"
    assert [rows[s:e] for s, e, _ in pasted_column_categories(rows)] == ["Amina Wanjiru"]
    # malformed quoting ends the table where it stands
    broken = 'Patient name,Ward,Bed\nAmina Wanjiru,B,4\n"Okello James,C,5\n'
    assert [broken[s:e] for s, e, _ in pasted_column_categories(broken)] == ["Amina Wanjiru"]
