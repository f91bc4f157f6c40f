"""The surrogate vault: original → surrogate, keyed by HMAC so no identifier is ever stored.

A vault maps an *identity key* — ``HMAC(vault subkey, category ␟ normalised original)``, see
:func:`identity_key` — to the surrogate chosen for it. The surrogate itself is fake text and is
stored in clear. Each surrogate is also registered under its own identity key (the *value
key*), so one surrogate is not given to two different originals of the same category — unless
the category's value space is small (ages, dates, clans, villages) or its unique surrogates
run out, when sharing one is safer than falling back to a tag.

Consistency follows the key: with a user key (and a persistent vault) the same original gets
the same surrogate in every document and run; without one, the
:class:`~polydeid.transform.redactor.Redactor` makes an ephemeral key and surrogates are
consistent within that instance only.

:class:`MemoryVault` lives in memory; persistent SQLite/PostgreSQL vaults implement the same
two methods (``put`` maps onto ``INSERT … ON CONFLICT DO NOTHING`` over a table with a primary
key on ``key`` and a unique index on ``value_key``).
"""

from __future__ import annotations

import threading
from typing import Protocol, runtime_checkable

from polydeid.core.taxonomy import Category
from polydeid.transform.crypto import keyed_digest
from polydeid.transform.normalise import normalise


@runtime_checkable
class Vault(Protocol):
    """Storage of surrogates by identity key (32-byte HMAC digests, never raw text)."""

    def get(self, key: bytes) -> str | None:
        """The surrogate stored under ``key``, or None."""
        ...

    def put(self, key: bytes, surrogate: str, *, value_key: bytes | None) -> bool:
        """Store ``surrogate`` under ``key``; False (nothing stored) when either key is taken.

        ``value_key`` reserves the surrogate for this original; None shares it (used for
        small value spaces such as ages, and when a category's unique surrogates run out).
        """
        ...


def identity_key(vault_key: bytes, category: Category, text: str) -> bytes:
    """The vault key of ``text`` in ``category`` (HMAC of the normalised text)."""
    return keyed_digest(vault_key, "vault", category.value, normalise(text))


class MemoryVault:
    """A thread-safe in-memory vault (lost when the process ends)."""

    def __init__(self) -> None:
        self._by_key: dict[bytes, str] = {}
        self._values: set[bytes] = set()
        self._lock = threading.Lock()

    def get(self, key: bytes) -> str | None:
        return self._by_key.get(key)

    def put(self, key: bytes, surrogate: str, *, value_key: bytes | None) -> bool:
        with self._lock:
            if key in self._by_key or (value_key is not None and value_key in self._values):
                return False
            self._by_key[key] = surrogate
            if value_key is not None:
                self._values.add(value_key)
            return True

    def __len__(self) -> int:
        return len(self._by_key)

    def __repr__(self) -> str:
        return f"MemoryVault(entries={len(self._by_key)})"
