"""The shared ``eponyms.toml`` locale data kind: surnames that name diseases, devices, signs,
tests, manoeuvres and scales.

``locales/eponyms.toml`` (language-independent, at the locales root)::

    [meta]     sources, licence
    [eponyms]  names = surnames (and a few given-and-surnames) that name diseases, syndromes
               and tumours, capitalised as written ("Crohn", "Barré")
    [terms]    sources; names = eponyms of devices, lines, signs, tests, manoeuvres, positions
               and scales, joined forms written joined ("Swan-Ganz"); scales = those also
               written with a value alone ("Glasgow 15"); alone = those that are clinical facts
               wherever written; lower_alone = devices written alone in lower case ("foley");
               surnames = those also listed surnames or given names (``names.toml``), which
               a finding word alone does not make a term ("Allen present")

The disease, term and finding words written next to them are per language (``[eponym]`` and
``[eponym_term]`` of ``facts.toml``, see :mod:`polydeid.locales.facts`). :func:`eponyms` reads
the file into an :class:`Eponyms`; ``scales``, ``alone``, ``lower_alone`` and ``surnames``
must be entries of ``[terms] names``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from polydeid.core.errors import ConfigError
from polydeid.locales import _schema as schema
from polydeid.locales import shared_data


@dataclass(frozen=True, slots=True)
class Eponyms:
    """The eponym lists; empty without an ``eponyms.toml``."""

    names: tuple[str, ...] = ()
    #: eponyms of devices, signs, tests, manoeuvres, positions and scales
    terms: tuple[str, ...] = ()
    #: the terms that are scales, also written with a value alone
    scales: tuple[str, ...] = ()
    #: the terms that are clinical facts wherever written
    alone: tuple[str, ...] = ()
    #: the terms that are clinical facts alone where written in lower case
    lower_alone: tuple[str, ...] = ()
    #: the terms that are also people's names: a term only next to a term word or value
    surnames: tuple[str, ...] = ()


@cache
def eponyms() -> Eponyms:
    """The :class:`Eponyms` of ``locales/eponyms.toml``; validated, cached."""
    raw = shared_data("eponyms")
    file = "eponyms.toml"
    table = schema.table(raw, "eponyms", file)
    terms = schema.table(raw, "terms", file)
    names = schema.strings(terms, "names", file, "terms.")
    subsets = {
        key: schema.strings(terms, key, file, "terms.")
        for key in ("scales", "alone", "lower_alone", "surnames")
    }
    for key, values in subsets.items():
        stray = sorted(set(values) - set(names))
        if stray:
            raise ConfigError(
                f"not in terms.names: {', '.join(stray)}", location=schema.at(file, f"terms.{key}")
            )
    return Eponyms(
        names=schema.strings(table, "names", file, "eponyms."),
        terms=names,
        scales=subsets["scales"],
        alone=subsets["alone"],
        lower_alone=subsets["lower_alone"],
        surnames=subsets["surnames"],
    )
