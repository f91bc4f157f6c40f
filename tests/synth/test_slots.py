"""The slot table of the generator: every slot a template may use has exactly one filler."""

from __future__ import annotations

from polydeid.synth import generate as gen


def test_every_slot_has_a_filler_and_no_filler_lacks_a_slot() -> None:
    assert set(gen._SLOT_FILLERS) == set(gen.SLOTS)
