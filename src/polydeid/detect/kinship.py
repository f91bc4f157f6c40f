"""Kinship and role words are not names: "his wife", "the patient", "Pt's daughter", "die
Mutter", "su madre", "mama yake", "Sehr geehrte Frau Kollegin", "Dear colleague", "Mheshimiwa".

A model trained on records that mark relatives' mentions as people (MEDDOCAN annotates "su
madre" as a relative) or that reads a salutation's role noun as the name it usually precedes
("Herr Kollege") redacts words that identify nobody. After resolution, a name span (any
category of the ``NAME`` group) made only of the kinship and role words, forms of address,
salutations and grammar words of its segment's language and English
(``locales/languages/<code>/kinship.toml``), with the names' titles and greetings
(``names.toml``), and holding at least one kinship word, role word or form of address, is a
kinship mention and is dropped: it is no identifier, so every policy leaves it as written
(gold annotations of such mentions read as :attr:`~polydeid.core.taxonomy.Fact.KINSHIP`,
:mod:`polydeid.corpora.brat`). A name with a
real name in it stays whole ("Mama Amina", "Frau Müller", "his wife Mary"), and so does a
kinship word written with a capital right after a title, which reads as a surname ("Herr
Vater", "Mr Son"), or a span that is the value of a name label ("Patient name: Nana", "Jina:
Kaka", "Nombre: Papa": :func:`polydeid.detect.roles.name_label_before`), which is a name
whatever its words.
"""

from __future__ import annotations

from collections.abc import Sequence

from polydeid.core.spans import Span
from polydeid.core.taxonomy import COARSE_GROUP, Category
from polydeid.detect.roles import name_label_before
from polydeid.locales.kinship import kinship_vocabulary


def is_kinship_mention(text: str, lang: str) -> bool:
    """Whether ``text`` is a kinship or role mention in language ``lang`` (a canonical code;
    English words count in every language, as the rules read them)."""
    langs = (lang,) if lang == "en" else (lang, "en")
    return kinship_vocabulary(*langs).is_mention(text)


def drop_kinship_mentions(text: str, spans: Sequence[Span], lang: str) -> tuple[Span, ...]:
    """``spans`` without the name spans that are kinship or role mentions
    (:func:`is_kinship_mention`) and not the value of a name label
    (:func:`~polydeid.detect.roles.name_label_before`); other spans as they are."""
    return tuple(
        s
        for s in spans
        if not (
            isinstance(s.label, Category)
            and COARSE_GROUP[s.label] == "NAME"
            and is_kinship_mention(text[s.start : s.end], lang)
            and name_label_before(text, s.start) is None
        )
    )
