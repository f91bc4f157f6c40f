"""``polydeid reidentify``: the one command that prints identifiers, with the key only."""

from __future__ import annotations

import io
import json

import pytest

from polydeid.api import Deidentifier
from polydeid.cli import main
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.transform.policy import load_policy, parse_policy
from polydeid.transform.redactor import Redactor
from polydeid.transform.vault import SqliteVault

KEY = bytes(range(32))
OTHER_KEY = bytes(range(1, 33))
NAME, PHONE = "Nakato Sarah", "0772 123456"


def _surrogates(vault, key=KEY, policy=None) -> dict[str, str]:
    """Redact NAME (PERSON) and PHONE (CONTACT_PHONE); original → surrogate."""
    redactor = Redactor(policy or load_policy("surrogate"), key=key, vault=vault)
    text = f"Seen {NAME} on {PHONE}."
    spans = [
        Span(5, 5 + len(NAME), Category.PERSON, "test.v1"),
        Span(text.index(PHONE), text.index(PHONE) + len(PHONE), Category.CONTACT_PHONE, "t.v1"),
    ]
    result = redactor.redact(Segment(text, lang="en"), spans)
    return {
        original: result.text[r.new_start : r.new_end]
        for original, r in zip((NAME, PHONE), result.replacements, strict=True)
    }


@pytest.fixture
def setup(tmp_path):
    vault_path = tmp_path / "vault.sqlite"
    key_file = tmp_path / "key"
    key_file.write_text(KEY.hex() + "\n")
    other_key = tmp_path / "other.key"
    other_key.write_text(OTHER_KEY.hex() + "\n")
    vault = SqliteVault(vault_path)
    made = _surrogates(vault)
    vault.close()
    return str(vault_path), str(key_file), str(other_key), made


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["reidentify", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_prints_the_originals_with_the_key(setup, capsys):
    vault, key, _, made = setup
    code, out, err = _run(capsys, "--vault", vault, "--key-file", key, made[NAME], made[PHONE])
    assert code == 0
    assert out.splitlines() == [
        f"{made[NAME]}\tPERSON\t{NAME}",
        f"{made[PHONE]}\tCONTACT_PHONE\t{PHONE}",
    ]
    assert NAME not in err and PHONE not in err  # the summary holds counts only
    assert "2 re-identified" in err


def test_reads_surrogates_from_stdin_and_writes_json(setup, capsys, monkeypatch):
    vault, key, _, made = setup
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{made[NAME]}\n\n{made[PHONE]}\n"))
    code, out, _ = _run(capsys, "--vault", vault, "--key-file", key, "--json", "-")
    assert code == 0
    records = [json.loads(line) for line in out.splitlines()]
    assert records == [
        {"surrogate": made[NAME], "category": "PERSON", "original": NAME},
        {"surrogate": made[PHONE], "category": "CONTACT_PHONE", "original": PHONE},
    ]


def test_category_filter(setup, capsys):
    vault, key, _, made = setup
    code, out, _ = _run(
        capsys, "--vault", vault, "--key-file", key, "--category", "person", made[NAME]
    )
    assert code == 0 and out.endswith(f"\t{NAME}\n")
    code, out, err = _run(
        capsys, "--vault", vault, "--key-file", key, "--category", "CONTACT_PHONE", made[NAME]
    )
    assert code == 1 and out == "" and "argument 1: not in the vault as CONTACT_PHONE" in err
    code, _, err = _run(capsys, "--vault", vault, "--key-file", key, "--category", "NOPE", "x")
    assert code == 2 and "PD102" in err


def test_wrong_key_is_a_decryption_error_never_output(setup, capsys):
    vault, _, other_key, made = setup
    code, out, err = _run(capsys, "--vault", vault, "--key-file", other_key, made[NAME])
    assert code == 1 and out == ""
    assert "PD401" in err and "wrong key" in err and "argument 1" in err
    assert NAME not in err and made[NAME] not in err


def test_unknown_surrogate_is_reported_by_position_not_text(setup, capsys):
    vault, key, _, made = setup
    code, out, err = _run(capsys, "--vault", vault, "--key-file", key, made[PHONE], "Okello James")
    assert code == 1 and out == f"{made[PHONE]}\tCONTACT_PHONE\t{PHONE}\n"
    assert "argument 2: not in the vault" in err and "Okello" not in err


def test_the_key_file_is_required_and_help_says_so(setup, capsys, monkeypatch):
    vault, key, _, made = setup
    monkeypatch.setenv("POLYDEID_KEY_FILE", key)  # the environment is not enough here
    with pytest.raises(SystemExit) as exc:
        main(["reidentify", "--vault", vault, made[NAME]])
    assert exc.value.code == 2
    assert "--key-file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["reidentify", "--help"])
    assert exc.value.code == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "prints identifiers" in help_text and "needs --key-file" in help_text
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "reidentify" in capsys.readouterr().out


def test_missing_vault_is_a_config_error_and_is_not_created(tmp_path, setup, capsys):
    _, key, _, _ = setup
    missing = tmp_path / "absent.sqlite"
    code, out, err = _run(capsys, "--vault", str(missing), "--key-file", key, "x")
    assert code == 2 and out == "" and "no vault file" in err
    assert not missing.exists()
    code, _, err = _run(capsys, "--vault", str(tmp_path / "v.db"), "--key-file", "nokey", "x")
    assert code == 2 and "PD106" in err


def test_vault_written_without_a_key_cannot_be_reidentified(tmp_path, setup, capsys):
    _, key, _, _ = setup
    path = tmp_path / "keyless.sqlite"
    keyless = parse_policy(
        '[default]\noperator = "tag"\n[categories.PERSON]\noperator = "surrogate"'
    )
    vault = SqliteVault(path)
    made = _surrogates(vault, key=None, policy=keyless)
    vault.close()
    code, out, err = _run(capsys, "--vault", str(path), "--key-file", key, made[NAME])
    assert code == 1 and out == "" and "written without a key" in err


def test_end_to_end_from_detection(tmp_path, capsys):
    """Detect (rules), redact with a key into a vault, then re-identify from the output."""
    key_file = tmp_path / "key"
    key_file.write_text(KEY.hex())
    path = tmp_path / "vault.sqlite"
    deid = Deidentifier(
        profile="rules", policy="surrogate", key_file=key_file, vault=SqliteVault(path)
    )
    text = "Patient seen today, phone 0772 123456, MRN 4459812."
    result = deid.redact_segment(deid.segment(text, lang="en"))
    replaced = {r.label: result.text[r.new_start : r.new_end] for r in result.replacements}
    assert Category.CONTACT_PHONE in replaced and "0772 123456" not in result.text
    code, out, _ = _run(
        capsys,
        "--vault",
        str(path),
        "--key-file",
        str(key_file),
        replaced[Category.CONTACT_PHONE],
    )
    assert code == 0 and out.endswith("\tCONTACT_PHONE\t0772 123456\n")
