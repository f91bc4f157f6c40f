"""Errors raised by polydeid. None of them carries identifier text.

Hierarchy (stable codes in brackets)::

    PolydeidError                      [PD000]
    ├── ConfigError                    [PD100]
    │   ├── PolicyError                [PD101]  malformed or invalid policy file
    │   ├── UnknownCategoryError       [PD102]
    │   ├── UnknownSchemeError         [PD103]
    │   ├── UnknownLanguageError       [PD104]
    │   ├── UnknownOperatorError       [PD105]
    │   ├── KeyMaterialError           [PD106]  missing or malformed secret key
    │   ├── EncoderFileError           [PD107]  a packed encoder file is malformed
    │   ├── CoverageError              [PD108]  a router or pack lacks what a profile promises
    │   ├── DataFileError              [PD109]  a data file breaks its schema
    │   ├── UnknownCountryError        [PD110]
    │   └── VaultKeyError              [PD111]  the key does not match the vault's fingerprint
    ├── InputError                     [PD200]
    │   ├── DecodingError              [PD201]  invalid UTF-8
    │   ├── RecordError                [PD202]  malformed record (e.g. a JSONL line)
    │   └── InputLimitError            [PD203]  input past a parse limit (JSON depth, number size)
    ├── DetectionError                 [PD300]
    │   ├── RuleTimeoutError           [PD301]  a rule's regex ran past its time limit
    │   ├── DetectorUnavailableError   [PD302]  a detector or model could not load
    │   ├── ChatEndpointError          [PD303]  an LLM chat endpoint failed
    │   ├── ReplyFormatError           [PD304]  an LLM reply holds no readable extraction
    │   ├── ExportError                [PD305]  an exported model does not reproduce the tagger
    │   └── WorkLimitError             [PD306]  the work ran past its CPU budget or was cancelled
    └── TransformError                 [PD400]
        └── DecryptionError            [PD401]  wrong key or tampered ciphertext

Messages refer to input by file, line, field path, offsets, category and detector id — never by
the text itself. ``location`` is a short string such as ``notes.jsonl:12`` or ``entry[3].name``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_LABEL_SHAPE = re.compile(r"[A-Za-z][A-Za-z0-9_\-.]{0,39}")
_COUNTRY_SHAPE = re.compile(r"[A-Za-z]{2}")


class PolydeidError(Exception):
    """Base of every polydeid error; ``code`` is stable across releases."""

    code = "PD000"

    def __init__(self, message: str, *, location: str | None = None) -> None:
        self.message = message
        self.location = location
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = f"{self.location}: " if self.location else ""
        return f"[{self.code}] {where}{self.message}"

    def at(self, location: str) -> PolydeidError:
        """The same error, located (keeps a more specific location already set)."""
        if self.location:
            if ":" not in self.location:
                self.location = f"{location}:{self.location}"
        else:
            self.location = location
        self.args = (self.__str__(),)
        return self


class ConfigError(PolydeidError):
    code = "PD100"


class PolicyError(ConfigError):
    code = "PD101"


def _known(known: Iterable[str]) -> str:
    items = list(known)
    shown = ", ".join(items[:40])
    return shown + (", …" if len(items) > 40 else "")


class UnknownCategoryError(ConfigError):
    code = "PD102"

    def __init__(self, name: str, *, known: Iterable[str], scheme: str | None = None) -> None:
        # A malformed annotation line can put text where a label belongs: only names shaped
        # like labels are echoed.
        where = f" in scheme {scheme!r}" if scheme else ""
        shown = repr(name) if _LABEL_SHAPE.fullmatch(name) else "(not shown: not label-shaped)"
        super().__init__(f"unknown category {shown}{where}; known: {_known(known)}")


class UnknownSchemeError(ConfigError):
    code = "PD103"

    def __init__(self, name: str, *, known: Iterable[str]) -> None:
        super().__init__(f"unknown label scheme {name[:60]!r}; known: {_known(known)}")


class UnknownLanguageError(ConfigError):
    code = "PD104"

    def __init__(self, name: str, *, known: Iterable[str]) -> None:
        # ``name`` is not echoed: a record's or request's language field could hold any text.
        super().__init__(f"unknown or unsupported language; known: {_known(known)}")


class UnknownOperatorError(ConfigError):
    code = "PD105"

    def __init__(self, name: str, *, known: Iterable[str]) -> None:
        super().__init__(f"unknown operator {name[:40]!r}; known: {_known(known)}")


class KeyMaterialError(ConfigError):
    code = "PD106"


class EncoderFileError(ConfigError):
    """A packed encoder file (or a converted directory) is malformed, truncated or unsupported.

    ``location`` names the file; the message names the byte offset and field that failed.
    """

    code = "PD107"


class CoverageError(ConfigError):
    """A tagger router, a model's configuration or a locale pack does not cover a language or
    category that the profile promises (never a silent fall-back to fewer detectors)."""

    code = "PD108"


class DataFileError(ConfigError):
    """A data file (locale pack, lexicon or format table) breaks its schema: an unknown key, a
    value of the wrong type, a required file missing. ``location`` names the file and key."""

    code = "PD109"


class UnknownCountryError(ConfigError):
    code = "PD110"

    def __init__(self, name: str) -> None:
        # Only two-letter names are echoed: a request parameter may hold anything.
        shown = repr(name) if _COUNTRY_SHAPE.fullmatch(name) else "(not shown: not code-shaped)"
        super().__init__(f"unknown country code {shown}; expected an ISO 3166 alpha-2 code")


class VaultKeyError(ConfigError):
    """The key given is not the key the vault was written with (its fingerprint differs), or
    a vault written with a key is used without one."""

    code = "PD111"


class InputError(PolydeidError):
    code = "PD200"


class DecodingError(InputError):
    code = "PD201"


class RecordError(InputError):
    code = "PD202"


class InputLimitError(InputError):
    """Input past a parse limit (:mod:`polydeid.formats.limits`); the message names the
    limit, never the content."""

    code = "PD203"


class DetectionError(PolydeidError):
    code = "PD300"


class RuleTimeoutError(DetectionError):
    code = "PD301"


class DetectorUnavailableError(DetectionError):
    code = "PD302"


class ChatEndpointError(DetectionError):
    """A chat endpoint failed. ``kind`` is ``timeout``, ``connection``, ``http`` or ``reply``;
    ``status`` is the HTTP status for ``http``; ``attempts`` how many requests were sent."""

    code = "PD303"

    def __init__(
        self,
        message: str,
        *,
        kind: str,
        status: int | None = None,
        attempts: int = 1,
        location: str | None = None,
    ) -> None:
        self.kind = kind
        self.status = status
        self.attempts = attempts
        super().__init__(message, location=location)

    @property
    def retryable(self) -> bool:
        return self.kind in {"timeout", "connection"} or (
            self.kind == "http" and self.status is not None and self.status >= 500
        )


class ReplyFormatError(DetectionError):
    """The reply holds no readable JSON extraction (the message never quotes it)."""

    code = "PD304"


class ExportError(DetectionError):
    """An export failed its check (the exported model does not reproduce the tagger)."""

    code = "PD305"


class WorkLimitError(DetectionError):
    """The work stopped at a checkpoint: past its CPU budget, or cancelled by its caller
    (the service's time limit). See :mod:`polydeid.core.budget`."""

    code = "PD306"


class TransformError(PolydeidError):
    code = "PD400"


class DecryptionError(TransformError):
    code = "PD401"
