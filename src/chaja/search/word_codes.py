"""Word vectors as int8 codes with one scale a row: how the translation lexicon
(:mod:`chaja.search.lexicon`) keeps its words' aligned vectors, in the store and in memory.

A row ``v`` is kept as ``c = round(127 · v / max_j |v_j|)`` and the scale ``s = 1 / |c|``
that makes ``s · c`` a unit vector: a quarter of float32's bytes. The codes do not change
when a row is scaled, so a row rebuilt from them and normalised again gets the same codes
and scale: the next lexicon copies a known word's codes as they are, and that is what a
rebuild would give (no drift). :class:`WordRows`
holds them in memory and gives float32 rows on access (a process held 93 MB of float
rows for the 100,000-chunk benchmark store's lexicon; the codes take 23 MB).
"""
from __future__ import annotations

import numpy as np

LEVELS = 127
#: rows rebuilt at once where the whole matrix is read (a product with every row)
BLOCK = 4096
#: bytes of float32 rows turned from codes at once for a product (:meth:`WordRows.__matmul__`)
PRODUCT_BYTES = 1 << 20


def _peak_codes(mat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(``round(127 · v / max_j |v_j|)`` of each row ``v``, each row's ``max_j |v_j|``)."""
    mat = np.asarray(mat, dtype=np.float32)
    peak = np.abs(mat).max(axis=1) if mat.size else np.zeros(len(mat), np.float32)
    safe = np.where(peak > 0, peak, 1.0)[:, None]
    return np.clip(np.rint(LEVELS * mat / safe), -LEVELS, LEVELS).astype(np.int8), peak


def row_codes(mat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(codes, scales) of each row of ``mat`` (see the module's docstring)."""
    codes, _ = _peak_codes(mat)
    length = np.linalg.norm(codes.astype(np.float32), axis=1)
    return codes, np.where(length > 0, 1.0 / np.maximum(length, 1e-12), 1.0).astype(np.float32)


def scaled_codes(mat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(codes, scales) with ``scales · codes`` the nearest to ``mat`` row by row: the same
    codes as :func:`row_codes`, with the scale ``max_j |v_j| / 127`` (rows of any length;
    :func:`row_codes` keeps unit rows)."""
    codes, peak = _peak_codes(mat)
    return codes, np.where(peak > 0, peak / LEVELS, 1.0).astype(np.float32)


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
        """``m @ x`` (``x`` a vector or a matrix of columns): ``s_i (c_i · x)``, the codes
        turned to float32 a block of :data:`PRODUCT_BYTES` at a time into one buffer (a block
        that stays in the core's cache: 29,567 rows of 128 codes times a vector in 0.64 ms
        with 1 MiB blocks, 1.05 ms with 2 MiB)."""
        other = np.asarray(other, dtype=np.float32)
        n, dim = self.shape
        out = np.empty((n,) + other.shape[1:], np.float32)
        step = max(1, PRODUCT_BYTES // (4 * max(dim, 1)))
        buf = np.empty((min(step, n), dim), np.float32)
        for at in range(0, n, step):
            rows = buf[:min(step, n - at)]
            rows[...] = self.codes[at:at + len(rows)]
            np.matmul(rows, other, out=out[at:at + len(rows)])
        out *= self.scales.reshape((-1,) + (1,) * (other.ndim - 1))
        return out

    def gram(self) -> np.ndarray:
        """``mᵀm`` in float64, a block of rows at a time."""
        out = np.zeros((self.shape[1], self.shape[1]), np.float64)
        for at in range(0, len(self), BLOCK):
            block = self[at:at + BLOCK].astype(np.float64)
            out += block.T @ block
        return out
