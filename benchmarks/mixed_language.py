"""Mixed-language records: the language of each sentence, what ``--lang auto`` costs, and what
identifiers stay.

Not a test (pytest does not collect it): run it by hand and compare the figures.

    .venv/bin/python benchmarks/mixed_language.py [--systems rules,default] [--repeat 20]

The records are tests/fixtures/mixed_language/records.json (written for polydeid: English mixed
with Kiswahili, Luganda, Kinyarwanda, Dholuo, German, Spanish, French and Vietnamese; invented
people, fictional numbers; every sentence with its language and every identifier listed).

1. **Language per sentence**: a sentence counts as right when the stretch holding most of its
   characters is in its language. *Record* is ``--lang auto`` as it was (one identified language
   for the whole record, :func:`polydeid.detect.langid.resolve_language`); *per part* is
   :func:`polydeid.detect.langid.stretches.mixed_segment`.
2. **Time** ``--lang auto`` adds to a record: the record-level identification alone, and with
   the parts identified, on the mixed records and on one-language records made of the same
   sentences (each record's sentences of its main language); milliseconds per record, median
   over ``--repeat`` runs after a warm-up, both ways timed in turn, and the one-time load of
   lingua. And the whole ``redact`` per record, both ways.
3. **Identifiers left**: of each record's listed identifiers, those of which any word or group
   of three or more digits is still in the output (the area code of a number split in three
   counts as left; an e-mail address counts when whole), with the record read in its one
   identified language and read per part.

And, where ../shared/data is present, the language per sentence of records made from public
corpora (evaluation only): ``--corpus-records`` records per language, each three English
clinical queries of ASQ-PHI dev alternating with three MasakhaNER dev sentences of Kiswahili,
Luganda, Kinyarwanda or Dholuo (news), joined by spaces, drawn with a fixed seed.

Writes benchmarks/results/mixed_language.md.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections import Counter
from pathlib import Path

import regex

from polydeid import Deidentifier
from polydeid.core.segments import Segment
from polydeid.detect.langid import resolve_language
from polydeid.detect.langid import stretches as mixed

ROOT = Path(__file__).resolve().parents[1]
RECORDS = ROOT / "tests" / "fixtures" / "mixed_language" / "records.json"
RESULTS = ROOT / "benchmarks" / "results" / "mixed_language.md"
SHARED = ROOT.parent / "shared" / "data"
MASAKHANER = {"sw": "swa", "lg": "lug", "rw": "kin", "luo": "luo"}
_TOKEN = regex.compile(r"[\p{L}\p{N}]+")


def _text(record: dict) -> str:
    return record["join"].join(s for _, s in record["sentences"])


def _sentence_bounds(record: dict) -> list[tuple[str, int, int]]:
    text, position, out = _text(record), 0, []
    for lang, sentence in record["sentences"]:
        start = text.index(sentence, position)
        position = start + len(sentence)
        out.append((lang, start, position))
    return out


def _language_at(segment: Segment, start: int, end: int) -> str:
    if not segment.stretches:
        return segment.lang
    return max(segment.stretches, key=lambda s: min(end, s.end) - max(start, s.start)).lang


def language_accuracy(records: list[dict]) -> tuple[Counter[str], Counter[str], Counter[str]]:
    total: Counter[str] = Counter()
    record_right: Counter[str] = Counter()
    part_right: Counter[str] = Counter()
    for record in records:
        text = _text(record)
        whole = resolve_language(text)
        segment = mixed.mixed_segment(text)
        for lang, start, end in _sentence_bounds(record):
            total[lang] += 1
            record_right[lang] += whole == lang
            part_right[lang] += _language_at(segment, start, end) == lang
    return total, record_right, part_right


def _conll_sentences(path: Path) -> list[str]:
    sentences, tokens = [], []
    for line in [*path.read_text("utf-8").splitlines(), ""]:
        if line.strip():
            tokens.append(line.split()[0])
        elif tokens:
            sentences.append(" ".join(tokens))
            tokens = []
    return sentences


def _queries(path: Path) -> list[str]:
    blocks = path.read_text("utf-8").split("===QUERY===")
    return [b.split("===PHI_TAGS===")[0].strip() for b in blocks if b.strip()]


def corpus_records(per_language: int) -> list[dict]:
    """Records of English ASQ-PHI queries and MasakhaNER sentences, alternating (see above)."""
    queries = [q for q in _queries(SHARED / "asq_phi" / "queries-dev.txt") if len(q) > 40]
    rng = random.Random(33)
    records = []
    for lang, folder in MASAKHANER.items():
        sentences = [
            x
            for x in _conll_sentences(SHARED / "masakhaner" / folder / "dev.txt")
            if len(x.split()) >= 6
        ]
        for k in range(per_language):
            mine = rng.sample(sentences, 3)
            english = rng.sample(queries, 3)
            parts = [p for pair in zip(english, mine, strict=True) for p in pair]
            langs = ["en", lang] * 3
            records.append(
                {
                    "id": f"{lang}-{k}",
                    "join": " ",
                    "sentences": [list(x) for x in zip(langs, parts, strict=True)],
                }
            )
    return records


def _medians_ms(before, after, texts: list[str], repeat: int) -> tuple[float, float]:
    """Median milliseconds of ``before(text)`` and ``after(text)``, timed in turn (so that a
    busy machine slows both alike) after a warm-up over every text."""
    for text in texts:
        before(text)
        after(text)
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for text in texts:
            for k, fn in enumerate((before, after)):
                t0 = time.perf_counter()
                fn(text)
                times[k].append((time.perf_counter() - t0) * 1000)
    return statistics.median(times[0]), statistics.median(times[1])


def timing(records: list[dict], repeat: int) -> list[tuple[str, float, float]]:
    mixed_texts = [_text(r) for r in records]
    single_texts = []
    for record in records:
        main = Counter(lang for lang, _ in record["sentences"]).most_common(1)[0][0]
        single_texts.append(" ".join(s for lang, s in record["sentences"] if lang == main))
    rows = []
    for name, texts in (("mixed records", mixed_texts), ("one-language records", single_texts)):
        before, after = _medians_ms(
            resolve_language, lambda t: mixed.mixed_segment(t), texts, repeat
        )
        rows.append((name, before, after))
    return rows


def lingua_load_ms() -> float:
    """Milliseconds of lingua's first answer in this process (its models load then)."""
    t0 = time.perf_counter()
    mixed._lingua_probabilities("Omulwadde alina omusujja.")
    return (time.perf_counter() - t0) * 1000


def _left(values: list[str], output: str) -> int:
    """How many ``values`` are still in ``output``, whole or in part (an e-mail address whole:
    its parts are common words)."""
    words = set(_TOKEN.findall(output))
    return sum(
        v in output if "@" in v else any(len(p) >= 3 and p in words for p in _TOKEN.findall(v))
        for v in values
    )


def leaks(
    records: list[dict], profile: str, repeat: int
) -> tuple[list[tuple[str, int, int, int]], float, float]:
    """Per record (id, identifiers, left read in one language, left read per part), and the
    median milliseconds of a whole ``redact`` both ways (language identification included)."""
    deid = Deidentifier(profile=profile)
    rows = []
    for record in records:
        text = _text(record)
        values = record["identifiers"]
        if profile == "rules":  # the rule layer finds no names or places in free text
            values = [v for v in values if any(c.isdigit() for c in v) or "@" in v]
        whole = deid.redact(text, lang=resolve_language(text))
        parts = deid.redact(text, lang="auto")
        rows.append((record["id"], len(values), _left(values, whole), _left(values, parts)))
    before, after = _medians_ms(
        lambda t: deid.redact(t, lang=resolve_language(t)),
        lambda t: deid.redact(t, lang="auto"),
        [_text(r) for r in records],
        repeat,
    )
    return rows, before, after


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--systems", default="rules", help="comma-separated profiles")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument(
        "--corpus-records", type=int, default=25, help="records per language from public corpora"
    )
    args = parser.parse_args()
    records = json.loads(RECORDS.read_text("utf-8"))["records"]
    load = lingua_load_ms()  # first: lingua keeps its models for the rest of the process

    lines = [
        "# Mixed-language records",
        "",
        f"`benchmarks/mixed_language.py` on {RECORDS.name}",
        "",
    ]
    total, by_record, by_part = language_accuracy(records)
    lines += [
        "## Language per sentence",
        "",
        "| language | sentences | record (as before) | per part |",
        "|---|---:|---:|---:|",
    ]
    for lang in sorted(total):
        lines.append(f"| {lang} | {total[lang]} | {by_record[lang]} | {by_part[lang]} |")
    n = sum(total.values())
    lines.append(
        f"| all | {n} | {sum(by_record.values()) / n:.3f} | {sum(by_part.values()) / n:.3f} |"
    )

    if args.corpus_records and (SHARED / "masakhaner").is_dir():
        extra = corpus_records(args.corpus_records)
        total, by_record, by_part = language_accuracy(extra)
        lines += [
            "",
            f"### Records from public corpora ({len(extra)}: ASQ-PHI dev queries and MasakhaNER"
            " dev sentences)",
            "",
            "| language | sentences | record (as before) | per part |",
            "|---|---:|---:|---:|",
        ]
        for lang in sorted(total):
            lines.append(f"| {lang} | {total[lang]} | {by_record[lang]} | {by_part[lang]} |")
        n = sum(total.values())
        lines.append(
            f"| all | {n} | {sum(by_record.values()) / n:.3f} | {sum(by_part.values()) / n:.3f} |"
        )

    lines += [
        "",
        "## Time --lang auto adds (ms per record, median)",
        "",
        "| records | record language (before) | with parts (now) | added |",
        "|---|---:|---:|---:|",
    ]
    for name, before, after in timing(records, args.repeat):
        lines.append(f"| {name} | {before:.2f} | {after:.2f} | {after - before:.2f} |")
    lines += ["", f"lingua's first use (models loaded once per process): {load:.0f} ms", ""]

    for profile in [p.strip() for p in args.systems.split(",") if p.strip()]:
        rows, whole_ms, parts_ms = leaks(records, profile, 3 if profile == "rules" else 1)
        lines += [
            f"## Identifiers left, profile `{profile}`",
            "",
            "| record | identifiers | one language | per part |",
            "|---|---:|---:|---:|",
        ]
        lines += [f"| {r} | {n} | {a} | {b} |" for r, n, a, b in rows]
        lines.append(
            f"| all | {sum(r[1] for r in rows)} | {sum(r[2] for r in rows)} "
            f"| {sum(r[3] for r in rows)} |"
        )
        lines += [
            "",
            f"`redact` per record, median: {whole_ms:.1f} ms read in one identified language, "
            f'{parts_ms:.1f} ms with `lang="auto"` (parts)',
            "",
        ]
    RESULTS.write_text("\n".join(lines) + "\n", "utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
