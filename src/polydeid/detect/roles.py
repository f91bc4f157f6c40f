"""A name's role from the field label written before it, in any detector's output.

Forms and headers say whose name follows: "Patient: Okello James", "Ф.И.О. пациента: Суворов
Анисим", "Umurwayi: Irakoze Kayitesi" name the patient; "Mother: Akello", "Лечащий врач:
Денисов" a third party. A model reading running text can still take a patient for a relative
(the synthetic Russian and Kinyarwanda forms showed it), so after resolution a name span —
patient or third party, from whichever detector — that follows such a label on its own line
takes the label's role, and every other span of the segment with the same text (casefolded)
takes it too, unless labels disagree about that text.

The labels are patient and clinician labels (``[name_roles]`` of ``formats/data/fields.toml``:
English phrases plus every language pack's ``field_labels.toml`` patient-name and clinician
labels, :func:`polydeid.formats.fields.name_role_for_words`); kinship labels ("Mother:") are
not, since in a birth record the mother is the patient. The label is the text between the
line's start (or a ``;``, ``|`` or tab) and the colon right before the name, and, as for a CSV
header, the longest listed phrase that ends it decides ("Seen today. Patient:" is a patient
label). Without a colon, a patient or clinician noun separated from the name by spaces only
gives the role the same way (``[noun_roles]``, :func:`polydeid.formats.fields.
noun_role_for_words`): "em trai của BN Giang" (the younger brother of the patient Giang),
"the patient Okello", "bác sĩ Học"; the words read stop at the line's start or at punctuation,
so "the patient's mother Anna" and "patient, Anna" give nothing. Only the role changes: no span
is added, moved or dropped, and only names (``PERSON``, ``PERSON_THIRD_PARTY``) are
relabelled, only to one of those two.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.formats.fields import name_role_for_words, normalise_name, noun_role_for_words

#: The categories a label may give, and the only ones it may change.
NAME_ROLES = frozenset({Category.PERSON, Category.PERSON_THIRD_PARTY})
#: A label and its colon ending right before the name: only spaces or tabs between (searched
#: in at most 120 characters before the name, so bounded).
_LABEL = re.compile(r"([^\n\r;|\t:：]{1,80})[:：][ \t]*$")
#: Words of the label read (its end decides; a longer label is a sentence, not a field).
_LABEL_WORDS = 8


#: Where the words read for a noun before a name begin: after a field or phrase break.
_NOUN_STOP = re.compile(r"[;|\t:：,.()\[\]{}\"“”«»!?¡¿]")


def label_role(text: str, start: int) -> Category | None:
    """The role the label (or noun) ending right before ``start`` gives a name, or None."""
    lo = max(0, start - 120)
    line_start = max(text.rfind("\n", lo, start), text.rfind("\r", lo, start)) + 1
    match = _LABEL.search(text, max(line_start, lo), start)
    if match is not None:
        words = normalise_name(match.group(1))[-_LABEL_WORDS:]
        return name_role_for_words(words) if words else None
    if start == 0 or not text[start - 1].isspace():
        return None
    before = text[max(line_start, lo) : start]
    cut = max((m.end() for m in _NOUN_STOP.finditer(before)), default=0)
    words = normalise_name(before[cut:])[-_LABEL_WORDS:]
    return noun_role_for_words(words) if words else None


def apply_label_roles(text: str, spans: Sequence[Span]) -> tuple[Span, ...]:
    """``spans`` with the roles their field labels give (see the module docstring)."""
    cued: dict[int, Category] = {}
    for i, span in enumerate(spans):
        if span.label in NAME_ROLES and (role := label_role(text, span.start)) is not None:
            cued[i] = role
    if not cued:
        return tuple(spans)
    by_text: dict[str, set[Category]] = {}
    for i, role in cued.items():
        by_text.setdefault(text[spans[i].start : spans[i].end].casefold(), set()).add(role)
    out = []
    for i, span in enumerate(spans):
        role = cued.get(i)
        if role is None and span.label in NAME_ROLES:
            roles = by_text.get(text[span.start : span.end].casefold(), set())
            role = next(iter(roles)) if len(roles) == 1 else None
        if role is not None and role is not span.label:
            span = Span(span.start, span.end, role, span.source, span.score)
        out.append(span)
    return tuple(out)
