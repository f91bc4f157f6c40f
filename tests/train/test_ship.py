"""Shipping a run as the packaged tagger: checks first, stages carried, nothing half-written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from polydeid.core.errors import ConfigError
from polydeid.detect.tagger.model import META_FILE, MODEL_DIR, WEIGHTS_FILE, sha256_file
from polydeid.train import ship

#: A real router (every shipped language), and the same marked as the run's own.
ROUTER = (MODEL_DIR / "router.toml").read_text("utf-8")
RUN_ROUTER = ROUTER + "\n# calibrated for the run\n"


def _folder(path: Path, meta: dict, weights: bytes, router: str | None = RUN_ROUTER) -> Path:
    path.mkdir()
    (path / WEIGHTS_FILE).write_bytes(weights)
    meta = {**meta, "weights_sha256": sha256_file(path / WEIGHTS_FILE)}
    (path / META_FILE).write_text(json.dumps(meta), "utf-8")
    if router is not None:
        (path / "router.toml").write_text(router, "utf-8")
    return path


@pytest.fixture
def packaged(tmp_path: Path) -> Path:
    meta = {
        "format": 1,
        "recipe": {"seed": 8, "init": "stage 3"},
        "data": {"synthetic": 1},
        "history": [{"epoch": 1}],
        "chosen_epoch": 1,
        "stage_3": {"recipe": {"seed": 5}},
        "stage_2": {"recipe": {"seed": 2}},
    }
    return _folder(tmp_path / "model", meta, b"old weights", ROUTER)


def _run(tmp_path: Path, **changes: object) -> Path:
    meta = {"format": 1, "recipe": {"seed": 11, "init": "src/model"}, "data": {"uner": 2}}
    meta["history"], meta["chosen_epoch"] = [{"epoch": 1, "dev": {}}], 1
    return _folder(tmp_path / "run", {**meta, **changes}, b"new weights")


def test_a_run_ships_with_the_packaged_stages_carried(tmp_path: Path, packaged: Path) -> None:
    run = _run(tmp_path)
    ship.ship(run, packaged, 5, "stage 4 and more")
    meta = json.loads((packaged / META_FILE).read_text("utf-8"))
    assert (packaged / WEIGHTS_FILE).read_bytes() == b"new weights"
    assert meta["weights_sha256"] == sha256_file(packaged / WEIGHTS_FILE)
    assert (packaged / "router.toml").read_text() == RUN_ROUTER
    assert meta["recipe"] == {"seed": 11, "init": "stage 4 and more"}
    assert meta["stage_4"] == {
        "recipe": {"seed": 8, "init": "stage 3"},
        "data": {"synthetic": 1},
        "history": [{"epoch": 1}],
        "chosen_epoch": 1,
    }
    assert meta["stage_3"] == {"recipe": {"seed": 5}} and meta["stage_2"]["recipe"]["seed"] == 2
    assert sorted(p.name for p in packaged.iterdir()) == sorted(
        [META_FILE, "router.toml", WEIGHTS_FILE]
    )
    # shipping the same stage again is refused: the packaged model now records stage 4
    with pytest.raises(ConfigError, match="stage_4"):
        ship.ship(run, packaged, 5, "again")


@pytest.mark.parametrize(
    "fault",
    [
        "no router",
        "unreadable router",
        "router lacks a language",
        "other weights",
        "too large",
        "has stages",
    ],
)
def test_a_run_that_cannot_ship_leaves_the_packaged_model_alone(
    tmp_path: Path, packaged: Path, fault: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _run(tmp_path, **({"stage_2": {}} if fault == "has stages" else {}))
    if fault == "no router":
        (run / "router.toml").unlink()
    elif fault == "unreadable router":
        (run / "router.toml").write_text("[en]\n", "utf-8")
    elif fault == "router lacks a language":
        kept = RUN_ROUTER.replace("[languages.luo]", "[dropped.luo]")
        assert kept != RUN_ROUTER
        (run / "router.toml").write_text(kept, "utf-8")
    elif fault == "other weights":
        (run / WEIGHTS_FILE).write_bytes(b"changed after training")
    elif fault == "too large":
        monkeypatch.setattr(ship, "MAX_WEIGHTS_BYTES", 5)
    before = {p.name: p.read_bytes() for p in packaged.iterdir()}
    with pytest.raises(ConfigError):
        ship.ship(run, packaged, 5, "stage 4 and more")
    assert {p.name: p.read_bytes() for p in packaged.iterdir()} == before
    assert ship.main([str(run), "--stage", "5", "--init", "x", "--model-dir", str(packaged)]) == 2


def test_the_stage_must_follow_the_packaged_one(tmp_path: Path, packaged: Path) -> None:
    run = _run(tmp_path)
    with pytest.raises(ConfigError):
        ship.ship(run, packaged, 1, "x")
    with pytest.raises(ConfigError, match="stage_3"):
        ship.ship(run, packaged, 4, "x")  # the packaged model records stage 3 already
