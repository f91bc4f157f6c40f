"""Compositions: detectors per language from a TOML file, resolved like any profile."""

from __future__ import annotations

import pytest

from polydeid.api import Deidentifier
from polydeid.cli import main
from polydeid.core.errors import ConfigError, DetectorUnavailableError, UnknownLanguageError
from polydeid.detect import compose
from polydeid.detect.compose import Kind, load_composition

NOTE = "Simu 0772 123456, alikuja 12/03/2024."


def _write(tmp_path, text):
    path = tmp_path / "comp.toml"
    path.write_text(text, "utf-8")
    return str(path)


def test_languages_route_detectors_and_unrouted_languages_fail_closed(tmp_path):
    path = _write(
        tmp_path,
        """
[detectors.rules]
kind = "rules"
[languages]
sw = ["rules"]
lg = ["rules"]
""",
    )
    deid = Deidentifier(profile=path)
    assert deid.redact(NOTE, lang="sw") == "Simu [CONTACT_PHONE], alikuja [DATE]."
    with pytest.raises(UnknownLanguageError):
        deid.detect(NOTE, lang="en")


def test_categories_restrict_a_detector_and_star_covers_the_rest(tmp_path):
    path = _write(
        tmp_path,
        """
[detectors.phones_only]
kind = "rules"
categories = ["CONTACT_PHONE"]
[languages]
"*" = ["phones_only"]
""",
    )
    deid = Deidentifier(profile=path)
    assert deid.redact(NOTE, lang="sw") == "Simu [CONTACT_PHONE], alikuja 12/03/2024."
    assert deid.redact("Tel 0772 123456 on 1 May 2024", lang="en") == (
        "Tel [CONTACT_PHONE] on 1 May 2024"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[languages]\nsw = ['x']\n", "needs a [detectors.<name>] table"),
        ("[detectors.a]\nkind = 'rules'\n", "needs a [languages] table"),
        ("[detectors.a]\nkind = 'nope'\n[languages]\nsw = ['a']\n", "unknown kind 'nope'"),
        ("[detectors.a]\nkind = 'rules'\n[languages]\nsw = ['b']\n", "unknown detector 'b'"),
        ("[detectors.a]\nkind = 'rules'\nx = 1\n[languages]\nsw = ['a']\n", "takes no options"),
        ("[detectors.a]\nkind = 'rules'\n[languages]\nxx = ['a']\n", "unknown or unsupported"),
        ("[detectors.a\n", "malformed composition"),
    ],
    ids=range(7),
)
def test_bad_compositions_are_config_errors_naming_the_file(tmp_path, text, message):
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_composition(path)
    assert message in str(info.value)


def test_a_kind_whose_package_is_missing_fails_closed(tmp_path, monkeypatch):
    monkeypatch.setitem(
        compose.KINDS, "ghost", Kind("ghost", "x:y", ("no_such_module_here",), "nothing")
    )
    path = _write(tmp_path, "[detectors.g]\nkind = 'ghost'\n[languages]\nsw = ['g']\n")
    with pytest.raises(DetectorUnavailableError, match="no_such_module_here"):
        load_composition(path)


def test_cli_profile_and_eval_system_take_a_composition(tmp_path, capsys):
    path = _write(tmp_path, "[detectors.r]\nkind = 'rules'\n[languages]\n'*' = ['r']\n")
    src = tmp_path / "in.txt"
    src.write_text("Tel 0772 123456")
    assert main(["redact", str(src), "--profile", path]) == 0
    assert capsys.readouterr().out == "Tel [CONTACT_PHONE]"
    from polydeid.evaluate.harness import build_system

    description, pipeline = build_system(path)
    assert description.startswith("composition ") and len(pipeline.detectors) > 3


def test_models_lists_every_kind(capsys):
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    for name in ("rules", "tagger", "hf-wordgrid", "hf-pipeline", "gliner", "llm"):
        assert f"  {name}" in out
