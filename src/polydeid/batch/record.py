"""One record, de-identified the same way everywhere: the batch runner, Spark and the service.

A record is a mapping with a text field (``text`` by default) and optionally an id, a
language and a patient id. :class:`JobConfig` says which fields those are and how to
de-identify (profile, policy, key, vault); :func:`redact_record` returns the output record:
the id, the language and the de-identified text, plus only the fields the job names in
``keep`` (other fields may hold identifiers, so they are dropped unless asked for).

The configuration is plain data (picklable), so each worker process or Spark executor
builds its own :class:`~polydeid.api.Deidentifier` once with :func:`build_deidentifier`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from polydeid.api import Deidentifier
from polydeid.core.errors import RecordError, UnknownLanguageError
from polydeid.core.segments import Origin, Segment, Stretch
from polydeid.locales import canonical_language


@dataclass(frozen=True, slots=True)
class JobConfig:
    """How to de-identify records (picklable: sent to worker processes and Spark executors).

    ``lang``: the language of records that carry none (``auto``: identify it; a record
    whose language cannot be identified is an error, never passed through). ``vault``: a
    SQLite path or ``postgresql://`` URL for surrogates shared across workers and runs
    (see :mod:`polydeid.transform.vault`); ``key_file``: the secret for keyed operators.
    """

    profile: str = "default"
    policy: str = "tag"
    key_file: str | None = None
    vault: str | None = None
    lang: str = "en"
    countries: tuple[str, ...] = ()
    text_field: str = "text"
    id_field: str = "id"
    lang_field: str = "lang"
    patient_field: str = "patient_id"
    keep: tuple[str, ...] = field(default=())


def build_deidentifier(config: JobConfig) -> Deidentifier:
    """The de-identifier a worker uses for ``config`` (build once per process)."""
    vault = None
    if config.vault:
        from polydeid.transform.vault import open_vault

        vault = open_vault(config.vault)
    return Deidentifier(
        profile=config.profile, policy=config.policy, key_file=config.key_file, vault=vault
    )


def record_language(record: Mapping[str, Any], config: JobConfig, location: str) -> str:
    declared = record.get(config.lang_field)
    if declared is not None and not isinstance(declared, str):
        raise RecordError(f"field {config.lang_field!r} must be a string", location=location)
    if declared:
        try:
            return canonical_language(declared)
        except UnknownLanguageError as exc:  # the record's own field: a record error
            raise RecordError(exc.message, location=location) from None
    if config.lang.strip().lower() == "auto":
        from polydeid.detect.langid import resolve_language

        return resolve_language(str(record.get(config.text_field, "")), location=location)
    return canonical_language(config.lang)


def redact_record(
    deid: Deidentifier, record: Mapping[str, Any], config: JobConfig, *, location: str
) -> dict[str, Any]:
    """The de-identified output record; :class:`RecordError` (located, never quoting the
    text) when the record has no usable text, id or language."""
    return redact_record_labelled(deid, record, config, location=location)[0]


def redact_record_labelled(
    deid: Deidentifier, record: Mapping[str, Any], config: JobConfig, *, location: str
) -> tuple[dict[str, Any], list[str]]:
    """:func:`redact_record` and the categories replaced, in order (for summaries: labels
    only, never text)."""
    text = record.get(config.text_field)
    if not isinstance(text, str):
        raise RecordError(f"a record needs a string field {config.text_field!r}", location=location)
    record_id = record.get(config.id_field)
    if record_id is not None and (
        isinstance(record_id, bool) or not isinstance(record_id, str | int)
    ):
        raise RecordError(
            f"field {config.id_field!r} must be a string or an integer", location=location
        )
    lang = record_language(record, config, location)
    patient = record.get(config.patient_field)
    stretches: tuple[Stretch, ...] = ()
    if not record.get(config.lang_field) and config.lang.strip().lower() == "auto":
        from polydeid.detect.langid.stretches import language_stretches

        stretches = language_stretches(text, lang)  # a mixed record is read part by part
    segment = Segment(
        text,
        lang=lang,
        origin=Origin(path=location),
        countries=config.countries,
        stretches=stretches,
    )
    document_id = None if record_id is None else str(record_id)
    result = deid.redact_segment(
        segment,
        document_id=document_id,
        patient_id=None if patient is None else str(patient),
    )
    if document_id is not None:
        deid.redactor.end_document(document_id)
    out: dict[str, Any] = {}
    if record_id is not None:
        out[config.id_field] = record_id
    out[config.lang_field] = lang
    for name in config.keep:
        if name in record and name not in (config.text_field, config.id_field):
            out[name] = record[name]
    out[config.text_field] = result.text
    return out, [r.label.value for r in result.replacements]
