"""Secret keys: loading, generation, and independent subkeys per purpose (HKDF-SHA256).

A *master key* is at least 32 random bytes. Key files hold it as hex (``polydeid keygen``
writes 64 hex digits), base64, or raw bytes; they are tried in that order. Every keyed
operation uses its own subkey, ``derive_key(master, purpose)``, so a hash digest reveals
nothing about the encryption key and vice versa. No function here ever puts key material in
an error message.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from polydeid.core.errors import KeyMaterialError

#: Minimum length of a master key, in bytes.
MIN_KEY_BYTES = 32

_HKDF_SALT = b"polydeid.v1.hkdf-salt"

#: Subkey purposes; changing one changes every output of that operator.
PURPOSE_HASH = "hash.v1"
PURPOSE_ENCRYPT = "encrypt.aes-siv.v1"
PURPOSE_VAULT = "vault.v1"
PURPOSE_SURROGATE = "surrogate.v1"
PURPOSE_DATESHIFT = "dateshift.v1"


def generate_key() -> str:
    """A new random master key as 64 hex digits (256 bits), the format ``load_key`` reads first."""
    return secrets.token_bytes(MIN_KEY_BYTES).hex()


def parse_key(data: bytes, *, source: str = "key") -> bytes:
    """Master key bytes from hex, base64 or raw ``data``; raises KeyMaterialError otherwise."""
    text = data.strip()
    for decode in (_from_hex, _from_base64):
        key = decode(text)
        if key is not None and len(key) >= MIN_KEY_BYTES:
            return key
    if len(data) >= MIN_KEY_BYTES and not _looks_encoded(text):
        return bytes(data)
    raise KeyMaterialError(
        f"{source}: not a usable key; need at least {MIN_KEY_BYTES} bytes as hex, base64 or raw "
        "bytes (create one with `polydeid keygen`)"
    )


def load_key(path: str | Path) -> bytes:
    """Read a master key from a key file (see :func:`parse_key`)."""
    target = Path(path)
    try:
        data = target.read_bytes()
    except OSError as exc:
        raise KeyMaterialError(
            f"cannot read key file ({exc.strerror})", location=str(target)
        ) from None
    return parse_key(data, source=f"key file {target}")


def check_key(key: bytes) -> bytes:
    """``key`` itself when it is long enough to be a master key; raises otherwise."""
    if not isinstance(key, bytes | bytearray) or len(key) < MIN_KEY_BYTES:
        raise KeyMaterialError(f"a master key must be at least {MIN_KEY_BYTES} bytes")
    return bytes(key)


def derive_key(master: bytes, purpose: str, length: int = 32) -> bytes:
    """An independent subkey of ``master`` for ``purpose`` (HKDF-SHA256)."""
    hkdf = HKDF(algorithm=hashes.SHA256(), length=length, salt=_HKDF_SALT, info=purpose.encode())
    return hkdf.derive(check_key(master))


def keyed_digest(key: bytes, *parts: str) -> bytes:
    """HMAC-SHA256 of ``parts`` joined by a separator that cannot occur in category names."""
    message = "\x1f".join(parts).encode("utf-8", "surrogatepass")
    return hmac.new(key, message, hashlib.sha256).digest()


@dataclass(frozen=True, slots=True, repr=False)
class KeyRing:
    """The subkeys of one master key; ``user_supplied`` is False for an ephemeral key.

    Without a user key, a random ephemeral key is made: vault lookups and surrogates are then
    consistent only within one :class:`~polydeid.transform.redactor.Redactor` instance, and
    the operators that promise results reproducible by the key holder (hash, encrypt,
    dateshift) refuse to run.
    """

    user_supplied: bool
    hash: bytes = field(repr=False)
    encrypt: bytes = field(repr=False)
    vault: bytes = field(repr=False)
    surrogate: bytes = field(repr=False)
    dateshift: bytes = field(repr=False)

    @classmethod
    def from_master(cls, master: bytes | None) -> KeyRing:
        """Subkeys of ``master``, or of a fresh ephemeral key when ``master`` is None."""
        user = master is not None
        key = check_key(master) if master is not None else secrets.token_bytes(MIN_KEY_BYTES)
        return cls(
            user_supplied=user,
            hash=derive_key(key, PURPOSE_HASH),
            encrypt=derive_key(key, PURPOSE_ENCRYPT, 64),
            vault=derive_key(key, PURPOSE_VAULT),
            surrogate=derive_key(key, PURPOSE_SURROGATE),
            dateshift=derive_key(key, PURPOSE_DATESHIFT),
        )

    def require_user_key(self, operator: str) -> None:
        """Raise KeyMaterialError unless a user key was given (for ``operator``)."""
        if not self.user_supplied:
            raise KeyMaterialError(
                f"operator {operator!r} needs a secret key (pass key=… or --key-file; "
                "create one with `polydeid keygen`)"
            )

    def __repr__(self) -> str:
        return f"KeyRing(user_supplied={self.user_supplied})"


def _from_hex(text: bytes) -> bytes | None:
    try:
        return bytes.fromhex(text.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        return None


def _from_base64(text: bytes) -> bytes | None:
    compact = b"".join(text.split())
    padded = compact + b"=" * (-len(compact) % 4)
    for altchars in (None, b"-_"):
        try:
            return base64.b64decode(padded, altchars=altchars, validate=True)
        except (binascii.Error, ValueError):
            continue
    return None


def _looks_encoded(text: bytes) -> bool:
    """Printable ASCII only: meant as hex/base64 but too short or malformed — not raw bytes."""
    return all(32 <= b < 127 for b in text)
