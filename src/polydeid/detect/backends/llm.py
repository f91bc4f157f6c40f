"""LLM extractors as detectors: a generative model reads the text and lists its identifiers.

:class:`LlmExtractor` asks a model for a JSON list of ``{"label": …, "value": …}`` objects —
by default the seven PII families of scheme ``pii_families7`` (``human_name``, ``date``,
``id_number``, ``phone_number``, ``email_address``, ``address``, ``company_name``), or any
label set with a mapping onto canonical categories — and turns every value into spans at
**all** of its occurrences in the text (:func:`polydeid.detect.backends._llm_parse.locate`).

Two transports:

* :class:`EndpointTransport`: an OpenAI-compatible ``/chat/completions`` endpoint (llama.cpp
  server, vLLM, Ollama) through :class:`~polydeid.detect.backends.chat_client.ChatEndpoint`:
  ``temperature=0``, a timeout, bounded retries with backoff on timeouts, connection errors and
  5xx answers (4xx answers are not retried), the API key from ``POLYDEID_LLM_API_KEY``;
* :class:`LocalTransport`: a ``transformers`` causal LM in a local directory (the tokenizer's
  chat template when it has one, else a plain prompt; greedy decoding; ``max_new_tokens``).

What the extractor guarantees:

* **No invented spans.** A value that does not occur in the text the model was given is a
  copied-value error: counted in :attr:`LlmExtractor.report` (``copied_value_errors``), never
  a span. Labels outside the label set are counted (``unknown_labels``), not guessed at.
* **Long documents** are cut into chunks of at most ``chunk_chars`` characters, ending at a
  line or sentence break where there is one, overlapping by ``chunk_overlap`` characters so
  that an identifier cut by one chunk's end is whole in the next; spans are merged with their
  offsets into the whole text. A reply cut off by the token limit has its complete objects
  salvaged, and its chunk is asked again in halves (``split_truncated``), so that the
  identifiers after the cut are not lost.
* **Fail closed.** An endpoint that still fails after its retries, a local model that cannot
  generate, or a reply that is not JSON even after one re-ask raises
  :class:`~polydeid.core.errors.DetectionError`; the text is never passed on as "nothing found".
  ``on_error="raise"`` is the only policy.
* **No identifier text** in errors, logs or the report: they name the detector, the chunk and
  the segment's origin, and count.

The source id of every span is ``backend.llm.<model>@<revision>``: for a local model the given
revision, the snapshot commit of a Hugging Face cache folder, or a digest of its configuration
and weight-file sizes; for an endpoint its host.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from string import Template
from typing import Any, Protocol

from polydeid.core.errors import (
    ConfigError,
    DetectionError,
    DetectorUnavailableError,
    PolydeidError,
    ReplyFormatError,
    UnknownLanguageError,
)
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Scheme, scheme, scheme_names
from polydeid.detect.backends._llm_parse import (
    Extraction,
    ParsedReply,
    label_key,
    locate,
    parse_reply,
)
from polydeid.detect.backends.chat_client import ChatEndpoint, RetryPolicy

log = logging.getLogger(__name__)

DEFAULT_SCHEME = "pii_families7"
SOURCE_PREFIX = "backend.llm."

SYSTEM_PROMPT = (
    "You find personal identifiers in clinical documents for de-identification. "
    "You answer with JSON only."
)

#: The user message; ``$labels``, ``$language`` and ``$document`` are filled in.
USER_PROMPT = Template(
    """Find every personal identifier in the document between the markers.

Labels:
$labels

Answer with a JSON array and nothing else, one object per identifier:
{"label": "<one of the labels>", "value": "<the identifier>"}
Copy each value exactly as it is written in the document, character for character: do not \
correct, translate, complete or reformat it. List each distinct value once. If there is no \
identifier, answer [].
$language
<<<DOCUMENT
$document
DOCUMENT>>>"""
)

REASK_PROMPT = (
    'Your answer was not a JSON array of {"label": ..., "value": ...} objects. Answer again '
    "with only that JSON array, or [] if there is no identifier."
)

_SENTENCE_END = re.compile(r"[.!?。！？؟।።][\"'”’)\]]*\s+")
_SOURCE_UNSAFE = re.compile(r"[^A-Za-z0-9._:+-]+")
_MAX_SPLIT_DEPTH = 2
_MIN_SPLIT_CHARS = 200


# --- label sets --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LabelSet:
    """The labels the model is asked for and the canonical category of each.

    ``descriptions`` (optional) are shown next to the labels in the prompt.
    """

    name: str
    categories: Mapping[str, Category]
    descriptions: Mapping[str, str] = field(default_factory=dict)
    #: Labels the mapping marks as not identifiers (``"O"``): not asked for, and not counted
    #: as unknown when a model writes them anyway.
    outside: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if not self.categories:
            raise ConfigError(f"label set {self.name!r} has no label that maps to a category")

    @classmethod
    def of(
        cls,
        labels: str | Scheme | Mapping[str, Category | str | None] | LabelSet,
        descriptions: Mapping[str, str] | None = None,
    ) -> LabelSet:
        """A label set from a scheme name, a :class:`Scheme`, or ``{label: category}``.

        Labels that map to nothing (``None`` or ``"O"``: not identifiers) are not asked for.
        """
        if isinstance(labels, LabelSet):
            return labels
        if isinstance(labels, str):
            labels = scheme(labels)
        if isinstance(labels, Scheme):
            name, raw = labels.name, dict(labels.mapping)
        else:
            name, raw = "custom", dict(labels)
        categories: dict[str, Category] = {}
        outside: set[str] = set()
        for label, target in raw.items():
            if target is None or (isinstance(target, str) and target.strip().upper() == "O"):
                outside.add(label_key(str(label)))
                continue
            category = target if isinstance(target, Category) else Category.parse(str(target))
            categories[str(label)] = category
        return cls(name, categories, dict(descriptions or {}), frozenset(outside))

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(self.categories)

    def category(self, label: str) -> Category | None:
        """The category of a label the model wrote (case, spaces and hyphens ignored)."""
        return self._keyed().get(label_key(label))

    def _keyed(self) -> dict[str, Category]:
        return {label_key(k): v for k, v in self.categories.items()}

    def prompt_lines(self) -> str:
        lines = []
        for label in self.categories:
            described = self.descriptions.get(label)
            lines.append(f"- {label}: {described}" if described else f"- {label}")
        return "\n".join(lines)


@cache
def _reportable_labels() -> frozenset[str]:
    """Label names the report may show: canonical categories and every shipped scheme's
    labels. Anything else a model writes as a label is counted as ``other`` (a confused model
    can put document text where the label belongs)."""
    names = {label_key(c.value) for c in Category}
    for name in scheme_names():
        names.update(label_key(label) for label in scheme(name).mapping)
    return frozenset(names)


# --- report ---------------------------------------------------------------------------------


@dataclass(slots=True)
class ExtractionReport:
    """Counts over every text an :class:`LlmExtractor` has read (no identifier text)."""

    documents: int = 0
    chunks: int = 0
    requests: int = 0
    reasks: int = 0
    truncated_replies: int = 0
    split_chunks: int = 0
    extractions: int = 0
    malformed_items: int = 0
    copied_value_errors: int = 0
    unknown_labels: Counter[str] = field(default_factory=Counter)
    outside_labels: int = 0
    spans: int = 0

    @property
    def unknown_label_count(self) -> int:
        return sum(self.unknown_labels.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "documents": self.documents,
            "chunks": self.chunks,
            "requests": self.requests,
            "reasks": self.reasks,
            "truncated_replies": self.truncated_replies,
            "split_chunks": self.split_chunks,
            "extractions": self.extractions,
            "malformed_items": self.malformed_items,
            "copied_value_errors": self.copied_value_errors,
            "unknown_labels": dict(sorted(self.unknown_labels.items())),
            "outside_labels": self.outside_labels,
            "spans": self.spans,
        }


# --- transports -----------------------------------------------------------------------------


class Transport(Protocol):
    """Sends chat messages to a model and returns its reply."""

    model_name: str
    revision: str

    def complete(self, messages: Sequence[dict[str, str]]) -> str: ...


class EndpointTransport:
    """An OpenAI-compatible endpoint (see :meth:`connect`)."""

    def __init__(self, endpoint: ChatEndpoint) -> None:
        self.endpoint = endpoint
        self.model_name = endpoint.model
        self.revision = endpoint.host

    @classmethod
    def connect(
        cls,
        base_url: str,
        model: str,
        *,
        timeout: float = 120.0,
        retries: int = 2,
        backoff: float = 1.0,
        max_tokens: int | None = 2048,
    ) -> EndpointTransport:
        """The endpoint at ``base_url`` (``http://localhost:8080/v1``, or the full
        ``…/chat/completions`` URL), asked with ``temperature=0``; up to ``retries`` more
        requests after a timeout, connection error or 5xx answer."""
        if retries < 0:
            raise ConfigError("retries must not be negative")
        return cls(
            ChatEndpoint.from_base_url(
                base_url,
                model,
                timeout=timeout,
                temperature=0.0,
                retry=RetryPolicy(attempts=retries + 1, backoff=backoff),
                max_tokens=max_tokens,
            )
        )

    def __repr__(self) -> str:
        return f"EndpointTransport({self.model_name!r} at {self.revision})"

    def complete(self, messages: Sequence[dict[str, str]]) -> str:
        return self.endpoint.complete(messages)


class LocalTransport:
    """A ``transformers`` causal LM loaded from ``folder`` (no network; no remote code).

    The prompt is the tokenizer's chat template when it has one, else plain ``Role: text``
    blocks; decoding is greedy; at most ``max_new_tokens`` are generated. Loading failures
    raise :class:`DetectorUnavailableError`.
    """

    def __init__(
        self,
        folder: str | Path,
        *,
        max_new_tokens: int = 1024,
        revision: str | None = None,
        name: str | None = None,
        device: str | None = None,
        dtype: str | None = None,
    ) -> None:
        self.folder = Path(folder)
        if max_new_tokens < 1:
            raise ConfigError("max_new_tokens must be at least 1")
        self.max_new_tokens = max_new_tokens
        self.model_name = name or self.folder.resolve().name
        if not (self.folder / "config.json").is_file():
            raise DetectorUnavailableError(f"no model configuration (config.json) in {folder}")
        self.revision = revision or _folder_revision(self.folder)
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as exc:  # pragma: no cover - exercised where torch is absent
            raise DetectorUnavailableError(
                f"a local LLM needs torch and transformers ({exc.name})"
            ) from None
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(
                self.folder, local_files_only=True, trust_remote_code=False
            )
            options: dict[str, Any] = {"local_files_only": True, "trust_remote_code": False}
            if dtype is not None:
                options["dtype"] = getattr(torch, dtype)
            self.model = AutoModelForCausalLM.from_pretrained(self.folder, **options)
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RuntimeError) as exc:
            raise DetectorUnavailableError(
                f"local LLM in {folder} could not be loaded ({type(exc).__name__})"
            ) from None
        self.device = device or "cpu"
        self.model.to(self.device)
        self.model.eval()

    def __repr__(self) -> str:
        return f"LocalTransport({self.model_name!r}@{self.revision})"

    @property
    def context_length(self) -> int | None:
        config = self.model.config
        for key in ("max_position_embeddings", "n_positions", "max_sequence_length"):
            value = getattr(config, key, None)
            if isinstance(value, int) and value > 0:
                return value
        return None

    def render(self, messages: Sequence[dict[str, str]]) -> tuple[str, bool]:
        """The prompt text, and whether it came from the chat template (which writes its own
        special tokens, so none are added when tokenizing)."""
        if getattr(self.tokenizer, "chat_template", None):
            try:
                text = self.tokenizer.apply_chat_template(
                    list(messages), add_generation_prompt=True, tokenize=False
                )
            except Exception:  # jinja2's TemplateError: e.g. a template without a system role
                text = self.tokenizer.apply_chat_template(
                    _without_system(messages), add_generation_prompt=True, tokenize=False
                )
            return str(text), True
        blocks = [f"{m['role'].capitalize()}: {m['content']}" for m in messages]
        return "\n\n".join([*blocks, "Assistant:"]), False

    def complete(self, messages: Sequence[dict[str, str]]) -> str:
        import torch

        try:
            prompt, templated = self.render(messages)
        except Exception as exc:  # the model's own template failed on these messages
            raise DetectionError(
                f"local LLM {self.model_name}: its chat template failed ({type(exc).__name__})"
            ) from None
        inputs = self.tokenizer(prompt, return_tensors="pt", add_special_tokens=not templated)
        length = int(inputs["input_ids"].shape[1])
        budget = self.max_new_tokens
        limit = self.context_length
        if limit is not None:
            if length >= limit:
                raise DetectionError(
                    f"local LLM {self.model_name}: the prompt ({length} tokens) does not fit "
                    f"its context of {limit} tokens; use a smaller chunk_chars"
                )
            budget = min(budget, limit - length)
        pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self.tokenizer.eos_token_id
        try:
            with torch.inference_mode():
                output = self.model.generate(
                    **{k: v.to(self.device) for k, v in inputs.items()},
                    do_sample=False,
                    num_beams=1,
                    max_new_tokens=budget,
                    pad_token_id=pad,
                )
        except (RuntimeError, ValueError, TypeError, IndexError) as exc:
            raise DetectionError(
                f"local LLM {self.model_name} failed to generate ({type(exc).__name__})"
            ) from None
        new_tokens = output[0, length:].tolist()
        return str(
            self.tokenizer.decode(
                new_tokens, skip_special_tokens=True, clean_up_tokenization_spaces=False
            )
        )


def _without_system(messages: Sequence[dict[str, str]]) -> list[dict[str, str]]:
    """The messages with the system prompt moved into the first user message."""
    system = [m["content"] for m in messages if m["role"] == "system"]
    rest = [dict(m) for m in messages if m["role"] != "system"]
    if system and rest and rest[0]["role"] == "user":
        rest[0]["content"] = "\n\n".join([*system, rest[0]["content"]])
    return rest


def _folder_revision(folder: Path) -> str:
    """The snapshot commit of a Hugging Face cache folder, else a digest of the model's
    configuration and of the names and sizes of its weight files (reading gigabytes of
    weights to hash them would make loading slow; pass ``revision`` to pin one)."""
    resolved = folder.resolve()
    if resolved.parent.name == "snapshots" and re.fullmatch(r"[0-9a-f]{40}", resolved.name):
        return resolved.name[:12]
    digest = hashlib.sha256()
    for name in ("config.json", "generation_config.json"):
        path = folder / name
        if path.is_file():
            digest.update(name.encode() + b"\0" + path.read_bytes())
    for path in sorted(folder.iterdir()):
        if path.suffix in {".safetensors", ".bin", ".gguf", ".pt"} and path.is_file():
            digest.update(f"{path.name}\0{path.stat().st_size}\0".encode())
    return digest.hexdigest()[:12]


# --- chunking -------------------------------------------------------------------------------


def chunk_ranges(text: str, max_chars: int, overlap: int) -> list[tuple[int, int]]:
    """``(start, end)`` chunks covering ``text``: each at most ``max_chars`` long, ending at the
    last line break, else sentence end, else space in its second half (a hard cut where there
    is none), and the next starting up to ``overlap`` characters earlier, at a line or
    sentence start, else a word start, inside that overlap."""
    if max_chars < 1 or overlap < 0 or overlap * 2 > max_chars:
        raise ConfigError("chunks need max_chars >= 1 and an overlap of at most max_chars / 2")
    length = len(text)
    ranges: list[tuple[int, int]] = []
    start = 0
    while start < length:
        end = start + max_chars
        if end >= length:
            ranges.append((start, length))
            break
        end = _break_before(text, start + max_chars // 2, end)
        ranges.append((start, end))
        start = _start_in(text, max(start + 1, end - overlap), end)
    return ranges or [(0, 0)]


def _break_before(text: str, low: int, high: int) -> int:
    newline = text.rfind("\n", low, high)
    if newline >= 0:
        return newline + 1
    ends = [m.end() for m in _SENTENCE_END.finditer(text, low, high)]
    if ends:
        return ends[-1]
    for index in range(high - 1, low - 1, -1):
        if text[index].isspace():
            return index + 1
    return high


def _start_in(text: str, low: int, high: int) -> int:
    newline = text.find("\n", low, high)
    if newline >= 0 and newline + 1 < high:
        return newline + 1
    sentence = _SENTENCE_END.search(text, low, high)
    if sentence is not None and sentence.end() < high:
        return sentence.end()
    for index in range(low, high):
        if text[index - 1].isspace() and not text[index].isspace():
            return index
    return low


# --- the detector ---------------------------------------------------------------------------


def _source_part(text: str) -> str:
    return _SOURCE_UNSAFE.sub("-", text).strip("-") or "unnamed"


class LlmExtractor:
    """A generative model as a :class:`~polydeid.detect.base.Detector` (see the module
    docstring). Use :meth:`from_endpoint` or :meth:`from_pretrained`, or pass a transport."""

    def __init__(
        self,
        transport: Transport,
        *,
        labels: str | Scheme | Mapping[str, Category | str | None] | LabelSet = DEFAULT_SCHEME,
        descriptions: Mapping[str, str] | None = None,
        languages: Iterable[str] = (),
        chunk_chars: int = 4000,
        chunk_overlap: int = 200,
        split_truncated: bool = True,
        score: float = 1.0,
        prompt: str | Template | None = None,
        system_prompt: str = SYSTEM_PROMPT,
        on_error: str = "raise",
    ) -> None:
        if on_error != "raise":
            raise ConfigError(
                f"on_error={on_error[:20]!r} is not supported: an LLM extractor that fails "
                "raises (the only policy; nothing is passed on unredacted)"
            )
        chunk_ranges("", chunk_chars, chunk_overlap)  # validates the two sizes
        if not 0.0 <= score <= 1.0:
            raise ConfigError("score must be within [0, 1]")
        self.transport = transport
        self.label_set = LabelSet.of(labels, descriptions)
        self.languages: frozenset[str] = frozenset(languages)
        self.labels: frozenset[Category] = frozenset(self.label_set.categories.values())
        self.chunk_chars = chunk_chars
        self.chunk_overlap = chunk_overlap
        self.split_truncated = split_truncated
        self.score = score
        self.prompt = Template(prompt) if isinstance(prompt, str) else prompt or USER_PROMPT
        self.system_prompt = system_prompt
        self.id = (
            f"{SOURCE_PREFIX}{_source_part(transport.model_name)}"
            f"@{_source_part(transport.revision)}"
        )
        self.report = ExtractionReport()

    def __repr__(self) -> str:
        return f"LlmExtractor({self.id}, labels={self.label_set.name})"

    @classmethod
    def from_endpoint(
        cls,
        base_url: str,
        model: str,
        *,
        timeout: float = 120.0,
        retries: int = 2,
        backoff: float = 1.0,
        max_tokens: int | None = 2048,
        **options: Any,
    ) -> LlmExtractor:
        """An extractor on an OpenAI-compatible endpoint (key from ``POLYDEID_LLM_API_KEY``)."""
        transport = EndpointTransport.connect(
            base_url,
            model,
            timeout=timeout,
            retries=retries,
            backoff=backoff,
            max_tokens=max_tokens,
        )
        return cls(transport, **options)

    @classmethod
    def from_pretrained(
        cls,
        folder: str | Path,
        *,
        max_new_tokens: int = 1024,
        revision: str | None = None,
        name: str | None = None,
        device: str | None = None,
        dtype: str | None = None,
        **options: Any,
    ) -> LlmExtractor:
        """An extractor on a local ``transformers`` causal LM in ``folder``."""
        transport = LocalTransport(
            folder,
            max_new_tokens=max_new_tokens,
            revision=revision,
            name=name,
            device=device,
            dtype=dtype,
        )
        return cls(transport, **options)

    # --- Detector ----------------------------------------------------------------------

    def detect(self, segment: Segment) -> list[Span]:
        if self.languages and segment.lang not in self.languages:
            raise UnknownLanguageError(segment.lang, known=sorted(self.languages))
        text = segment.text
        self.report.documents += 1
        if not text.strip():
            return []
        ranges = chunk_ranges(text, self.chunk_chars, self.chunk_overlap)
        found: dict[tuple[int, int, Category], Span] = {}
        located: dict[str, list[tuple[int, int]]] = {}
        for number, (start, end) in enumerate(ranges, 1):
            where = f"chunk {number} of {len(ranges)}"
            for span in self._chunk(segment, start, end, where, located, depth=0):
                found.setdefault((span.start, span.end, span.label), span)
        spans = _drop_nested(list(found.values()))
        self.report.spans += len(spans)
        return spans

    def _chunk(
        self,
        segment: Segment,
        start: int,
        end: int,
        where: str,
        located: dict[str, list[tuple[int, int]]],
        *,
        depth: int,
    ) -> list[Span]:
        text = segment.text
        self.report.chunks += 1
        parsed = self._ask(segment, text[start:end], where)
        spans = self._spans(text, parsed.items, start, end, located)
        if parsed.truncated and self.split_truncated and depth < _MAX_SPLIT_DEPTH:
            size = end - start
            if size >= _MIN_SPLIT_CHARS:
                half = size // 2 + 1
                overlap = min(self.chunk_overlap, half // 4)
                parts = chunk_ranges(text[start:end], half + overlap, overlap)
                if len(parts) > 1:
                    self.report.split_chunks += 1
                    for index, (a, b) in enumerate(parts, 1):
                        spans += self._chunk(
                            segment,
                            start + a,
                            start + b,
                            f"{where}, part {index} of {len(parts)}",
                            located,
                            depth=depth + 1,
                        )
        return spans

    def _ask(self, segment: Segment, chunk: str, where: str) -> ParsedReply:
        messages = self.messages(chunk, segment.lang)
        reply = self._complete(messages, segment, where)
        try:
            parsed = parse_reply(reply, self.label_set.labels)
        except ReplyFormatError:
            self.report.reasks += 1
            log.info("%s: reply for %s was not JSON; asking again", self.id, where)
            again = [
                *messages,
                {"role": "assistant", "content": reply},
                {"role": "user", "content": REASK_PROMPT},
            ]
            reply = self._complete(again, segment, where)
            try:
                parsed = parse_reply(reply, self.label_set.labels)
            except ReplyFormatError:
                raise DetectionError(
                    f"LLM extractor {self.id}: the reply for {where} was not a JSON list of "
                    "{label, value} objects, also after one re-ask",
                    location=_location(segment),
                ) from None
        if parsed.truncated:
            self.report.truncated_replies += 1
            log.warning("%s: reply for %s was cut off; complete objects kept", self.id, where)
        self.report.malformed_items += parsed.malformed
        return parsed

    def _complete(self, messages: list[dict[str, str]], segment: Segment, where: str) -> str:
        self.report.requests += 1
        try:
            return self.transport.complete(messages)
        except DetectionError as exc:  # the endpoint's or the local model's, named here
            exc.message = f"LLM extractor {self.id}, {where}: {exc.message}"
            exc.args = (str(exc),)
            location = _location(segment)
            raise (exc.at(location) if location else exc) from None

    def messages(self, chunk: str, lang: str) -> list[dict[str, str]]:
        """The chat messages that ask for the identifiers in ``chunk``."""
        user = self.prompt.safe_substitute(
            labels=self.label_set.prompt_lines(),
            language=_language_line(lang),
            document=chunk,
        )
        return [
            {"role": "system", "content": self.system_prompt},
            {"role": "user", "content": user},
        ]

    def _spans(
        self,
        text: str,
        items: Sequence[Extraction],
        start: int,
        end: int,
        located: dict[str, list[tuple[int, int]]],
    ) -> list[Span]:
        spans: list[Span] = []
        for item in items:
            self.report.extractions += 1
            category = self.label_set.category(item.label)
            if category is None:
                key = label_key(item.label)
                if key in self.label_set.outside:
                    self.report.outside_labels += 1
                    continue
                self.report.unknown_labels[key if key in _reportable_labels() else "other"] += 1
                continue
            value = item.value.strip()
            if value not in located:
                located[value] = locate(text, value)
            inside = [(a, b) for a, b in located[value] if a < end and start < b]
            if not inside:
                # Not in the text the model read: a copying error (or an invention).
                self.report.copied_value_errors += 1
                continue
            spans.extend(Span(a, b, category, self.id, self.score) for a, b in located[value])
        return spans


def _drop_nested(spans: list[Span]) -> list[Span]:
    """Sorted spans without those lying inside another span of the same label."""
    spans.sort(key=lambda s: (s.start, -s.end, s.label.value))
    kept: list[Span] = []
    for span in spans:
        if any(k.label == span.label and k.contains(span) for k in kept):
            continue
        kept.append(span)
    return kept


def _location(segment: Segment) -> str | None:
    origin = segment.origin
    if origin.file is None and origin.line is None and origin.path is None:
        return None
    return str(origin)


def _language_line(lang: str) -> str:
    from polydeid.locales import language_info

    try:
        name = language_info(lang).name
    except (PolydeidError, OSError, KeyError):
        return ""
    return f"The document is written in {name}.\n"
