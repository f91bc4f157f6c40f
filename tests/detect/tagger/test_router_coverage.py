"""A shipped router that lacks a language the default profile promises is a coded
configuration error at load time (before the model loads), never a silent rules-only run."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

import polydeid.detect.tagger.detector as tagger_detector
from polydeid.api import Deidentifier
from polydeid.cli import main
from polydeid.core.errors import CoverageError, DataFileError
from polydeid.detect.registry import require_coverage
from polydeid.detect.tagger.detector import ROUTER_FILE, read_router, require_routes
from polydeid.detect.tagger.model import MODEL_DIR
from polydeid.locales import languages
from polydeid.testing import FakeDetector

SWAHILI = "Mgonjwa Zebedee Quartermain alifika kliniki leo."  # an invented name


def _without(router: str, lang: str) -> str:
    """``router`` without the ``[languages.<lang>]`` table and its sub-tables."""
    pattern = rf"^\[languages\.{lang}(\.[^\]]+)?\]\n(?:(?!\[).*\n|\n)*"
    cut = re.sub(pattern, "", router, flags=re.M)
    assert cut != router and f"[languages.{lang}]" not in cut
    return cut


@pytest.fixture
def broken_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The shipped model folder, copied (weights linked) with a router that lacks sw, made
    the default profile's; loading the model fails the test (the check must come first)."""
    folder = tmp_path / "model"
    folder.mkdir()
    for item in MODEL_DIR.iterdir():
        if item.name == ROUTER_FILE:
            continue
        if item.suffix == ".safetensors":
            (folder / item.name).symlink_to(item)
        else:
            shutil.copy(item, folder / item.name)
    (folder / ROUTER_FILE).write_text(
        _without(MODEL_DIR.joinpath(ROUTER_FILE).read_text("utf-8"), "sw"), "utf-8"
    )
    monkeypatch.setattr(tagger_detector, "MODEL_DIR", folder)

    def no_model(*args: object, **kwargs: object) -> None:
        raise AssertionError("the model loaded before the router was checked")

    monkeypatch.setattr(tagger_detector, "_shared_model", no_model)
    return folder


def test_the_shipped_router_covers_every_language() -> None:
    routes = read_router(MODEL_DIR)
    require_routes(routes, languages(), location=ROUTER_FILE)
    assert set(languages()) <= set(routes)


def test_the_edited_router_is_valid_toml_that_lacks_sw(broken_model: Path) -> None:
    routes = read_router(broken_model)  # it reads: only the coverage check refuses it
    assert "sw" not in routes and "en" in routes
    with pytest.raises(CoverageError) as refused:
        require_routes(routes, languages(), location="router.toml")
    assert refused.value.code == "PD108" and "sw" in str(refused.value)


def test_default_profile_refuses_a_router_without_a_language(broken_model: Path) -> None:
    with pytest.raises(CoverageError) as refused:
        Deidentifier()
    assert refused.value.code == "PD108"
    assert "sw" in refused.value.message and str(broken_model) in str(refused.value)


def test_a_route_with_no_category_is_refused(tmp_path: Path, broken_model: Path) -> None:
    text = MODEL_DIR.joinpath(ROUTER_FILE).read_text("utf-8")
    emptied = re.sub(r"(?m)^(\[languages\.sw\]\ncategories = )\[[^\]]*\]", r"\1[]", text)
    assert emptied != text
    (broken_model / ROUTER_FILE).write_text(emptied, "utf-8")
    with pytest.raises(CoverageError, match="sw"):
        Deidentifier()


def test_cli_exits_2_and_writes_nothing(
    broken_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"id": 1, "lang": "sw", "text": SWAHILI}) + "\n", "utf-8")
    for command in ("detect", "redact"):
        out = tmp_path / f"{command}.jsonl"
        assert main([command, str(src), "-o", str(out)]) == 2
        err = capsys.readouterr().err
        assert "PD108" in err and "Zebedee" not in err and "Traceback" not in err
        assert not out.exists()


def test_a_composition_routing_the_tagger_to_a_missing_language_is_refused_at_load(
    broken_model: Path, tmp_path: Path
) -> None:
    composition = tmp_path / "c.toml"
    composition.write_text(
        f'[detectors.rules]\nkind = "rules"\n[detectors.tagger]\nkind = "tagger"\n'
        f'folder = "{broken_model}"\n[languages]\n"*" = ["rules", "tagger"]\n',
        "utf-8",
    )
    with pytest.raises(CoverageError) as refused:
        Deidentifier(profile=str(composition))
    assert "sw" in refused.value.message and refused.value.location is not None


def test_a_builtin_profile_detector_must_cover_every_language() -> None:
    partial = FakeDetector([], id="fake.partial.v1")
    partial.languages = frozenset({"en", "sw"})
    with pytest.raises(CoverageError, match=r"fake\.partial\.v1"):
        require_coverage([partial], "profile 'x'")
    require_coverage([FakeDetector([])], "profile 'x'")  # no languages: every language


def test_a_misspelt_router_key_is_refused_naming_it(broken_model: Path) -> None:
    path = broken_model / ROUTER_FILE
    text = MODEL_DIR.joinpath(ROUTER_FILE).read_text("utf-8")
    path.write_text(text.replace("[languages.en.thresholds]", "[languages.en.thresholdz]"), "utf-8")
    with pytest.raises(DataFileError) as refused:
        read_router(broken_model)
    assert refused.value.location == f"{path} languages.en.thresholdz"
