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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from polydeid.api import Deidentifier
from polydeid.core.errors import RecordError, UnknownLanguageError
from polydeid.core.segments import Origin, Segment, Stretch
from polydeid.core.spans import Span
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
    return finish_record(deid, prepare_record(record, config, location=location))


@dataclass(frozen=True, slots=True)
class PreparedRecord:
    """A record read and checked, ready to be de-identified (:func:`prepare_record`): its
    segment, ids and the fields its output keeps."""

    segment: Segment
    document_id: str | None
    patient_id: str | None
    head: dict[str, Any]  # the output record's fields before its text
    text_field: str


def prepare_record(
    record: Mapping[str, Any], config: JobConfig, *, location: str
) -> PreparedRecord:
    """Read ``record`` as :func:`redact_record` does, before any detection; the same
    :class:`RecordError` where it has no usable text, id or language."""
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
    head: dict[str, Any] = {}
    if record_id is not None:
        head[config.id_field] = record_id
    head[config.lang_field] = lang
    for name in config.keep:
        if name in record and name not in (config.text_field, config.id_field):
            head[name] = record[name]
    return PreparedRecord(
        segment,
        None if record_id is None else str(record_id),
        None if patient is None else str(patient),
        head,
        config.text_field,
    )


def finish_record(
    deid: Deidentifier, prepared: PreparedRecord, spans: Sequence[Span] | None = None
) -> tuple[dict[str, Any], list[str]]:
    """The output record of ``prepared`` and the categories replaced; ``spans``: its
    detection, if done already (:meth:`Deidentifier.detect_many`)."""
    result = deid.redact_segment(
        prepared.segment,
        document_id=prepared.document_id,
        patient_id=prepared.patient_id,
        spans=spans,
    )
    if prepared.document_id is not None:
        deid.redactor.end_document(prepared.document_id)
    out = dict(prepared.head)
    out[prepared.text_field] = result.text
    return out, [r.label.value for r in result.replacements]


def redact_records(
    deid: Deidentifier, records: Sequence[tuple[Mapping[str, Any], str]], config: JobConfig
) -> list[tuple[dict[str, Any], list[str]] | Exception]:
    """:func:`redact_record_labelled` of each ``(record, location)``, or the exception it
    raised, the records detected together (:meth:`Deidentifier.detect_together`): the same
    outputs and errors as one by one."""
    ready: list[PreparedRecord | Exception] = []
    for record, location in records:
        try:
            ready.append(prepare_record(record, config, location=location))
        except Exception as exc:
            ready.append(exc)
    prepared = [p for p in ready if isinstance(p, PreparedRecord)]
    together = deid.detect_together([p.segment for p in prepared])
    found = iter(together) if together is not None else None
    out: list[tuple[dict[str, Any], list[str]] | Exception] = []
    for item in ready:
        if not isinstance(item, PreparedRecord):
            out.append(item)
            continue
        spans = next(found) if found is not None else None
        try:
            out.append(finish_record(deid, item, spans))
        except Exception as exc:
            out.append(exc)
    return out
