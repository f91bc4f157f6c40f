"""The redactor: applies a policy's operators to a segment's resolved identifier spans.

Keys: with ``key`` (a master key, at least 32 bytes) every keyed operator works and
surrogates are reproducible across runs (and shared across documents through a persistent
vault). Without it an ephemeral random key is made per :class:`Redactor`: numbering and
surrogates are consistent within this instance only, and a policy that uses ``hash``,
``encrypt`` or ``dateshift`` is refused at construction (KeyMaterialError).

Numbering (``numbered_tag``) is per document: calls with the same ``document_id`` share it;
a call without one is a document of its own. The most recent ``max_documents`` documents are
remembered (call :meth:`Redactor.end_document` to release one early).
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from polydeid.core.collector import collector_paused
from polydeid.core.errors import TransformError
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.transform.crypto import KeyRing
from polydeid.transform.operators import (
    UNIQUE_SURROGATES,
    DocumentState,
    Operator,
    OperatorContext,
    identifier_category,
)
from polydeid.transform.policy import Policy
from polydeid.transform.surrogates import SurrogateGenerator, SurrogateValidator
from polydeid.transform.vault import KeyBoundVault, MemoryVault, Vault, identity_key

#: Spans of a segment beyond which its rewriting pauses the cyclic collector
#: (:mod:`polydeid.core.collector`).
_MANY_SPANS = 10_000


@dataclass(frozen=True, slots=True)
class Replacement:
    """One replaced span: offsets in the input and in the output, category, operator name."""

    start: int
    end: int
    new_start: int
    new_end: int
    label: Category
    operator: str

    @property
    def category(self) -> Category:
        return self.label

    def __repr__(self) -> str:
        return (
            f"Replacement({self.start}:{self.end} -> {self.new_start}:{self.new_end} "
            f"{self.label.name} via {self.operator})"
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "start": self.start,
            "end": self.end,
            "new_start": self.new_start,
            "new_end": self.new_end,
            "label": self.label.value,
            "operator": self.operator,
        }


@dataclass(frozen=True, slots=True)
class RedactionResult:
    """The redacted text and what was replaced where."""

    text: str
    replacements: tuple[Replacement, ...]

    def __repr__(self) -> str:
        return f"RedactionResult(len={len(self.text)}, replacements={len(self.replacements)})"


class Redactor:
    """Replace identifier spans according to a policy (see the module docstring)."""

    def __init__(
        self,
        policy: Policy,
        *,
        key: bytes | None = None,
        vault: Vault | None = None,
        surrogate_validator: SurrogateValidator | None = None,
        max_documents: int = 10_000,
    ) -> None:
        self.policy = policy
        self.keys = KeyRing.from_master(key)
        for spec in policy.specs():
            if spec.needs_key:
                self.keys.require_user_key(spec.name)
        self.vault: Vault = vault if vault is not None else MemoryVault()
        if isinstance(self.vault, KeyBoundVault):
            self.vault.bind_key(self.keys)  # VaultKeyError: not the key the vault was written with
        self.surrogates = SurrogateGenerator(validate=surrogate_validator)
        self._operators: dict[Category, Operator] = {
            category: policy.operator_for(category).build() for category in Category
        }
        self._unique_surrogate = frozenset(
            c
            for c, op in self._operators.items()
            if op.name == "surrogate" and c in UNIQUE_SURROGATES
        )
        self._documents: OrderedDict[str, DocumentState] = OrderedDict()
        self._max_documents = max_documents
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Redactor(policy={self.policy.name!r}, keys={self.keys!r})"

    def redact(
        self,
        segment: Segment,
        spans: Sequence[Span],
        *,
        document_id: str | None = None,
        patient_id: str | None = None,
    ) -> RedactionResult:
        """``segment.text`` with each identifier span replaced (fact spans are ignored)."""
        ordered = _identifier_spans(spans, len(segment.text))
        text = segment.text
        ctx = OperatorContext(
            reserved=self._reserved(ordered, text),
            segment=segment,
            keys=self.keys,
            vault=self.vault,
            state=self._state(document_id),
            surrogates=self.surrogates,
            patient_id=patient_id,
            document_id=document_id,
        )
        parts: list[str] = []
        replacements: list[Replacement] = []
        pos = out_len = 0
        # The replacements live until the result is returned.
        with collector_paused(len(ordered) > _MANY_SPANS):
            for span in ordered:
                category = identifier_category(span)
                operator = self._operators[category]
                new = operator.apply(span, text[span.start : span.end], ctx)
                before = text[pos : span.start]
                parts.append(before)
                parts.append(new)
                new_start = out_len + len(before)
                out_len = new_start + len(new)
                replacements.append(
                    Replacement(span.start, span.end, new_start, out_len, category, operator.name)
                )
                pos = span.end
        parts.append(text[pos:])
        return RedactionResult("".join(parts), tuple(replacements))

    def _reserved(self, spans: Sequence[Span], text: str) -> frozenset[bytes]:
        """Identity keys of the originals that surrogates must not reproduce."""
        return frozenset(
            identity_key(self.keys.vault, identifier_category(span), text[span.start : span.end])
            for span in spans
            if span.label in self._unique_surrogate
        )

    def end_document(self, document_id: str) -> None:
        """Forget the numbering state of ``document_id``."""
        with self._lock:
            self._documents.pop(document_id, None)

    def _state(self, document_id: str | None) -> DocumentState:
        if document_id is None:
            return DocumentState()
        with self._lock:
            state = self._documents.get(document_id)
            if state is None:
                state = self._documents[document_id] = DocumentState()
                while len(self._documents) > self._max_documents:
                    self._documents.popitem(last=False)
            else:
                self._documents.move_to_end(document_id)
            return state


def _identifier_spans(spans: Sequence[Span], length: int) -> list[Span]:
    """Identifier spans sorted by start; raises on overlap or spans past the text."""
    ordered = sorted((s for s in spans if not s.is_fact), key=lambda s: (s.start, s.end))
    for prev, span in itertools.pairwise(ordered):
        if span.start < prev.end:
            raise TransformError(
                f"overlapping spans {prev.start}:{prev.end} {prev.label.name} and "
                f"{span.start}:{span.end} {span.label.name}; resolve them first"
            )
    if ordered and ordered[-1].end > length:
        last = ordered[-1]
        raise TransformError(f"span {last.start}:{last.end} ends past the text ({length} chars)")
    return ordered
