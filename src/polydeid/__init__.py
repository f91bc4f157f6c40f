"""polydeid: de-identification of clinical records in many languages and formats."""

from polydeid.api import Deidentifier
from polydeid.core.errors import (
    ConfigError,
    DecodingError,
    DetectionError,
    InputError,
    PolicyError,
    PolydeidError,
    RecordError,
    TransformError,
    UnknownCategoryError,
    UnknownLanguageError,
)
from polydeid.core.resolve import ResolvePolicy, resolve
from polydeid.core.segments import Origin, Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.detect.base import Detector, FakeDetector
from polydeid.detect.pipeline import Pipeline

__version__ = "0.1.0"

__all__ = [
    "Category",
    "ConfigError",
    "DecodingError",
    "Deidentifier",
    "DetectionError",
    "Detector",
    "Fact",
    "FakeDetector",
    "InputError",
    "Origin",
    "Pipeline",
    "PolicyError",
    "PolydeidError",
    "RecordError",
    "ResolvePolicy",
    "Segment",
    "Span",
    "TransformError",
    "UnknownCategoryError",
    "UnknownLanguageError",
    "__version__",
    "resolve",
]
