"""What rules share from one text lives only within one pipeline call (polydeid.text.memo)."""

from __future__ import annotations

import threading

import pytest

from polydeid.core.segments import Segment
from polydeid.detect.pipeline import Pipeline
from polydeid.detect.profiles import profile_detectors
from polydeid.text import memo
from polydeid.text.memo import remembered, shared_reading


def test_kept_within_a_block_and_dropped_after() -> None:
    calls: list[str] = []

    def compute() -> list[str]:
        calls.append("x")
        return ["read"]

    with shared_reading():
        first = remembered("kind", "a text", compute)
        assert remembered("kind", "a text", compute) is first
        assert remembered("other kind", "a text", compute) is not first
        with shared_reading():  # nested: the outer block's memo
            assert remembered("kind", "a text", compute) is first
    assert len(calls) == 2
    remembered("kind", "a text", compute)
    remembered("kind", "a text", compute)
    assert len(calls) == 4  # outside a block, computed each time
    assert memo._MEMO.get() is None


def test_an_exception_keeps_nothing() -> None:
    def fails() -> None:
        raise ValueError("no")

    with shared_reading():
        with pytest.raises(ValueError):
            remembered("kind", "t", fails)
        assert remembered("kind", "t", lambda: 1) == 1


def test_threads_do_not_share_a_block() -> None:
    seen: list[object] = []
    with shared_reading():
        remembered("kind", "t", lambda: "main")

        def other() -> None:
            seen.append(remembered("kind", "t", lambda: "thread"))

        worker = threading.Thread(target=other)
        worker.start()
        worker.join()
    assert seen == ["thread"]


def test_a_pipeline_keeps_no_text_after_its_call() -> None:
    pipeline = Pipeline(profile_detectors("rules"))
    pipeline.detect(Segment("Nombre: Ana Pérez, con sonda Foley en A Coruña.", lang="es"))
    assert memo._MEMO.get() is None


def test_a_pipeline_reads_a_text_s_gate_words_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from polydeid.text import gate

    built: list[str] = []
    original = gate.GateWords.__init__

    def counting(self: gate.GateWords, text: str) -> None:
        built.append(text)
        original(self, text)

    monkeypatch.setattr(gate.GateWords, "__init__", counting)
    text = "Nombre: Ana Pérez, con sonda Foley y enfermedad de Crohn en A Coruña."
    Pipeline(profile_detectors("rules")).detect(Segment(text, lang="es"))
    assert built == [text]
