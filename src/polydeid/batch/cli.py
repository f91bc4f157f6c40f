"""``polydeid batch IN OUT``: de-identify a folder or a large record file with several
processes, a progress display, resuming after a kill, and a quarantine for unreadable records.

Heavy dependencies (rich, pyarrow, the de-identifier) are imported when the command runs.
"""

from __future__ import annotations

import argparse
from typing import Any

_DESCRIPTION = """\
De-identify IN (a folder, walked recursively, or one JSONL, CSV or Parquet file) into the
folder OUT. JSONL, CSV/TSV and Parquet files are records (a text column; the output keeps only
the id, language and text columns and those named by --keep); .txt/.md/.note files are one
record each (id: the relative path); FHIR/JSON/chat, XML/CDA, HL7 and other structured files
are de-identified whole in their own format. Outputs keep their relative paths.

Work is done in units (a file, or --chunk-size records of one); OUT/.polydeid-manifest.sqlite
records the finished ones, so re-running the same command after an interruption does only
what is left. A changed input file is done again; changed settings are refused. Unreadable
records go to OUT/quarantine.jsonl (where and why, never the content); counts go to
OUT/summary.json. Exit status: 0 all written, 1 some records quarantined or units left,
2 usage or configuration error.
"""


def register(sub: Any) -> None:
    """Add the ``batch`` subcommand to the ``polydeid`` parser."""
    from polydeid.batch.sources import FORMAT_CHOICES
    from polydeid.detect.tagger.precision import DEVICES

    p = sub.add_parser(
        "batch",
        help="de-identify many files or records: processes, progress, resume, quarantine",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("input", help="input folder, or a JSONL / CSV / Parquet (or other) file")
    p.add_argument("output", help="output folder (created; holds the manifest for resuming)")
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="worker processes (default: min(4, CPU count))",
    )
    p.add_argument(
        "--profile",
        default="default",
        help="detector profile: default (rules + tagger) or rules (default: default)",
    )
    p.add_argument("--policy", default="tag", help="policy name or TOML file (default: tag)")
    p.add_argument("--key-file", default=None, help="secret key file (or POLYDEID_KEY_FILE)")
    p.add_argument(
        "--vault",
        default=None,
        help="surrogate vault shared by workers and runs: a SQLite path or postgresql:// URL",
    )
    p.add_argument(
        "--lang",
        default="en",
        help="language of records that name none, or auto to identify it (default: en)",
    )
    p.add_argument("--country", action="append", default=[], help="ISO country code (repeatable)")
    p.add_argument(
        "--text-field", default="text", help="record field with the text (default: text)"
    )
    p.add_argument("--id-field", default="id", help="record field with the id (default: id)")
    p.add_argument(
        "--keep",
        default="",
        help="other fields or columns to copy to the output, comma-separated (default: none; "
        "they may hold identifiers)",
    )
    p.add_argument(
        "--format",
        choices=FORMAT_CHOICES,
        default="auto",
        help="treat every input file as this format (default: by extension and content)",
    )
    p.add_argument(
        "--chunk-size",
        type=int,
        default=None,
        help="records per unit of work, the granularity of resuming (default: 1000)",
    )
    p.add_argument(
        "--chunk-bytes",
        type=int,
        default=None,
        help="bytes of input after which a unit of records ends, so that long notes keep "
        "every worker busy (default: 65536)",
    )
    p.add_argument(
        "--device",
        choices=DEVICES,
        default=None,
        help="where every worker runs the tagger: cpu, cuda (a GPU; an error where torch "
        "sees none) or auto (default: POLYDEID_TAGGER_DEVICE, else cpu)",
    )
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar (plain progress lines instead, as when stderr is not a terminal)",
    )
    p.add_argument(
        "--progress-interval",
        type=float,
        default=None,
        help="seconds between plain progress lines (default: 10)",
    )
    p.set_defaults(func=cmd_batch)


def cmd_batch(args: argparse.Namespace) -> int:
    from polydeid.batch.record import JobConfig
    from polydeid.batch.runner import (
        DEFAULT_CHUNK_BYTES,
        DEFAULT_CHUNK_SIZE,
        DEFAULT_PROGRESS_INTERVAL,
        BatchOptions,
        default_workers,
        run_batch,
    )
    from polydeid.cli import _key_file

    keep = tuple(name.strip() for name in args.keep.split(",") if name.strip())
    config = JobConfig(
        profile=args.profile,
        policy=args.policy,
        key_file=_key_file(args),
        vault=args.vault,
        lang=args.lang,
        countries=tuple(c.upper() for c in args.country),
        text_field=args.text_field,
        id_field=args.id_field,
        keep=keep,
    )
    options = BatchOptions(
        input=args.input,
        output=args.output,
        workers=default_workers() if args.workers is None else args.workers,
        chunk_size=DEFAULT_CHUNK_SIZE if args.chunk_size is None else args.chunk_size,
        chunk_bytes=DEFAULT_CHUNK_BYTES if args.chunk_bytes is None else args.chunk_bytes,
        format=args.format,
        progress=not args.no_progress,
        progress_interval=(
            DEFAULT_PROGRESS_INTERVAL
            if args.progress_interval is None
            else max(0.0, args.progress_interval)
        ),
        device=args.device,
    )
    return run_batch(options, config).exit_code
