"""MEDDOCAN's relatives' annotations made only of kinship words are kinship mentions, not
identifiers (``[kinship]`` of core/schemes/meddocan.toml, read by polydeid.corpora.brat)."""

from __future__ import annotations

from pathlib import Path

from polydeid.core.taxonomy import Category, Fact, scheme
from polydeid.corpora.brat import read_brat

TEXT = (
    "Acude con su madre y dos hermanas. Su tío materno de 37 años y su hermano Juan están "
    "sanos. Los padres Teresa y Luis Pérez lo acompañan."
)


def _ann(text: str, *phrases: str) -> str:
    lines = []
    for i, phrase in enumerate(phrases, start=1):
        start = text.index(phrase)
        end = start + len(phrase)
        lines.append(f"T{i}\tFAMILIARES_SUJETO_ASISTENCIA {start} {end}\t{phrase}")
    return "\n".join(lines) + "\n"


def test_kinship_only_relatives_are_facts_and_names_stay(tmp_path: Path) -> None:
    phrases = (
        "su madre",
        "dos hermanas",
        "tío materno de 37 años",
        "hermano",
        "Juan",
        "padres Teresa y Luis Pérez",
    )
    (tmp_path / "caso.txt").write_text(TEXT, "utf-8")
    (tmp_path / "caso.ann").write_text(_ann(TEXT, *phrases), "utf-8")
    (doc,) = read_brat(tmp_path, scheme="meddocan", lang="es").documents
    facts = [(TEXT[s.start : s.end], s.label) for s in doc.facts]
    assert facts == [
        ("su madre", Fact.KINSHIP),
        ("dos hermanas", Fact.KINSHIP),
        ("hermano", Fact.KINSHIP),
    ]
    assert all(s.source == "gold:FAMILIARES_SUJETO_ASISTENCIA" for s in doc.facts)
    spans = [(TEXT[s.start : s.end], s.label) for s in doc.spans]
    assert spans == [
        ("tío materno de 37 años", Category.PERSON_THIRD_PARTY),
        ("Juan", Category.PERSON_THIRD_PARTY),
        ("padres Teresa y Luis Pérez", Category.PERSON_THIRD_PARTY),
    ]
    assert doc.meta["kinship"] == 3 and doc.meta["annotations"] == 6


def test_the_scheme_names_its_kinship_labels() -> None:
    assert scheme("meddocan").kinship_labels == frozenset({"FAMILIARES_SUJETO_ASISTENCIA"})
    assert scheme("conll").kinship_labels == frozenset()


def test_a_kinship_word_under_another_label_stays_that_label(tmp_path: Path) -> None:
    text = "Trabaja como madre de día."
    start = text.index("madre")
    (tmp_path / "c.txt").write_text(text, "utf-8")
    (tmp_path / "c.ann").write_text(f"T1\tPROFESION {start} {start + 5}\tmadre\n", "utf-8")
    (doc,) = read_brat(tmp_path, scheme="meddocan", lang="es").documents
    assert [s.label for s in doc.spans] == [Category.PROFESSION] and doc.facts == ()
