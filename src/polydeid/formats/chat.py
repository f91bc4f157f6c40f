"""Chat transcripts: JSON messages with a role and content, or one message per JSONL line.

Accepted shapes: a list of ``{"role", "content"}`` messages, an object with a ``messages``
list (other keys kept and judged like any JSON), and JSON Lines with one message (or one
conversation object) per line. Each turn's ``content`` is scanned as text — a string, or the
``text`` of content parts (``[{"type": "text", "text": …}]``); ``role`` is kept; a
message's ``name`` (the participant) is a person's name. A whole file is one document, so
numbered tags and surrogates stay consistent across the turns of a conversation.
"""

from __future__ import annotations

from polydeid.core.taxonomy import Category
from polydeid.formats.base import Document
from polydeid.formats.json import LazyFields, Scalar, default_role, keys_of, validate
from polydeid.formats.text import decode_utf8
from polydeid.lexicon.fields import SKIP, Role, text_role, value_role

_CONTENT = text_role()
_NAME = value_role(Category.PERSON, context="name")


def chat_role(scalar: Scalar) -> Role | None:
    keys = keys_of(scalar.path)
    if not keys:
        return None
    leaf = keys[-1]
    if leaf == "role":
        return SKIP
    if leaf == "content" and scalar.is_string:
        return _CONTENT
    if leaf == "name" and (len(keys) == 1 or keys[-2] == "messages"):
        return _NAME
    if leaf == "text" and "content" in keys:
        return _CONTENT
    return default_role(scalar)


class ChatReader:
    """Chat messages as JSON or JSON Lines (detected from the text)."""

    name = "chat"

    def decode(self, data: bytes, *, source: str) -> tuple[str, str]:
        return decode_utf8(data, source=source), "utf-8"

    def read(self, text: str, *, source: str) -> Document:
        body = text.lstrip("\ufeff \t\r\n")
        lines = body.startswith("{") and _one_value_per_line(body)
        validate(text, source=source, lines=lines)
        return Document(text, LazyFields(text, source, chat_role, lines=lines), "chat")


def _one_value_per_line(body: str) -> bool:
    rows = [r.strip() for r in body.splitlines() if r.strip()]
    return len(rows) > 1 and all(r.startswith("{") and r.endswith("}") for r in rows)
