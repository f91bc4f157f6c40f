"""What "facts changed" is measured against (polydeid.evaluate.harness.facts_reference): a
corpus's own clinical facts, or the silver facts plus the kinds it does annotate (MEDDOCAN's
kinship mentions)."""

from __future__ import annotations

from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.corpora.document import AnnotatedDocument, Corpus
from polydeid.evaluate.harness import SILVER_FACTS, evaluate, facts_reference

TEXT = "Acude con su madre; Hb 11,2 g/dL. Paciente Ana Ruiz."


def _corpus(*facts: Span) -> Corpus:
    name = TEXT.index("Ana Ruiz")
    doc = AnnotatedDocument(
        id="a",
        text=TEXT,
        lang="es",
        spans=(Span(name, name + 8, Category.PERSON, "gold:NAME"),),
        facts=facts,
    )
    return Corpus("tiny", (doc,), scheme="meddocan")


def _kinship() -> Span:
    start = TEXT.index("su madre")
    return Span(start, start + 8, Fact.KINSHIP, "gold:FAMILIARES_SUJETO_ASISTENCIA")


def test_no_gold_facts_reads_the_silver_ones() -> None:
    facts, reference = facts_reference(_corpus())
    assert reference == SILVER_FACTS and facts is not None
    assert [s.label for s in facts["a"]] == [Fact.LAB_VALUE]


def test_kinship_facts_join_the_silver_ones() -> None:
    facts, reference = facts_reference(_corpus(_kinship()))
    assert facts is not None and reference.startswith(SILVER_FACTS) and "KINSHIP" in reference
    assert [s.label for s in facts["a"]] == [Fact.KINSHIP, Fact.LAB_VALUE]
    run = evaluate(_corpus(_kinship()), ["rules"], bootstrap=0)
    assert run.facts_reference == reference
    assert run.systems[0].scores.facts.facts == 2


def test_gold_clinical_facts_are_the_reference() -> None:
    start = TEXT.index("Hb")
    lab = Span(start, start + 13, Fact.LAB_VALUE, "gold:LAB")
    assert facts_reference(_corpus(lab, _kinship())) == (None, "gold")
