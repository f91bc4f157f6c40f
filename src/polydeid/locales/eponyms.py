"""The shared ``eponyms.toml`` locale data kind: surnames that name diseases.

``locales/eponyms.toml`` (language-independent, at the locales root)::

    [meta]     sources, licence
    [eponyms]  names = surnames (and a few given-and-surnames) that name diseases, syndromes
               and tumours, capitalised as written ("Crohn", "Barré")

The disease words written next to them are per language (``[eponym]`` of ``facts.toml``, see
:mod:`polydeid.locales.facts`). :func:`eponyms` reads the file into an :class:`Eponyms`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from polydeid.locales import _schema as schema
from polydeid.locales import shared_data


@dataclass(frozen=True, slots=True)
class Eponyms:
    """The eponym list; empty without an ``eponyms.toml``."""

    names: tuple[str, ...] = ()


@cache
def eponyms() -> Eponyms:
    """The :class:`Eponyms` of ``locales/eponyms.toml``; validated, cached."""
    raw = shared_data("eponyms")
    file = "eponyms.toml"
    table = schema.table(raw, "eponyms", file)
    return Eponyms(names=schema.strings(table, "names", file, "eponyms."))
