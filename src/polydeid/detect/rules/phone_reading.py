"""What ``phonenumbers`` reads in a digit string dialled inside a region, from the region's
metadata alone, without building a ``PhoneNumber``.

:func:`read_in` gives the national significant number ``phonenumbers.parse(digits, region)``
takes and its ``number_type`` (``is_valid_number`` holds exactly where the type is known). It
answers only where the digits are read as written in the region: neither the region's country
code nor its international dialling prefix leads them (``parse`` may then read them as dialled
from abroad), and its prefix pattern does not rewrite them. Elsewhere it answers ``None`` and
the caller parses. Each step follows ``phonenumbers``' own (``parse``,
``_maybe_strip_national_prefix_carrier_code``, ``_test_number_length``,
``region_code_for_number``, ``_number_type_helper``); a test compares the answers with
``phonenumbers`` in every region it knows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

import phonenumbers

from polydeid.core.errors import UnknownCountryError

#: Number types by the names of the metadata fields that describe them, in the order
#: ``phonenumbers`` tries them before the fixed-line and mobile descriptions.
_SPECIAL_TYPES = (
    "premium_rate",
    "toll_free",
    "shared_cost",
    "voip",
    "personal_number",
    "pager",
    "uan",
    "voicemail",
)
#: Every number type's field, in the order ``phonenumbers`` tries them.
TYPE_FIELDS = (*_SPECIAL_TYPES, "fixed_line", "mobile")
#: The types a number is read as mobile in (``phonenumbers.PhoneNumberType`` names, lower case).
MOBILE_TYPES = frozenset({"mobile", "fixed_line_or_mobile"})
#: Longest national significant number ``parse`` accepts.
_MAX_NSN = 17


@dataclass(frozen=True, slots=True)
class _Desc:
    """One number description: its possible lengths (empty: any) and its pattern."""

    lengths: frozenset[int]
    pattern: re.Pattern[str]

    def allows(self, size: int) -> bool:
        return not self.lengths or size in self.lengths

    def matches(self, nsn: str) -> bool:
        return self.allows(len(nsn)) and bool(self.pattern.fullmatch(nsn))


def _desc(desc: phonenumbers.PhoneNumberDesc | None) -> _Desc | None:
    if desc is None or not desc.national_number_pattern:
        return None
    return _Desc(frozenset(desc.possible_length), re.compile(desc.national_number_pattern))


@dataclass(frozen=True, slots=True)
class _Types:
    """A region's number descriptions, as ``_number_type_helper`` reads them."""

    leading: re.Pattern[str] | None  # the region's leading digits, among regions sharing a code
    general: _Desc | None
    special: tuple[tuple[str, _Desc], ...]
    fixed_line: _Desc | None
    mobile: _Desc | None
    same_mobile_and_fixed_line: bool
    #: By length, one pattern of the descriptions in the order they are tried (built on use).
    by_length: dict[int, tuple[re.Pattern[str], dict[int, str]] | None] = field(
        default_factory=dict, compare=False, repr=False
    )

    def type_of(self, nsn: str) -> str:
        """The number type of ``nsn`` in the region (``""``: unknown, so not valid)."""
        size = len(nsn)
        table = self.by_length[size] if size in self.by_length else self._table(size)
        if table is None:
            return ""
        pattern, names = table
        match = pattern.fullmatch(nsn)
        if match is None:
            return ""
        name = names[match.lastindex or 0]
        if name == "fixed_line" and (
            self.same_mobile_and_fixed_line
            or (self.mobile is not None and self.mobile.matches(nsn))
        ):
            return "fixed_line_or_mobile"
        return name

    def _table(self, size: int) -> tuple[re.Pattern[str], dict[int, str]] | None:
        """For numbers of ``size`` digits: the general description as a condition, then the
        descriptions that allow the length, each closed by an empty group that names it (the
        first one a number matches whole is its type, as ``_number_type_helper`` tries them)."""
        table = None
        if self.general is not None and self.general.allows(size):
            tried = [*self.special, ("fixed_line", self.fixed_line)]
            if not self.same_mobile_and_fixed_line:
                tried.append(("mobile", self.mobile))
            parts, names, groups = [], {}, self.general.pattern.groups
            for name, desc in tried:
                if desc is None or not desc.allows(size):
                    continue
                groups += desc.pattern.groups + 1
                names[groups] = name
                parts.append(f"(?:{desc.pattern.pattern})()")
            if parts:
                general = self.general.pattern.pattern
                source = f"(?=(?:{general})\\Z)(?:{'|'.join(parts)})"
                table = (re.compile(source), names)
        self.by_length[size] = table
        return table


def region_metadata(region: str) -> phonenumbers.PhoneMetadata:
    """phonenumbers' metadata of ``region``, one of its supported regions."""
    metadata = phonenumbers.PhoneMetadata.metadata_for_region(region)
    if metadata is None:
        raise UnknownCountryError(region)
    return metadata


@cache
def _types(region: str) -> _Types:
    metadata = region_metadata(region)
    special = tuple(
        (name, desc) for name in _SPECIAL_TYPES if (desc := _desc(getattr(metadata, name)))
    )
    return _Types(
        re.compile(metadata.leading_digits) if metadata.leading_digits is not None else None,
        _desc(metadata.general_desc),
        special,
        _desc(metadata.fixed_line),
        _desc(metadata.mobile),
        bool(metadata.same_mobile_and_fixed_line_pattern),
    )


@cache
def _code_types(country_code: int) -> tuple[_Types, ...]:
    """The descriptions of every region sharing ``country_code``, in ``phonenumbers``' order."""
    regions = phonenumbers.COUNTRY_CODE_TO_REGION_CODE.get(country_code, ())
    return tuple(
        _types(r) for r in regions if phonenumbers.PhoneMetadata.metadata_for_region(r) is not None
    )


def number_type(country_code: int, nsn: str) -> str:
    """``phonenumbers.number_type`` of a number with ``country_code`` and ``nsn``, by the
    region ``region_code_for_number`` picks (``""``: unknown, so not valid)."""
    regions = _code_types(country_code)
    if len(regions) == 1:
        return regions[0].type_of(nsn)
    for types in regions:
        if types.leading is not None:
            if types.leading.match(nsn):
                return types.type_of(nsn)
        else:
            found = types.type_of(nsn)
            if found:
                return found
    return ""


@dataclass(frozen=True, slots=True)
class _Reader:
    """What ``parse`` reads a region's national numbers by."""

    country_code: int
    code: str  # the country code as digits
    dialling: re.Pattern[str] | None
    strip: re.Pattern[str] | None
    rewrites: bool  # the region has a transform rule for what its prefix pattern captures
    general: re.Pattern[str] | None
    lengths: tuple[int, ...]  # the general description's possible lengths
    local_lengths: frozenset[int]

    def led_from_abroad(self, digits: str) -> bool:
        return digits.startswith(self.code) or (
            self.dialling is not None and self.dialling.match(digits) is not None
        )

    def viable(self, number: str) -> bool:
        return self.general is not None and self.general.fullmatch(number) is not None

    def may_strip_to(self, number: str) -> bool:
        """``_test_number_length`` of what stripping leaves is none of too short, possible
        only locally and invalid length."""
        lengths = self.lengths
        size = len(number)
        if size in self.local_lengths:
            return False
        if size <= lengths[0]:
            return size == lengths[0]
        return size > lengths[-1] or size in lengths[1:]

    def nsn(self, digits: str) -> str | None:
        """The national significant number ``parse`` reads, where :func:`read_in` answers."""
        if self.led_from_abroad(digits) or not self.lengths:
            return None
        if self.strip is None:
            return digits
        match = self.strip.match(digits)
        if match is None:
            return digits
        captured = match.groups()
        if self.rewrites and (not captured or captured[-1] is not None):
            return None  # rewritten: phonenumbers' own reading
        rest = digits[match.end() :]
        if self.viable(digits) and not self.viable(rest):
            return digits
        return rest if self.may_strip_to(rest) else digits


@cache
def _reader(region: str) -> _Reader:
    metadata = region_metadata(region)
    general = metadata.general_desc
    rule = metadata.national_prefix_for_parsing
    dialling = metadata.international_prefix
    code = int(metadata.country_code or 0)
    return _Reader(
        code,
        str(code),
        re.compile(dialling) if dialling else None,
        re.compile(rule) if rule else None,
        bool(metadata.national_prefix_transform_rule),
        re.compile(general.national_number_pattern)
        if general is not None and general.national_number_pattern
        else None,
        tuple(general.possible_length) if general is not None else (),
        frozenset(general.possible_length_local_only) if general is not None else frozenset(),
    )


@dataclass(frozen=True, slots=True)
class Reading:
    """A digit string as ``parse`` reads it in a region: its national significant number and
    that number's type (``""``: not valid)."""

    nsn: str
    type: str

    @property
    def valid(self) -> bool:
        return bool(self.type)

    @property
    def mobile(self) -> bool:
        return self.type in MOBILE_TYPES


def read_in(
    digits: str, region: str, known: dict[tuple[int, str], Reading] | None = None
) -> Reading | None:
    """``parse(digits, region)`` and its ``number_type``, where the region reads ``digits``
    as written (module docstring), else ``None``. ``digits``: ASCII digits, at least two.
    ``known``: readings already made, by country code and national significant number
    (regions sharing a code read most numbers the same)."""
    reader = _reader(region)
    nsn = reader.nsn(digits)
    if nsn is None or len(nsn) > _MAX_NSN:
        return None
    if known is None:
        return Reading(nsn, number_type(reader.country_code, nsn))
    key = (reader.country_code, nsn)
    reading = known.get(key)
    if reading is None:
        reading = known[key] = Reading(nsn, number_type(*key))
    return reading
