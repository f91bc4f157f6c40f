"""polydeid: de-identification of clinical records in many languages and formats.

What a user needs is exported here: :class:`Deidentifier` (text, segments and structured
documents), the value types (:class:`Span`, :class:`Segment`, :class:`Category`, …), the
:class:`Detector` role and :class:`Pipeline`, and every error (the tree is drawn in
:mod:`polydeid.core.errors`). Test doubles live in :mod:`polydeid.testing`.
"""

# First: a module compiled ahead of time runs only while its build matches its source.
from polydeid import _compiled  # noqa: F401  (installs the guard as it is imported)
from polydeid.api import Deidentifier, RedactedDocument
from polydeid.core.errors import (
    ChatEndpointError,
    ConfigError,
    CoverageError,
    DataFileError,
    DecodingError,
    DecryptionError,
    DetectionError,
    DetectorUnavailableError,
    EncoderFileError,
    ExportError,
    InputError,
    InputLimitError,
    KeyMaterialError,
    PolicyError,
    PolydeidError,
    RecordError,
    ReplyFormatError,
    RuleTimeoutError,
    TransformError,
    UnknownCategoryError,
    UnknownCountryError,
    UnknownLanguageError,
    UnknownOperatorError,
    UnknownSchemeError,
    VaultKeyError,
    WorkLimitError,
)
from polydeid.core.resolve import ResolvePolicy, resolve
from polydeid.core.segments import Origin, Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.core.version import __version__
from polydeid.detect.base import Detector
from polydeid.detect.pipeline import Pipeline

__all__ = [
    "Category",
    "ChatEndpointError",
    "ConfigError",
    "CoverageError",
    "DataFileError",
    "DecodingError",
    "DecryptionError",
    "Deidentifier",
    "DetectionError",
    "Detector",
    "DetectorUnavailableError",
    "EncoderFileError",
    "ExportError",
    "Fact",
    "InputError",
    "InputLimitError",
    "KeyMaterialError",
    "Origin",
    "Pipeline",
    "PolicyError",
    "PolydeidError",
    "RecordError",
    "RedactedDocument",
    "ReplyFormatError",
    "ResolvePolicy",
    "RuleTimeoutError",
    "Segment",
    "Span",
    "TransformError",
    "UnknownCategoryError",
    "UnknownCountryError",
    "UnknownLanguageError",
    "UnknownOperatorError",
    "UnknownSchemeError",
    "VaultKeyError",
    "WorkLimitError",
    "__version__",
    "resolve",
]
