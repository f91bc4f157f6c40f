import threading

from polydeid.core.taxonomy import Category
from polydeid.transform.vault import MemoryVault, Vault, identity_key

VKEY = bytes(32)


def test_identity_key_normalises_and_separates_categories():
    a = identity_key(VKEY, Category.PERSON, "John  SMITH")
    assert a == identity_key(VKEY, Category.PERSON, " john smith ")
    assert a != identity_key(VKEY, Category.PERSON_THIRD_PARTY, "john smith")
    assert a != identity_key(bytes([1]) * 32, Category.PERSON, "john smith")
    assert len(a) == 32


def test_memory_vault_first_writer_wins_and_values_are_unique():
    vault = MemoryVault()
    assert isinstance(vault, Vault)
    k1, k2, v1, v2 = (bytes([i]) * 32 for i in range(4))
    assert vault.get(k1) is None
    assert vault.put(k1, "Alice", value_key=v1)
    assert not vault.put(k1, "Bob", value_key=v2)  # key taken
    assert not vault.put(k2, "Alice", value_key=v1)  # surrogate already given to another
    assert vault.get(k1) == "Alice" and vault.get(k2) is None and len(vault) == 1


def test_memory_vault_stores_no_raw_identifier():
    vault = MemoryVault()
    original = "Nakato Sarah"
    key = identity_key(VKEY, Category.PERSON, original)
    vault.put(key, "Apio Doreen", value_key=identity_key(VKEY, Category.PERSON, "Apio Doreen"))
    assert vault.put(bytes([9]) * 32, "Apio Doreen", value_key=None)  # shared on purpose
    stored = repr(vault.__dict__)
    assert original.lower() not in stored.lower() and "Nakato" not in repr(vault)


def test_memory_vault_concurrent_puts_store_one():
    vault = MemoryVault()
    key = bytes(32)
    wins: list[bool] = []

    def put(i: int) -> None:
        wins.append(vault.put(key, f"s{i}", value_key=bytes([i + 1]) * 32))

    threads = [threading.Thread(target=put, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wins.count(True) == 1
