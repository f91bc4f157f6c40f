"""The Python API: ``Deidentifier(...).detect(text, lang=...)`` and ``.redact(...)``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from polydeid.core.segments import Origin, Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.detect.base import Detector
from polydeid.detect.pipeline import Pipeline
from polydeid.detect.registry import profile_detectors
from polydeid.transform.crypto import load_key
from polydeid.transform.policy import Policy, load_policy
from polydeid.transform.redactor import RedactionResult, Redactor
from polydeid.transform.vault import Vault

#: Text placed before a generated surrogate when checking that the rule layer accepts it, so
#: that context-gated formats (e.g. 8-digit Kenyan IDs) are judged as they would be in a note.
_VALIDATION_CONTEXT: dict[Category, str] = {
    Category.ID_NATIONAL: "National ID No: ",
    Category.ID_RECORD: "MRN: ",
    Category.ID_OTHER: "Account No: ",
    Category.CONTACT_PHONE: "Tel: ",
    Category.CONTACT_OTHER: "Contact: ",
    Category.DATE: "Date: ",
    Category.AGE: "Age: ",
}


class Deidentifier:
    """Detect and replace identifiers in clinical text.

    ``profile`` names a detector set (``"rules"``); ``detectors`` replaces it with explicit
    detectors. ``policy`` is a shipped policy name (``"tag"``, ``"surrogate"``, …), a path to a
    TOML policy file, or a :class:`Policy`. ``key`` (bytes) or ``key_file`` enables keyed
    operators (hash, encrypt, date shift) and cross-document consistent surrogates.
    """

    def __init__(
        self,
        *,
        profile: str = "default",
        detectors: Sequence[Detector] | None = None,
        policy: str | Path | Policy = "tag",
        key: bytes | None = None,
        key_file: str | Path | None = None,
        vault: Vault | None = None,
    ) -> None:
        self.pipeline = Pipeline(list(detectors) if detectors else profile_detectors(profile))
        self.policy = policy if isinstance(policy, Policy) else load_policy(policy)
        if key is None and key_file is not None:
            key = load_key(key_file)
        self.redactor = Redactor(
            self.policy, key=key, vault=vault, surrogate_validator=self._accepts_surrogate
        )

    def __repr__(self) -> str:
        return f"Deidentifier({self.pipeline!r}, policy={self.policy.name!r})"

    @staticmethod
    def segment(
        text: str, *, lang: str = "en", countries: Sequence[str] = (), origin: Origin | None = None
    ) -> Segment:
        return Segment(text, lang=lang, origin=origin or Origin(), countries=tuple(countries))

    def detect(self, text: str, *, lang: str = "en", countries: Sequence[str] = ()) -> list[Span]:
        """Resolved identifier spans in ``text``, sorted by start."""
        return list(self.pipeline.detect(self.segment(text, lang=lang, countries=countries)))

    def detect_segment(self, segment: Segment) -> tuple[Span, ...]:
        return self.pipeline.detect(segment)

    def redact(
        self,
        text: str,
        *,
        lang: str = "en",
        countries: Sequence[str] = (),
        document_id: str | None = None,
        patient_id: str | None = None,
    ) -> str:
        """``text`` with every detected identifier replaced according to the policy."""
        segment = self.segment(text, lang=lang, countries=countries)
        return self.redact_segment(segment, document_id=document_id, patient_id=patient_id).text

    def redact_segment(
        self,
        segment: Segment,
        *,
        document_id: str | None = None,
        patient_id: str | None = None,
        spans: Sequence[Span] | None = None,
    ) -> RedactionResult:
        found = self.pipeline.detect(segment) if spans is None else spans
        return self.redactor.redact(segment, found, document_id=document_id, patient_id=patient_id)

    def _accepts_surrogate(self, candidate: str, category: Category, segment: Segment) -> bool:
        """Whether the rule layer recognises ``candidate`` as a whole ``category`` value."""
        prefix = _VALIDATION_CONTEXT.get(category, "")
        probe = Segment(prefix + candidate, lang=segment.lang, countries=segment.countries)
        start, end = len(prefix), len(prefix) + len(candidate)
        return any(
            s.start == start and s.end == end and s.label == category
            for s in self.pipeline.detect(probe)
        )
