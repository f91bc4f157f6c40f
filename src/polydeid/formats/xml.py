"""XML documents and HL7 CDA R2 clinical documents.

Reading is done in two passes over the decoded text:

1. **Validation** with :mod:`defusedxml` (expat underneath): the document must be well-formed,
   and entity declarations (internal, external or parameter entities: "billion laughs", XXE),
   external entity references and external DTDs are refused before anything is expanded or
   fetched. Errors are :class:`~polydeid.core.errors.InputError` located at
   ``source:line:column`` with expat's message; the document's content is never quoted.
2. **Scanning** with a position-tracking scanner (iterative, one pass, linear in the size of
   the document) that finds comments, CDATA sections, processing instructions, the DOCTYPE, start
   and end tags and their attributes, and the text between tags. Text nodes, CDATA content,
   attribute values and comments (scanned as free text: exports leave names and dates in them) and
   the content of processing instructions other than the XML declaration (``<?note call the
   ward?>``: free text too) become :class:`~polydeid.formats.base.Field` values at their exact raw
   range; entity and character references (``&amp;``, ``&#233;``, ``&#x41;``) are decoded, with
   ``offsets`` mapping each decoded character back to its raw position, and a replacement is escaped
   for the place it goes (``&``, ``<``, ``>`` and the attribute's quote; ``]]>`` split inside CDATA;
   no ``--`` in a comment, no ``?>`` in a processing instruction; characters the declared encoding
   cannot hold as character references). Nothing is re-serialised: every byte outside a replaced
   value is written back as it was, namespaces and prefixes included.

Roles:

- :class:`XmlReader` (``xml``) judges a value by its element and attribute *local* names
  through :func:`polydeid.lexicon.fields.role_for_name`, the parent element giving context
  (``<patient><name>`` is the patient's name; ``<birthDate value="...">`` is a date: an
  attribute called ``value`` is named by its element). Namespace declarations, ``xsi:*`` and
  ``xml:*`` attributes are skipped; whitespace-only text is not a field.
- :class:`CdaReader` (``cda``) judges a value by its element path, from
  ``formats/data/cda.toml`` (HL7 CDA R2 / C-CDA element definitions; the decisions taken are
  written down there). Codes, OIDs (``@root``, ``templateId``, ``@code``, ``@codeSystem``,
  ``@displayName`` of clinical codes), units and structural attributes are never touched.

The engine then also looks for the names and ids of value fields in the document's text
fields (``Field.group`` is None: one CDA or XML document is one record), so a narrative that
repeats the patient's name from the header has it replaced too.
"""

from __future__ import annotations

import codecs
import re
import tomllib
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from typing import Any
from xml.parsers import expat

from defusedxml.common import DefusedXmlException
from defusedxml.ElementTree import DefusedXMLParser, ParseError

from polydeid.core.errors import ConfigError, DecodingError, InputError
from polydeid.core.taxonomy import Category
from polydeid.formats.base import Document, Field, column_of, line_of, located
from polydeid.formats.text import decode_utf8
from polydeid.lexicon.fields import (
    SKIP,
    Role,
    RoleKind,
    normalise_name,
    role_for_name,
    text_role,
    value_role,
)
from polydeid.locales import check_data

__all__ = ["CdaReader", "NarrativeReader", "XmlReader", "fragment_fields"]

XSI_NAMESPACE = "http://www.w3.org/2001/XMLSchema-instance"
XML_NAMESPACE = "http://www.w3.org/XML/1998/namespace"
#: Schema plumbing, never identifying (local names of attributes in the XSI namespace).
_XSI_ATTRIBUTES = frozenset({"type", "schemaLocation", "noNamespaceSchemaLocation", "nil"})

# --- decoding --------------------------------------------------------------------------------

_DECLARED_ENCODING = re.compile(
    r"""^\ufeff?<\?xml[ \t\r\n][^>]*?\bencoding[ \t\r\n]*=[ \t\r\n]*["']([A-Za-z][\w.:-]*)["']"""
)
_DECLARED_ENCODING_BYTES = re.compile(
    rb"""^<\?xml[ \t\r\n][^>]*?\bencoding[ \t\r\n]*=[ \t\r\n]*["']([A-Za-z][\w.:-]*)["']"""
)
_UTF = frozenset({"utf-8", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be"})


def _codec(name: str) -> str | None:
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def _decode_with(data: bytes, encoding: str, *, source: str) -> str:
    """``data`` decoded strictly; a bad byte is located by line and column."""
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        head = data[: exc.start].decode(encoding, errors="replace")
        line = head.count("\n") + 1
        column = len(head) - (head.rfind("\n") + 1) + 1
        raise DecodingError(
            f"invalid {encoding} ({exc.reason})", location=f"{source}:{line}:{column}"
        ) from None


def decode_xml(data: bytes, *, source: str) -> tuple[str, str]:
    """(text, encoding) of an XML document: a byte-order mark decides (and stays in the text,
    so it is written back), else the XML declaration's ``encoding``, else UTF-8."""
    if data.startswith(b"\xef\xbb\xbf"):
        return decode_utf8(data, source=source), "utf-8"
    if data.startswith((b"\xff\xfe", b"<\x00")):
        return _decode_with(data, "utf-16-le", source=source), "utf-16-le"
    if data.startswith((b"\xfe\xff", b"\x00<")):
        return _decode_with(data, "utf-16-be", source=source), "utf-16-be"
    match = _DECLARED_ENCODING_BYTES.match(data[:512])
    encoding = _codec(match.group(1).decode("ascii")) if match else "utf-8"
    if encoding is None:
        assert match is not None
        raise InputError(
            "unsupported character encoding in the XML declaration",
            location=f"{source}:1:{match.start(1) + 1}",
        )
    if encoding.startswith("utf-"):
        # UTF-8, or a BOM-less document that declares UTF-16/32 while its bytes are 8-bit
        # (mislabelled): read as UTF-8, which expat accepts for the decoded text too.
        return decode_utf8(data, source=source), "utf-8"
    return _decode_with(data, encoding, source=source), encoding


def declared_encoding(text: str) -> str | None:
    """The codec name the document's XML declaration names, if any (and known)."""
    match = _DECLARED_ENCODING.match(text[:512])
    return _codec(match.group(1)) if match else None


# --- validation ------------------------------------------------------------------------------


class _Refused(Exception):
    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.message, self.line, self.column = message, line, column


class _NoTarget:
    """An ElementTree parser target with no callbacks: validation builds no tree."""


class _Validator(DefusedXMLParser):
    """defusedxml's parser, refusing with a position and without echoing the document.

    (Its own names carry a ``_pd_`` prefix: ElementTree's parser keeps private attributes such
    as ``_doctype`` on the instance, which would hide a method of the same name.)
    """

    def __init__(self, text: str) -> None:
        super().__init__(
            target=_NoTarget(), forbid_dtd=False, forbid_entities=True, forbid_external=True
        )
        self._pd_text = text
        parser = self.parser
        parser.DefaultHandlerExpand = None  # no per-chunk Python callback
        parser.StartDoctypeDeclHandler = self._pd_doctype
        parser.SkippedEntityHandler = self._pd_skipped

    def _pd_refuse(self, message: str, *, back_to: str | None = None) -> _Refused:
        """A refusal at expat's current position, or (for a declaration, which expat reports
        at its end) at the start of the ``back_to`` text before it."""
        line, column = self.parser.CurrentLineNumber, self.parser.CurrentColumnNumber
        if back_to is not None:
            text = self._pd_text
            pos = _offset_of(text, line, column)
            start = text.rfind(back_to, 0, pos)
            if start != -1:
                line = line_of(text, start)
                column = column_of(text, start) - 1
        return _Refused(message, line, column + 1)

    def defused_entity_decl(self, *args: Any) -> None:
        raise self._pd_refuse("forbidden entity declaration", back_to="<!ENTITY")

    def defused_unparsed_entity_decl(self, *args: Any) -> None:
        raise self._pd_refuse("forbidden entity declaration", back_to="<!ENTITY")

    def defused_external_entity_ref_handler(self, *args: Any) -> None:
        raise self._pd_refuse("forbidden external entity reference")

    def _pd_doctype(self, name: str, sysid: str | None, pubid: str | None, subset: int) -> None:
        if sysid or pubid:
            raise self._pd_refuse("forbidden external DTD", back_to="<!DOCTYPE")

    def _pd_skipped(self, name: str, is_parameter_entity: bool) -> None:
        raise self._pd_refuse("undefined entity")


def _offset_of(text: str, line: int, column: int) -> int:
    """The index in ``text`` of 1-based ``line`` and 0-based ``column``."""
    pos = 0
    for _ in range(line - 1):
        found = text.find("\n", pos)
        if found == -1:
            break
        pos = found + 1
    return min(pos + column, len(text))


def validate(text: str, *, source: str) -> None:
    """Raise a located :class:`InputError` unless ``text`` is well-formed, safe XML."""
    parser = _Validator(text)
    try:
        parser.feed(text)
        parser.close()
    except _Refused as exc:
        raise InputError(exc.message, location=f"{source}:{exc.line}:{exc.column}") from None
    except ParseError as exc:
        line, column = exc.position
        message = expat.ErrorString(exc.code) if exc.code else "malformed XML"
        raise InputError(message, location=f"{source}:{line}:{column + 1}") from None
    except DefusedXmlException:
        pos = f"{parser.parser.CurrentLineNumber}:{parser.parser.CurrentColumnNumber + 1}"
        raise InputError("forbidden XML construct", location=f"{source}:{pos}") from None


# --- escaping --------------------------------------------------------------------------------


def escape_text(value: str) -> str:
    """``value`` as XML character data."""
    return (
        value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\r", "&#13;")
    )


def escape_attribute(value: str, quote: str = '"') -> str:
    """``value`` inside an attribute delimited by ``quote`` (whitespace kept through
    attribute-value normalisation as character references)."""
    out = escape_text(value).replace("\t", "&#9;").replace("\n", "&#10;")
    return out.replace('"', "&quot;") if quote == '"' else out.replace("'", "&apos;")


def escape_comment(value: str) -> str:
    """``value`` inside a comment, which may hold neither ``--`` nor end with ``-``."""
    out = value
    while "--" in out:
        out = out.replace("--", "- -")
    return out + " " if out.endswith("-") else out


def escape_instruction(value: str) -> str:
    """``value`` inside a processing instruction, which ends at the first ``?>``."""
    out = value
    while "?>" in out:
        out = out.replace("?>", "? >")
    return out


def escape_cdata(value: str) -> str:
    """``value`` inside a CDATA section: a ``]]>`` in it ends the section and reopens one, so
    the parsed content is exactly ``value`` and the section is never closed early."""
    return value.replace("]]>", "]]]]><![CDATA[>")


@dataclass(frozen=True, slots=True)
class _Escaper:
    """An encoder for one kind of place (text, attribute, CDATA, comment, processing
    instruction) in a document whose declared encoding may not hold every character: those
    become character references (in a comment or an instruction, where references mean
    nothing, ``?``)."""

    kind: str  # "text" | '"' | "'" | "cdata" | "comment" | "pi"
    charset: str | None = None

    def __call__(self, value: str) -> str:
        if self.kind == "cdata":
            out = escape_cdata(value)
        elif self.kind == "comment":
            out = escape_comment(value)
        elif self.kind == "pi":
            out = escape_instruction(value)
        elif self.kind == "text":
            out = escape_text(value)
        else:
            out = escape_attribute(value, self.kind)
        if self.charset is None:
            return out
        return "".join(ch if _encodable(ch, self.charset) else self._reference(ch) for ch in out)

    def _reference(self, ch: str) -> str:
        if self.kind in ("comment", "pi"):
            return "?"
        ref = f"&#x{ord(ch):X};"
        return f"]]>{ref}<![CDATA[" if self.kind == "cdata" else ref


def _encodable(ch: str, charset: str) -> bool:
    if ch.isascii():
        return True
    try:
        ch.encode(charset)
    except UnicodeEncodeError:
        return False
    return True


# --- scanning --------------------------------------------------------------------------------

_S = "[ \t\r\n]"
_NAME = re.compile(r"[^ \t\r\n/>]+")
_ATTRIBUTE = re.compile(rf"{_S}+([^ \t\r\n=/>]+){_S}*={_S}*(?:\"([^\"]*)\"|'([^']*)')")
_TAG_END = re.compile(rf"{_S}*(/?)>")
_PI_TARGET = re.compile(rf"([^ \t\r\n?]+){_S}*")
_END_TAG = re.compile(rf"</([^ \t\r\n>]+){_S}*>")
_PREDEFINED = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}


def decode_references(text: str, start: int, end: int) -> tuple[str, tuple[int, ...] | None]:
    """The value of ``text[start:end]`` with entity and character references resolved, and
    (when any was) the raw position of each decoded character plus the end."""
    amp = text.find("&", start, end)
    if amp == -1:
        return text[start:end], None
    chars: list[str] = []
    offsets: list[int] = []
    pos = start
    while amp != -1:
        chars.append(text[pos:amp])
        offsets.extend(range(pos, amp))
        semi = text.find(";", amp, end)
        name = text[amp + 1 : semi]
        if name.startswith("#x"):
            chars.append(chr(int(name[2:], 16)))
        elif name.startswith("#"):
            chars.append(chr(int(name[1:])))
        else:
            chars.append(_PREDEFINED[name])
        offsets.append(amp)
        pos = semi + 1
        amp = text.find("&", pos, end)
    chars.append(text[pos:end])
    offsets.extend(range(pos, end))
    offsets.append(end)
    return "".join(chars), tuple(offsets)


class Frame:
    """An open element while scanning: names, namespace scope, kept attributes. Its path
    (``/a/b[2]/c``) is built from the open elements' steps when a field first needs it."""

    __slots__ = (
        "attributes",
        "comments",
        "counts",
        "instructions",
        "local",
        "namespaces",
        "path",
        "qname",
        "step",
        "texts",
    )

    def __init__(
        self, qname: str, step: str, namespaces: dict[str, str], attributes: dict[str, str]
    ) -> None:
        self.qname = qname
        self.local = qname.rpartition(":")[2]
        self.step = step
        self.path: str | None = None
        self.namespaces = namespaces
        self.attributes = attributes  # local name -> decoded value (of the few kept)
        self.counts: dict[str, int] = {}
        self.texts = 0
        self.comments = 0
        self.instructions = 0


@dataclass(frozen=True, slots=True)
class Attribute:
    qname: str
    prefix: str
    local: str
    start: int  # raw value range (inside the quotes)
    end: int
    quote: str
    value: str
    offsets: tuple[int, ...] | None

    def field(self, path: str, role: Role, line: int, escaper: _Escaper) -> Field:
        return Field(
            self.start,
            self.end,
            self.value,
            f"{path}/@{self.qname}",
            role,
            line=line,
            offsets=self.offsets,
            encode=escaper,
        )


def sub_field(f: Field, start: int, end: int, role: Role, *, text: str) -> Field:
    """The part ``[start, end)`` of ``f``'s value as a field of its own."""
    value = f.value[start:end]
    line = None if f.line is None else f.line + text.count("\n", f.start, f.raw(0, start)[0])
    if f.offsets is None:
        begin, offsets = f.start + start, None
    else:
        offsets = f.offsets[start : end + 1]
        begin = offsets[0]
    return Field(
        begin,
        begin + len(value) if offsets is None else offsets[-1],
        value,
        f.path,
        role,
        line=line,
        offsets=offsets,
        encode=f.encode,
        group=f.group,
    )


class _Lines:
    """Line numbers of increasing positions, counted incrementally (linear overall)."""

    __slots__ = ("line", "pos", "text")

    def __init__(self, text: str) -> None:
        self.text, self.pos, self.line = text, 0, 1

    def at(self, pos: int) -> int:
        if pos < self.pos:  # not expected; stay correct anyway
            return self.text.count("\n", 0, pos) + 1
        self.line += self.text.count("\n", self.pos, pos)
        self.pos = pos
        return self.line


#: Roles by element and attribute names (a document repeats a few names many times).
_role_for = lru_cache(maxsize=4096)(role_for_name)
_NARRATIVE = text_role("narrative")


class XmlReader:
    """Generic XML: roles from element and attribute names (see the module docstring)."""

    name = "xml"

    def __init__(self, **options: Any) -> None:
        if options:
            raise ConfigError(
                f"unknown option(s) for format {self.name!r}: {', '.join(sorted(options))}"
            )

    # --- FormatReader ----------------------------------------------------------------------

    def decode(self, data: bytes, *, source: str) -> tuple[str, str]:
        return decode_xml(data, source=source)

    def read(self, text: str, *, source: str) -> Document:
        validate(text, source=source)
        charset = declared_encoding(text)
        if charset in _UTF:
            charset = None
        fields = list(_Scan(self, text, source, charset).run())
        return Document(text, fields, self.name, patient=self.patient_of(fields))

    # --- roles (overridden by CdaReader) -------------------------------------------------------

    def text_role(self, frames: Sequence[Frame]) -> Role:
        """The role of text directly inside ``frames[-1]``."""
        parent = frames[-2].local if len(frames) > 1 else ""
        return _role_for(parent, frames[-1].local)

    def attribute_role(self, frames: Sequence[Frame], attribute: Attribute) -> tuple[Role, int]:
        """(role, number of leading characters of the value left out of the field)."""
        element = frames[-1]
        if attribute.local == "value":  # <birthDate value="...">: the element names it
            parent = frames[-2].local if len(frames) > 1 else ""
            return _role_for(parent, element.local), 0
        return _role_for(element.local, attribute.local), 0

    def patient_of(self, fields: Sequence[Field]) -> str | None:
        return None


class NarrativeReader(XmlReader):
    """XHTML narrative held inside another format (a FHIR ``text.div``): every text node and
    CDATA section is free text in the context ``narrative``; attributes, comments and
    processing instructions are read as :class:`XmlReader` reads them."""

    name = "xhtml"

    def text_role(self, frames: Sequence[Frame]) -> Role:
        return _NARRATIVE


def fragment_fields(text: str, *, source: str, reader: XmlReader | None = None) -> list[Field]:
    """The fields of ``text``, a whole XML document already decoded (e.g. an XHTML narrative
    held in a JSON string), with ranges in ``text``; ``reader`` (default :class:`XmlReader`)
    gives the roles. Raises :class:`InputError` as :meth:`XmlReader.read` does."""
    validate(text, source=source)
    return list(_Scan(reader or XmlReader(), text, source, None).run())


class _Scan:
    """One pass over a validated document, yielding its fields in order."""

    def __init__(self, reader: XmlReader, text: str, source: str, charset: str | None) -> None:
        self.reader = reader
        self.text = text
        self.source = source
        self.charset = charset
        self.lines = _Lines(text)
        self.frames: list[Frame] = []
        self.roots: dict[str, int] = {}
        self.text_escaper = _Escaper("text", charset)
        self.cdata_escaper = _Escaper("cdata", charset)
        self.comment_escaper = _Escaper("comment", charset)
        self.instruction_escaper = _Escaper("pi", charset)
        self.attribute_escapers = {q: _Escaper(q, charset) for q in "\"'"}
        self.top_comments = 0
        self.top_instructions = 0

    def _broken(self, pos: int) -> InputError:
        # Only reachable if the scanner and expat disagree on a document.
        return located("not well-formed XML", source=self.source, text=self.text, pos=pos)

    def run(self) -> Iterator[Field]:
        text = self.text
        n = len(text)
        pos = 0
        while pos < n:
            lt = text.find("<", pos)
            if lt == -1:
                lt = n
            if lt > pos and self.frames:
                yield from self._text(pos, lt, cdata=False)
            if lt >= n:
                break
            if text.startswith("<!--", lt):
                end = text.find("-->", lt + 4)
                if end == -1:
                    raise self._broken(lt)
                yield from self._comment(lt + 4, end)
                pos = end + 3
            elif text.startswith("<![CDATA[", lt):
                end = text.find("]]>", lt + 9)
                if end == -1:
                    raise self._broken(lt)
                if self.frames:
                    yield from self._text(lt + 9, end, cdata=True)
                pos = end + 3
            elif text.startswith("<?", lt):
                end = self._after(text.find("?>", lt + 2), 2, lt) - 2
                yield from self._instruction(lt + 2, end)
                pos = end + 2
            elif text.startswith("<!DOCTYPE", lt):
                pos = yield from self._doctype(lt)
            elif text.startswith("</", lt):
                m = _END_TAG.match(text, lt)
                if m is None or not self.frames or self.frames[-1].qname != m.group(1):
                    raise self._broken(lt)
                self.frames.pop()
                pos = m.end()
            else:
                pos = yield from self._start_tag(lt)
        if self.frames:
            raise self._broken(n)

    def _after(self, found: int, length: int, at: int) -> int:
        if found == -1:
            raise self._broken(at)
        return found + length

    def _doctype(self, lt: int) -> Generator[Field, None, int]:
        text = self.text
        i, n = lt + 9, len(text)
        while i < n:
            c = text[i]
            if c in "\"'":
                i = self._after(text.find(c, i + 1), 1, i)
            elif c == "[":
                i = yield from self._subset(i + 1)
            elif c == ">":
                return i + 1
            else:
                i += 1
        raise self._broken(lt)

    def _subset(self, i: int) -> Generator[Field, None, int]:
        """A DOCTYPE's internal subset (validation refused entity declarations): its comments
        and processing instructions are fields, as outside it."""
        text, n = self.text, len(self.text)
        while i < n:
            if text.startswith("<!--", i):
                end = self._after(text.find("-->", i + 4), 3, i) - 3
                yield from self._comment(i + 4, end)
                i = end + 3
            elif text.startswith("<?", i):
                end = self._after(text.find("?>", i + 2), 2, i) - 2
                yield from self._instruction(i + 2, end)
                i = end + 2
            elif text[i] in "\"'":
                i = self._after(text.find(text[i], i + 1), 1, i)
            elif text[i] == "]":
                return i + 1
            else:
                i += 1
        raise self._broken(i)

    def _path(self) -> str:
        """The path of the innermost open element (built once per element, on demand)."""
        frame = self.frames[-1]
        if frame.path is None:
            frame.path = "/" + "/".join(f.step for f in self.frames)
        return frame.path

    def _comment(self, start: int, end: int) -> Iterator[Field]:
        """A comment's content: free text (exports leave names and dates in comments)."""
        value = self.text[start:end]
        if not value.strip():
            return
        where = self._path() if self.frames else ""
        if self.frames:
            self.frames[-1].comments += 1
            count = self.frames[-1].comments
        else:
            self.top_comments += 1
            count = self.top_comments
        suffix = "/comment()" if count == 1 else f"/comment()[{count}]"
        yield Field(
            start,
            end,
            value,
            where + suffix,
            text_role("comment"),
            line=self.lines.at(start),
            encode=self.comment_escaper,
        )

    def _instruction(self, start: int, end: int) -> Iterator[Field]:
        """A processing instruction ``<?target content?>``: its content is free text (judged
        by the target's name, as an element's text is), the XML declaration is not."""
        text = self.text
        m = _PI_TARGET.match(text, start, end)
        if m is None or m.group(1).casefold() == "xml":
            return
        target, begin = m.group(1), m.end()
        value = text[begin:end]
        if not value.strip():
            return
        role = _role_for(target)
        if role.kind is RoleKind.SKIP:
            role = text_role(" ".join(normalise_name(target)))
        where = self._path() if self.frames else ""
        if self.frames:
            self.frames[-1].instructions += 1
            count = self.frames[-1].instructions
        else:
            self.top_instructions += 1
            count = self.top_instructions
        step = "/processing-instruction()" + ("" if count == 1 else f"[{count}]")
        yield Field(
            begin,
            end,
            value,
            where + step,
            role,
            line=self.lines.at(begin),
            encode=self.instruction_escaper,
        )

    def _text(self, start: int, end: int, *, cdata: bool) -> Iterator[Field]:
        text = self.text
        frame = self.frames[-1]
        frame.texts += 1
        if cdata:
            value, offsets = text[start:end], None
        else:
            value, offsets = decode_references(text, start, end)
        if not value.strip():
            return
        role = self.reader.text_role(self.frames)
        suffix = "/text()" if frame.texts == 1 else f"/text()[{frame.texts}]"
        yield Field(
            start,
            end,
            value,
            self._path() + suffix,
            role,
            line=self.lines.at(start),
            offsets=offsets,
            encode=self.cdata_escaper if cdata else self.text_escaper,
        )

    def _start_tag(self, lt: int) -> Generator[Field, None, int]:
        text = self.text
        m = _NAME.match(text, lt + 1)
        if m is None:
            raise self._broken(lt)
        qname = m.group()
        pos = m.end()
        attributes: list[Attribute] = []
        while True:
            found = _ATTRIBUTE.match(text, pos)
            if found is None:
                break
            group = 2 if found.group(2) is not None else 3
            start, end = found.span(group)
            value, offsets = decode_references(text, start, end)
            name = found.group(1)
            prefix, _, local = name.rpartition(":")
            quote = '"' if group == 2 else "'"
            attributes.append(Attribute(name, prefix, local, start, end, quote, value, offsets))
            pos = found.end()
        close = _TAG_END.match(text, pos)
        if close is None:
            raise self._broken(pos)

        parent = self.frames[-1] if self.frames else None
        namespaces = parent.namespaces if parent else {"xml": XML_NAMESPACE}
        declared = [a for a in attributes if a.qname == "xmlns" or a.prefix == "xmlns"]
        if declared:
            namespaces = dict(namespaces)
            for a in declared:
                namespaces["" if a.qname == "xmlns" else a.local] = a.value
        counts = parent.counts if parent else self.roots
        index = counts[qname] = counts.get(qname, 0) + 1
        step = qname if index == 1 else f"{qname}[{index}]"
        kept: dict[str, str] = {}
        plain: list[Attribute] = []
        for a in attributes:
            if a.qname == "xmlns" or a.prefix == "xmlns":
                continue
            uri = namespaces.get(a.prefix) if a.prefix else None
            if uri == XML_NAMESPACE or a.prefix == "xml":
                continue
            if uri == XSI_NAMESPACE or (uri is None and a.prefix == "xsi"):
                if a.local == "type":
                    kept["xsi:type"] = a.value.rpartition(":")[2]
                if a.local in _XSI_ATTRIBUTES:
                    continue
            if not a.prefix:
                kept[a.local] = a.value
            plain.append(a)
        frame = Frame(qname, step, namespaces, kept)
        self.frames.append(frame)
        for a in plain:
            role, cut = self.reader.attribute_role(self.frames, a)
            if role.kind is RoleKind.SKIP or not a.value.strip():
                continue
            line = self.lines.at(a.start)
            f = a.field(self._path(), role, line, self.attribute_escapers[a.quote])
            yield sub_field(f, cut, len(a.value), role, text=text) if cut else f
        if close.group(1):  # empty-element tag
            self.frames.pop()
        return close.end()


# --- CDA -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PathRules:
    """Path-suffix rules (see ``cda.toml``): the longest rule ending a path decides."""

    by_last: dict[str, tuple[tuple[tuple[str, ...], str], ...]]

    @classmethod
    def of(cls, table: dict[str, str]) -> PathRules:
        grouped: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        for pattern, spec in table.items():
            steps = tuple(pattern.split("/"))
            if steps[-1] == "*":
                raise ValueError(f"a path rule cannot end with '*': {pattern}")
            grouped.setdefault(steps[-1], []).append((steps, spec))
        return cls(
            {
                last: tuple(sorted(rules, key=lambda r: len(r[0]), reverse=True))
                for last, rules in grouped.items()
            }
        )

    def match(self, path: Sequence[str]) -> str | None:
        for steps, spec in self.by_last.get(path[-1], ()):
            k = len(steps)
            if k > len(path):
                continue
            tail = path[len(path) - k :]
            if all(s == "*" or s == p for s, p in zip(steps, tail, strict=True)):
                return spec
        return None


@dataclass(frozen=True, slots=True)
class CdaRules:
    elements: PathRules
    attributes: PathRules
    date_types: frozenset[str]
    telecom_types: frozenset[str]
    telecom: dict[str, Category]
    roots: dict[str, Category]
    root_prefixes: tuple[tuple[str, Category], ...]  # longest first
    depth: int  # the most elements a rule looks at (paths are cut to this many)

    def root_category(self, root: str) -> Category | None:
        root = root.strip()
        exact = self.roots.get(root)
        if exact is not None:
            return exact
        for prefix, category in self.root_prefixes:
            if root.startswith(prefix):
                return category
        return None


_SPECIALS = frozenset({"text", "skip", "telecom", "typed", "typed-bound"})


@cache
def cda_rules() -> CdaRules:
    raw = check_data(
        tomllib.loads(
            resources.files("polydeid.formats").joinpath("data/cda.toml").read_text("utf-8")
        ),
        "formats/data/cda.toml",
    )
    for table in ("elements", "attributes"):
        for spec in raw[table].values():
            if spec not in _SPECIALS:
                Category.parse(spec)
    roots: dict[str, Category] = {}
    prefixes: list[tuple[str, Category]] = []
    for key, name in raw.get("id_roots", {}).items():
        if key.endswith(".*"):
            prefixes.append((key[:-1], Category.parse(name)))
        else:
            roots[key] = Category.parse(name)
    prefixes.sort(key=lambda p: len(p[0]), reverse=True)
    return CdaRules(
        elements=PathRules.of(raw["elements"]),
        attributes=PathRules.of(raw["attributes"]),
        date_types=frozenset(raw["types"]["dates"]),
        telecom_types=frozenset(raw["types"]["telecom"]),
        telecom={k.casefold(): Category.parse(v) for k, v in raw["telecom"].items()},
        roots=roots,
        root_prefixes=tuple(prefixes),
        depth=max(len(k.split("/")) for t in ("elements", "attributes") for k in raw[t]) + 1,
    )


_SCHEME = re.compile(r"[ \t\r\n]*([A-Za-z][A-Za-z0-9+.-]*):(//)?")
_ID_CATEGORIES = frozenset({Category.ID_RECORD, Category.ID_OTHER, Category.ID_NATIONAL})


def _context(frames: Sequence[Frame], extra: str = "") -> str:
    words: tuple[str, ...] = ()
    for frame in frames[-2:]:
        words += normalise_name(frame.local)
    if extra:
        words += normalise_name(extra)
    return " ".join(words[-4:])


class CdaReader(XmlReader):
    """HL7 CDA R2 documents: roles by element path from ``cda.toml``."""

    name = "cda"

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.rules = cda_rules()
        self._patient: str | None = None

    def _role(self, spec: str | None, context: str) -> Role:
        if spec is None or spec == "text":
            return text_role(context)
        if spec == "skip":
            return SKIP
        return value_role(Category.parse(spec), context=context)

    def text_role(self, frames: Sequence[Frame]) -> Role:
        path = [f.local for f in frames[-self.rules.depth :]]
        spec = self.rules.elements.match(path)
        if spec is None:
            # An element CDA does not define (local extensions, exports that borrow the CDA
            # namespace): judged by its name like any XML element.
            return super().text_role(frames)
        return self._role(spec, _context(frames))

    def attribute_role(self, frames: Sequence[Frame], attribute: Attribute) -> tuple[Role, int]:
        if attribute.prefix:  # sdtc:*, xsi:* and other extension attributes: not values
            return SKIP, 0
        path = [f.local for f in frames[-self.rules.depth :]]
        path.append("@" + attribute.local)
        spec = self.rules.attributes.match(path)
        element = frames[-1]
        context = _context(frames, attribute.local)
        if spec == "typed":
            kind = element.attributes.get("xsi:type", "")
            spec = (
                "DATE"
                if kind in self.rules.date_types
                else "telecom"
                if kind in self.rules.telecom_types
                else "skip"
            )
        elif spec == "typed-bound":
            parent_kind = frames[-2].attributes.get("xsi:type", "") if len(frames) > 1 else ""
            spec = "DATE" if parent_kind in self.rules.date_types else "skip"
        if spec == "telecom":
            return self._telecom(attribute.value, context)
        role = self._role(spec, context) if spec is not None else SKIP
        if role.category in _ID_CATEGORIES and attribute.local == "extension":
            root = element.attributes.get("root", "").strip()
            by_root = self.rules.root_category(root)
            if by_root is not None:
                role = value_role(by_root, context=context)
            if (
                self._patient is None
                and path[-4:] == ["recordTarget", "patientRole", "id", "@extension"]
                and attribute.value.strip()
            ):
                self._patient = f"cda:{root}:{attribute.value.strip()}"
        return role, 0

    def _telecom(self, value: str, context: str) -> tuple[Role, int]:
        m = _SCHEME.match(value)
        if m is not None and m.group(1).casefold() in self.rules.telecom:
            category = self.rules.telecom[m.group(1).casefold()]
            return value_role(category, context=context), m.end()
        if m is not None:  # another scheme (urn:, x-...): kept, the rest replaced
            return value_role(Category.CONTACT_OTHER, context=context), m.end()
        digits = sum(ch.isdigit() for ch in value)
        mostly_digits = digits * 2 >= len(value.strip())
        category = Category.CONTACT_PHONE if mostly_digits else Category.CONTACT_OTHER
        return value_role(category, context=context), 0

    def read(self, text: str, *, source: str) -> Document:
        self._patient = None
        return super().read(text, source=source)

    def patient_of(self, fields: Sequence[Field]) -> str | None:
        """The first ``recordTarget/patientRole/id`` (root and extension): date shifts and
        surrogates then follow the patient across documents."""
        return self._patient
