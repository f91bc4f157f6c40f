"""An unknown ``--country`` is a configuration error before any record is read: exit 2 and
nothing written by detect, redact and batch; 422 with its code from the service."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from polydeid.cli import main
from polydeid.core.errors import UnknownCountryError
from polydeid.locales import canonical_country
from polydeid.serve.app import Settings, create_app

RECORD = {"id": 1, "text": "Patient Zebedee Quartermain, tel 0772 123456"}  # invented


def test_canonical_country() -> None:
    assert canonical_country("ke") == "KE" and canonical_country(" UG ") == "UG"
    for bad in ("XX", "QQ", "K", "KEN", "", "0772123456"):
        with pytest.raises(UnknownCountryError) as refused:
            canonical_country(bad)
        assert refused.value.code == "PD110"
    with pytest.raises(UnknownCountryError) as refused:
        canonical_country("Zebedee Quartermain")
    assert "Zebedee" not in str(refused.value)  # only code-shaped values are echoed


@pytest.fixture
def src(tmp_path: Path) -> Path:
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps(RECORD) + "\n", "utf-8")
    return path


@pytest.mark.parametrize("command", ["detect", "redact"])
@pytest.mark.parametrize("country", ["XX", "QQ"])
def test_detect_and_redact_refuse_an_unknown_country(
    command: str, country: str, src: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.jsonl"
    args = [command, str(src), "-o", str(out), "--profile", "rules"]
    assert main([*args, "--country", "KE", "--country", country]) == 2
    err = capsys.readouterr().err
    assert "PD110" in err and "record(s) processed" not in err and "Traceback" not in err
    assert not out.exists()
    assert main([*args, "--country", "ke"]) == 0 and out.exists()  # a known one, any case


def test_batch_refuses_an_unknown_country(
    src: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    args = ["batch", str(src), str(out), "--profile", "rules", "--no-progress", "--workers", "1"]
    assert main([*args, "--country", "XX"]) == 2
    assert "PD110" in capsys.readouterr().err
    assert not out.exists()


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(create_app(Settings(profile="rules"))) as c:
        yield c


def test_service_refuses_an_unknown_country(client: TestClient) -> None:
    for action in ("detect", "redact"):
        response = client.post(f"/{action}", json={"text": RECORD["text"], "countries": ["XX"]})
        assert response.status_code == 422 and response.json()["code"] == "PD110"
        assert "0772" not in response.text
        query = client.post(
            f"/{action}?countries=KE,QQ",
            content=RECORD["text"],
            headers={"content-type": "text/plain"},
        )
        assert query.status_code == 422 and query.json()["code"] == "PD110"
    ok = client.post("/detect", json={"text": RECORD["text"], "countries": ["ug"]})
    assert ok.status_code == 200
