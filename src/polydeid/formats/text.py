"""Plain text: strict UTF-8 decoding with the location of the first bad byte."""

from __future__ import annotations

from polydeid.core.errors import DecodingError


def decode_utf8(data: bytes, *, source: str, first_line: int = 1) -> str:
    """Decode ``data`` as UTF-8 (a BOM is kept as text so it is written back unchanged).

    Raises :class:`DecodingError` located at ``source:line`` with the byte column; the bytes
    themselves are not quoted.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = first_line + data.count(b"\n", 0, exc.start)
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise DecodingError(
            f"invalid UTF-8 at byte column {column} ({exc.reason})", location=f"{source}:{line}"
        ) from None
