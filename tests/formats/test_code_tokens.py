"""Code reading: what a token is in code (standards, codecs, file names, bug references,
copyright years, doctests, month tables, program values) and who signs a comment."""

from __future__ import annotations

import pytest

from polydeid.api import Deidentifier
from polydeid.core.taxonomy import Category
from polydeid.formats.base import Document
from polydeid.formats.registry import read_document
from polydeid.lexicon.fields import RoleKind


def read(text: str, source: str) -> Document:
    return read_document(text.encode("utf-8"), "code", source=source)


def scanned(doc: Document) -> str:
    """The text of every scanned (text) field, one per line."""
    return "\n".join(f.value for f in doc.fields if f.role.kind is RoleKind.TEXT)


def persons(doc: Document) -> list[str]:
    return [f.value for f in doc.fields if f.role.category is Category.PERSON]


@pytest.mark.parametrize(
    "comment",
    [
        "# Lifted from rfc822.py and RFC 2068, see RFC822/2047/2822/5322.",
        "# per RFCs 2045-2047 and RFC 2822:3.6",
        "# charset gb2312 is an alias; so is ks_c_5601-1987 and iso-8859-1",
        "# see bugs 1555570 and 1721862, changeset 0cf700464177",
        "# Copyright (C) 2001-2007 Python Software Foundation",
        "# ISO 8601 times, PEP 8 names, bpo-27397",
        "# job 123e4567-e89b-12d3-a456-426614174000 built from 9fceb02",
    ],
)
def test_standards_codecs_bugs_and_copyright_years_are_not_scanned(comment: str) -> None:
    doc = read(comment + "\nx = 1\n", "a.py")
    assert not any(c.isdigit() for c in scanned(doc)), scanned(doc)


def test_what_only_looks_like_a_token_is_still_scanned() -> None:
    doc = read("# call Wanjiru on 0712 345 678 about record 88-31044 (2024)\n", "a.py")
    text = scanned(doc)
    assert "0712 345 678" in text and "88-31044" in text and "2024" in text


def test_month_tables_are_not_scanned_but_a_lone_month_is() -> None:
    doc = read(
        'MONTHS = ["Jan", "Feb", "Mar", "Apr"]\nDAYS = "Mon Tue Wed"\nname = "May"\n', "a.py"
    )
    assert [f.value for f in doc.fields] == ["May"]


def test_a_program_value_literal_is_not_scanned_but_a_name_is() -> None:
    doc = read(
        "h = 'surrogateescape'\nmode = 'seven'\npatient = 'okello'\nwho = 'Okello James'\n",
        "a.py",
    )
    assert [f.value for f in doc.fields] == ["okello", "Okello James"]


def test_doctests_in_docstrings_are_code() -> None:
    doc = read(
        'def f():\n    """Set a cookie.\n\n    >>> C["string"] = "seven"\n    >>> C["n"]\n'
        '    \'seven\'\n\n    Asked by Amani Kiprop.\n    """\n',
        "a.py",
    )
    text = scanned(doc)
    assert "seven" not in text and "C[" not in text
    assert "Set a cookie." in text and "Asked by Amani Kiprop." in text


def test_initials_that_sign_comments_are_a_person() -> None:
    text = (
        "# BAW: should we be strict here?\n"
        "x = 1  # Tack one on.  BAW: or raise?\n"
        "# XXX: not a person\n"
        "# EOF: end of input\n"
        "y = EOF\n"
        "# RDM This might be a header.\n"
        "# RDM: and this too.\n"
    )
    doc = read(text, "a.py")
    assert persons(doc) == ["BAW", "BAW", "RDM", "RDM"]
    assert "should we be strict here?" in scanned(doc)


def test_authors_lists_copyright_by_mailboxes_and_rcs_ids_name_people() -> None:
    text = (
        "# Author: Neema Chebet, Amani Kiprop, Otieno Ouma\n"
        "# Authors: Chebet, Kiprop and Ouma\n"
        "# Copyright 2000 by Wairimu Gathoni <wg@example.org>\n"
        "# RFC 2554 support by Baraka Mwangi <bm@example.org>.\n"
        "# Id: tool.py,v 2.29 2000/08/23 05:28:49 wgathoni Exp\n"
        "# Authors: the Python Software Foundation and contributors\n"
    )
    doc = read(text, "a.py")
    assert persons(doc) == [
        "Neema Chebet",
        "Amani Kiprop",
        "Otieno Ouma",
        "Chebet",
        "Kiprop",
        "Ouma",
        "Wairimu Gathoni",
        "Baraka Mwangi",
        "wgathoni",
    ]
    emails = [f.value for f in doc.fields if f.role.category is Category.CONTACT_OTHER]
    assert emails == ["wg@example.org", "bm@example.org"]


def test_the_rules_redact_signing_initials_and_keep_the_standards() -> None:
    deid = Deidentifier(profile="rules", policy="tag")
    text = "# BAW: per RFC 2068 and rfc822, Jan/Feb tables\nM = ['Jan', 'Feb', 'Mar']\n"
    out = deid.redact_document(text, format="code", source="a.py").output
    assert out == "# [PERSON]: per RFC 2068 and rfc822, Jan/Feb tables\nM = ['Jan', 'Feb', 'Mar']\n"


@pytest.mark.parametrize(
    "line",
    [
        "# Copyright 2003 by Jane Doe <jane@example.org> and John Roe <john@example.org>",
        "# Written by Jane Doe <jane@example.org>; send bugs to John Roe <john@example.org>",
        "# Author: Jane Doe <jane@example.org>, John Roe <john@example.org>",
    ],
    ids=["copyright-by", "two-mailboxes", "author-list"],
)
def test_every_name_and_mailbox_of_a_line_is_read(line: str) -> None:
    doc = read(f"{line}\nx = 1\n", "m.py")
    assert persons(doc) == ["Jane Doe", "John Roe"]
    emails = [f.value for f in doc.fields if f.role.category is Category.CONTACT_OTHER]
    assert emails == ["jane@example.org", "john@example.org"]
    deid = Deidentifier(profile="rules")
    out = deid.redact_document(f"{line}\nx = 1\n", format="code", source="m.py").output
    assert "John Roe" not in out and "Jane Doe" not in out and "example.org" not in out


def test_token_caches_are_bounded() -> None:
    from polydeid.formats import code
    from polydeid.text import frequency

    for fn in (code._is_codec, frequency.zipf):
        assert fn.cache_info().maxsize is not None
