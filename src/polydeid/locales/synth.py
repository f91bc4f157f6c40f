"""The ``synth.toml`` locale data kind: sentence templates and vocabulary of the synthetic
clinical note generator (:mod:`polydeid.synth.generate`).

``locales/languages/<code>/synth.toml``::

    [meta]        sources, licence
    [vocab]       <key> = a list of words or phrases (diagnoses, drugs, professions, …) or one
                  word (sex_female, sex_male)
    [[sentence]]  section = the note section it belongs to; text = the template, with slots
                  in braces ("{patient}", "{date}"); optional types = the document types it
                  is limited to

:func:`synth_data` reads it into a :class:`SynthData`. Which sections, slots and document types
exist is the generator's business: it checks the names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType

from polydeid.core.errors import ConfigError
from polydeid.locales import _schema as schema
from polydeid.locales import language_data


@dataclass(frozen=True, slots=True)
class SentenceSpec:
    """One ``[[sentence]]`` template as written."""

    section: str
    text: str
    types: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SynthData:
    """The generator data of one language pack."""

    code: str
    #: a tuple of words, or one word, by vocabulary key, in file order
    vocab: Mapping[str, tuple[str, ...] | str]
    sentences: tuple[SentenceSpec, ...]


@cache
def synth_data(code: str) -> SynthData | None:
    """The :class:`SynthData` of language ``code`` (a canonical code), or None when its pack
    ships no ``synth.toml``; validated, cached."""
    raw = language_data(code, "synth")
    if not raw:
        return None
    file = f"languages/{code}/synth.toml"
    vocab: dict[str, tuple[str, ...] | str] = {}
    for key, value in schema.table(raw, "vocab", file).items():
        vocab[key] = (
            value if isinstance(value, str) else schema.strings({key: value}, key, file, "vocab.")
        )
    sentences = []
    for i, entry in enumerate(schema.tables(raw, "sentence", file)):
        where = f"{file} sentence {i + 1}"
        section, text = entry.get("section"), entry.get("text")
        if not isinstance(section, str) or not isinstance(text, str) or not text.strip():
            raise ConfigError("needs a known section and a text", location=where)
        sentences.append(SentenceSpec(section, text, schema.strings(entry, "types", where)))
    return SynthData(code=code, vocab=MappingProxyType(vocab), sentences=tuple(sentences))
