"""Chat transcripts: each turn scanned, roles kept, numbering consistent across turns."""

from __future__ import annotations

import json

import pytest
from tests.formats.conftest import check_golden

from polydeid.api import Deidentifier


@pytest.mark.parametrize("name", ["conversation.json", "turns.jsonl"])
def test_golden(deid, name):
    out = check_golden(deid, "chat", name)
    for line in out.decode().splitlines() if name.endswith(".jsonl") else [out.decode()]:
        json.loads(line)


def test_numbered_tags_agree_across_turns():
    d = Deidentifier(profile="rules", policy="numbered")
    turns = [
        {"role": "user", "content": "Call me on 0772 481 905 or 0701 555 019"},
        {"role": "assistant", "content": "Noted 0701 555 019."},
    ]
    out = d.redact_document(turns).output
    assert out[0]["content"] == "Call me on [CONTACT_PHONE-1] or [CONTACT_PHONE-2]"
    assert out[1]["content"] == "Noted [CONTACT_PHONE-2]."
    assert [t["role"] for t in out] == ["user", "assistant"]


def test_participant_name_is_replaced_and_known_in_turns(deid):
    convo = {
        "messages": [
            {
                "role": "user",
                "name": "Wanjiku Otieno",
                "content": "Hello, Wanjiku here; my son is unwell",
            }
        ]
    }
    out = deid.redact_document(convo, format="chat").output
    message = out["messages"][0]
    assert message["name"] == "[PERSON]"
    assert "Wanjiku" not in message["content"]
