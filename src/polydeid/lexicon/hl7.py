"""What an HL7 v2 field holds: the segment, data type, OBX value type and charset tables.

The table (``lexicon/data/hl7v2.toml``) gives, per segment, the role and data type of each field
and, per data type, the role of each component. The HL7 reader (:mod:`polydeid.formats.hl7v2`)
judges every component by it; :func:`pasted_field_category` reads a segment pasted into text
(a note, a log) the same way.
"""

from __future__ import annotations

import bisect
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from polydeid.core.errors import ConfigError
from polydeid.core.taxonomy import Category
from polydeid.locales import check_data

#: A segment name: three upper-case letters or digits, the first a letter.
SEGMENT_NAME = re.compile(r"[A-Z][A-Z0-9]{2}")


@dataclass(frozen=True, slots=True)
class Spec:
    """A role spec from the table: ``role`` is a category name, ``text``, ``skip``, ``self``
    (inside a type) or ``observation`` (OBX-5); ``type`` a data type name or None."""

    role: str
    type: str | None = None

    @classmethod
    def parse(cls, spec: str) -> Spec:
        role, _, type_ = spec.partition(":")
        return cls(role.strip(), type_.strip() or None)


TEXT_SPEC = Spec("text")


@dataclass(frozen=True, slots=True)
class DataType:
    components: tuple[Spec, ...]
    rest: Spec
    #: the component holding an identifier type code (table 0203) that refines "self"
    id_type_component: int | None = None
    #: the spec of a lone first component without digits (a name where an id belongs)
    lone_name: Spec | None = None

    def first(self, parts: int, value: str) -> Spec:
        """The spec of component 1 of a value with ``parts`` components."""
        if (
            self.lone_name is not None
            and parts == 1
            and not any(c.isdigit() for c in value)
            and any(c.isalpha() for c in value)
        ):
            return self.lone_name
        return self.at(1)

    def at(self, position: int) -> Spec:
        """The spec of component ``position`` (1-based)."""
        return self.components[position - 1] if position <= len(self.components) else self.rest


@dataclass(frozen=True, slots=True)
class FieldDef:
    name: str
    spec: Spec


@dataclass(frozen=True, slots=True)
class SegmentDef:
    name: str
    header: bool
    fields: Mapping[int, FieldDef]
    rest: Spec

    def at(self, position: int) -> FieldDef:
        return self.fields.get(position) or FieldDef("", self.rest)


@dataclass(frozen=True, slots=True)
class Hl7Table:
    types: Mapping[str, DataType]
    segments: Mapping[str, SegmentDef]
    observation: Mapping[str, Spec]
    charsets: Mapping[str, str]
    identifier_types: Mapping[str, str]

    @property
    def headers(self) -> frozenset[str]:
        return frozenset(n for n, s in self.segments.items() if s.header)


ROLE_WORDS = frozenset({"text", "skip", "self", "observation"})


def _check_spec(spec: Spec, types: Mapping[str, Any], where: str, *, inside: bool) -> None:
    if spec.role not in ROLE_WORDS:
        Category.parse(spec.role)
    elif spec.role == "self" and not inside:
        raise ConfigError(f"hl7v2.toml: {where}: 'self' is only meaningful inside a type")
    elif spec.role == "observation" and inside:
        raise ConfigError(f"hl7v2.toml: {where}: 'observation' is only for a segment field")
    if spec.type is not None and spec.type not in types:
        raise ConfigError(f"hl7v2.toml: {where}: unknown data type {spec.type!r}")


@cache
def hl7_table() -> Hl7Table:
    """The segment, data type, OBX value type and charset tables (checked once)."""
    raw = check_data(
        tomllib.loads(
            resources.files("polydeid.lexicon").joinpath("data/hl7v2.toml").read_text("utf-8")
        ),
        "lexicon/data/hl7v2.toml",
    )
    types = {
        name: DataType(
            tuple(Spec.parse(s) for s in entry["components"]),
            Spec.parse(entry.get("rest", "skip")),
            entry.get("id_type_component"),
            Spec.parse(entry["lone_name"]) if "lone_name" in entry else None,
        )
        for name, entry in raw["types"].items()
    }
    segments: dict[str, SegmentDef] = {}
    for seg, entry in raw["segments"].items():
        fields = {
            int(n): FieldDef(f["name"], Spec.parse(f["role"]))
            for n, f in entry.get("fields", {}).items()
        }
        segments[seg] = SegmentDef(
            entry["name"], bool(entry.get("header")), fields, Spec.parse(entry.get("rest", "text"))
        )
    observation = {k.upper(): Spec.parse(v) for k, v in raw["observation_value"].items()}
    charsets = {k.upper(): v for k, v in raw["charsets"].items()}
    identifier_types = {
        k.upper(): Category.parse(v).value for k, v in raw["identifier_types"].items()
    }
    for name, dt in types.items():
        extra = (dt.lone_name,) if dt.lone_name is not None else ()
        for i, spec in enumerate((*dt.components, dt.rest, *extra), start=1):
            _check_spec(spec, types, f"type {name} component {i}", inside=True)
    for seg, sd in segments.items():
        for n, fd in sd.fields.items():
            _check_spec(fd.spec, types, f"{seg}-{n}", inside=False)
            if fd.spec.role == "observation" and (seg, n) != ("OBX", 5):
                raise ConfigError(f"hl7v2.toml: {seg}-{n}: 'observation' is for OBX-5 only")
        _check_spec(sd.rest, types, f"{seg} rest", inside=False)
    for vt, spec in observation.items():
        _check_spec(spec, types, f"observation value {vt}", inside=False)
    return Hl7Table(types, segments, observation, charsets, identifier_types)


#: A segment of a message pasted into text: a known segment id and the standard field
#: separator at a line's start.
_PASTED_SEGMENT = re.compile(rf"\x0b?({SEGMENT_NAME.pattern})\|")


def pasted_field_category(
    text: str, line_start: int, start: int, *, bars: Sequence[int] | None = None
) -> Category | None:
    """The category the table gives the field holding ``start`` when the line from
    ``line_start`` is a segment of an HL7 v2 message pasted into text with the standard
    ``|`` separator ("PID|1||4711^^^H^MR||Okello^James": PID-5, PERSON; "NK1|1|Akinyi|MTH":
    NK1-2, PERSON_THIRD_PARTY), so that a note, a log or a ticket holding a message says whose
    name a field holds as the HL7 reader does. None where the line is no listed segment or
    the field's role is no category (text, skip, observation). ``bars``: the positions of
    every ``|`` of ``text``, sorted, to count the fields by bisection."""
    match = _PASTED_SEGMENT.match(text, line_start)
    if match is None or start < match.end():
        return None
    segment = hl7_table().segments.get(match.group(1))
    if segment is None:
        return None
    if bars is None:
        number = text.count("|", match.end() - 1, start)
    else:
        number = bisect.bisect_left(bars, start) - bisect.bisect_left(bars, match.end() - 1)
    if segment.header:  # MSH-1 is the field separator itself
        number += 1
    role = segment.at(number).spec.role
    return None if role in ROLE_WORDS else Category.parse(role)
