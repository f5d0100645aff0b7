"""Word vectors as int8 codes with one scale a row: how the translation lexicon
(:mod:`chaja.search.lexicon`) keeps its words' aligned vectors, in the store and in memory.

A row ``v`` is kept as ``c = round(127 · v / max_j |v_j|)`` and the scale ``s = 1 / |c|``
that makes ``s · c`` a unit vector: a quarter of float32's bytes. The codes do not change
when a row is scaled, so a row rebuilt from them (a word's vector reused by the next
lexicon, normalised again) gets the same codes and scale: no drift. :class:`WordRows`
holds them in memory and gives float32 rows on access (a process held 93 MB of float
rows for the 100,000-chunk benchmark store's lexicon; the codes take 23 MB).
"""
from __future__ import annotations

import numpy as np

LEVELS = 127
#: rows rebuilt at once where the whole matrix is read (a product with every row)
BLOCK = 4096


def row_codes(mat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(codes, scales) of each row of ``mat`` (see the module's docstring)."""
    mat = np.asarray(mat, dtype=np.float32)
    peak = np.abs(mat).max(axis=1) if mat.size else np.zeros(len(mat), np.float32)
    safe = np.where(peak > 0, peak, 1.0)[:, None]
    codes = np.clip(np.rint(LEVELS * mat / safe), -LEVELS, LEVELS).astype(np.int8)
    length = np.linalg.norm(codes.astype(np.float32), axis=1)
    return codes, np.where(length > 0, 1.0 / np.maximum(length, 1e-12), 1.0).astype(np.float32)


def as_kept(mat: np.ndarray) -> np.ndarray:
    """``mat`` as its codes give it back, in float32."""
    codes, scales = row_codes(mat)
    return codes.astype(np.float32) * scales[:, None]


class WordRows:
    """Rows kept as int8 ``codes`` with one ``scales`` entry each; float32 rows on access
    (``m[i]``, ``m[rows]``), the whole matrix with ``np.asarray(m)``, ``m @ x`` a block
    at a time."""

    def __init__(self, codes: np.ndarray, scales: np.ndarray):
        if codes.dtype != np.int8 or codes.ndim != 2 or scales.shape != codes.shape[:1]:
            raise ValueError(f"codes {codes.dtype}{codes.shape} and scales {scales.shape} do not match")
        self.codes, self.scales = codes, scales.astype(np.float32, copy=False)

    @property
    def shape(self) -> tuple[int, int]:
        return self.codes.shape

    ndim = 2

    def __len__(self) -> int:
        return self.codes.shape[0]

    def __getitem__(self, rows) -> np.ndarray:
        codes = self.codes[rows].astype(np.float32)
        scales = self.scales[rows]
        return codes * (scales[..., None] if np.ndim(scales) else scales)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = self.codes.astype(np.float32)
        out *= self.scales[:, None]
        return out if dtype is None else out.astype(dtype, copy=False)

    def __matmul__(self, other: np.ndarray) -> np.ndarray:
        """``m @ x`` (``x`` a vector or a matrix of columns), a block of rows at a time."""
        other = np.asarray(other, dtype=np.float32)
        out = np.empty((len(self),) + other.shape[1:], np.float32)
        for at in range(0, len(self), BLOCK):
            out[at:at + BLOCK] = self[at:at + BLOCK] @ other
        return out

    def squared_norms(self) -> np.ndarray:
        """``|m_i|²`` of each row, a block of rows at a time (the whole matrix in float32
        would be four times the codes' bytes at once)."""
        out = np.empty(len(self), np.float32)
        for at in range(0, len(self), BLOCK):
            block = self[at:at + BLOCK]
            out[at:at + BLOCK] = np.einsum("ij,ij->i", block, block)
        return out

    def gram(self) -> np.ndarray:
        """``mᵀm`` in float64, a block of rows at a time."""
        out = np.zeros((self.shape[1], self.shape[1]), np.float64)
        for at in range(0, len(self), BLOCK):
            block = self[at:at + BLOCK].astype(np.float64)
            out += block.T @ block
        return out
