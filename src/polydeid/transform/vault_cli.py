"""``polydeid reidentify``: the originals behind surrogates, from a vault, with the key.

This is the one command that prints identifiers. It needs ``--key-file`` explicitly (the
``POLYDEID_KEY_FILE`` variable is not enough), reads an existing vault only (it never creates
one), and reports problems by argument position or input line, never by the text.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

DESCRIPTION = """\
Print the original values behind surrogates, read from a vault written with a secret key.

WARNING: this prints identifiers. It needs --key-file: the secret key the vault was written
with (a vault written without a key holds nothing to re-identify). A wrong key is an error
(PD401), never a wrong answer.

Output: one line per original found, "SURROGATE<TAB>CATEGORY<TAB>ORIGINAL" (backslash,
tab and line breaks escaped as \\\\, \\t, \\n, \\r), or JSON lines with --json. A shared
surrogate (ages, dates) can have several originals.

Exit status: 0 every surrogate found; 1 some not found or not re-identifiable; 2 usage or
configuration error (no key file, no such vault)."""


def register(sub: Any) -> None:
    """Add ``reidentify`` to the ``polydeid`` subcommands."""
    p = sub.add_parser(
        "reidentify",
        help="print the originals behind surrogates (prints identifiers; needs --key-file)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "surrogates",
        nargs="+",
        metavar="SURROGATE",
        help="surrogate text as it appears in redacted output; - reads one per line from "
        "standard input",
    )
    p.add_argument(
        "--vault",
        required=True,
        metavar="PATH|URL",
        help="the vault: a SQLite file or a postgresql:// URL",
    )
    p.add_argument(
        "--key-file",
        required=True,
        metavar="FILE",
        help="required: the secret key file the vault was written with",
    )
    p.add_argument("--category", default=None, help="only originals of this category")
    p.add_argument("--json", action="store_true", help="write JSON lines")
    p.set_defaults(func=cmd_reidentify)


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def _queries(values: list[str]) -> list[tuple[str, str]]:
    """(location, surrogate) for each argument; ``-`` expands to the lines of stdin."""
    queries: list[tuple[str, str]] = []
    for position, value in enumerate(values, start=1):
        if value == "-":
            for number, line in enumerate(sys.stdin.read().splitlines(), start=1):
                if line.strip():
                    queries.append((f"<stdin>:{number}", line.strip()))
        else:
            queries.append((f"argument {position}", value.strip()))
    return queries


def cmd_reidentify(args: argparse.Namespace) -> int:
    from polydeid.core.errors import ConfigError, PolydeidError
    from polydeid.core.taxonomy import Category
    from polydeid.transform.crypto import KeyRing, load_key
    from polydeid.transform.vault import is_postgres_url, open_vault, reidentify

    keys = KeyRing.from_master(load_key(args.key_file))
    category = Category.parse(args.category) if args.category else None
    if not is_postgres_url(args.vault) and not Path(args.vault).expanduser().is_file():
        raise ConfigError("no vault file here", location=args.vault)
    vault = open_vault(args.vault)
    queries = _queries(args.surrogates)
    failures = found = 0
    out = sys.stdout
    try:
        for location, surrogate in queries:
            if not surrogate:
                print(f"polydeid: error: {location}: empty surrogate", file=sys.stderr)
                failures += 1
                continue
            try:
                pairs = reidentify(vault, surrogate, keys, category=category)
            except PolydeidError as exc:
                failures += 1
                print(f"polydeid: error: {exc.at(location)}", file=sys.stderr)
                continue
            if not pairs:
                failures += 1
                print(
                    f"polydeid: error: {location}: not in the vault"
                    + (f" as {category.value}" if category else ""),
                    file=sys.stderr,
                )
                continue
            found += 1
            for cat, original in pairs:
                if args.json:
                    line = json.dumps(
                        {"surrogate": surrogate, "category": cat.value, "original": original},
                        ensure_ascii=False,
                    )
                else:
                    line = f"{_escape(surrogate)}\t{cat.value}\t{_escape(original)}"
                out.write(line + "\n")
        out.flush()
    finally:
        vault.close()
    print(
        f"polydeid: reidentify: {len(queries)} surrogate(s), {found} re-identified, {failures} not",
        file=sys.stderr,
    )
    return 1 if failures else 0
