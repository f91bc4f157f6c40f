"""FHIR R4 resources and bundles (JSON): field semantics decide.

Read with the JSON scanner of :mod:`polydeid.formats.json` (byte-exact output); the parsed
resource is consulted for what a value means, element by element (data in
``formats/data/fhir.toml``):

- ``HumanName`` parts (``family``, ``given``, ``text``) are the patient's name in a Patient,
  a third party's in ``Patient.contact``, RelatedPerson, Practitioner …; ``prefix`` and
  ``suffix`` are kept.
- ``Address`` parts, ``ContactPoint.value`` (phone or e-mail by its ``system``) and
  ``Identifier.value`` (national, record or other number by its type code, else by the
  resource) are identifiers as a whole; so are ``birthDate`` and every other string that is a
  FHIR date, dateTime or instant (outside ``meta``), and ``Reference.display`` by the type of
  the reference (``Patient/…`` → the patient's name).
- ``Organization.name`` is an organisation, ``Location.name`` a facility.
- Narrative ``text.div`` (XHTML) is read with the XML scanner of :mod:`polydeid.formats.xml`
  (:class:`~polydeid.formats.xml.NarrativeReader`): text nodes, CDATA sections, comments, processing
  instructions and attribute values (``title``, ``alt``, ``href`` …; not ``class``, ``lang`` or
  namespace declarations) are fields, and a replacement is escaped for its place in the XHTML, then
  for the JSON string, so the narrative stays well-formed. A narrative that is not well-formed XML
  (or holds a DTD or entity declaration) is scanned whole as one text field, nothing of it left out.
  Every narrative field has the path of its ``div``.
  Free-text elements (``note.text``, ``valueString``, ``conclusion``, ``comment``, ``description``
  …) are scanned with their key as context.
- Resource ids, references, ``fullUrl``, ``system`` and other URLs, codes, ``Coding.display``,
  units, ``meta`` and UUID/OID values are never fields, so they never change.

All resources of a bundle form one document: numbering and surrogates agree across them, and
the first Patient's id (or the first ``Patient/…`` reference) names the patient, so that a
date shift is the same for every resource of that patient.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from polydeid.core.errors import InputError
from polydeid.core.taxonomy import Category
from polydeid.formats import limits
from polydeid.formats.base import Document, Field
from polydeid.formats.json import (
    PathKey,
    Scalar,
    default_role,
    encode_string,
    field_of,
    path_text,
    scan,
    validate,
)
from polydeid.formats.text import decode_utf8
from polydeid.formats.xml import NarrativeReader, escape_text, fragment_fields
from polydeid.lexicon.fields import Role, RoleKind, role_for_name, text_role, value_role
from polydeid.locales import check_data

_DATE = re.compile(
    r"\d{4}(-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01])"
    r"(T([01]\d|2[0-3]):[0-5]\d(:([0-5]\d|60)(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?)?)?"
)
_OPAQUE = re.compile(r"(urn:(uuid|oid):|https?://|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-)")
_NARRATIVE = NarrativeReader()


@dataclass(frozen=True, slots=True)
class _Semantics:
    never: frozenset[str]
    never_under: tuple[tuple[str, ...], ...]
    patient_resources: frozenset[str]
    third_party_resources: frozenset[str]
    organization_resources: frozenset[str]
    facility_resources: frozenset[str]
    facility_organization_types: frozenset[str]
    third_party_keys: frozenset[str]
    name_parts: frozenset[str]
    name_parts_kept: frozenset[str]
    address: dict[str, Category]
    telecom: dict[str, Category]
    identifier_type: dict[str, Category]
    identifier_default: dict[str, Category]
    reference_display: dict[str, Category]
    text_keys: frozenset[str]


@cache
def semantics() -> _Semantics:
    raw = check_data(
        tomllib.loads(
            resources.files("polydeid.formats").joinpath("data/fhir.toml").read_text("utf-8")
        ),
        "formats/data/fhir.toml",
    )

    def cats(table: dict[str, str]) -> dict[str, Category]:
        return {k: Category.parse(v) for k, v in table.items()}

    el = raw["elements"]
    return _Semantics(
        never=frozenset(el["never"]),
        never_under=tuple(tuple(p.split(".")) for p in el["never_under"]),
        patient_resources=frozenset(el["patient_resources"]),
        third_party_resources=frozenset(el["third_party_resources"]),
        organization_resources=frozenset(el["organization_resources"]),
        facility_resources=frozenset(el["facility_resources"]),
        facility_organization_types=frozenset(el["facility_organization_types"]),
        third_party_keys=frozenset(el["third_party_keys"]),
        name_parts=frozenset(el["name_parts"]),
        name_parts_kept=frozenset(el["name_parts_kept"]),
        address=cats(raw["address"]),
        telecom=cats(raw["telecom"]),
        identifier_type=cats(raw["identifier_type"]),
        identifier_default=cats(raw["identifier_default"]),
        reference_display=cats(raw["reference_display"]),
        text_keys=frozenset(raw["text"]["keys"]),
    )


def _node(tree: Any, path: tuple[PathKey, ...]) -> Any:
    node = tree
    for key in path:
        node = node[key]
    return node


def _resource_of(tree: Any, path: tuple[PathKey, ...]) -> tuple[str, int]:
    """The type of the innermost resource enclosing ``path`` and where its path starts."""
    rtype, start = "", 0
    node = tree
    for i, key in enumerate(path):
        if isinstance(node, dict) and isinstance(node.get("resourceType"), str):
            rtype, start = node["resourceType"], i
        node = node[key]
    return rtype, start


def _contains(keys: tuple[str, ...], sub: tuple[str, ...]) -> bool:
    n = len(sub)
    return any(keys[i : i + n] == sub for i in range(len(keys) - n + 1))


def _identifier_category(identifier: Any, rtype: str, sem: _Semantics) -> Category:
    kind = identifier.get("type") if isinstance(identifier, dict) else None
    coding = kind.get("coding") if isinstance(kind, dict) else None
    for c in coding if isinstance(coding, list) else []:
        code = c.get("code") if isinstance(c, dict) else None
        if isinstance(code, str):
            if code in sem.identifier_type:
                return sem.identifier_type[code]
            if code.startswith("NN"):
                return Category.ID_NATIONAL
    return sem.identifier_default.get(rtype, sem.identifier_default["*"])


def _code_label(container: Any) -> str | None:
    """The human label of an element's sibling ``code`` (its text, else the first coding's
    display): an Observation's ``valueString`` under code "Occupation" is an occupation."""
    code = container.get("code") if isinstance(container, dict) else None
    if not isinstance(code, dict):
        return None
    if isinstance(code.get("text"), str):
        return str(code["text"])
    for coding in code.get("coding") or []:
        if isinstance(coding, dict) and isinstance(coding.get("display"), str):
            return str(coding["display"])
    return None


class _Roles:
    """The role of every scalar of one parsed FHIR document."""

    def __init__(self, tree: Any) -> None:
        self.tree = tree
        self.sem = semantics()

    def person(self, rtype: str, keys: tuple[str, ...]) -> Category | None:
        sem = self.sem
        if rtype in sem.patient_resources:
            if sem.third_party_keys.intersection(keys):
                return Category.PERSON_THIRD_PARTY
            return Category.PERSON
        if rtype in sem.third_party_resources or rtype == "":
            return Category.PERSON_THIRD_PARTY
        return Category.PERSON_THIRD_PARTY if "name" in keys else None

    def _is_provider(self, resource_path: tuple[PathKey, ...]) -> bool:
        """Whether the Organization at ``resource_path`` is typed as a healthcare provider."""
        resource = _node(self.tree, resource_path)
        types = resource.get("type") if isinstance(resource, dict) else None
        for concept in types if isinstance(types, list) else []:
            codings = concept.get("coding") if isinstance(concept, dict) else None
            for coding in codings if isinstance(codings, list) else []:
                code = coding.get("code") if isinstance(coding, dict) else None
                if code in self.sem.facility_organization_types:
                    return True
        return False

    def role(self, scalar: Scalar) -> Role | None:
        sem = self.sem
        path = scalar.path
        rtype, start = _resource_of(self.tree, path)
        keys = tuple(k for k in path[start:] if isinstance(k, str))
        if not keys:
            return None
        leaf = keys[-1]
        parent = keys[-2] if len(keys) > 1 else ""
        if not scalar.is_string:
            return None  # numbers in FHIR are measurements, counts, sequence numbers
        value = scalar.value
        if leaf in sem.never or any(_contains(keys, sub) for sub in sem.never_under):
            return None
        if leaf == "gender":
            return value_role(Category.SEX, context=leaf)
        if leaf == "display":
            container = _node(self.tree, path[:-1])
            ref = container.get("reference") if isinstance(container, dict) else None
            if isinstance(ref, str) and "/" in ref:
                target = ref.split("/")[-2]
                if target in sem.reference_display:
                    return value_role(sem.reference_display[target], context=parent)
            return text_role(parent)
        if parent == "name" and leaf in sem.name_parts | sem.name_parts_kept:
            if leaf in sem.name_parts_kept:
                return None
            category = self.person(rtype, keys)
            return value_role(category) if category else text_role("name")
        if leaf == "name" and len(keys) == 1:
            if rtype == "Organization" and self._is_provider(path[:start]):
                return value_role(Category.LOCATION_FACILITY, context="facility")
            if rtype in sem.organization_resources:
                return value_role(Category.ORGANIZATION, context="organization")
            if rtype in sem.facility_resources:
                return value_role(Category.LOCATION_FACILITY, context="facility")
        if leaf == "alias" and rtype in sem.organization_resources | sem.facility_resources:
            category = (
                Category.ORGANIZATION
                if rtype in sem.organization_resources
                else Category.LOCATION_FACILITY
            )
            return value_role(category)
        if parent == "address" and leaf in sem.address:
            return value_role(sem.address[leaf], context=leaf)
        if parent == "telecom" and leaf == "value":
            container = _node(self.tree, path[:-1])
            system = container.get("system") if isinstance(container, dict) else None
            if isinstance(system, str) and system in sem.telecom:
                return value_role(sem.telecom[system], context=system)
            category = Category.CONTACT_OTHER if "@" in value else Category.CONTACT_PHONE
            return value_role(category, context="telecom")
        if _OPAQUE.match(value):
            return None
        if leaf == "value" and "identifier" in keys[-3:]:
            container = _node(self.tree, path[:-1])
            return value_role(_identifier_category(container, rtype, sem), context="identifier")
        if _DATE.fullmatch(value) and len(value) >= 4:
            return value_role(Category.DATE, context=leaf)
        if leaf.startswith("value"):
            label = _code_label(_node(self.tree, path[: len(path) - 1]))
            if label:
                role = role_for_name(label)
                return role if role.kind is not RoleKind.SKIP else text_role(label)
        if leaf in sem.text_keys or parent in sem.text_keys:
            return text_role(leaf if leaf != "text" else parent or leaf)
        return default_role(scalar)


def _narrative_fields(scalar: Scalar, source: str, where: str) -> Iterator[Field]:
    """The fields of an XHTML narrative (see the module docstring), placed in the JSON text."""
    value = scalar.value
    try:
        pieces = fragment_fields(value, source=f"{source}:{scalar.line}", reader=_NARRATIVE)
    except InputError:
        pieces = [Field(0, len(value), value, "", text_role("narrative"), encode=escape_text)]
    for piece in pieces:
        inner = piece.offsets or range(piece.start, piece.end + 1)
        if scalar.offsets is None:
            offsets = None if piece.offsets is None else tuple(scalar.start + o for o in inner)
        else:
            offsets = tuple(scalar.offsets[o] for o in inner)
        start = scalar.start + piece.start if offsets is None else offsets[0]
        yield Field(
            start=start,
            end=start + len(piece.value) if offsets is None else offsets[-1],
            value=piece.value,
            path=where,
            role=piece.role,
            line=scalar.line,
            offsets=offsets,
            encode=_in_json(piece.encode),
        )


def _in_json(encode: Callable[[str], str]) -> Callable[[str], str]:
    """``encode`` (the XHTML place's escaping), then JSON string escaping."""

    def both(replacement: str) -> str:
        return encode_string(encode(replacement))

    return both


class FhirFields:
    """The fields of a FHIR JSON text (re-scanned on every iteration)."""

    def __init__(self, text: str, source: str, tree: Any) -> None:
        self._text = text
        self._source = source
        self._roles = _Roles(tree)

    def __iter__(self) -> Iterator[Field]:
        text = self._text
        for scalar in scan(text, source=self._source):
            if scalar.path and scalar.path[-1] == "div" and scalar.is_string:
                yield from _narrative_fields(scalar, self._source, path_text(scalar.path))
                continue
            role = self._roles.role(scalar)
            if role is not None and role.kind is not RoleKind.SKIP:
                yield field_of(scalar, role, text)


def patient_of(tree: Any) -> str | None:
    """The id of the document's patient: the first Patient resource, else the first
    ``Patient/<id>`` reference."""
    stack = [tree]
    reference: str | None = None
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("resourceType") == "Patient" and isinstance(node.get("id"), str):
                return f"Patient/{node['id']}"
            ref = node.get("reference")
            if reference is None and isinstance(ref, str) and ref.startswith("Patient/"):
                reference = ref
            stack.extend(reversed(list(node.values())))
        elif isinstance(node, list):
            stack.extend(reversed(node))
    return reference


class FhirReader:
    """FHIR R4 JSON: a resource or a Bundle (see the module docstring)."""

    name = "fhir"

    def decode(self, data: bytes, *, source: str) -> tuple[str, str]:
        return decode_utf8(data, source=source), "utf-8"

    def read(self, text: str, *, source: str) -> Document:
        validate(text, source=source)
        tree = limits.loads(text.lstrip("\ufeff"), location=source)
        if not isinstance(tree, dict) or not isinstance(tree.get("resourceType"), str):
            raise InputError(
                'not a FHIR resource: the top-level object needs a string "resourceType"',
                location=source,
            )
        return Document(text, FhirFields(text, source, tree), "fhir", patient=patient_of(tree))
