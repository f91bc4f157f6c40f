"""Operators: what replaces an identifier. A registry maps simple names to operator builders.

Built-in operators (options in brackets, all optional):

``tag``           ``[PERSON]``  (``template``, default ``"[{category}]"``)
``numbered_tag``  ``[PERSON-1]``; the same original (case/space-insensitive) keeps its number
                  within a document, numbers count per category (``template``)
``mask``          the same number of ``*``; line breaks are kept, other whitespace is masked
                  unless ``keep_whitespace = true`` (``char``, ``keep_whitespace``)
``remove``        the empty string
``keep``          the original, unchanged (for categories a policy does not protect, e.g. SEX)
``surrogate``     a realistic replacement (see :mod:`polydeid.transform.surrogates`), the same
                  for the same original through the vault; a tag when none can be made
                  (``max_attempts``)
``dateshift``     the date moved by the patient's key-derived offset; a tag when the date
                  cannot be parsed (``max_days``, ``min_days``); needs a key
``keep_year``     a date's year alone (``12/03/2024`` -> ``2024``; a year alone is kept); a tag
                  when the date shows no year (``template``; ``oldest_age``: a year more than
                  that many years before ``reference_year``, default this year, and a
                  two-digit year are replaced too)
``keep_age``      the age unchanged when it is at most ``max_years`` (default 89), else a tag
                  (``template``, ``max_years``); an age not written in digits gets the tag
``hash``          ``[PERSON:3f2a9c0b1d2e4f56]``: HMAC-SHA256 of the normalised original under
                  the hash subkey, hex-truncated (``length``, 8–64, default 16); needs a key
``encrypt``       ``ENC(PERSON:<base64url>)``: AES-SIV (RFC 5297, AES-256) of the exact
                  original with the category as associated data — deterministic (same key and
                  value, same token), authenticated and reversible with :func:`decrypt_token`
                  or :func:`decrypt_tokens`; needs a key

Operators never pass the original through unless the policy says ``keep``.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from functools import partial
from typing import Any, ClassVar, Protocol, cast, runtime_checkable

import regex
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESSIV
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from polydeid.core.errors import DecryptionError, PolicyError, UnknownOperatorError
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.dates import date_order
from polydeid.locales import segment_languages
from polydeid.text.normalise import contains_original, normalise
from polydeid.transform.crypto import PURPOSE_ENCRYPT, KeyRing, derive_key, keyed_digest
from polydeid.transform.safe_harbor import age_in_years, year_of, year_text
from polydeid.transform.surrogates import SurrogateGenerator
from polydeid.transform.vault import Vault, identity_key, seal_original

#: Categories whose surrogates are first sought unique per original (others share freely).
UNIQUE_SURROGATES: frozenset[Category] = frozenset(Category) - {
    Category.AGE,
    Category.DATE,
    Category.PERSON_CLAN,
    Category.LOCATION_VILLAGE,
    Category.SEX,
}

# --- context ---------------------------------------------------------------------------------


@dataclass(slots=True)
class DocumentState:
    """Per-document state: the numbers given by ``numbered_tag`` (keyed by HMAC, not text)."""

    numbers: dict[Category, dict[bytes, int]] = field(default_factory=dict)

    def number(self, category: Category, key: bytes) -> int:
        """The number of ``key`` in ``category``, assigning the next one on first sight."""
        seen = self.numbers.setdefault(category, {})
        return seen.setdefault(key, len(seen) + 1)

    def __repr__(self) -> str:
        return f"DocumentState(categories={len(self.numbers)})"


@dataclass(frozen=True, slots=True)
class OperatorContext:
    """Everything an operator may consult besides the span and its text."""

    segment: Segment
    keys: KeyRing
    vault: Vault
    state: DocumentState
    surrogates: SurrogateGenerator
    patient_id: str | None = None
    document_id: str | None = None
    reserved: frozenset[bytes] = frozenset()  # identity keys of this segment's originals

    def identity(self, category: Category, text: str) -> bytes:
        """The vault key of ``text`` in ``category``."""
        return identity_key(self.keys.vault, category, text)

    def __repr__(self) -> str:
        return f"OperatorContext({self.segment!r} keys={self.keys!r})"


@runtime_checkable
class Operator(Protocol):
    """Replaces one identifier span; ``original`` is the span's text.

    ``name`` and ``needs_key`` are only read (the built-in operators set them on the class).
    """

    @property
    def name(self) -> str: ...

    @property
    def needs_key(self) -> bool: ...

    def apply(self, span: Span, original: str, ctx: OperatorContext) -> str: ...


class OperatorClass(Protocol):
    """An operator class as the built-in registry uses it: called with its options, and
    saying on the class whether it needs a key."""

    needs_key: bool

    def __call__(self, options: Any, /) -> Operator: ...


def identifier_category(span: Span) -> Category:
    """The category of an identifier span (what operators are applied to).

    The redactor drops fact spans before any operator sees a span, so the label is a
    :class:`Category`; ``Span.label`` is typed ``Category | Fact`` and cannot say so.
    """
    return cast(Category, span.label)


# --- options ---------------------------------------------------------------------------------


class Options(BaseModel):
    """Base of operator options: strict types, unknown keys rejected, immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def _check_template(value: str, fields: Iterable[str]) -> str:
    try:
        value.format(**{f: "x" for f in fields})
    except (KeyError, IndexError, ValueError) as exc:
        raise ValueError(f"template may use only {sorted(fields)}: {exc}") from None
    return value


class TagOptions(Options):
    template: str = "[{category}]"

    @field_validator("template")
    @classmethod
    def _template(cls, value: str) -> str:
        return _check_template(value, ("category",))


class NumberedOptions(Options):
    template: str = "[{category}-{n}]"

    @field_validator("template")
    @classmethod
    def _template(cls, value: str) -> str:
        return _check_template(value, ("category", "n"))


class MaskOptions(Options):
    char: str = Field(default="*", min_length=1, max_length=1)
    keep_whitespace: bool = False


class NoOptions(Options):
    pass


class SurrogateOptions(Options):
    max_attempts: int = Field(default=60, ge=1, le=1000)


class DateshiftOptions(Options):
    max_days: int = Field(default=365, ge=1, le=36500)
    min_days: int = Field(default=1, ge=0, le=36500)

    @model_validator(mode="after")
    def _range(self) -> DateshiftOptions:
        if self.min_days > self.max_days:
            raise ValueError("min_days must not exceed max_days")
        return self


class KeepYearOptions(Options):
    template: str = "[{category}]"
    oldest_age: int | None = Field(default=None, ge=0, le=150)
    reference_year: int | None = Field(default=None, ge=1, le=9999)

    @field_validator("template")
    @classmethod
    def _template(cls, value: str) -> str:
        return _check_template(value, ("category",))


class KeepAgeOptions(Options):
    max_years: int = Field(default=89, ge=0, le=150)
    template: str = "[{category}]"

    @field_validator("template")
    @classmethod
    def _template(cls, value: str) -> str:
        return _check_template(value, ("category",))


class HashOptions(Options):
    length: int = Field(default=16, ge=8, le=64)
    template: str = "[{category}:{digest}]"

    @field_validator("template")
    @classmethod
    def _template(cls, value: str) -> str:
        return _check_template(value, ("category", "digest"))


# --- operators -------------------------------------------------------------------------------


def _tag(category: Category, template: str = "[{category}]") -> str:
    return template.format(category=category.value)


def safe_fallback(span: Span, original: str) -> str:
    """A tag for ``span``, or a neutral text when the tag would contain the original."""
    for text in (_tag(identifier_category(span)), "[REDACTED]", "[X]"):
        if not contains_original(text, original):
            return text
    return ""


@dataclass(frozen=True, slots=True)
class TagOperator:
    options: TagOptions = field(default_factory=TagOptions)
    name: ClassVar[str] = "tag"
    needs_key: ClassVar[bool] = False

    def apply(self, span: Span, original: str, ctx: OperatorContext) -> str:
        return _tag(identifier_category(span), self.options.template)


@dataclass(frozen=True, slots=True)
class NumberedTagOperator:
    options: NumberedOptions = field(default_factory=NumberedOptions)
    name: ClassVar[str] = "numbered_tag"
    needs_key: ClassVar[bool] = False

    def apply(self, span: Span, original: str, ctx: OperatorContext) -> str:
        category = identifier_category(span)
        n = ctx.state.number(category, ctx.identity(category, original))
        return self.options.template.format(category=category.value, n=n)


@dataclass(frozen=True, slots=True)
class MaskOperator:
    options: MaskOptions = field(default_factory=MaskOptions)
    name: ClassVar[str] = "mask"
    needs_key: ClassVar[bool] = False

    def apply(self, span: Span, original: str, ctx: OperatorContext) -> str:
        keep_ws = self.options.keep_whitespace
        return "".join(
            ch if ch in "\r\n" or (keep_ws and ch.isspace()) else self.options.char
            for ch in original
        )


@dataclass(frozen=True, slots=True)
class RemoveOperator:
    options: NoOptions = field(default_factory=NoOptions)
    name: ClassVar[str] = "remove"
    needs_key: ClassVar[bool] = False

    def apply(self, span: Span, original: str, ctx: OperatorContext) -> str:
        return ""


@dataclass(frozen=True, slots=True)
class KeepOperator:
    options: NoOptions = field(default_factory=NoOptions)
    name: ClassVar[str] = "keep"
    needs_key: ClassVar[bool] = False

    def apply(self, span: Span, original: str, ctx: OperatorContext) -> str:
        return original


@dataclass(frozen=True, slots=True)
class HashOperator:
    options: HashOptions = field(default_factory=HashOptions)
    name: ClassVar[str] = "hash"
    needs_key: ClassVar[bool] = True

    def apply(self, span: Span, original: str, ctx: OperatorContext) -> str:
        ctx.keys.require_user_key(self.name)
        digest = keyed_digest(ctx.keys.hash, "hash", normalise(original)).hex()
        return self.options.template.format(
            category=span.label.value, digest=digest[: self.options.length]
        )


@dataclass(frozen=True, slots=True)
class EncryptOperator:
    options: NoOptions = field(default_factory=NoOptions)
    name: ClassVar[str] = "encrypt"
    needs_key: ClassVar[bool] = True

    def apply(self, span: Span, original: str, ctx: OperatorContext) -> str:
        ctx.keys.require_user_key(self.name)
        return encrypt_token(original, identifier_category(span), ctx.keys.encrypt)


@dataclass(frozen=True, slots=True)
class SurrogateOperator:
    options: SurrogateOptions = field(default_factory=SurrogateOptions)
    name: ClassVar[str] = "surrogate"
    needs_key: ClassVar[bool] = False

    def apply(self, span: Span, original: str, ctx: OperatorContext) -> str:
        category = identifier_category(span)
        key = ctx.identity(category, original)
        stored = ctx.vault.get(key)
        if stored is not None and not contains_original(stored, original):
            return stored
        seed = keyed_digest(ctx.keys.surrogate, "seed", category.value, normalise(original))

        def claim(candidate: str, *, unique: bool) -> bool:
            if category not in UNIQUE_SURROGATES:
                sealed = seal_original(ctx.keys, category, original, key)
                return ctx.vault.put(key, candidate, value_key=None, sealed=sealed)
            value_key = ctx.identity(category, candidate)
            if value_key in ctx.reserved or ctx.vault.get(value_key) is not None:
                return False  # the candidate is itself an original, here or seen before
            return ctx.vault.put(
                key,
                candidate,
                value_key=value_key if unique else None,
                sealed=seal_original(ctx.keys, category, original, key),
            )

        generator = ctx.surrogates
        if generator.max_attempts != self.options.max_attempts:
            generator = SurrogateGenerator(
                validate=generator.validate, max_attempts=self.options.max_attempts
            )
        for unique in (True, False) if category in UNIQUE_SURROGATES else (False,):
            chosen = generator.generate(
                original, category, ctx.segment, seed, accept=partial(claim, unique=unique)
            )
            if chosen is not None:
                return chosen
        stored = ctx.vault.get(key)  # another worker may have stored one meanwhile
        if stored is not None and not contains_original(stored, original):
            return stored
        return safe_fallback(span, original)


@dataclass(frozen=True, slots=True)
class DateshiftOperator:
    options: DateshiftOptions = field(default_factory=DateshiftOptions)
    name: ClassVar[str] = "dateshift"
    needs_key: ClassVar[bool] = True

    def apply(self, span: Span, original: str, ctx: OperatorContext) -> str:
        from polydeid.transform.dateshift import patient_offset_days, shift_date_text

        ctx.keys.require_user_key(self.name)
        patient = ctx.patient_id if ctx.patient_id is not None else (ctx.document_id or "")
        days = patient_offset_days(
            ctx.keys.dateshift,
            patient,
            max_days=self.options.max_days,
            min_days=self.options.min_days,
        )
        shifted = shift_date_text(
            original, days, segment_languages(ctx.segment), order=date_order(ctx.segment)
        )
        if shifted is None or contains_original(shifted, original):
            return safe_fallback(span, original)
        return shifted


@dataclass(frozen=True, slots=True)
class KeepYearOperator:
    """HIPAA Safe Harbor for dates: every element but the year goes; with ``oldest_age``, so
    does a year more than that many years before ``reference_year`` (default: this year),
    which would reveal an age over it, and a two-digit year (see
    :mod:`polydeid.transform.safe_harbor`)."""

    options: KeepYearOptions = field(default_factory=KeepYearOptions)
    name: ClassVar[str] = "keep_year"
    needs_key: ClassVar[bool] = False

    def apply(self, span: Span, original: str, ctx: OperatorContext) -> str:
        langs = segment_languages(ctx.segment)
        order = date_order(ctx.segment)
        year = year_text(original, langs, order=order)
        oldest = self.options.oldest_age
        if year is not None and oldest is not None:
            shown = year_of(original, langs, order=order)
            now = self.options.reference_year or date.today().year
            if shown is None or shown[1] or now - shown[0] > oldest:
                year = None
        if year is None:
            return _tag(identifier_category(span), self.options.template)
        return year


@dataclass(frozen=True, slots=True)
class KeepAgeOperator:
    """HIPAA Safe Harbor for ages: ages up to ``max_years`` stay, older ones are replaced."""

    options: KeepAgeOptions = field(default_factory=KeepAgeOptions)
    name: ClassVar[str] = "keep_age"
    needs_key: ClassVar[bool] = False

    def apply(self, span: Span, original: str, ctx: OperatorContext) -> str:
        years = age_in_years(original, segment_languages(ctx.segment))
        if years is not None and years <= self.options.max_years:
            return original
        return _tag(identifier_category(span), self.options.template)


# --- encryption tokens -----------------------------------------------------------------------

_TOKEN = regex.compile(r"ENC\((?P<category>[A-Z_]+):(?P<data>[A-Za-z0-9_-]+)\)")
_AD_VERSION = b"polydeid.enc.v1"


def encrypt_token(original: str, category: Category, encrypt_key: bytes) -> str:
    """``ENC(CATEGORY:base64url)`` for ``original`` under the 64-byte AES-SIV subkey."""
    data = AESSIV(encrypt_key).encrypt(
        original.encode("utf-8", "surrogatepass"), [_AD_VERSION, category.value.encode()]
    )
    return f"ENC({category.value}:{base64.urlsafe_b64encode(data).rstrip(b'=').decode()})"


def decrypt_token(token: str, key: bytes) -> str:
    """The original text of one ``ENC(…)`` token under master ``key``; DecryptionError if not."""
    match = _TOKEN.fullmatch(token.strip())
    if match is None:
        raise DecryptionError("not an encryption token (expected ENC(CATEGORY:…))")
    return _decrypt(match, derive_key(key, PURPOSE_ENCRYPT, 64))


def decrypt_tokens(text: str, key: bytes) -> str:
    """``text`` with every ``ENC(…)`` token replaced by its original (re-identification)."""
    subkey = derive_key(key, PURPOSE_ENCRYPT, 64)
    return _TOKEN.sub(lambda m: _decrypt(m, subkey), text)


def _decrypt(match: regex.Match[str], subkey: bytes) -> str:
    category, data = match["category"], match["data"]
    try:
        blob = base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))
        plain = AESSIV(subkey).decrypt(blob, [_AD_VERSION, category.encode()])
    except (InvalidTag, binascii.Error, ValueError):
        raise DecryptionError(
            f"cannot decrypt a {category} token: wrong key or altered token"
        ) from None
    return plain.decode("utf-8", "surrogatepass")


# --- registry --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OperatorInfo:
    """A registered operator: its options model and how to build it."""

    name: str
    options: type[Options]
    build: Callable[[Any], Operator]
    needs_key: bool


_REGISTRY: dict[str, OperatorInfo] = {}


def register_operator(
    name: str, options: type[Options], build: Callable[[Any], Operator], *, needs_key: bool = False
) -> None:
    """Register an operator under ``name`` (re-registering the same name replaces it)."""
    _REGISTRY[name] = OperatorInfo(name, options, build, needs_key)


def register_builtins() -> None:
    """Register the built-in operators (idempotent)."""
    builtins: Mapping[str, tuple[type[Options], OperatorClass]] = {
        "tag": (TagOptions, TagOperator),
        "numbered_tag": (NumberedOptions, NumberedTagOperator),
        "mask": (MaskOptions, MaskOperator),
        "remove": (NoOptions, RemoveOperator),
        "keep": (NoOptions, KeepOperator),
        "surrogate": (SurrogateOptions, SurrogateOperator),
        "dateshift": (DateshiftOptions, DateshiftOperator),
        "hash": (HashOptions, HashOperator),
        "encrypt": (NoOptions, EncryptOperator),
        "keep_year": (KeepYearOptions, KeepYearOperator),
        "keep_age": (KeepAgeOptions, KeepAgeOperator),
    }
    for name, (options, build) in builtins.items():
        if name not in _REGISTRY:
            register_operator(name, options, build, needs_key=build.needs_key)


def known_operators() -> tuple[str, ...]:
    register_builtins()
    return tuple(sorted(_REGISTRY))


def operator_info(name: str) -> OperatorInfo:
    """The registered operator ``name``; UnknownOperatorError lists the known ones."""
    register_builtins()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownOperatorError(name, known=known_operators()) from None


def describe_validation(exc: ValidationError, where: str) -> str:
    """Validation problems as ``key.path: message`` (input values are never echoed)."""
    problems = []
    for error in exc.errors(include_input=False, include_url=False):
        path = ".".join([where, *(str(p) for p in error["loc"])])
        problems.append(f"{path}: {error['msg']}")
    return "; ".join(problems)


@dataclass(frozen=True, slots=True)
class OperatorSpec:
    """An operator name with its validated options (what a policy gives a category)."""

    name: str
    options: Options = field(default_factory=NoOptions)

    @classmethod
    def of(cls, name: str, **options: Any) -> OperatorSpec:
        """A spec with options validated by the operator's model (PolicyError if invalid)."""
        try:
            return cls(name, operator_info(name).options.model_validate(options))
        except ValidationError as exc:
            raise PolicyError(describe_validation(exc, name)) from None

    @property
    def needs_key(self) -> bool:
        return operator_info(self.name).needs_key

    def build(self) -> Operator:
        return operator_info(self.name).build(self.options)
