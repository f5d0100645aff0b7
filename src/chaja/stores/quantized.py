"""Vectors kept as int8 codes with one scale per dimension: a quarter of float32's bytes.

A matrix ``V`` (rows ``v``) is kept as codes ``C = round(V / s)`` in ``[-127, 127]`` with
``s_d = max_i |V_id| / 127`` (symmetric scalar quantization per dimension, as in Jégou et
al.'s scalar quantizers and FAISS's ``SQ8``). A score is taken without rebuilding ``V``:
``q · v ≈ (q ⊙ s) · c``, so an exact scan reads one byte a number. Each number is off by
at most ``s_d / 2``; on the benchmark corpus's 100,000 e5 and aligned vectors the largest
error of a cosine was 0.002 (mean 0.0003), and 99% of each exact top 10 was the same.

:class:`ScaledInt8` acts as the float matrix where the store reads one: ``m @ q`` (in
blocks, so no float copy of the whole field is made), ``m[rows]`` (float32 rows),
``np.asarray(m)`` (the whole field in float32, for a graph build), ``m.shape``. A small
matrix keeps its rebuilt floats after its first scan (:data:`FLOAT_CACHE_ROWS`).
:func:`take` and :func:`append` keep codes as codes; rows that do not fit the scales
widen them (the codes held are rounded again once to the wider scale).
"""
from __future__ import annotations

import numpy as np

#: the largest code
LEVELS = 127
#: rows turned into float32 at once by a scan (3 MB of float32 for 2,048 512-d rows)
BLOCK = 2_048
#: a matrix of fewer rows than this keeps its rebuilt floats after its first scan (at most
#: 41 MB: 20,000 512-d rows), the fields searched exactly by default (the store's
#: ``ANN_THRESHOLD``): turning codes into floats at every scan made an exact search of
#: 10,000 384-d rows 1.7 times float32's (1.13 against 0.66 ms). Larger fields are walked
#: by their graphs and rescore a few hundred rows, for which a float copy of the whole
#: field (39 MB for the 25,662 384-d section names of a 100,000-chunk store) is not worth its memory
FLOAT_CACHE_ROWS = 20_000


class ScaledInt8:
    """Rows as int8 ``codes`` and one float32 ``scales`` entry per column: ``v ≈ codes · scales``."""

    __array_priority__ = 10.0       # so that `q @ m` asks this class, not NumPy

    def __init__(self, codes: np.ndarray, scales: np.ndarray):
        if codes.dtype != np.int8 or codes.ndim != 2 or scales.shape != codes.shape[1:]:
            raise ValueError(f"codes {codes.dtype}{codes.shape} and scales {scales.shape} do not match")
        self.codes, self.scales = codes, scales.astype(np.float32, copy=False)
        self._floats: np.ndarray | None = None

    @classmethod
    def quantize(cls, matrix: np.ndarray, scales: np.ndarray | None = None) -> ScaledInt8:
        """Codes of ``matrix`` with the given ``scales``, or with scales that fit its rows."""
        matrix = np.asarray(matrix, dtype=np.float32)
        if scales is None:
            scales = fitting_scales(matrix)
        codes = np.empty(matrix.shape, np.int8)
        for at in range(0, matrix.shape[0], BLOCK * 8):
            part = matrix[at:at + BLOCK * 8] / scales
            np.clip(np.rint(part, out=part), -LEVELS, LEVELS, out=part)
            codes[at:at + BLOCK * 8] = part
        return cls(codes, scales)

    # ---- the float matrix's face -------------------------------------------------------
    @property
    def shape(self) -> tuple[int, int]:
        return self.codes.shape

    ndim = 2
    dtype = np.dtype(np.float32)

    def __len__(self) -> int:
        return self.codes.shape[0]

    @property
    def nbytes(self) -> int:
        return self.codes.nbytes + self.scales.nbytes

    def __getitem__(self, rows) -> np.ndarray:
        """The float32 rows at ``rows`` (an index, a slice, an index array or a mask)."""
        if self._floats is not None:
            return self._floats[rows]
        return self.codes[rows].astype(np.float32) * self.scales

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = np.empty(self.codes.shape, np.float32)
        for at in range(0, self.codes.shape[0], BLOCK * 8):
            np.multiply(self.codes[at:at + BLOCK * 8], self.scales, out=out[at:at + BLOCK * 8])
        return out if dtype is None else out.astype(dtype, copy=False)

    def small_floats(self) -> np.ndarray | None:
        """The rebuilt float32 rows of a matrix small enough to keep them (fewer than
        ``FLOAT_CACHE_ROWS`` rows; built on the first call, read-only), else None."""
        if self._floats is None and self.codes.shape[0] < FLOAT_CACHE_ROWS:
            self._floats = np.asarray(self)
            self._floats.flags.writeable = False
        return self._floats

    def __matmul__(self, query: np.ndarray) -> np.ndarray:
        """``m @ q``: each row's score ``(q ⊙ s) · c``, a block of rows at a time, by BLAS
        (a row's last bits depend on the rows beside it; :func:`row_scores` scores each row
        on its own, where filtered and unfiltered searches must agree)."""
        q = np.asarray(query, dtype=np.float32)
        floats = self.small_floats()
        if floats is not None or q.ndim != 1:
            return (floats if floats is not None else np.asarray(self)) @ q
        weighted = q * self.scales
        out = np.empty(self.codes.shape[0], np.float32)
        for at in range(0, self.codes.shape[0], BLOCK):
            np.dot(self.codes[at:at + BLOCK].astype(np.float32), weighted, out=out[at:at + BLOCK])
        return out

    def __rmatmul__(self, queries: np.ndarray) -> np.ndarray:
        return np.asarray(queries, dtype=np.float32) @ np.asarray(self)

    def mean(self, axis=None):
        return np.asarray(self).mean(axis=axis)


def fitting_scales(matrix: np.ndarray) -> np.ndarray:
    """``max_i |V_id| / 127`` per column (1 for a column of zeros, whose codes are all 0)."""
    if matrix.shape[0] == 0:
        return np.ones(matrix.shape[1], np.float32)
    peak = np.abs(matrix).max(axis=0).astype(np.float32)
    return np.where(peak > 0, peak / LEVELS, 1.0).astype(np.float32)


def take(matrix, rows) -> np.ndarray | ScaledInt8:
    """``matrix[rows]`` as the same kind of matrix (codes stay codes)."""
    if isinstance(matrix, ScaledInt8):
        return ScaledInt8(matrix.codes[rows], matrix.scales)
    return matrix[rows]


def append(matrix, rows: np.ndarray) -> np.ndarray | ScaledInt8:
    """``matrix`` with the float ``rows`` after its own, as the same kind of matrix. Rows
    beyond a code matrix's scales widen them: its codes are rounded once to the new scales."""
    rows = np.asarray(rows, dtype=np.float32)
    if not isinstance(matrix, ScaledInt8):
        return np.concatenate([matrix, rows])
    if not rows.shape[0]:
        return matrix
    scales = np.maximum(matrix.scales, fitting_scales(rows))
    codes = matrix.codes
    if not np.array_equal(scales, matrix.scales):
        codes = ScaledInt8.quantize(matrix[:], scales).codes
    return ScaledInt8(np.concatenate([codes, ScaledInt8.quantize(rows, scales).codes]), scales)


def row_scores(matrix, query: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """``matrix @ query``, or ``matrix[rows] @ query`` for an index array ``rows``, each row's
    dot product taken on its own (``np.einsum``; a BLAS product's rounding depends on the
    rows beside it), so a row scores the same to the last bit whichever rows are scored with
    it: a filtered search orders its chunks exactly as the unfiltered one. On codes,
    ``(q ⊙ s) · c`` a block of rows at a time; a matrix small enough is scored on its kept
    floats (:meth:`ScaledInt8.small_floats`)."""
    q = np.asarray(query, dtype=np.float32)
    if isinstance(matrix, ScaledInt8):
        floats = matrix.small_floats()
        if floats is None:
            weighted = q * matrix.scales
            count = matrix.codes.shape[0] if rows is None else len(rows)
            out = np.empty(count, np.float32)
            for at in range(0, count, BLOCK):
                block = matrix.codes[at:at + BLOCK] if rows is None else \
                    np.take(matrix.codes, rows[at:at + BLOCK], axis=0)     # (take: faster than [rows])
                np.einsum("ij,j->i", block.astype(np.float32), weighted, out=out[at:at + BLOCK])
            return out
        matrix = floats
    picked = matrix if rows is None else np.take(matrix, rows, axis=0)
    return np.einsum("ij,j->i", np.asarray(picked, dtype=np.float32), q)


def as_float(matrix) -> np.ndarray:
    """The matrix as a float32 array (a code matrix rebuilt; a float one as it is)."""
    return np.asarray(matrix, dtype=np.float32)
