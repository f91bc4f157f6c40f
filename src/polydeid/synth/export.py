"""Corpus exports: span JSONL, CoNLL BIO, a Hugging Face token-classification set, SFT chat.

Every export takes annotated documents (any iterable; streamed where the format allows) and an
output path, writes to a temporary sibling and renames it into place, so a reader never sees a
half-written file. Each returns an :class:`ExportReport` of counts; logs carry counts and paths
only, never text.

Token-level exports (BIO, Hugging Face) use the word grid of :mod:`polydeid.text.wordgrid`.
Labels are canonical category names, or an external scheme's names through the scheme's inverse
mapping (:func:`label_names`); a span whose category the scheme has no label for is left out and
counted as ``unmapped``. Clinical-fact spans are written by the JSONL export only.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

import regex

from polydeid.core import taxonomy
from polydeid.core.errors import ConfigError, RecordError
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.corpora.document import AnnotatedDocument
from polydeid.text.wordgrid import OUTSIDE, bio_tags, count_unaligned, words

logger = logging.getLogger(__name__)

DOCSTART = "-DOCSTART-"
FAMILIES7 = "pii_families7"

#: Categories the seven PII families cover beyond the scheme's own one-to-one mapping: the
#: families do not tell the patient from other people, nor one kind of ID number from another
#: (pii_families7.toml maps human_name to PERSON and id_number to the catch-all ID_OTHER).
#: Clan names, villages and facilities have no family and are left out.
FAMILY_WIDENING: Mapping[Category, str] = {
    Category.PERSON_THIRD_PARTY: "human_name",
    Category.ID_NATIONAL: "id_number",
    Category.ID_RECORD: "id_number",
}

#: CONTACT_OTHER also covers URLs, IP addresses and handles: only e-mail-shaped values are
#: given the email_address family; the rest are left out.
_EMAIL = regex.compile(r"[^@\s]+@[^@\s]+\.[^@\s.]+")
_SENTENCE_END = regex.compile(r"\p{Sentence_Terminal}")

DEFAULT_SYSTEM = (
    "You are a de-identification assistant for clinical records. You list every personal "
    "identifier that occurs in a record, exactly as written, and nothing else."
)
DEFAULT_INSTRUCTION = (
    "List the personal identifiers in the clinical record below as a JSON array of objects "
    '{"label": ..., "value": ...} in the order they occur, each value copied exactly from '
    "the record and listed once per label. Labels: {labels}. Answer [] if there are none."
)


@dataclass(frozen=True, slots=True)
class ExportReport:
    """What an export wrote: counts only."""

    path: Path
    documents: int
    spans: int  # identifier spans written with a label (SFT: before removing duplicates)
    unaligned: int = 0  # of those, spans not on word boundaries (tagged by whole words)
    unmapped: int = 0  # spans left out: no label in the scheme or family set
    facts: int = 0  # clinical-fact spans written (JSONL only)
    skipped: int = 0  # documents left out (BIO: no words)


def label_names(scheme: str | None = None) -> dict[Category, str]:
    """Label to write for each category: canonical names, or the inverse of ``scheme``.

    Where several scheme labels map to one category the first listed in the scheme file wins;
    categories the scheme does not map to are absent.
    """
    if scheme is None:
        return {c: c.value for c in Category}
    names: dict[Category, str] = {}
    for label, category in taxonomy.scheme(scheme).mapping.items():
        if category is not None:
            names.setdefault(category, label)
    return names


def family_names() -> dict[Category, str]:
    """Category to PII family: the inverse of ``pii_families7`` plus :data:`FAMILY_WIDENING`."""
    return {**label_names(FAMILIES7), **FAMILY_WIDENING}


def tag_names(names: Mapping[Category, str]) -> list[str]:
    """Every BIO tag of a label set, ``O`` first, then ``B-``/``I-`` per label in order."""
    labels = list(dict.fromkeys(names.values()))
    return [OUTSIDE, *(f"{p}-{label}" for label in labels for p in ("B", "I"))]


def export_jsonl(docs: Iterable[AnnotatedDocument], path: str | Path) -> ExportReport:
    """One ``{"id","text","lang","spans","facts","meta"}`` record a line (canonical labels)."""
    target = Path(path)
    documents = spans = facts = 0
    with _atomic_file(target) as out:
        for index, doc in enumerate(docs):
            out.write(json.dumps(_record(doc, index), ensure_ascii=False) + "\n")
            documents, spans, facts = documents + 1, spans + len(doc.spans), facts + len(doc.facts)
    return _logged(ExportReport(target, documents, spans, facts=facts), "jsonl")


def export_bio(
    docs: Iterable[AnnotatedDocument],
    path: str | Path,
    *,
    scheme: str | None = None,
    sentences: bool = False,
    docstart: bool = True,
) -> ExportReport:
    """CoNLL ``word TAG`` lines on the word grid, a blank line (and ``-DOCSTART-``) per document.

    ``scheme`` writes that scheme's labels (e.g. ``"east_africa"``: 29 tags). ``sentences`` adds
    a blank line after a sentence terminator or line break that no span crosses. Documents with
    no words are skipped (a CoNLL file cannot hold them).
    """
    names = label_names(scheme)
    target = Path(path)
    totals = _Totals()
    with _atomic_file(target) as out:
        for doc in docs:
            grid, tags = _tagged(doc, names, totals)
            if not grid:
                totals.skipped += 1
                continue
            if docstart:
                out.write(f"{DOCSTART} {OUTSIDE}\n\n")
            out.write(_conll_block(doc.text, grid, tags, sentences=sentences))
            out.write("\n")
            totals.documents += 1
    return _logged(totals.report(target), "bio")


def export_hf(
    docs: Iterable[AnnotatedDocument],
    path: str | Path,
    *,
    scheme: str | None = None,
    backend: Literal["auto", "datasets", "jsonl"] = "auto",
) -> ExportReport:
    """A token-classification dataset directory: ``id``, ``tokens``, ``ner_tags``, ``lang``.

    With ``datasets`` installed (``backend="auto"`` or ``"datasets"``) it is written with
    ``save_to_disk`` and ``ner_tags`` is a sequence of ``ClassLabel``; otherwise (or with
    ``"jsonl"``) the directory holds ``data.jsonl`` (tags as integers), ``label_names.json`` and
    a ``dataset_info.json`` whose ``features`` load it: ``load_dataset("json",
    data_files=".../data.jsonl", features=Features.from_dict(info["features"]))``.
    The label set is every tag of the scheme, not only the tags that occur.
    """
    names = label_names(scheme)
    labels = tag_names(names)
    ids = {tag: i for i, tag in enumerate(labels)}
    totals = _Totals()
    rows = _hf_rows(docs, names, ids, totals)
    target = Path(path)
    use_datasets = backend == "datasets" or (backend == "auto" and _has_datasets())
    with _atomic_dir(target) as folder:
        if use_datasets:
            _save_datasets(list(rows), labels, folder)
        else:
            _save_hf_jsonl(rows, labels, folder)
    return _logged(totals.report(target), "hf/datasets" if use_datasets else "hf/jsonl")


def export_sft(
    docs: Iterable[AnnotatedDocument],
    path: str | Path,
    *,
    families: Literal["pii7", "canonical"] = "pii7",
    system: str = DEFAULT_SYSTEM,
    instruction: str = DEFAULT_INSTRUCTION,
) -> ExportReport:
    """Chat-format SFT JSONL: system, user (instruction + record), assistant (JSON list).

    The assistant's answer is ``[{"label", "value"}, …]`` in document order, each value+label
    pair once. ``families="pii7"`` uses the seven PII families (:func:`family_names`; spans with
    no family are counted as ``unmapped``), ``"canonical"`` the category names.
    ``instruction`` may contain ``{labels}``, replaced by the label list.
    """
    if families not in ("pii7", "canonical"):
        raise ConfigError(f"families must be 'pii7' or 'canonical', not {families!r}")
    names = family_names() if families == "pii7" else label_names()
    prompt = instruction.replace("{labels}", ", ".join(dict.fromkeys(names.values())))
    target = Path(path)
    totals = _Totals()
    with _atomic_file(target) as out:
        for doc in docs:
            answer = _answer(doc, names, totals)
            messages = [
                {"role": "system", "content": system},
                {"role": "user", "content": f"{prompt}\n\n{doc.text}"},
                {"role": "assistant", "content": json.dumps(answer, ensure_ascii=False)},
            ]
            out.write(json.dumps({"messages": messages}, ensure_ascii=False) + "\n")
            totals.documents += 1
    return _logged(totals.report(target), f"sft/{families}")


@dataclass(slots=True)
class _Totals:
    """Running counts of one export (mutable; frozen into an :class:`ExportReport`)."""

    documents: int = 0
    spans: int = 0
    unaligned: int = 0
    unmapped: int = 0
    skipped: int = 0

    def report(self, path: Path) -> ExportReport:
        return ExportReport(
            path, self.documents, self.spans, self.unaligned, self.unmapped, 0, self.skipped
        )


def _record(doc: AnnotatedDocument, index: int) -> dict[str, Any]:
    return {
        "id": doc.id,
        "text": doc.text,
        "lang": doc.lang,
        "spans": [{"start": s.start, "end": s.end, "label": s.label.value} for s in doc.spans],
        "facts": [{"start": f.start, "end": f.end, "kind": f.label.value} for f in doc.facts],
        "meta": _plain_meta(doc.meta, index),
    }


def _plain_meta(meta: Mapping[str, Any], index: int) -> dict[str, Any]:
    """``meta`` as plain JSON values; raises naming the key and document index, not values."""
    plain: dict[str, Any] = {}
    for key, value in meta.items():
        try:
            plain[str(key)] = _plain(value)
        except TypeError:
            raise RecordError(
                f"meta key {key!r} is not JSON-serialisable", location=f"document[{index}]"
            ) from None
    return plain


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted(_plain(v) for v in value)
    raise TypeError(type(value).__name__)


def _tagged(
    doc: AnnotatedDocument, names: Mapping[Category, str], totals: _Totals
) -> tuple[list[tuple[int, int]], list[str]]:
    """The document's grid and tags; counts mapped, unmapped and unaligned spans."""
    grid = words(doc.text)
    mapped = [s for s in doc.spans if s.label in names]
    totals.spans += len(mapped)
    totals.unmapped += len(doc.spans) - len(mapped)
    totals.unaligned += count_unaligned(grid, mapped)
    return grid, bio_tags(grid, mapped, names=names)


def _conll_block(
    text: str, grid: list[tuple[int, int]], tags: list[str], *, sentences: bool
) -> str:
    lines: list[str] = []
    for i, ((start, end), tag) in enumerate(zip(grid, tags, strict=True)):
        lines.append(f"{text[start:end]} {tag}\n")
        if sentences and i + 1 < len(grid) and _sentence_break(text, grid, tags, i):
            lines.append("\n")
    return "".join(lines)


def _sentence_break(text: str, grid: list[tuple[int, int]], tags: list[str], i: int) -> bool:
    """Whether a sentence ends after word ``i``: a line break, or a terminator and a space before
    a word that starts with neither a lower-case letter nor a digit; never inside a span."""
    if tags[i + 1].startswith("I-"):
        return False
    end, following = grid[i][1], grid[i + 1][0]
    gap = text[end:following]
    if "\n" in gap:
        return True
    following_char = text[following]
    return (
        bool(gap)
        and _SENTENCE_END.fullmatch(text[grid[i][0] : end]) is not None
        and not (following_char.islower() or following_char.isdigit())
    )


def _hf_rows(
    docs: Iterable[AnnotatedDocument],
    names: Mapping[Category, str],
    ids: Mapping[str, int],
    totals: _Totals,
) -> Iterator[dict[str, Any]]:
    for doc in docs:
        grid, tags = _tagged(doc, names, totals)
        totals.documents += 1
        yield {
            "id": doc.id,
            "tokens": [doc.text[s:e] for s, e in grid],
            "ner_tags": [ids[t] for t in tags],
            "lang": doc.lang,
        }


def hf_features(labels: list[str]) -> dict[str, Any]:
    """The dataset's features as ``datasets.Features.to_dict`` writes them (``Sequence`` form)."""
    string = {"dtype": "string", "_type": "Value"}
    return {
        "id": string,
        "tokens": {"feature": string, "_type": "Sequence"},
        "ner_tags": {"feature": {"names": labels, "_type": "ClassLabel"}, "_type": "Sequence"},
        "lang": string,
    }


def _has_datasets() -> bool:
    try:
        import datasets  # noqa: F401
    except ImportError:
        return False
    return True


def _save_datasets(rows: list[dict[str, Any]], labels: list[str], folder: Path) -> None:
    try:
        import datasets
    except ImportError:
        raise ConfigError(
            "backend='datasets' needs the datasets package (pip install 'polydeid[hf]')"
        ) from None
    features = datasets.Features.from_dict(hf_features(labels))
    columns = {key: [row[key] for row in rows] for key in features}
    datasets.Dataset.from_dict(columns, features=features).save_to_disk(str(folder))


def _save_hf_jsonl(rows: Iterable[dict[str, Any]], labels: list[str], folder: Path) -> None:
    with open(folder / "data.jsonl", "w", encoding="utf-8", newline="\n") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    info = {
        "description": "polydeid token-classification export on the word grid",
        "features": hf_features(labels),
        "data_files": ["data.jsonl"],
    }
    _write_json(folder / "dataset_info.json", info)
    _write_json(folder / "label_names.json", labels)


def _write_json(file: Path, value: Any) -> None:
    file.write_text(json.dumps(value, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def _answer(
    doc: AnnotatedDocument, names: Mapping[Category, str], totals: _Totals
) -> list[dict[str, str]]:
    """``{"label","value"}`` per span in document order, each pair once; counts the left-out."""
    seen: set[tuple[str, str]] = set()
    answer: list[dict[str, str]] = []
    for span in sorted(doc.spans, key=lambda s: (s.start, s.end)):
        value = span.text_of(doc.text)
        label = _family(span, value, names)
        if label is None:
            totals.unmapped += 1
            continue
        totals.spans += 1
        if (label, value) not in seen:
            seen.add((label, value))
            answer.append({"label": label, "value": value})
    return answer


def _family(span: Span, value: str, names: Mapping[Category, str]) -> str | None:
    label = names.get(span.label)
    if label == "email_address" and _EMAIL.fullmatch(value) is None:
        return None
    return label


@contextmanager
def _atomic_file(target: Path) -> Iterator[IO[str]]:
    """A text file that replaces ``target`` only when the block finishes without error."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


@contextmanager
def _atomic_dir(target: Path) -> Iterator[Path]:
    """A directory that replaces ``target`` (a directory, if it exists) once the block succeeds."""
    if target.exists() and not target.is_dir():
        raise ConfigError("the output path exists and is not a directory", location=str(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        yield folder
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    _swap_in(folder, target)


def _swap_in(folder: Path, target: Path) -> None:
    if not target.exists():
        os.replace(folder, target)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
    os.replace(target, old / "previous")
    os.replace(folder, target)
    shutil.rmtree(old, ignore_errors=True)


def _logged(report: ExportReport, kind: str) -> ExportReport:
    logger.info(
        "%s export: %d documents, %d spans (%d unaligned, %d unmapped), %d skipped -> %s",
        kind,
        report.documents,
        report.spans,
        report.unaligned,
        report.unmapped,
        report.skipped,
        report.path,
    )
    return report
