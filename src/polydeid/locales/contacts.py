"""The ``contacts.toml`` locale data kind: the words written around phone numbers, e-mail
addresses, URLs and IP addresses in a language.

``locales/languages/<code>/contacts.toml`` (every table optional)::

    [meta]         sources, licence
    [phone]        words = phone labels ("tel", "simu")
    [fax]          words = fax labels
    [extension]    words = extension markers ("ext", "x")
    [email]        words = e-mail labels; webmail_domains = free mail providers
    [social]       words = social-media labels ("twitter", "handle")
    [ip]           words = IP-address labels; version_words = words before a version number
    [obfuscation]  at, dot = words written for "@" and "." ("at", "arroba"); stopwords = words
                   that end no e-mail's local part ("the", "my")
    [domains]      generic_tlds, extra_cctlds (English pack only: the TLD lists)
    [urls]         standard_hosts = hosts of standards' namespaces (English pack only)

:func:`contact_words` reads it into a :class:`ContactWords`; words are kept as written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

from polydeid.locales import _schema as schema
from polydeid.locales import language_data


@dataclass(frozen=True, slots=True)
class ContactWords:
    """The contact vocabulary of one language pack; empty without a ``contacts.toml``."""

    code: str
    phone: tuple[str, ...] = ()
    fax: tuple[str, ...] = ()
    extension: tuple[str, ...] = ()
    email: tuple[str, ...] = ()
    webmail_domains: tuple[str, ...] = ()
    social: tuple[str, ...] = ()
    ip: tuple[str, ...] = ()
    ip_version: tuple[str, ...] = ()
    at: tuple[str, ...] = ()
    dot: tuple[str, ...] = ()
    stopwords: tuple[str, ...] = ()
    generic_tlds: tuple[str, ...] = ()
    extra_cctlds: tuple[str, ...] = ()
    standard_hosts: tuple[str, ...] = ()


@cache
def contact_words(code: str) -> ContactWords:
    """The :class:`ContactWords` of language ``code`` (a canonical code); validated, cached."""
    raw = language_data(code, "contacts")
    file = f"languages/{code}/contacts.toml"

    def words(table: str, key: str = "words") -> tuple[str, ...]:
        return schema.strings(schema.table(raw, table, file), key, file, f"{table}.")

    return ContactWords(
        code=code,
        phone=words("phone"),
        fax=words("fax"),
        extension=words("extension"),
        email=words("email"),
        webmail_domains=words("email", "webmail_domains"),
        social=words("social"),
        ip=words("ip"),
        ip_version=words("ip", "version_words"),
        at=words("obfuscation", "at"),
        dot=words("obfuscation", "dot"),
        stopwords=words("obfuscation", "stopwords"),
        generic_tlds=words("domains", "generic_tlds"),
        extra_cctlds=words("domains", "extra_cctlds"),
        standard_hosts=words("urls", "standard_hosts"),
    )


def contact_table(
    langs: Sequence[str], pick: Callable[[ContactWords], tuple[str, ...]]
) -> list[str]:
    """The words ``pick`` takes from the contact words of each of ``langs``, in turn."""
    return [w for lang in langs for w in pick(contact_words(lang))]
