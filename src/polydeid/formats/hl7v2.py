"""HL7 v2 messages (ER7, the ``|^~\\&`` encoding): every component is a field judged by its
position.

**Structure.** A file holds one or more messages, each starting with an ``MSH`` segment (a
batch may start with ``FHS`` or ``BHS``, which define delimiters the same way). Segments end
at ``\\r`` (the standard), ``\\r\\n`` or ``\\n``; line ends are kept as they are. When the file
has a lone ``\\r`` anywhere, segments end at ``\\r`` or ``\\r\\n`` only and a lone ``\\n`` is
data (senders that put raw line breaks in report text); otherwise they end at ``\\n`` or
``\\r\\n``. Blank lines and MLLP framing characters (``\\x0b`` before a segment, ``\\x1c``
after the last) are skipped and written back unchanged. MSH-1 (the field separator) and MSH-2
(component, repetition, escape and subcomponent characters, optionally the 2.7 truncation
character) set the delimiters of each message, so a message may use other delimiters than
``|^~\\&``.

**Fields.** A field's repetitions, components and subcomponents are split down to the
smallest unit; each non-empty one (other than the HL7 null ``""``) is a
:class:`~polydeid.formats.base.Field` whose range covers exactly its raw characters, so a
replacement rewrites that unit and nothing else. Its path is ``PID-5.1`` (field 5 of PID,
component 1), ``PID-3[2].1`` (second repetition) or ``XCN``-style ``OBR-32.1.2``
(subcomponent 2, given only when a component has several); its ``line`` is the segment's
line, counted by the file's segment ends (for ``\\r``-separated files: the segment number).

**Escapes.** ``\\F\\ \\S\\ \\T\\ \\R\\ \\E\\`` (and ``\\P\\`` when MSH-2 names a truncation
character) are decoded for detection, as are ``\\.br\\`` and ``\\.sp\\`` (a line break),
``\\H\\``/``\\N\\`` (highlighting: one space, so words around them stay apart) and ``\\X..\\``
hexadecimal data: bytes in the message's character set (``\\X41\\``, ``\\XC3A9\\`` for an é in
UTF-8, ``\\X30373132\\`` for ``0712``; ``\\X0D0A\\`` is a line break) that decode to printable
characters, tabs or line breaks. Every other escape (``\\Z..\\``, ``\\C..\\``, hex data that does
not decode so, other formatting commands) is kept as written. Decoded fields carry ``offsets`` to
their raw characters (the characters of one escape share its position, so a replacement touching any
of them rewrites the whole escape); a replacement is written with the message's own escape character
for its delimiters and line breaks (``\\F\\``, ``\\X0A\\``); a message without an escape character
gets a space for each delimiter instead.

**Roles** come from ``lexicon/data/hl7v2.toml``: for each segment, the role and data type of
each field (``PID-5`` is a PERSON ``XPN``, ``NK1-2`` a PERSON_THIRD_PARTY ``XPN``); for each
data type, the role of each component (``XPN`` family, given and further given names are the
name, suffix, prefix and degree are kept; ``XTN`` numbers are phones and ``XTN-4`` an e-mail; a
``CX`` id is the field's category while its assigning authority and identifier type code are
kept, and a table 0203 identifier type code in ``CX-5`` refines the id's category: ``MR`` a
record number, ``NI``/``SS`` a national id). OBX-5 takes its type from OBX-2: ``TX``,
``FT`` and ``ST`` are free text scanned with the observation's name (OBX-3 text) as context,
numbers and codes are kept, ``DT``/``TS`` are dates. Segments the table does not list
(``Z`` segments among them) are free text. The file's patient (for date shifts and
surrogates shared across the file) is PID-3's first identifier when every PID of the file
names the same one.

**Errors** (:class:`~polydeid.core.errors.InputError` at ``source:line:column``): a file that
does not start with MSH (or FHS/BHS), a segment whose name is not three upper-case letters or
digits followed by the field separator, and a header without a field separator or encoding
characters, or with invalid ones. Messages name the segment (only when it is a standard
segment id) and field position, never the content.

**Encoding.** UTF-8 (a BOM is kept); data that is not UTF-8 is decoded in the character set
MSH-18 of the first message names (HL7 table 0211, e.g. ``8859/1``) and written back in it,
replacements with their accents dropped and ``?`` for what that set cannot hold. Pure ASCII
data is read the same way in the declared character set, so that replacements are written in
it too.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from polydeid.core.errors import ConfigError, DecodingError, InputError
from polydeid.core.taxonomy import Category
from polydeid.formats.base import Document, Encoder, Field
from polydeid.formats.text import decode_utf8
from polydeid.lexicon.fields import SKIP, Role, text_role, value_role
from polydeid.lexicon.hl7 import (
    ROLE_WORDS,
    SEGMENT_NAME,
    TEXT_SPEC,
    DataType,
    FieldDef,
    Spec,
    hl7_table,
)

__all__ = ["Delimiters", "Hl7Reader", "decode_escapes"]

_CR_MODE = re.compile(r"\r(?!\n)")
_CR_TERMINATOR = re.compile(r"\r\n?")
_LF_TERMINATOR = re.compile(r"\r?\n")
_FRAMING_START = "\x0b"
_FRAMING_END = "\x1c"
_BLANK = " \t" + _FRAMING_START + _FRAMING_END
_NULL = '""'
_CONTEXT_CHARS = 60
_PHONE = Category.CONTACT_PHONE.value
_EMAIL = Category.CONTACT_OTHER.value
_WHITESPACE = re.compile(r"\s+")

# --- delimiters and escapes -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Delimiters:
    """One message's delimiters (MSH-1 and MSH-2); absent ones are None."""

    field: str = "|"
    component: str = "^"
    repetition: str | None = "~"
    escape: str | None = "\\"
    subcomponent: str | None = "&"
    truncation: str | None = None

    @classmethod
    def from_header(cls, field: str, encoding: str) -> Delimiters:
        chars: list[str | None] = [*encoding, None, None, None, None]
        return cls(field, encoding[0], chars[1], chars[2], chars[3], chars[4])

    def named(self) -> dict[str, str]:
        """Escape letter → delimiter character, for those the message defines."""
        pairs = {
            "F": self.field,
            "S": self.component,
            "R": self.repetition,
            "E": self.escape,
            "T": self.subcomponent,
            "P": self.truncation,
        }
        return {k: v for k, v in pairs.items() if v is not None}


_FORMATTING = {".br": "\n", ".sp": "\n", "H": " ", "N": " "}


def _escape_value(body: str, named: Mapping[str, str], codec: str) -> str | None:
    """The characters escape ``body`` (between escape characters) stands for, or None when
    it is kept as written."""
    if body in named:
        return named[body]
    if body in _FORMATTING:
        return _FORMATTING[body]
    if body[:1] == "X" and len(body) > 1:
        digits = body[1:].upper()
        if digits == "0D0A":
            return "\n"
        if len(digits) % 2 or any(c not in "0123456789ABCDEF" for c in digits):
            return None
        try:
            chars = bytes.fromhex(digits).decode(codec)
        except (UnicodeDecodeError, LookupError):
            return None
        if chars and all(c.isprintable() or c in "\t\n\r" for c in chars):
            return chars
    return None


def decode_escapes(
    text: str, start: int, end: int, delimiters: Delimiters, codec: str = "utf-8"
) -> tuple[str, tuple[int, ...] | None]:
    """The decoded value of ``text[start:end]`` and, when it held escapes, the raw position of
    each decoded character plus the end (see the module docstring for what is decoded;
    ``codec``: the message's character set, for hexadecimal data)."""
    esc = delimiters.escape
    if esc is None or text.find(esc, start, end) < 0:
        return text[start:end], None
    named = delimiters.named()
    chars: list[str] = []
    offsets: list[int] = []
    i = start
    while i < end:
        if text[i] == esc:
            close = text.find(esc, i + 1, end)
            if close > i + 1:
                decoded = _escape_value(text[i + 1 : close], named, codec)
                if decoded is not None:
                    chars.append(decoded)
                    offsets.extend([i] * len(decoded))
                    i = close + 1
                    continue
                stop = close + 1  # an escape kept as written, closing character included
            elif close == i + 1:
                stop = close + 1  # an empty escape: both characters kept
            else:
                stop = end  # never closed: the rest is literal
            chars.extend(text[i:stop])
            offsets.extend(range(i, stop))
            i = stop
            continue
        chars.append(text[i])
        offsets.append(i)
        i += 1
    offsets.append(end)
    return "".join(chars), tuple(offsets)


def _fold(text: str, codec: str) -> str:
    """``text`` with what ``codec`` cannot hold folded: accents dropped, then ``?``."""
    try:
        text.encode(codec)
        return text
    except UnicodeEncodeError:
        pass
    stripped = "".join(
        c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)
    )
    return stripped.encode(codec, errors="replace").decode(codec)


def _encoder(delimiters: Delimiters, codec: str) -> Encoder:
    """Escapes a replacement for the message's raw form (and folds it into ``codec``)."""
    esc = delimiters.escape
    table: dict[str, str] = {}
    for letter, char in delimiters.named().items():
        table[char] = f"{esc}{letter}{esc}" if esc is not None else " "
    table["\r"] = f"{esc}X0D{esc}" if esc is not None else " "
    table["\n"] = f"{esc}X0A{esc}" if esc is not None else " "
    trans = str.maketrans(table)
    fold = codec.replace("_", "-").lower() not in ("utf-8", "utf8")

    def encode(value: str) -> str:
        return (_fold(value, codec) if fold else value).translate(trans)

    return encode


# --- reading ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Segment:
    start: int
    end: int
    line: int


def _segments(text: str, pos: int) -> Iterator[_Segment]:
    """The non-blank segments of ``text`` from ``pos``, framing characters trimmed."""
    terminator = _CR_TERMINATOR if _CR_MODE.search(text, pos) else _LF_TERMINATOR
    line = 1
    for match in terminator.finditer(text, pos):
        yield from _trimmed(text, pos, match.start(), line)
        pos = match.end()
        line += 1
    yield from _trimmed(text, pos, len(text), line)


def _trimmed(text: str, start: int, end: int, line: int) -> Iterator[_Segment]:
    if not text[start:end].strip(_BLANK):
        return
    while text[start] == _FRAMING_START:
        start += 1
    while text[end - 1] == _FRAMING_END:
        end -= 1
    yield _Segment(start, end, line)


def _split(text: str, start: int, end: int, sep: str | None) -> list[tuple[int, int]]:
    """``[start, end)`` cut at every ``sep`` (the whole range when ``sep`` is None)."""
    if sep is None:
        return [(start, end)]
    parts: list[tuple[int, int]] = []
    i = start
    while True:
        j = text.find(sep, i, end)
        if j < 0:
            parts.append((i, end))
            return parts
        parts.append((i, j))
        i = j + 1


def _context(value: str) -> str:
    return _WHITESPACE.sub(" ", value).strip()[:_CONTEXT_CHARS]


class _Reader:
    """Reads one document's segments into fields."""

    def __init__(self, text: str, source: str, codec: str) -> None:
        self.text = text
        self.source = source
        self.codec = codec
        self.table = hl7_table()
        self.fields: list[Field] = []
        self.patients: set[str] = set()
        self.delimiters: Delimiters | None = None
        self.encode: Encoder = _encoder(Delimiters(), codec)
        self._roles: dict[str, Role] = {}
        #: The message each field belongs to (MSH count), so identifiers known from one
        #: message's PID are searched for in that message's notes only.
        self.message = 0

    def error(self, message: str, seg: _Segment, column: int = 1) -> InputError:
        return InputError(message, location=f"{self.source}:{seg.line}:{column}")

    def read(self) -> Document:
        text = self.text
        pos = 1 if text.startswith("\ufeff") else 0
        found = False
        for seg in _segments(text, pos):
            found = True
            self.segment(seg)
        if not found:
            raise InputError("no HL7 v2 segments: the input is blank", location=f"{self.source}:1")
        patient = next(iter(self.patients)) if len(self.patients) == 1 else None
        return Document(text, self.fields, "hl7", patient=patient)

    def segment(self, seg: _Segment) -> None:
        text = self.text
        name = text[seg.start : seg.start + 3]
        valid = SEGMENT_NAME.fullmatch(name) is not None
        if valid and name in self.table.headers:
            if name == "MSH":
                self.message += 1
            self.header(seg, name)
            first_field, numbers_from = seg.start + 4, 2
        elif self.delimiters is None:
            raise self.error(
                "an HL7 v2 file must start with an MSH segment (or an FHS/BHS batch header)", seg
            )
        else:
            fs = self.delimiters.field
            after = seg.start + 3
            if not valid or (after < seg.end and text[after] != fs):
                raise self.error(
                    "segment name must be three upper-case letters or digits followed by the "
                    "field separator",
                    seg,
                )
            if after >= seg.end:
                return  # a segment with no fields
            first_field, numbers_from = after + 1, 1
        assert self.delimiters is not None
        spans = _split(text, first_field, seg.end, self.delimiters.field)
        numbered = list(enumerate(spans, start=numbers_from))
        definition = self.table.segments.get(name)
        for number, (start, end) in numbered:
            if numbers_from == 2 and number == 2:
                continue  # MSH-2: the encoding characters
            if start == end:
                continue
            fdef = FieldDef("", TEXT_SPEC) if definition is None else definition.at(number)
            spec, context = fdef.spec, fdef.name
            if spec.role == "observation":
                spec, context = self.observation(numbered)
            self.field(seg, name, number, start, end, spec, context)

    def header(self, seg: _Segment, name: str) -> None:
        text = self.text
        if seg.end <= seg.start + 3:
            raise self.error(f"{name} segment ends before its field separator ({name}-1)", seg, 4)
        fs = text[seg.start + 3]
        if fs.isalnum() or fs.isspace():
            raise self.error(f"{name}-1 field separator must be a punctuation character", seg, 4)
        stop = text.find(fs, seg.start + 4, seg.end)
        encoding = text[seg.start + 4 : seg.end if stop < 0 else stop]
        if not encoding:
            raise self.error(f"{name} segment has no encoding characters ({name}-2)", seg, 5)
        if (
            len(encoding) > 5
            or len(set(encoding)) != len(encoding)
            or fs in encoding
            or any(c.isalnum() or c.isspace() for c in encoding)
        ):
            raise self.error(
                f"{name}-2 encoding characters are invalid: at most five distinct punctuation "
                "characters other than the field separator",
                seg,
                5,
            )
        self.delimiters = Delimiters.from_header(fs, encoding)
        self.encode = _encoder(self.delimiters, self.codec)

    def observation(self, numbered: list[tuple[int, tuple[int, int]]]) -> tuple[Spec, str]:
        """OBX-5's spec (by the value type in OBX-2) and context (OBX-3's text)."""
        by_number = dict(numbered)
        value_type = self.first_component(by_number.get(2)).strip().upper()
        spec = self.table.observation.get(value_type, TEXT_SPEC)
        context = "Observation value"
        identifier = by_number.get(3)
        if identifier is not None:
            d = self.delimiters
            assert d is not None
            rep = _split(self.text, *identifier, d.repetition)[0]
            comps = _split(self.text, *rep, d.component)
            for c in (comps[1:2] + comps[:1]) if len(comps) > 1 else comps:
                sub = _split(self.text, *c, d.subcomponent)[0]
                label = _context(decode_escapes(self.text, *sub, d, self.codec)[0])
                if label:
                    context = label
                    break
        return spec, context

    def refined(self, role: str, dtype: DataType | None, comps: list[tuple[int, int]]) -> str:
        """``role`` (a field's category), or the one its identifier type code names."""
        index = dtype.id_type_component if dtype is not None else None
        if index is None or index > len(comps) or role in ROLE_WORDS:
            return role
        d = self.delimiters
        assert d is not None
        sub = _split(self.text, *comps[index - 1], d.subcomponent)[0]
        code = decode_escapes(self.text, *sub, d, self.codec)[0].strip().upper()
        return self.table.identifier_types.get(code, role)

    def first_component(self, span: tuple[int, int] | None) -> str:
        if span is None:
            return ""
        d = self.delimiters
        assert d is not None
        rep = _split(self.text, *span, d.repetition)[0]
        comp = _split(self.text, *rep, d.component)[0]
        sub = _split(self.text, *comp, d.subcomponent)[0]
        return decode_escapes(self.text, *sub, d, self.codec)[0]

    def role(self, role: str, context: str) -> Role:
        if role == "skip":
            return SKIP
        key = f"text\0{context}" if role == "text" else role
        cached = self._roles.get(key)
        if cached is None:
            cached = text_role(context) if role == "text" else value_role(Category.parse(role))
            self._roles[key] = cached
        return cached

    def field(
        self, seg: _Segment, name: str, number: int, start: int, end: int, spec: Spec, context: str
    ) -> None:
        d = self.delimiters
        assert d is not None
        types = self.table.types
        dtype = types[spec.type] if spec.type is not None else None
        reps = _split(self.text, start, end, d.repetition)
        for r, rep in enumerate(reps, start=1):
            comps = _split(self.text, *rep, d.component)
            own = self.refined(spec.role, dtype, comps)
            for c, comp in enumerate(comps, start=1):
                if dtype is not None:
                    cspec = self.spec_at(dtype, c, comps)
                    crole = own if cspec.role == "self" else cspec.role
                    ctype = types[cspec.type] if cspec.type is not None else None
                else:
                    crole, ctype = spec.role, None
                subs = _split(self.text, *comp, d.subcomponent)
                for s, (lo, hi) in enumerate(subs, start=1):
                    if lo == hi or self.text[lo:hi] == _NULL:
                        continue
                    value, offsets = decode_escapes(self.text, lo, hi, d, self.codec)
                    role = crole
                    if ctype is not None:
                        sspec = self.spec_at(ctype, s, subs)
                        role = crole if sspec.role == "self" else sspec.role
                    if role == _PHONE and "@" in value:
                        role = _EMAIL
                    path = f"{name}-{number}" + (f"[{r}]" if len(reps) > 1 else "") + f".{c}"
                    if len(subs) > 1:
                        path += f".{s}"
                    self.fields.append(
                        Field(
                            lo,
                            hi,
                            value,
                            path,
                            self.role(role, context),
                            line=seg.line,
                            offsets=offsets,
                            encode=self.encode,
                            group=f"message {self.message}",
                        )
                    )
                    if name == "PID" and number == 3 and r == 1 and c == 1 and s == 1:
                        patient = value.strip()
                        if patient:
                            self.patients.add(patient)

    def spec_at(self, dtype: DataType, position: int, parts: list[tuple[int, int]]) -> Spec:
        """The spec of part ``position`` of ``parts`` (components or subcomponents)."""
        if position != 1:
            return dtype.at(position)
        d = self.delimiters
        assert d is not None
        return dtype.first(len(parts), decode_escapes(self.text, *parts[0], d, self.codec)[0])


def declared_charset(data: bytes) -> str | None:
    """The Python codec for the character set MSH-18 of the first MSH segment names, if any."""
    match = re.search(rb"(?:^(?:\xef\xbb\xbf)?|[\r\n\x0b])MSH(.)", data)
    if match is None:
        return None
    fs = match.group(1)
    start = match.start(1)
    end = len(data)
    for stop in (b"\r", b"\n"):
        k = data.find(stop, start)
        if 0 <= k < end:
            end = k
    parts = data[start + 1 : end].split(fs)
    if len(parts) < 17:
        return None
    encoding, value = parts[0], parts[16]  # MSH-2 and MSH-18
    for sep in encoding[:2]:
        value = value.split(bytes([sep]))[0]
    name = value.decode("ascii", errors="replace").strip().upper()
    return hl7_table().charsets.get(name)


class Hl7Reader:
    """HL7 v2 ER7 messages (see the module docstring)."""

    name = "hl7"

    def __init__(self, **options: Any) -> None:
        if options:
            raise ConfigError(f"the hl7 reader takes no options (got {', '.join(sorted(options))})")
        self._codec = "utf-8"

    def decode(self, data: bytes, *, source: str) -> tuple[str, str]:
        try:
            text = decode_utf8(data, source=source)
            codec = "utf-8"
            if data.isascii():
                # ASCII reads the same in every charset MSH-18 may name; replacements are
                # then written in (and folded into) the declared one
                codec = declared_charset(data) or codec
        except DecodingError:
            codec_or_none = declared_charset(data)
            if codec_or_none is None or codec_or_none == "utf-8":
                raise
            try:
                text = data.decode(codec_or_none)
            except UnicodeDecodeError as exc:
                raise DecodingError(
                    f"not valid UTF-8, nor valid in the MSH-18 character set "
                    f"({codec_or_none}) at byte {exc.start}",
                    location=source,
                ) from None
            codec = codec_or_none
        self._codec = codec
        return text, codec

    def read(self, text: str, *, source: str) -> Document:
        return _Reader(text, source, self._codec).read()
