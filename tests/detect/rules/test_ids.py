"""National and other identifiers: per-country tables, context gating, labelled IDs, properties.

The tables live in ``fixtures/ids_cases.toml``. Test ids are case names, never the identifiers.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from stdnum import luhn

from polydeid.core.errors import ConfigError, RuleTimeoutError
from polydeid.core.segments import Origin, Segment
from polydeid.core.taxonomy import Category
from polydeid.detect.rules import ids
from polydeid.detect.rules.ids import (
    IdentifierRule,
    LabelLexicon,
    ascii_digits,
    id_formats,
    labelled_kinds,
    make_validator,
)
from polydeid.locales import country_data, language_data, languages
from polydeid.locales.identifiers import LABEL_TABLES
from polydeid.text import patterns

FIXTURES = Path(__file__).parent / "fixtures"
CASES: list[dict[str, Any]] = tomllib.loads((FIXTURES / "ids_cases.toml").read_text("utf-8"))[
    "case"
]
RULE = IdentifierRule()


def found(text: str, lang: str = "en") -> set[tuple[str, str]]:
    """``(span text, source)`` of every span (for assertions only; never used as an id)."""
    spans = RULE.detect(Segment(text, lang=lang))
    assert all(s.label in RULE.labels for s in spans)
    return {(text[s.start : s.end], s.source) for s in spans}


# --------------------------------------------------------------------------- tables


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_case_table(case: dict[str, Any]) -> None:
    got = found(case["text"], case["lang"])
    if "expect" in case:
        assert got == {tuple(e) for e in case["expect"]}
    for source in case.get("forbid", ()):
        assert source not in {s for _, s in got}


def test_case_names_are_unique_and_not_identifiers() -> None:
    names = [c["name"] for c in CASES]
    assert len(names) == len(set(names))
    values = {v for c in CASES for v, _ in c.get("expect", ())}
    assert not any(v in n for n in names for v in values)


def test_every_format_has_a_positive_case() -> None:
    sources = {s for c in CASES for _, s in c.get("expect", ())}
    missing = {f.source for f in id_formats()} - sources
    assert not missing


def test_checksum_sources_only_for_checksum_formats() -> None:
    for fmt in id_formats():
        assert fmt.source.startswith("rule.checksum." if fmt.checksum else "rule.id.")
        assert fmt.source.endswith(".v1")


def test_labels_by_category() -> None:
    spans = RULE.detect(Segment("NIN CM92034102ABCD, IBAN DE89 3704 0044 0532 0130 00"))
    assert [s.label for s in spans] == [Category.ID_NATIONAL, Category.ID_OTHER]


# --------------------------------------------------------------------------- context gating


@pytest.mark.parametrize(
    ("lang", "label"),
    [
        ("en", "ID No:"),
        ("en", "National ID"),
        ("sw", "Namba ya kitambulisho"),
        ("sw", "Nambari ya kitambulisho cha taifa:"),
        ("luo", "namba mar kipande"),
        ("lg", "Ndaga Muntu"),
        ("rw", "Indangamuntu"),
        ("fr", "N° CNI"),
        ("vi", "Số CMND"),
        ("zh", "身份证号："),
        ("am", "የመታወቂያ ቁጥር"),
        ("ar", "رقم الهوية"),
        ("hi", "पहचान संख्या"),
    ],
    ids=lambda x: x if len(x) <= 3 else "label",
)
def test_eight_digits_need_a_national_id_label(lang: str, label: str) -> None:
    assert found("Result 12345678 filed.", lang) == set()
    text = f"{label} 12345678"
    assert found(text, lang) == {("12345678", "rule.id.ke_id.v1")}


def test_label_must_be_whole_word() -> None:
    assert found("Rapid 12345678") == set()
    assert found("fluid 12345678") == set()
    assert found("IDs 12345678") == set()


def test_fillers_are_limited() -> None:
    assert found("ID number is 12345678") == {("12345678", "rule.id.ke_id.v1")}
    assert found("ID of the mother was 12345678") == set()


@given(st.integers(min_value=1_000_000, max_value=99_999_999))
@settings(max_examples=60, deadline=None)
def test_bare_seven_or_eight_digits_never_fire(number: int) -> None:
    assert found(f"Count was {number} on review.") == set()


# --------------------------------------------------------------------------- properties

_WORDS = st.lists(
    st.sampled_from(["the", "patient", "was", "seen", "today", "ward", "mgonjwa", "na"]), max_size=5
)

# Identifiers recognised without any label: (value, source).
_STANDALONE = [
    (v, s)
    for c in CASES
    for v, s in c.get("expect", ())
    if not any(f.needs_context and f.source == s for f in id_formats())
    and not s.startswith(
        ("rule.id.passport", "rule.id.insurance", "rule.id.licence", "rule.id.national")
    )
    and v.isascii()
]


@given(st.sampled_from(_STANDALONE), _WORDS, _WORDS)
@settings(max_examples=80, deadline=None)
def test_standalone_ids_found_at_exact_offsets(
    case: tuple[str, str], before: list[str], after: list[str]
) -> None:
    value, source = case
    head = " ".join(before) + " " if before else ""
    text = f"{head}{value} {' '.join(after)}".rstrip()
    spans = RULE.detect(Segment(text))
    assert [(s.start, s.end, s.source) for s in spans] == [
        (len(head), len(head) + len(value), source)
    ]


@given(st.text(min_size=12, max_size=12, alphabet="0123456789"))
@settings(max_examples=60, deadline=None)
def test_visa_numbers_with_valid_luhn_found_invalid_not(body: str) -> None:
    number = "4000" + body[:11]
    good = number + luhn.calc_check_digit(number)
    bad = number + str((int(luhn.calc_check_digit(number)) + 1) % 10)
    grouped = " ".join(good[i : i + 4] for i in range(0, 16, 4))
    assert (grouped, "rule.checksum.payment_card.v1") in found(f"card {grouped}")
    assert not any("payment_card" in s for _, s in found(f"card {bad}"))


@given(st.text(max_size=200))
@settings(max_examples=150, deadline=None)
def test_arbitrary_text_never_crashes(text: str) -> None:
    for lang in ("en", "zh", "ar"):
        for span in RULE.detect(Segment(text, lang=lang)):
            assert 0 <= span.start < span.end <= len(text)


def test_native_digits_keep_offsets() -> None:
    text = "رقم الهوية: ١٢٣٤٥٦٧٨ ومراجعة"
    assert ascii_digits(text) != text
    assert len(ascii_digits(text)) == len(text)
    assert ascii_digits("plain ascii 123") == "plain ascii 123"
    assert ascii_digits("Größe 12") == "Größe 12"


# --------------------------------------------------------------------------- labels


def test_label_lexicon_kinds_and_fillers() -> None:
    lexicon = LabelLexicon({"a": ["insurance id"], "b": ["id", "passport #"]}, fillers=["is", "no"])
    assert lexicon.label_before("insurance ID: ", 14) == ("a", 0)
    assert lexicon.label_before("my ID is ", 9) == ("b", 3)
    assert lexicon.label_before("Passport # ", 11) == ("b", 0)
    assert lexicon.label_before("rapid ", 6) is None
    assert lexicon.label_before("ID of the ", 10) is None
    assert lexicon.search("the insurance id") and not lexicon.search("paid")


def test_label_lexicon_joined_and_unspaced() -> None:
    lexicon = LabelLexicon({"r": ["nº col", "住院号"]}, fillers=["号", "为"])
    assert lexicon.label_before("NºCol: ", 7) == ("r", 0)
    assert lexicon.label_before("患者住院号：", 6) == ("r", 2)
    assert lexicon.label_before("患者住院号为", 6) == ("r", 2)


def test_every_language_has_identifier_words() -> None:
    for lang in languages():
        data = language_data(lang, "identifiers")
        assert data["meta"]["sources"] and data["meta"]["licence"], lang
        for kind in (*LABEL_TABLES, "fillers"):
            if kind == "postal_code":  # empty where the country has none (a note says so)
                assert isinstance(data[kind]["words"], list), lang
            else:
                assert data[kind]["words"], (lang, kind)


def test_country_files_have_meta() -> None:
    for cc in {f.country for f in id_formats()}:
        meta = country_data(cc, "ids")["meta"]
        assert meta["sources"] and meta["licence"]


def test_labelled_kinds_from_data() -> None:
    kinds = {k.kind: k for k in labelled_kinds()}
    assert set(kinds) == {"national_id", "passport", "insurance", "licence", "postal_code"}
    assert kinds["national_id"].label is Category.ID_NATIONAL
    assert kinds["passport"].label is Category.ID_OTHER
    assert kinds["postal_code"].label is Category.LOCATION_ADDRESS
    assert kinds["postal_code"].source == "rule.address.postal_code.v1"


@pytest.mark.parametrize(
    ("lang", "text", "value"),
    [
        ("es", "Localidad/ Provincia: Sevilla.\nCP:41001.\nNHC: 272226.", "41001"),
        ("es", "C.P. 28018 Madrid", "28018"),
        ("de", "Hauptstr. 5, PLZ 10115 Berlin", "10115"),
        ("en", "Boston, ZIP 02139-4307", "02139-4307"),
        ("pt", "CEP 01310-100, São Paulo", "01310-100"),
        ("zh", "北京市海淀区，邮编：100080。", "100080"),
        ("ru", "почтовый индекс 123456", "123456"),
        ("sw", "Dodoma, postikodi 41101", "41101"),
    ],
    ids=lambda x: x if len(x) <= 3 else "",
)
def test_a_labelled_postal_code_is_an_address(lang: str, text: str, value: str) -> None:
    def addresses(text: str) -> list[str]:
        spans = RULE.detect(Segment(text, lang=lang))
        return [text[s.start : s.end] for s in spans if s.label is Category.LOCATION_ADDRESS]

    assert addresses(text) == [value]
    # without its label the number is not an address
    bare = text.replace(value, "").strip() + " " + value
    for label in ("CP:", "C.P.", "PLZ", "ZIP", "CEP", "邮编：", "почтовый индекс", "postikodi"):
        bare = bare.replace(label, "")
    assert addresses(bare) == []


def test_a_postal_code_label_never_takes_a_dose() -> None:
    # French and Spanish "cp" is also a tablet: the dose is a protected clinical fact, and a
    # postal code (unlike a labelled identifier) never overrides one.
    from polydeid.evaluate.harness import build_system

    _, rules = build_system("rules")
    text = "Doliprane 2 cp 1000 mg par jour"
    assert RULE.detect(Segment(text, lang="fr"))  # the rule reads it as labelled …
    assert rules.detect(Segment(text, lang="fr")) == ()  # … the resolver keeps the dose


# --------------------------------------------------------------------------- validators and errors


def test_unknown_validator_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown validator"):
        make_validator("no_such_check", {})
    with pytest.raises(ConfigError):
        make_validator("stdnum:no.such.module", {})


def test_malformed_format_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="capturing"):
        ids._read_format(
            "ZZ",
            {
                "name": "x",
                "label": "ID_OTHER",
                "starts": "digit",
                "pattern": "([0-9]{5})",
                "validator": "none",
            },
        )
    with pytest.raises(ConfigError):
        ids._read_format(
            "ZZ", {"name": "x", "label": "ID_OTHER", "starts": "digit", "pattern": "[0-9]{5}"}
        )


def test_timeout_fails_closed_without_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(patterns, "PATTERN_TIMEOUT_S", 1e-9)
    monkeypatch.setattr(ids, "PATTERN_TIMEOUT_S", 1e-9)
    secret = "CM92034102ABCD"
    text = ("ordinary words 12 34 " * 4000) + secret
    with pytest.raises(RuleTimeoutError) as info:
        RULE.detect(Segment(text, origin=Origin(file="note.txt", line=3)))
    assert secret not in str(info.value)
    assert "note.txt:3" in str(info.value)
    assert "rules.ids.v1" in str(info.value)


def test_repr_has_no_text() -> None:
    spans = RULE.detect(Segment("NIN CM92034102ABCD"))
    assert "CM92034102ABCD" not in repr(spans)
    assert "CM92034102ABCD" not in repr(RULE)


@pytest.mark.torch
def test_a_crashing_stdnum_validator_fails_closed() -> None:
    """stdnum.cn.ric raises KeyError on unknown region codes: detection must not crash, and
    the identifier-shaped value is redacted rather than passed through."""
    from polydeid import Deidentifier

    text = "身份证号 123456199001011233，电话待补。"
    spans = Deidentifier().detect(text, lang="zh")
    assert any(text[s.start : s.end] == "123456199001011233" for s in spans)


def _label_before_by_pattern(
    lexicon: ids.LabelLexicon, text: str, pos: int
) -> tuple[str, int] | None:
    """``LabelLexicon.label_before`` as it read every label: by its key's pattern."""
    for _ in range(ids._MAX_FILLERS + 1):
        found = lexicon._word_before(text, pos)
        if found is None:
            return None
        word, key, unspaced, _, word_end = found
        pattern = lexicon._key_pattern(key)
        if pattern is not None:
            m = pattern.match(text, max(0, pos - ids._LABEL_REACH), pos)
            if m is not None:
                return lexicon.kinds[int(m.lastgroup[1:])], m.start()
        filler = lexicon._filler_end(word, unspaced)
        if filler is None:
            return None
        pos = word_end - filler
    return None


@pytest.mark.parametrize("lang", sorted(languages()))
def test_single_word_labels_are_read_as_their_pattern_reads_them(lang: str) -> None:
    """A label that is one word (``MRN``, ``IP No.``'s ``no``) is taken from the word before
    the value without matching its pattern: the same kind and start as the pattern gives,
    whatever stands around it, in every language's lexicon."""
    lexicon = ids.all_labels((lang,))
    assert lexicon._single_word  # every language has one-word labels
    befores = ["", "x", "x ", "7", "ab-", "#", "é", "(", "Mr ", "no. ", "\n"]
    gaps = ["", " ", ": ", ".", ". ", " #", "\t", ":  ", "-", " № ", "       "]
    checked = 0
    for key in sorted(lexicon._single_word):
        for written in {key, key.upper(), key.title()}:
            for before in befores:
                for gap in gaps:
                    text = f"{before}{written}{gap}4482913"
                    pos = len(text) - 7
                    expected = _label_before_by_pattern(lexicon, text, pos)
                    assert lexicon.label_before(text, pos) == expected
                    checked += 1
    assert checked > 100


_PIECES = st.sampled_from(
    [
        "MRN",
        "mrn",
        "IP No.",
        "ID",
        "nhc-",
        "Patient",
        "x",
        "abc",
        "#",
        "-",
        "/",
        ".",
        ": ",
        " ",
        "  ",
        ", ",
        "\n",
        "4482913",
        "12 34 56",
        "2024",
        "07",
        "AB12",
        "ab12",
        "N",
        "no",
        "Q",
        "é",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=30), st.sampled_from(["en", "de", "sw", "fr"]), st.booleans())
def test_a_text_without_label_words_or_capitals_has_no_value_tokens(
    pieces: list[str], lang: str, capitals: bool
) -> None:
    """``value_tokens`` leaves a text at once only where reading it would find nothing: the
    tokens are those of the full reading, with and without the capital-led ones."""
    lexicon = ids.all_labels((lang,))
    segment = Segment("".join(pieces), lang=lang)
    fast = ids.value_tokens(segment, "test.rule", lexicon, capitals=capitals)
    full = ids.value_tokens(
        segment, "test.rule", _EveryTextMayHoldLabels(lexicon), capitals=capitals
    )
    assert fast == full


class _EveryTextMayHoldLabels:
    """A lexicon that never lets ``value_tokens`` leave a text early."""

    def __init__(self, lexicon: ids.LabelLexicon) -> None:
        self._lexicon = lexicon

    def may_occur(self, text: str) -> bool:
        return True

    def __getattr__(self, name: str) -> object:
        return getattr(self._lexicon, name)
