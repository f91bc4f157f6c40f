import base64

import pytest

from polydeid.core.errors import KeyMaterialError
from polydeid.transform.crypto import (
    PURPOSE_ENCRYPT,
    PURPOSE_HASH,
    KeyRing,
    derive_key,
    generate_key,
    load_key,
    parse_key,
)

RAW = bytes(range(200, 232)) + bytes(range(0, 8))  # 40 bytes, not printable


@pytest.mark.parametrize(
    ("content", "label"),
    [
        (RAW.hex().encode() + b"\n", "hex"),
        (base64.b64encode(RAW) + b"\n", "base64"),
        (base64.urlsafe_b64encode(RAW).rstrip(b"="), "base64url-unpadded"),
        (RAW, "raw"),
    ],
)
def test_load_key_formats(tmp_path, content, label):
    path = tmp_path / f"{label}.key"
    path.write_bytes(content)
    assert load_key(path) == RAW


def test_generated_key_loads_back(tmp_path):
    text = generate_key()
    assert len(text) == 64 and generate_key() != text
    path = tmp_path / "k"
    path.write_text(text + "\n")
    assert load_key(path) == bytes.fromhex(text)


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"00ff" * 4,
        b"too short passphrase",
        b"my long passphrase is not a key!!!!!!",
        bytes(range(20)),
    ],
    ids=["empty", "short-hex", "short-text", "ascii-passphrase", "short-raw"],
)
def test_unusable_keys_raise_without_echoing(tmp_path, content):
    path = tmp_path / "bad.key"
    path.write_bytes(content)
    with pytest.raises(KeyMaterialError) as info:
        load_key(path)
    message = str(info.value)
    assert "bad.key" in message and "PD106" in message
    if content:
        assert content.decode("latin-1") not in message


def test_missing_key_file(tmp_path):
    with pytest.raises(KeyMaterialError, match="cannot read key file"):
        load_key(tmp_path / "absent.key")


def test_derived_keys_are_independent_and_stable():
    master = bytes(32)
    a, b = derive_key(master, PURPOSE_HASH), derive_key(master, PURPOSE_ENCRYPT)
    assert a != b and len(a) == 32
    assert derive_key(master, PURPOSE_HASH) == a
    assert derive_key(bytes([1]) + bytes(31), PURPOSE_HASH) != a
    assert len(derive_key(master, PURPOSE_ENCRYPT, 64)) == 64


def test_short_master_key_rejected():
    with pytest.raises(KeyMaterialError):
        derive_key(b"short", PURPOSE_HASH)
    with pytest.raises(KeyMaterialError):
        KeyRing.from_master(b"x" * 31)


def test_keyring_repr_hides_keys_and_ephemeral_is_random():
    ring = KeyRing.from_master(RAW)
    assert RAW.hex() not in repr(ring) and ring.hash.hex() not in repr(ring)
    assert ring.user_supplied
    one, two = KeyRing.from_master(None), KeyRing.from_master(None)
    assert not one.user_supplied and one.vault != two.vault
    with pytest.raises(KeyMaterialError, match="hash"):
        one.require_user_key("hash")


def test_parse_key_accepts_text_keys():
    assert parse_key(RAW.hex().upper().encode()) == RAW
