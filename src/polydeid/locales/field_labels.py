"""The ``field_labels.toml`` locale data kind: the labels a language writes for the fields and
titles of clinical documents.

``locales/languages/<code>/field_labels.toml``::

    [meta]    sources, licence
    [labels]  <key> = label: a field key ("patient_name", "dob"), a document type
              ("discharge_summary") or a role ("_patient", "_clinician") and how the language
              writes it ("Date of birth", "Tarehe ya kuzaliwa")

:func:`field_labels` reads it into a :class:`FieldLabels`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache

from polydeid.core.errors import ConfigError
from polydeid.locales import _schema as schema
from polydeid.locales import language_data


@dataclass(frozen=True, slots=True)
class FieldLabels:
    """The field labels of one language pack; empty without a ``field_labels.toml``."""

    code: str
    #: label by field key, in file order
    labels: Mapping[str, str] = field(default_factory=dict)


@cache
def field_labels(code: str) -> FieldLabels:
    """The :class:`FieldLabels` of language ``code`` (a canonical code); validated, cached."""
    raw = language_data(code, "field_labels")
    file = f"languages/{code}/field_labels.toml"
    labels = schema.table(raw, "labels", file)
    for key, label in labels.items():
        if not isinstance(label, str):
            raise ConfigError("expected a string", location=schema.at(file, f"labels.{key}"))
    return FieldLabels(code=code, labels=schema.frozen(labels))
