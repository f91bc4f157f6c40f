"""The cyclic collector's pause: shared, restored, bounded, and safe because the rule layer,
resolution and the transform create no reference cycles."""

from __future__ import annotations

import gc
import random
import threading
from collections.abc import Iterator

import pytest

from polydeid.api import Deidentifier
from polydeid.core import collector
from polydeid.core.collector import collector_paused
from polydeid.core.segments import Segment


@pytest.fixture(autouse=True)
def _collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_a_pause_turns_collection_off_and_back_on() -> None:
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_an_inactive_pause_changes_nothing() -> None:
    with collector_paused(False):
        assert gc.isenabled()
    assert gc.isenabled()


def test_a_process_that_turned_collection_off_keeps_it_off() -> None:
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_the_collector_is_restored_when_the_block_raises() -> None:
    with pytest.raises(ValueError), collector_paused():
        raise ValueError("boom")
    assert gc.isenabled()


def test_overlapping_callers_share_one_pause_restored_by_the_last() -> None:
    inside, leave = threading.Event(), threading.Event()

    def other() -> None:
        with collector_paused():
            inside.set()
            leave.wait(10)

    thread = threading.Thread(target=other)
    thread.start()
    assert inside.wait(10)
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()  # the other caller is still inside
    leave.set()
    thread.join(10)
    assert gc.isenabled()


def test_a_long_shared_pause_collects_as_a_caller_leaves(monkeypatch: pytest.MonkeyPatch) -> None:
    collected: list[int] = []
    monkeypatch.setattr(collector, "MAX_PAUSE_S", 0.0)
    monkeypatch.setattr(collector.gc, "collect", lambda generation=2: collected.append(generation))
    with collector_paused():
        with collector_paused():
            pass
        assert collected == [1]  # the inner caller left a pause older than the limit
        assert not gc.isenabled()
    assert gc.isenabled()


def _dense(rng: random.Random) -> str:
    """Identifier-dense text of every kind the rules read, longer than one window."""
    units = (
        lambda: f"x{rng.randrange(999)}@ex.org, ",
        lambda: f"07{rng.randrange(10, 99)} {rng.randrange(100000, 999999)}, ",
        lambda: f"MRN {rng.randrange(1000000, 9999999)}; ",
        lambda: f"SSN 123-45-{rng.randrange(1000, 9999)}; ",
        lambda: f"{rng.randrange(200, 999)} {rng.randrange(100, 999)} {rng.randrange(10**4)}, ",
        lambda: "Patient name: Kato Mukasa, seen 12/03/2024 aged 45 years, BP 120/80.\n",
    )
    parts: list[str] = []
    while sum(map(len, parts)) < 120_000:
        parts.append(rng.choice(units)())
    return "".join(parts)


@pytest.mark.parametrize("policy", ["tag", "surrogate"])
def test_detection_and_the_transform_create_no_reference_cycles(policy: str) -> None:
    deid = Deidentifier(profile="rules", policy=policy, key=bytes(range(32)))
    text = _dense(random.Random(34))
    deid.redact(text[:2000], lang="en")  # what is built once per process is built here
    gc.collect()
    gc.disable()
    try:
        segment = Segment(text, lang="en")
        spans = deid.detect_segment(segment)
        deid.redact_segment(segment, spans=spans)
        assert len(spans) > 5000
        del spans
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_freeze_loaded_keeps_what_is_alive_out_of_later_collections() -> None:
    from polydeid.core.collector import freeze_loaded

    try:
        freeze_loaded()
        assert gc.get_freeze_count() > 1000
    finally:
        gc.unfreeze()


def test_a_pool_worker_freezes_what_it_loaded_and_an_inline_run_leaves_the_caller_alone() -> None:
    """A batch pool's worker (given its parent) freezes its loaded state; built inline, in
    the caller's own process, nothing is frozen."""
    import subprocess
    import sys

    from polydeid.batch.record import JobConfig
    from polydeid.batch.runner import _STATE, init_worker

    before = gc.get_freeze_count()
    try:
        init_worker(JobConfig(profile="rules"))
        assert "deid" in _STATE
        assert gc.get_freeze_count() == before
    finally:
        _STATE.clear()
    worker = (
        "import gc, os\n"
        "from polydeid.batch.record import JobConfig\n"
        "from polydeid.batch.runner import _STATE, init_worker\n"
        "init_worker(JobConfig(profile='rules'), parent=os.getppid())\n"
        "assert 'deid' in _STATE, _STATE.get('error')\n"
        "print(gc.get_freeze_count())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", worker], capture_output=True, text=True, timeout=120, check=True
    )
    assert int(done.stdout.strip().splitlines()[-1]) > 1000
