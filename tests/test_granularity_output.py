"""Every serialised date span says which fields it shows, in documents as in text, and a
record that mixes languages is transformed with the language of each of its parts."""

from __future__ import annotations

import json

from polydeid import Deidentifier
from polydeid.cli import main
from polydeid.core.segments import Segment, Stretch
from polydeid.locales import segment_languages


def test_cli_detect_on_a_document_reports_granularity(tmp_path) -> None:
    src = tmp_path / "visits.csv"
    src.write_text("id,note\n1,Admitted 12/03/2024 and seen 9/7\n2,MI 1992\n", "utf-8")
    out = tmp_path / "visits.spans.json"
    args = ["detect", str(src), "--profile", "rules", "--lang", "en", "-o", str(out)]
    assert main(args) == 0
    spans = json.loads(out.read_text("utf-8"))["spans"]
    grains = sorted(s["granularity"] for s in spans if s["label"] == "DATE")
    assert grains == ["day_month", "full", "year"]
    assert all("granularity" not in s for s in spans if s["label"] != "DATE")


def test_segment_languages_include_every_part_of_a_mixed_record() -> None:
    text = "Seen today. Yalabiddwa nga 5 Museenene 2024."
    cut = text.index("Yalabiddwa")
    mixed = Segment(text, "en", stretches=(Stretch(0, cut, "en"), Stretch(cut, len(text), "lg")))
    assert tuple(segment_languages(mixed)) == ("en", "lg")
    assert tuple(segment_languages(Segment(text, "lg"))) == ("lg", "en")


def test_safe_harbor_reads_a_date_in_the_language_of_its_part() -> None:
    deid = Deidentifier(profile="rules", policy="safe-harbor")
    note = (
        "Patient seen at the clinic today for review. "
        "Omulwadde yalabiddwa nga 5 Museenene 2024 ku ssaawa nnya."
    )
    out = deid.redact(note, lang="auto")
    assert "5 Museenene" not in out and "2024" in out
