"""PhysioNet ``deid`` gold standard: notes in ``id.text``, PHI locations in a separate file.

Notes: ``START_OF_RECORD=<patient>||||<note>||||`` … ``||||END_OF_RECORD``. A note's text is
exactly what lies between the two markers (the newline after the opening marker included), and
PHI offsets count code points from its first character.

PHI locations, one a line, space-separated: ``patient note start end`` (``id.phi`` style, no
type) or ``patient note start end TYPE phrase…`` (``id-phi.phrase``). Typed lines map through
the scheme (default ``physionet_deid``). Untyped lines have no category of their own, so the
caller chooses one with ``untyped_category=`` (for example ``"PERSON"`` for a names-only file,
or any category for a binary PHI/not-PHI evaluation at the coarse level); without it an untyped
line is an error rather than a guess. When a phrase is given, it is compared with the text
slice (whitespace runs treated as one space); mismatches are counted in
``meta["text_mismatches"]`` and the offsets kept.

The PHI file defaults to the notes file's sibling ``<stem>-phi.phrase``, else ``<stem>.phi``.
A note with a bad PHI line (offsets past its end, an unknown type) is left out and reported at
``phi-file:line``; a PHI line naming no note in the notes file is reported too.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from polydeid.core import taxonomy
from polydeid.core.errors import InputError, PolydeidError, RecordError
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Scheme
from polydeid.corpora.document import AnnotatedDocument, Corpus, ReadFailure
from polydeid.formats.text import decode_utf8
from polydeid.locales import canonical_language

_RECORD = re.compile(
    r"START_OF_RECORD=([^|\n]+)\|\|\|\|([^|\n]+)\|\|\|\|(.*?)\|\|\|\|END_OF_RECORD", re.DOTALL
)
UNTYPED_LABEL = "PHI"


@dataclass(frozen=True, slots=True)
class Note:
    """One note of the notes file and the line its record starts on."""

    patient: str
    note: str
    text: str = field(repr=False)  # may hold identifier text
    line: int


@dataclass(frozen=True, slots=True)
class PhiLine:
    """One PHI location line (its phrase, if any, only as a match flag)."""

    line: int
    start: int
    end: int
    label: str | None
    phrase: str | None


def read_physionet(
    path: str | Path,
    *,
    phi: str | Path | None = None,
    scheme: str | None = "physionet_deid",
    lang: str | None = "en",
    untyped_category: str | None = None,
    name: str | None = None,
) -> Corpus:
    """Read a notes file (or every ``*.text`` file of a directory) with its PHI file."""
    mapping = taxonomy.scheme(scheme or "physionet_deid")
    untyped = Category.parse(untyped_category) if untyped_category else None
    language = canonical_language(lang or "en")
    root = Path(path)
    if root.is_dir():
        if phi is not None:
            raise InputError("phi= needs a notes file, not a directory", location=str(root))
        pairs = [(p, _phi_file(p)) for p in sorted(root.glob("*.text"))]
    elif root.is_file():
        pairs = [(root, Path(phi) if phi is not None else _phi_file(root))]
    else:
        raise InputError("no such file or directory", location=str(root))
    documents: list[AnnotatedDocument] = []
    failures: list[ReadFailure] = []
    for notes_file, phi_file in pairs:
        docs, fails = _read_pair(notes_file, phi_file, mapping, untyped, language)
        documents.extend(docs)
        failures.extend(fails)
    return Corpus(name or root.name, tuple(documents), tuple(failures))


def _phi_file(notes: Path) -> Path:
    phrase = notes.with_name(f"{notes.stem}-phi.phrase")
    return phrase if phrase.is_file() else notes.with_suffix(".phi")


def _read_pair(
    notes_file: Path,
    phi_file: Path,
    mapping: Scheme,
    untyped: Category | None,
    lang: str,
) -> tuple[list[AnnotatedDocument], list[ReadFailure]]:
    failures: list[ReadFailure] = []
    try:
        notes = parse_notes(_read_text(notes_file))
    except PolydeidError as exc:
        return [], [ReadFailure(str(notes_file), exc.at(str(notes_file)))]
    try:
        phi_text = _read_text(phi_file)
    except PolydeidError as exc:
        return [], [ReadFailure(str(phi_file), exc)]
    by_note, bad_lines = parse_phi(phi_text, source=str(phi_file))
    failures.extend(ReadFailure(str(phi_file), e) for e in bad_lines)
    known = {(n.patient, n.note) for n in notes}
    for key in sorted(set(by_note) - known):
        first = by_note[key][0].line
        error = RecordError("PHI line names a note not in the notes file")
        failures.append(ReadFailure(str(phi_file), error.at(f"{phi_file}:{first}")))
    documents = []
    for note in notes:
        try:
            documents.append(
                note_document(
                    note,
                    by_note.get((note.patient, note.note), []),
                    mapping,
                    untyped,
                    lang,
                    phi_source=str(phi_file),
                    source=str(notes_file),
                )
            )
        except PolydeidError as exc:
            failures.append(ReadFailure(str(phi_file), exc))
    return documents, failures


def _read_text(file: Path) -> str:
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read file ({exc.strerror})", location=str(file)) from None
    return decode_utf8(data, source=str(file))


def parse_notes(data: str) -> list[Note]:
    """Every ``START_OF_RECORD`` … ``END_OF_RECORD`` block; raises on an unterminated one."""
    notes = []
    position = 0
    for match in _RECORD.finditer(data):
        _check_gap(data, position, match.start())
        line = data.count("\n", 0, match.start()) + 1
        notes.append(Note(match[1].strip(), match[2].strip(), match[3], line))
        position = match.end()
    _check_gap(data, position, len(data))
    return notes


def _check_gap(data: str, start: int, end: int) -> None:
    gap = data[start:end]
    if gap.strip():
        line = data.count("\n", 0, start + len(gap) - len(gap.lstrip())) + 1
        raise RecordError(
            "text outside a START_OF_RECORD … END_OF_RECORD block", location=str(line)
        )


def parse_phi(
    data: str, *, source: str
) -> tuple[dict[tuple[str, str], list[PhiLine]], list[PolydeidError]]:
    """PHI lines grouped by ``(patient, note)``, and the errors of lines that could not be read."""
    by_note: dict[tuple[str, str], list[PhiLine]] = defaultdict(list)
    errors: list[PolydeidError] = []
    for number, line in enumerate(data.split("\n"), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) < 4 or not (fields[2].isdigit() and fields[3].isdigit()):
            errors.append(
                RecordError(
                    "expected 'patient note start end [TYPE phrase]'", location=f"{source}:{number}"
                )
            )
            continue
        label = fields[4] if len(fields) > 4 else None
        phrase = " ".join(fields[5:]) if len(fields) > 5 else None
        by_note[(fields[0], fields[1])].append(
            PhiLine(number, int(fields[2]), int(fields[3]), label, phrase)
        )
    return dict(by_note), errors


def note_document(
    note: Note,
    lines: list[PhiLine],
    mapping: Scheme,
    untyped: Category | None,
    lang: str,
    *,
    phi_source: str,
    source: str,
) -> AnnotatedDocument:
    """One note with its PHI spans; raises at the first bad PHI line."""
    spans = []
    mismatches = 0
    for item in lines:
        where = f"{phi_source}:{item.line}"
        if not 0 <= item.start < item.end <= len(note.text):
            raise RecordError(
                f"PHI {item.start}:{item.end} outside the note (length {len(note.text)})",
                location=where,
            )
        category = _category(item, mapping, untyped, where)
        if item.phrase is not None:
            mismatches += " ".join(note.text[item.start : item.end].split()) != item.phrase
        if category is not None:
            label = item.label or UNTYPED_LABEL
            spans.append(Span(item.start, item.end, category, f"gold:{label}"))
    meta = {"patient": note.patient, "note": note.note, "text_mismatches": mismatches}
    return AnnotatedDocument(
        id=f"{note.patient}-{note.note}",
        text=note.text,
        lang=lang,
        spans=tuple(sorted(spans, key=lambda s: (s.start, s.end, s.label.value))),
        source=f"{source}:{note.line}",
        meta=MappingProxyType(meta),
    )


def _category(
    item: PhiLine, mapping: Scheme, untyped: Category | None, where: str
) -> Category | None:
    if item.label is None:
        if untyped is None:
            raise RecordError("untyped PHI line; pass untyped_category=", location=where)
        return untyped
    try:
        return mapping.map(item.label)
    except PolydeidError as exc:
        raise exc.at(where) from None
