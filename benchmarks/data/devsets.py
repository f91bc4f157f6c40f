"""The development sets written for polydeid: inline-markup sources built into brat standoff.

A set lives in ``benchmarks/data/<set>/``: its notes are authored in ``source/*.txt``, each
note opening with a header line ``### <note-id> <genre>``, identifiers marked inline as
``[[CODE:covered text]]`` (:data:`CODES`: ``P`` patient, ``TP`` any other person, ``D`` date,
…; a canonical category name works as well). :func:`build` writes every note to
``brat/<note-id>.txt`` and ``.ann``, which :func:`polydeid.corpora.brat.read_brat` reads with
scheme ``polydeid_written`` (every category but TRIBE, RELIGION and SEX, which the sets do not
annotate). ``ambiguous.tsv`` lists the strings :func:`consistency` may find both
annotated and not (``string<TAB>why``): the same word as a name and as a clinical term.

    python benchmarks/data/devsets.py           # rebuild every set's brat files
    python benchmarks/data/devsets.py --check   # exit 1 if a brat file is stale, a note is
                                                # malformed or an annotation inconsistent
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import regex

from polydeid.core.taxonomy import Category, scheme

HERE = Path(__file__).resolve().parent
#: The sets built here (folders of ``benchmarks/data``) and their language.
SETS: dict[str, str] = {"en_clinical_notes": "en", "de_letters": "de"}
#: The label scheme the sets are read with; a mark may use only its categories.
SCHEME = "polydeid_written"

#: Short markup codes for the canonical categories.
CODES: dict[str, Category] = {
    "P": Category.PERSON,
    "TP": Category.PERSON_THIRD_PARTY,
    "N": Category.ID_NATIONAL,
    "R": Category.ID_RECORD,
    "O": Category.ID_OTHER,
    "PH": Category.CONTACT_PHONE,
    "C": Category.CONTACT_OTHER,
    "AD": Category.LOCATION_ADDRESS,
    "L": Category.LOCATION_VILLAGE,
    "F": Category.LOCATION_FACILITY,
    "ORG": Category.ORGANIZATION,
    "D": Category.DATE,
    "A": Category.AGE,
    "PR": Category.PROFESSION,
}

_HEADER = regex.compile(r"^### (?P<id>[a-z0-9][a-z0-9-]*) (?P<genre>[a-z][a-z-]*)\s*$")
_MARK = regex.compile(r"\[\[(?P<code>[A-Z_]+):(?P<text>[^\[\]\n]+?)\]\]")
_WORD = regex.compile(r"\w+")


@dataclass(frozen=True)
class Note:
    """One note: its id, genre, plain text and gold spans ``(start, end, category)``."""

    id: str
    genre: str
    text: str
    spans: tuple[tuple[int, int, Category], ...]
    where: str


class MarkupError(ValueError):
    """A malformed source note, located at ``file:line``."""


def _category(code: str, where: str) -> Category:
    try:
        category = CODES[code] if code in CODES else Category.parse(code)
    except Exception:
        raise MarkupError(f"{where}: unknown code {code!r}") from None
    if category not in scheme(SCHEME).mapping.values():
        raise MarkupError(f"{where}: {category.value} is not annotated in these sets")
    return category


def parse_markup(source: str, where: str) -> tuple[str, tuple[tuple[int, int, Category], ...]]:
    """The plain text of ``source`` and its marked spans; raises :class:`MarkupError` on a
    stray bracket pair, an unknown code or a span with outer whitespace."""
    out: list[str] = []
    spans: list[tuple[int, int, Category]] = []
    length = 0
    last = 0
    for mark in _MARK.finditer(source):
        plain = source[last : mark.start()]
        out.append(plain)
        length += len(plain)
        covered = mark["text"]
        if covered != covered.strip():
            raise MarkupError(f"{where}: span {covered!r} has outer whitespace")
        spans.append((length, length + len(covered), _category(mark["code"], where)))
        out.append(covered)
        length += len(covered)
        last = mark.end()
    out.append(source[last:])
    text = "".join(out)
    for token in ("[[", "]]"):
        if token in text:
            raise MarkupError(f"{where}: stray {token!r} (malformed mark)")
    return text, tuple(spans)


def _chunks(file: Path) -> list[tuple[str, str, int, str]]:
    """``(note id, genre, header line number, body)`` of every note in ``file``."""
    chunks: list[tuple[str, str, int, str]] = []
    head: tuple[str, str, int] | None = None
    body: list[str] = []
    lines = file.read_text("utf-8").split("\n")
    for number, line in enumerate([*lines, "### "], start=1):
        if not line.startswith("### "):
            body.append(line)
            continue
        if head is not None:
            chunks.append((*head, "\n".join(body).strip("\n") + "\n"))
        elif "".join(body).strip():
            raise MarkupError(f"{file}:1: text before the first '### note-id genre' line")
        if number > len(lines):
            break
        match = _HEADER.match(line)
        if match is None:
            raise MarkupError(f"{file}:{number}: header must be '### note-id genre'")
        head, body = (match["id"], match["genre"], number), []
    return chunks


def read_sources(set_dir: Path) -> list[Note]:
    """Every note of ``set_dir/source/*.txt`` in file order; ids must be unique."""
    notes: list[Note] = []
    for file in sorted((set_dir / "source").glob("*.txt")):
        for note_id, genre, line, body in _chunks(file):
            where = f"{file}:{line}"
            text, spans = parse_markup(body, where)
            notes.append(Note(note_id, genre, text, spans, where))
    seen = Counter(n.id for n in notes)
    doubles = sorted(i for i, c in seen.items() if c > 1)
    if doubles:
        raise MarkupError(f"{set_dir}: note ids used twice: {', '.join(doubles)}")
    return notes


def brat_ann(note: Note) -> str:
    """The ``.ann`` text of ``note``: one ``T`` line per span, in text order."""
    rows = [
        f"T{i}\t{label.value} {start} {end}\t{note.text[start:end]}\n"
        for i, (start, end, label) in enumerate(sorted(note.spans), start=1)
    ]
    return "".join(rows)


def expected_files(set_dir: Path) -> dict[Path, str]:
    """The brat files ``set_dir/brat`` must hold, with their contents."""
    files: dict[Path, str] = {}
    for note in read_sources(set_dir):
        files[set_dir / "brat" / f"{note.id}.txt"] = note.text
        files[set_dir / "brat" / f"{note.id}.ann"] = brat_ann(note)
    return files


def stale_files(set_dir: Path) -> list[Path]:
    """Brat files that differ from the sources, are missing, or belong to no note."""
    wanted = expected_files(set_dir)
    present = set((set_dir / "brat").glob("*")) if (set_dir / "brat").is_dir() else set()
    stale = [p for p, t in wanted.items() if not p.is_file() or p.read_text("utf-8") != t]
    return sorted(stale + [p for p in present if p not in wanted])


def build(set_dir: Path) -> int:
    """Write ``set_dir/brat`` from the sources (removing files of notes no longer there)."""
    wanted = expected_files(set_dir)
    folder = set_dir / "brat"
    folder.mkdir(exist_ok=True)
    for old in folder.glob("*"):
        if old not in wanted:
            old.unlink()
    for path, text in wanted.items():
        with path.open("w", encoding="utf-8", newline="") as out:
            out.write(text)
    return len(wanted) // 2


def ambiguous_strings(set_dir: Path) -> dict[str, str]:
    """``ambiguous.tsv``: strings allowed both annotated and not, with the reason."""
    path = set_dir / "ambiguous.tsv"
    if not path.is_file():
        return {}
    rows = [ln.split("\t", 1) for ln in path.read_text("utf-8").splitlines() if ln.strip()]
    return {r[0]: r[1] if len(r) > 1 else "" for r in rows if not r[0].startswith("#")}


def consistency(notes: list[Note], allowed: dict[str, str] | None = None) -> list[str]:
    """Findings: an annotated string (case-sensitive, whole words) that occurs elsewhere in the
    set unannotated or under another category, unless ``allowed`` lists it. Bare numbers of
    up to three digits (an age after ``Age:``) are left out. Each finding names the note and
    offsets, not the text."""
    allowed = allowed or {}
    labels: dict[str, set[Category]] = defaultdict(set)
    for note in notes:
        for start, end, label in note.spans:
            labels[note.text[start:end]].add(label)
    findings: list[str] = []
    for surface, cats in sorted(labels.items()):
        if surface in allowed:
            continue
        if len(cats) > 1:
            findings.append(f"one string under {len(cats)} categories: {sorted(cats)}")
        if not _WORD.search(surface) or (surface.isdigit() and len(surface) < 4):
            continue  # punctuation, or a bare number whose meaning only its context gives
        pattern = regex.compile(r"(?<!\w)" + regex.escape(surface) + r"(?!\w)")
        for note in notes:
            covered = {(s, e) for s, e, _ in note.spans}
            inside = [(s, e) for s, e, _ in note.spans]
            for hit in pattern.finditer(note.text):
                if (hit.start(), hit.end()) in covered:
                    continue
                if any(s <= hit.start() and hit.end() <= e for s, e in inside):
                    continue  # part of a longer annotated span
                findings.append(
                    f"{note.id} {hit.start()}:{hit.end()}: annotated elsewhere as "
                    f"{'/'.join(sorted(c.value for c in cats))}, here not"
                )
    return findings


def counts(notes: list[Note]) -> Counter[str]:
    """Spans per category over ``notes``."""
    return Counter(label.value for n in notes for _, _, label in n.spans)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="verify only, write nothing")
    args = parser.parse_args()
    failed = False
    for name in SETS:
        set_dir = HERE / name
        notes = read_sources(set_dir)
        if args.check:
            stale = stale_files(set_dir)
            if stale:
                failed = True
                print(f"{name}: {len(stale)} stale brat file(s), e.g. {stale[0].name}")
        else:
            build(set_dir)
        findings = consistency(notes, ambiguous_strings(set_dir))
        failed |= bool(findings)
        for finding in findings:
            print(f"{name}: {finding}")
        genres = Counter(n.genre for n in notes)
        print(f"{name}: {len(notes)} notes; genres {dict(sorted(genres.items()))}")
        print(f"{name}: spans {dict(sorted(counts(notes).items()))}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
