"""CoNLL-style token-per-line files with BIO/BIOES tags (MasakhaNER, ECHR, GermEval 2014).

One token per line with its columns separated by spaces/tabs (``separator=None``) or by tabs
only (``separator="\\t"``); a blank line ends a sentence; ``-DOCSTART-`` starts a document.
``token_column`` picks the token and ``tag_columns`` the tag layers (negative indices count
from the end). The first layer is the primary one; further layers (GermEval's inner column)
add their spans where they map to a category and do not repeat a span already there.

The text is a **reconstruction**: tokens joined by one space (``token_joiner``: none for a
language written without spaces between words, such as Chinese), sentences by a newline. The
original spacing is not in the file, so offsets index the rebuilt text (``meta["reconstructed"]``
is true, ``meta["sentence_starts"]`` gives each sentence's offset).

Documents: one per ``-DOCSTART-`` block, else one per file, or ``sentences_per_document``
sentences each when given. Tags are decoded leniently, as conlleval does: an ``I-`` tag that
does not continue a span of the same label starts one. A document with a malformed line
(too few columns, a label the scheme does not know) is left out and reported at ``file:line``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import NamedTuple

from polydeid.core import taxonomy
from polydeid.core.errors import ConfigError, PolydeidError, RecordError
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Scheme
from polydeid.corpora._files import corpus_files
from polydeid.corpora.document import AnnotatedDocument, Corpus, ReadFailure
from polydeid.formats.text import decode_utf8
from polydeid.locales import canonical_language
from polydeid.locales.names import titles_in_names

DOCSTART = "-DOCSTART-"
_BLANKS = re.compile(r"[ \t]+")
_CLOSING = frozenset({"E", "L", "S", "U"})
_OPENING = frozenset({"B", "S", "U"})


@dataclass(frozen=True, slots=True)
class Columns:
    """Where the token and the tag layers are, and how columns are separated."""

    token: int = 0
    tags: tuple[int, ...] = (-1,)
    separator: str | None = None
    comment_prefix: str | None = None
    joiner: str = " "  # between the tokens of a sentence in the rebuilt text
    header: str | None = None  # a first line starting so names the columns
    split_punctuation: bool = False  # punctuation glued to a token is a token of its own


class _Row(NamedTuple):
    """One token line: its 1-based number and its columns (a tuple: many per corpus)."""

    line: int
    fields: tuple[str, ...]


Sentence = list[_Row]
Found = tuple[int, int, str, Category | None]


def read_conll(
    path: str | Path,
    *,
    scheme: str | None = "conll",
    lang: str | None = None,
    token_column: int = 0,
    tag_columns: Sequence[int] = (-1,),
    separator: str | None = None,
    comment_prefix: str | None = None,
    sentences_per_document: int | None = None,
    name: str | None = None,
    token_joiner: str = " ",
    tokens_per_sentence: int | None = None,
    header_prefix: str | None = None,
    split_punctuation: bool = False,
) -> Corpus:
    """Read one CoNLL file, or every regular file of a directory (sorted by name).

    ``tokens_per_sentence``: cut a run of lines without a blank line into sentences of about
    that many tokens, each ended at a token tagged ``O`` (never inside a span), for files with
    no sentence breaks (Europeana newspapers). ``header_prefix``: a first line starting with it
    names the columns and is skipped (HIPE-2022's ``TOKEN``). ``split_punctuation``: punctuation
    glued to a token by OCR tokenisation (``Mussolini,``, ``(Briand``) becomes a token of its
    own tagged ``O`` (:func:`split_glued`), so that a span never takes it in."""
    if lang is None:
        raise ConfigError("the conll reader needs lang= (the files do not say their language)")
    if sentences_per_document is not None and sentences_per_document < 1:
        raise ConfigError("sentences_per_document must be at least 1")
    if tokens_per_sentence is not None and tokens_per_sentence < 1:
        raise ConfigError("tokens_per_sentence must be at least 1")
    if token_joiner not in ("", " "):
        raise ConfigError("token_joiner must be one space or empty")
    mapping, language = taxonomy.scheme(scheme or "conll"), canonical_language(lang)
    columns = Columns(
        token_column,
        tuple(tag_columns),
        separator,
        comment_prefix,
        token_joiner,
        header_prefix,
        split_punctuation,
    )
    root = Path(path)
    files = corpus_files(root)
    documents: list[AnnotatedDocument] = []
    failures: list[ReadFailure] = []
    for file in files:
        try:
            blocks = _documents(file, columns, sentences_per_document, tokens_per_sentence)
        except PolydeidError as exc:
            failures.append(ReadFailure(str(file), exc))
            continue
        for index, sentences in enumerate(blocks):
            try:
                doc_id = file.stem if len(blocks) == 1 else f"{file.stem}#{index}"
                documents.append(
                    build_document(
                        sentences,
                        columns,
                        mapping,
                        language,
                        doc_id=doc_id,
                        source=str(file),
                    )
                )
            except PolydeidError as exc:
                failures.append(ReadFailure(str(file), exc))
    return Corpus(name or root.name, tuple(documents), tuple(failures))


def read_germeval(
    path: str | Path,
    *,
    scheme: str | None = "germeval2014",
    lang: str | None = "de",
    sentences_per_document: int | None = None,
    name: str | None = None,
) -> Corpus:
    """GermEval 2014 TSV: ``idx token outer inner`` with a ``#`` comment line per sentence."""
    return read_conll(
        path,
        scheme=scheme or "germeval2014",
        lang=lang or "de",
        token_column=1,
        tag_columns=(2, 3),
        separator="\t",
        comment_prefix="#",
        sentences_per_document=sentences_per_document,
        name=name,
    )


def read_hipe(
    path: str | Path,
    *,
    scheme: str | None = "hipe2022",
    lang: str | None = None,
    sentences_per_document: int | None = None,
    name: str | None = None,
) -> Corpus:
    """HIPE-2022 TSV (NewsEye, …): a ``TOKEN …`` header line, ``#`` comment lines, the coarse
    literal tag in the second column, a blank line after each document (an article or page,
    read as one sentence)."""
    if lang is None:
        raise ConfigError("the hipe2022 reader needs lang= (one file per language)")
    return read_conll(
        path,
        scheme=scheme or "hipe2022",
        lang=lang,
        token_column=0,
        tag_columns=(1,),
        separator="\t",
        comment_prefix="#",
        sentences_per_document=sentences_per_document,
        name=name,
        header_prefix="TOKEN\t",
    )


def _split(line: str, separator: str | None) -> tuple[str, ...]:
    if separator is None:
        # str.split() would also split at no-break and other Unicode spaces inside a token
        return tuple(line.split() if line.isascii() else _BLANKS.split(line.strip(" \t")))
    return tuple(line.split(separator))


def _documents(
    file: Path, columns: Columns, per_document: int | None, per_sentence: int | None = None
) -> list[list[Sentence]]:
    """The file's sentences grouped into documents (rows not validated yet); a sentence of
    ``per_sentence`` tokens or more ends at its next token tagged ``O``."""
    text = decode_utf8(file.read_bytes(), source=str(file))
    documents: list[list[Sentence]] = [[]]
    sentence: Sentence = []
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r\n")
        if number == 1 and columns.header is not None and line.startswith(columns.header):
            continue
        if not line.strip(" \t"):
            if sentence:
                documents[-1].append(sentence)
                sentence = []
            continue
        prefix = columns.comment_prefix
        if prefix is not None and not sentence and line.startswith(prefix):
            continue
        fields = _split(line, columns.separator)
        if DOCSTART in fields[:2]:
            if sentence:
                documents[-1].append(sentence)
                sentence = []
            if documents[-1]:
                documents.append([])
            continue
        sentence.append(_Row(number, fields))
        if per_sentence is not None and len(sentence) >= per_sentence and _outside(fields, columns):
            documents[-1].append(sentence)
            sentence = []
    if sentence:
        documents[-1].append(sentence)
    documents = [d for d in documents if d]
    if per_document is None:
        return documents
    return [d[i : i + per_document] for d in documents for i in range(0, len(d), per_document)]


def _outside(fields: tuple[str, ...], columns: Columns) -> bool:
    """Whether the row's primary tag is ``O`` (a row without that column is not)."""
    index = columns.tags[0]
    return -len(fields) <= index < len(fields) and fields[index].strip() == "O"


def _positions(columns: Columns, width: int) -> tuple[int, tuple[int, ...]] | str:
    """Token and tag indices for a row of ``width`` columns, or why the row is unusable."""
    resolved = []
    for index in (columns.token, *columns.tags):
        at = index if index >= 0 else width + index
        if not 0 <= at < width:
            return f"line has {width} column(s); column {index} is missing"
        resolved.append(at)
    if resolved[0] in resolved[1:]:
        return f"line has {width} column(s); no separate tag column"
    return resolved[0], tuple(resolved[1:])


class _Decoder:
    """BIO/BIOES decoding of one tag layer into ``(start, end, label, category)``."""

    def __init__(self, mapping: Scheme) -> None:
        self.mapping = mapping
        self.cache: dict[str, tuple[str, str, Category | None]] = {}

    def parse(self, tag: str) -> tuple[str, str, Category | None]:
        parsed = self.cache.get(tag)
        if parsed is None:
            prefix, category = self.mapping.map_bio(tag)
            head, sep, rest = tag.strip().partition("-")
            label = rest if sep and head.upper() in {"B", "I", "E", "S", "L", "U"} else tag.strip()
            parsed = self.cache[tag] = (prefix, label, category)
        return parsed


def build_document(
    sentences: list[Sentence],
    columns: Columns,
    mapping: Scheme,
    lang: str,
    *,
    doc_id: str,
    source: str,
) -> AnnotatedDocument:
    """Rebuild one document's text and its spans from parsed sentences."""
    decoder = _Decoder(mapping)
    known: dict[int, tuple[int, tuple[int, ...]] | str] = {}  # column positions by row width
    lines: list[str] = []
    starts: list[int] = []
    layers: list[list[Found]] = [[] for _ in columns.tags]
    offset = 0
    for sentence in sentences:
        starts.append(offset)
        tokens, token_spans, tags, rows = _tokens(sentence, columns, offset, source, known, decoder)
        for layer, layer_tags in zip(layers, tags, strict=True):
            layer.extend(_decode(token_spans, layer_tags, decoder, rows, source))
        lines.append(columns.joiner.join(tokens))
        offset = token_spans[-1][1] + 1
    text = "\n".join(lines)
    spans, dropped = _merge_layers(layers)
    if mapping.person_titles and not titles_in_names(lang):
        spans = titles_moved_out(text, spans, mapping.person_titles)
    meta = {
        "reconstructed": True,
        "sentences": len(sentences),
        "tokens": sum(len(s) for s in sentences),
        "dropped": dropped,
        "sentence_starts": tuple(starts),
    }
    return AnnotatedDocument(
        id=doc_id, text=text, lang=lang, spans=spans, source=source, meta=MappingProxyType(meta)
    )


#: One title token and the full stop written after it as a token of its own (``M .``).
_TITLE_TOKEN = re.compile(r"(\S+?)(?: ?\.)?(?: |$)")


def titles_moved_out(text: str, spans: Sequence[Span], titles: frozenset[str]) -> tuple[Span, ...]:
    """``spans`` with the title tokens that open a person span (``M . de Lasteyrie``, ``Mme
    Curie``) moved out of it; a span made only of titles stays as it is."""
    out = []
    for span in spans:
        start = span.start
        if isinstance(span.label, Category) and taxonomy.COARSE_GROUP.get(span.label) == "NAME":
            while (match := _TITLE_TOKEN.match(text, start, span.end)) and match.group(1) in titles:
                if match.end() >= span.end:  # only titles: the span stays as annotated
                    start = span.start
                    break
                start = match.end()
        out.append(span if start == span.start else replace(span, start=start))
    return tuple(out)


def _tokens(
    sentence: Sentence,
    columns: Columns,
    offset: int,
    source: str,
    known: dict[int, tuple[int, tuple[int, ...]] | str],
    decoder: _Decoder,
) -> tuple[list[str], list[tuple[int, int]], list[list[str]], list[_Row]]:
    """The sentence's tokens, their offsets in the rebuilt text, each layer's tags, and the
    row each token comes from (several tokens for a row where punctuation is split off)."""
    rows: list[_Row] = []
    tokens: list[str] = []
    token_spans: list[tuple[int, int]] = []
    tags: list[list[str]] = [[] for _ in columns.tags]
    for k, row in enumerate(sentence):
        width = len(row.fields)
        positions = known.get(width)
        if positions is None:
            positions = known[width] = _positions(columns, width)
        if isinstance(positions, str):
            raise RecordError(positions, location=f"{source}:{row.line}")
        token_at, tag_at = positions
        token = row.fields[token_at]
        if not token:
            raise RecordError("empty token", location=f"{source}:{row.line}")
        pieces = [(token, True)]
        if columns.split_punctuation:
            nxt = sentence[k + 1].fields if k + 1 < len(sentence) else ()
            following = nxt[tag_at[0]] if tag_at[0] < len(nxt) else "O"
            continued = _continues(decoder, row.fields[tag_at[0]], following)
            pieces = split_glued(token, last_in_span=not continued)
        for piece, core in pieces:
            rows.append(row)
            tokens.append(piece)
            token_spans.append((offset, offset + len(piece)))
            offset += len(piece) + len(columns.joiner)
            for layer, i in zip(tags, tag_at, strict=True):
                layer.append(row.fields[i] if core else "O")
    return tokens, token_spans, tags, rows


#: Punctuation OCR tokenisation leaves glued to the start or the end of a word.
_LEADING = "([{\"'«„“‘‚¿¡"
_TRAILING = ")]},;:!?\"'»“”’"


def split_glued(token: str, *, last_in_span: bool = True) -> list[tuple[str, bool]]:
    """``token`` as ``(piece, is_core)`` pieces: leading and trailing punctuation split off
    the word it is glued to (each mark its own piece), a final full stop too where the word
    before it has three characters or more and the token ends its span (``Briand.`` but not
    the initial ``J.`` nor ``St.`` inside ``St. Paul``). A token of punctuation alone, or one
    with nothing glued, is one core piece."""
    start, end = 0, len(token)
    while start < end and token[start] in _LEADING:
        start += 1
    while end > start and token[end - 1] in _TRAILING:
        end -= 1
    if end - start >= 4 and last_in_span and token[end - 1] == ".":
        end -= 1
    if start == end or (start == 0 and end == len(token)):
        return [(token, True)]
    return [
        *((mark, False) for mark in token[:start]),
        (token[start:end], True),
        *((mark, False) for mark in token[end:]),
    ]


def _continues(decoder: _Decoder, tag: str, following: str) -> bool:
    """Whether a token tagged ``following`` continues the span of the token tagged ``tag``
    before it, as :func:`_decode` reads them (a tag it cannot read is reported there)."""
    try:
        prefix, label, _ = decoder.parse(tag)
        next_prefix, next_label, _ = decoder.parse(following)
    except PolydeidError:
        return False
    if prefix == taxonomy.OUTSIDE or prefix in _CLOSING:
        return False
    return next_prefix != taxonomy.OUTSIDE and next_prefix not in _OPENING and next_label == label


def _decode(
    token_spans: list[tuple[int, int]],
    tags: list[str],
    decoder: _Decoder,
    sentence: Sentence,
    source: str,
) -> list[Found]:
    found: list[Found] = []
    current: Found | None = None
    for (start, end), tag, row in zip(token_spans, tags, sentence, strict=True):
        try:
            prefix, label, category = decoder.parse(tag)
        except PolydeidError as exc:
            raise exc.at(f"{source}:{row.line}") from None
        if prefix == taxonomy.OUTSIDE:
            if current is not None:
                found.append(current)
            current = None
            continue
        if current is not None and prefix not in _OPENING and current[2] == label:
            current = (current[0], end, label, current[3])
        else:
            if current is not None:
                found.append(current)
            current = (start, end, label, category)
        if prefix in _CLOSING:
            found.append(current)
            current = None
    if current is not None:
        found.append(current)
    return found


def _merge_layers(
    layers: list[list[Found]],
) -> tuple[tuple[Span, ...], int]:
    """Primary layer first, then other layers' spans that are mapped and new."""
    spans: list[Span] = []
    seen: set[tuple[int, int, Category]] = set()
    dropped = 0
    for depth, layer in enumerate(layers):
        for start, end, label, category in layer:
            if category is None:
                dropped += 1
                continue
            key = (start, end, category)
            if depth and key in seen:
                continue
            seen.add(key)
            spans.append(Span(start, end, category, f"gold:{label}"))
    spans.sort(key=lambda s: (s.start, s.end, s.label.value))
    return tuple(spans), dropped
