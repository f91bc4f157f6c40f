"""The service's settings and its work: :class:`Service` builds the detectors once, caches a
:class:`Deidentifier` per policy and runs a parsed :class:`Job` in a worker thread under the
time limit and a CPU budget. Nothing here knows HTTP beyond raising :class:`Problem`.

Work is bounded where it runs: each job runs under a :class:`~polydeid.core.budget.WorkBudget`
(its CPU seconds), and a job past the time limit is cancelled, so the worker stops at the
pipeline's next checkpoint (between detectors, passes, the tagger's window batches, every few
regex matches) instead of finishing work nobody will read. Threads, not processes: the
detectors and models are loaded once and shared, and a checkpoint stops the work without
killing a process that holds them. At most ``workers + max_queue`` jobs are admitted at once;
the next gets 503 with ``Retry-After``. With ``batch_max`` above 1, text requests that wait
for a worker are detected together (:mod:`polydeid.serve._batching`); otherwise, and for
documents, each job runs alone in a worker."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal

from polydeid.api import Deidentifier, field_span_json, span_json
from polydeid.core.budget import WorkBudget, limited
from polydeid.core.errors import (
    ConfigError,
    KeyMaterialError,
    PolydeidError,
    RecordError,
    UnknownLanguageError,
)
from polydeid.core.segments import Origin, Segment, Stretch
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.detect.base import Detector
from polydeid.detect.profiles import partial_categories
from polydeid.formats.registry import READERS, detect_format
from polydeid.locales import canonical_language, language_info, languages
from polydeid.serve._batching import Batcher, TextWork
from polydeid.serve._models import REQUEST_FORMATS
from polydeid.serve._problems import Problem, from_error, invalid
from polydeid.transform.policy import Policy, load_policy, shipped_policies

AUTO = "auto"
#: Seconds a client is asked to wait when the queue is full (``Retry-After``).
BUSY_RETRY_AFTER_S = 2

_API_KEY = re.compile(r"[\x21-\x7e]{8,256}")


@dataclass
class Settings:
    """How the service runs. ``detectors`` replaces the profile's detectors (tests inject
    fakes); ``policy`` is the default policy: a shipped name or a TOML file."""

    profile: str = "default"
    policy: str = "tag"
    key_file: str | None = None
    api_key: str | None = None
    max_bytes: int = 1_000_000
    timeout: float = 30.0
    workers: int = 2
    #: CPU seconds one request's detection may use (its worker thread's own CPU time).
    cpu_budget: float = 30.0
    #: Requests that may wait for a worker; beyond ``workers + max_queue`` answer 503.
    max_queue: int = 16
    #: Text requests that waited for a worker and are detected together, at most (1: each
    #: alone, the default: on a 2-core CPU batches were not faster, and their tails were
    #: longer; :mod:`polydeid.serve._batching`, ``benchmarks/results/serve_load.md``).
    batch_max: int = 1
    #: Requests per second per client (its API key, or its address without one); None: off.
    rate_limit: float | None = None
    #: Requests a client may send at once before ``rate_limit`` applies.
    rate_burst: int = 10
    #: Seconds a connection may take to send a request's headers (``polydeid serve``).
    header_timeout: float = 10.0
    #: Seconds a request may take to send its body.
    body_timeout: float = 30.0
    default_lang: str = "en"
    #: A SQLite path or postgresql:// URL: surrogates shared with batch runs and other
    #: service instances (with a key, originals are sealed for ``polydeid reidentify``).
    vault: str | None = None
    detectors: Sequence[Detector] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.max_bytes < 1:
            raise ConfigError("--max-bytes must be at least 1")
        if not self.timeout > 0:
            raise ConfigError("--timeout must be a positive number of seconds")
        if self.workers < 1:
            raise ConfigError("the worker count must be at least 1")
        if not self.cpu_budget > 0:
            raise ConfigError("--cpu-budget must be a positive number of seconds")
        if self.max_queue < 0:
            raise ConfigError("--max-queue must be 0 or more")
        if self.batch_max < 1:
            raise ConfigError("--batch-max must be at least 1")
        if self.rate_limit is not None and not self.rate_limit > 0:
            raise ConfigError("--rate-limit must be a positive number of requests per second")
        if self.rate_burst < 1:
            raise ConfigError("--rate-burst must be at least 1")
        if not (self.header_timeout > 0 and self.body_timeout > 0):
            raise ConfigError("--header-timeout and --body-timeout must be positive seconds")
        if self.api_key is not None and not _API_KEY.fullmatch(self.api_key):
            raise ConfigError("the API key must be 8 to 256 printable ASCII characters")

    def __repr__(self) -> str:  # never show the API key
        return (
            f"Settings(profile={self.profile!r}, policy={self.policy!r}, "
            f"auth={self.api_key is not None}, max_bytes={self.max_bytes}, "
            f"timeout={self.timeout}, cpu_budget={self.cpu_budget}, "
            f"max_queue={self.max_queue}, batch_max={self.batch_max}, "
            f"rate_limit={self.rate_limit})"
        )


@dataclass
class Job:
    """One parsed request (holds the text: never log it)."""

    action: Literal["detect", "redact"]
    kind: Literal["text", "document"]
    text: str | None = None
    document: bytes | str | dict[str, Any] | list[Any] | None = None
    fmt: str = "auto"
    lang: str | None = None
    policy: str | None = None
    countries: tuple[str, ...] = ()
    patient_id: str | None = None
    columns: dict[str, str] | None = None
    raw_media: str | None = None
    wants_json: bool = True

    def __repr__(self) -> str:
        return f"Job({self.action}, {self.kind}, format={self.fmt}, lang={self.lang})"


class Service:
    """The detectors (built once) and a cached :class:`Deidentifier` per policy."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        key = None
        if settings.key_file:
            from polydeid.transform.crypto import load_key

            key = load_key(settings.key_file)
        self.key = key
        self.vault = None
        if settings.vault:
            from polydeid.transform.vault import open_vault

            self.vault = open_vault(settings.vault)
        base = Deidentifier(
            profile=settings.profile,
            detectors=settings.detectors,
            policy=settings.policy,
            key=key,
            vault=self.vault,
        )
        self.base = base
        self.default_policy = base.policy.name
        self.detectors = base.pipeline.detectors
        self.policies: dict[str, Policy] = {name: load_policy(name) for name in shipped_policies()}
        self.policies[base.policy.name] = base.policy
        self._deids: dict[str, Deidentifier] = {base.policy.name: base}
        self._lock = threading.Lock()
        self.executor = ThreadPoolExecutor(
            max_workers=settings.workers, thread_name_prefix="polydeid-serve"
        )
        self.batcher = Batcher(
            self.executor, batch_max=settings.batch_max, cpu_budget=settings.cpu_budget
        )
        #: Jobs admitted and not finished (running, queued, or cancelled and not yet stopped).
        self.pending = 0
        self._pending_lock = threading.Lock()
        self.profile = "custom" if settings.detectors else settings.profile
        if settings.detectors is None:
            # Load lazily built models and locale data now, not in the first request.
            lang = settings.default_lang if settings.default_lang != AUTO else "en"
            base.detect("Warm-up note, seen on 1 March 2024.", lang=canonical_language(lang))
        labels = {label for d in self.detectors for label in d.labels}
        partial = partial_categories(self.detectors)
        self.categories = [
            {"name": c.value, "detected": c in labels, "partial": c in partial} for c in Category
        ]

    # policies -------------------------------------------------------------------------------

    def available(self, policy: Policy) -> bool:
        return self.key is not None or not policy.needs_key

    def policy_list(self) -> list[dict[str, Any]]:
        return [
            {
                "name": name,
                "description": policy.description,
                "needs_key": policy.needs_key,
                "available": self.available(policy),
                "default": name == self.default_policy,
            }
            for name, policy in sorted(self.policies.items())
        ]

    def deidentifier(self, name: str | None) -> Deidentifier:
        name = name or self.default_policy
        policy = self.policies.get(name)
        if policy is None:
            raise invalid("unknown policy; GET /policies lists them", code="PD101")
        if not self.available(policy):
            raise from_error(
                KeyMaterialError(
                    "this policy needs a secret key and the service has none "
                    "(start it with --key-file)"
                )
            )
        with self._lock:
            deid = self._deids.get(name)
            if deid is None:
                deid = Deidentifier(
                    detectors=self.detectors, policy=policy, key=self.key, vault=self.vault
                )
                self._deids[name] = deid
            return deid

    # languages ------------------------------------------------------------------------------

    def language_list(self) -> list[dict[str, Any]]:
        out = []
        for code in languages():
            info = language_info(code)
            out.append(
                {
                    "code": code,
                    "name": info.name,
                    "iso639_3": info.iso639_3,
                    "script": info.script,
                    "countries": list(info.countries),
                }
            )
        return out

    def language(self, requested: str | None, sample: str) -> str:
        """The request's language: its code, or the identified one for ``auto``."""
        value = requested if requested is not None else self.settings.default_lang
        if value.strip().lower() != AUTO:
            try:
                return canonical_language(value)
            except UnknownLanguageError:
                raise Problem(
                    422,
                    "PD104",
                    "unknown-language",
                    "Unknown language",
                    "unknown or unsupported language; GET /languages lists them",
                ) from None
        from polydeid.detect.langid import resolve_language

        try:
            return resolve_language(sample, AUTO, location="lang")
        except RecordError as exc:
            detail = exc.message.replace("pass --lang", 'name the language in "lang"')
            raise Problem(
                422, exc.code, "language-undetermined", "Language undetermined", detail
            ) from None

    # work (runs in a worker thread) ---------------------------------------------------------

    def execute(self, job: Job) -> dict[str, Any]:
        deid = self._job_deidentifier(job)
        if job.kind == "text":
            assert job.text is not None
            return self._text(job, deid, job.text)
        return self._document(job, deid)

    def _job_deidentifier(self, job: Job) -> Deidentifier:
        return self.deidentifier(job.policy) if job.action == "redact" else self.base

    def _text(self, job: Job, deid: Deidentifier, text: str) -> dict[str, Any]:
        segment = self._text_segment(job, text)
        return self._text_result(job, deid, segment, deid.detect_segment(segment))

    def _text_work(self, job: Job) -> TextWork:
        """A text request as the batcher reads it (:mod:`polydeid.serve._batching`)."""
        text = job.text
        assert text is not None

        def prepare() -> tuple[Deidentifier, Segment]:
            return self._job_deidentifier(job), self._text_segment(job, text)

        def finish(deid: Deidentifier, segment: Segment, spans: tuple[Span, ...]) -> dict[str, Any]:
            return self._text_result(job, deid, segment, spans)

        return TextWork(prepare, finish, len(text))

    def _text_segment(self, job: Job, text: str) -> Segment:
        lang = self.language(job.lang, text)
        requested = job.lang if job.lang is not None else self.settings.default_lang
        stretches: tuple[Stretch, ...] = ()
        if requested.strip().lower() == AUTO:
            from polydeid.detect.langid.stretches import language_stretches

            stretches = language_stretches(text, lang)  # a mixed text is read part by part
        return Segment(
            text,
            lang=lang,
            origin=Origin(file="<text>"),
            countries=job.countries,
            stretches=stretches,
        )

    def _text_result(
        self, job: Job, deid: Deidentifier, segment: Segment, spans: tuple[Span, ...]
    ) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": "text",
            "lang": segment.lang,
            "format": "text",
            "spans": [span_json(s, segment) for s in spans],
        }
        if job.action == "redact":
            result = deid.redact_segment(segment, spans=spans, patient_id=job.patient_id)
            out["policy"] = deid.policy.name
            out["text"] = result.text
            out["replacements"] = [r.to_dict() for r in result.replacements]
        return out

    def _document(self, job: Job, deid: Deidentifier) -> dict[str, Any]:
        from polydeid.engine import read_document, read_text_document
        from polydeid.formats.base import sample_text

        data, fmt, parsed = job.document, job.fmt, False
        options: dict[str, Any] = {}
        if job.columns and fmt in ("csv", "tsv", "auto"):
            options["columns"] = dict(job.columns)
        if isinstance(data, dict | list):
            if fmt not in ("auto", "json", "fhir", "chat"):
                raise invalid(f"a {fmt} document must be sent as a string")
            data, parsed = json.dumps(data, ensure_ascii=False).encode("utf-8"), True
        if fmt == "auto":
            head = data[:4096].encode("utf-8") if isinstance(data, str) else data
            assert isinstance(head, bytes)
            fmt = detect_format(None, head)
        if fmt == "jsonl":
            raise invalid("JSON Lines is not a document: send one record at a time")
        if fmt == "text":
            text = data if isinstance(data, str) else decode(data)
            return self._text(job, deid, text)
        if fmt not in READERS:
            raise invalid("unknown format; known: " + ", ".join(REQUEST_FORMATS))
        if fmt not in ("csv", "tsv"):
            options.pop("columns", None)
        if isinstance(data, str):
            doc = read_text_document(data, fmt, source="<document>", **options)
        else:
            assert isinstance(data, bytes)
            doc = read_document(data, fmt, source="<document>", **options)
        lang = self.language(job.lang, sample_text(doc))
        processor = deid.processor()
        out: dict[str, Any] = {"kind": "document", "lang": lang, "format": doc.format}
        if job.action == "detect":
            found = processor.detect(doc, lang=lang, countries=job.countries, source="<document>")
            out["spans"] = [field_span_json(fs, lang, job.countries) for fs in found]
            return out
        result = processor.redact(
            doc,
            lang=lang,
            countries=job.countries,
            source="<document>",
            patient_id=job.patient_id,
        )
        out["spans"] = [field_span_json(fs, lang, job.countries) for fs in result.spans]
        out["policy"] = deid.policy.name
        out["labels"] = list(result.labels)
        if parsed:
            out["document"] = json.loads(result.text)
        elif isinstance(job.document, bytes):
            out["document"] = result.text
            out["_bytes"] = result.text.encode(doc.encoding)
        else:
            out["document"] = result.text
        return out

    def _admit(self) -> bool:
        with self._pending_lock:
            if self.pending >= self.settings.workers + self.settings.max_queue:
                return False
            self.pending += 1
            return True

    def _release(self, _: object) -> None:
        with self._pending_lock:
            self.pending -= 1

    def _execute_within(self, job: Job, budget: WorkBudget) -> dict[str, Any]:
        with limited(budget):
            return self.execute(job)

    async def run(self, job: Job) -> dict[str, Any]:
        """:meth:`execute` in a worker thread, within the time limit and the CPU budget; 503
        when ``workers + max_queue`` jobs are already admitted. A job past the time limit is
        cancelled: its worker stops at the next checkpoint."""
        if not self._admit():
            raise Problem(
                503,
                "PD908",
                "busy",
                "Service busy",
                "every worker is busy and the queue is full; retry later",
                headers={"Retry-After": str(BUSY_RETRY_AFTER_S)},
            )
        budget = WorkBudget(cpu_seconds=self.settings.cpu_budget)
        future = (
            self.batcher.submit(self._text_work(job), budget)
            if job.kind == "text" and self.settings.batch_max > 1
            else self.executor.submit(self._execute_within, job, budget)
        )
        future.add_done_callback(self._release)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), self.settings.timeout)
        except TimeoutError:
            budget.cancel()
            future.cancel()
            raise Problem(
                503,
                "PD903",
                "timeout",
                "Processing time limit reached",
                f"the request took longer than {self.settings.timeout:g} s; "
                "send less text per request",
                headers={"Retry-After": "5"},
            ) from None
        except PolydeidError as exc:
            raise from_error(exc) from None

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
        self.batcher.cancel_waiting()


def decode(data: bytes) -> str:
    """A raw body's text (UTF-8; errors located, never quoted)."""
    from polydeid.formats.text import decode_utf8

    return decode_utf8(data, source="<document>")
