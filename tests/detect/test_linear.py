"""Detection's work grows with the input, not its square: four times the identifiers cost
less than six times the function calls (n² would be sixteen), counted, not timed."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from polydeid.api import Deidentifier
from polydeid.testing import call_count


@pytest.fixture(scope="module")
def deid() -> Deidentifier:
    return Deidentifier(profile="rules")


def _names(n: int) -> str:
    syllables = ("ka", "lo", "mi", "ru", "te", "sa", "no", "bi")
    out = []
    for i in range(n):
        first = syllables[i % 8] + syllables[i // 8 % 8]
        last = syllables[i // 64 % 8] + syllables[i % 7] + syllables[i % 5]
        out.append(f"Patient name: {first} {last}; ")
    return "".join(out)


@pytest.mark.parametrize(
    "unit",
    [
        lambda n: "x@ex.org " * n,
        lambda n: "0772 123456, " * n,
        _names,
        lambda n: "ID 12345678; SSN 123-45-6789; " * n,
        lambda n: "Tribe: Muganda. Ekika kya Mmamba. " * n,
    ],
    ids=["emails", "phones", "lower-case names after labels", "labelled and format IDs", "tribes"],
)
def test_four_times_the_identifiers_cost_under_six_times_the_work(
    deid: Deidentifier, unit: Callable[[int], str]
) -> None:
    small, large = unit(400), unit(1_600)
    deid.detect(small)  # every pattern compiled, every table loaded
    ratio = call_count(lambda: deid.detect(large)) / call_count(lambda: deid.detect(small))
    assert ratio < 6
