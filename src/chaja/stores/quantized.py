"""Vectors kept as int8 codes with one scale and one offset per dimension: a quarter of
float32's bytes.

A matrix ``V`` (rows ``v``) is kept as codes ``C = round((V − o) / s)`` in ``[-127, 127]``
with, per dimension d, the middle of its range ``o_d = (max_i V_id + min_i V_id) / 2`` and
``s_d = (max_i V_id − min_i V_id) / 254`` (scalar quantization per dimension over the
range each dimension spans, as in Jégou et al.'s scalar quantizers and FAISS's ``SQ8``).
A score is taken without rebuilding ``V``: ``q · v ≈ q · o + (q ⊙ s) · c``, so an exact
scan reads one byte a number. Each number is off by at most ``s_d / 2``.

Why the offset: an encoder's vectors share a common direction (the mean of a million e5
passage vectors has norm 0.86), so most dimensions span a range off zero, and a scale fit
to ``max |V_id|`` spends a quarter of its levels on values no row takes. Centred, the
median step is 0.76 of the symmetric one, and on the 1,000,000-chunk peer corpus (73
near-copies of each chunk) an exact scan of the codes finds 0.972 of the float32 top 10
against 0.960 (benchmarks/results/int8-offsets.md). Files written before the offset
was kept read as offset 0: the symmetric codes they hold.

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
    """Rows as int8 ``codes`` with one float32 ``scales`` and one ``offsets`` entry per
    column: ``v ≈ offsets + codes · scales`` (offsets 0 where none are given)."""

    __array_priority__ = 10.0       # so that `q @ m` asks this class, not NumPy

    def __init__(self, codes: np.ndarray, scales: np.ndarray, offsets: np.ndarray | None = None,
                 tail: np.ndarray | None = None):
        if offsets is None:
            offsets = np.zeros(scales.shape, np.float32)
        if any(c.dtype != np.int8 or c.ndim != 2 or scales.shape != c.shape[1:]
               for c in (codes, *(() if tail is None else (tail,)))) or offsets.shape != scales.shape:
            raise ValueError(f"codes {codes.dtype}{codes.shape}, scales {scales.shape} and offsets "
                             f"{offsets.shape} do not match")
        #: the codes in parts: a field's mapped file, then the rows appended since (:func:`append`),
        #: so that a row added to a million does not copy the million
        self.parts = (codes,) if tail is None or not len(tail) else (codes, tail)
        self.scales = scales.astype(np.float32, copy=False)
        self.offsets = offsets.astype(np.float32, copy=False)
        self._floats: np.ndarray | None = None
        self._joined: np.ndarray | None = None

    @property
    def codes(self) -> np.ndarray:
        """Every row's codes as one array (the parts joined once, where there are two)."""
        if len(self.parts) == 1:
            return self.parts[0]
        if self._joined is None:
            self._joined = np.concatenate(self.parts)
        return self._joined

    def code_rows(self, rows) -> np.ndarray:
        """The codes of ``rows`` (an index, a slice, an index array or a mask), read from the
        parts that hold them."""
        if len(self.parts) == 1:
            return self.parts[0][rows] if isinstance(rows, (int, np.integer, slice)) else \
                np.take(self.parts[0], _positions(rows, len(self)), axis=0)     # (take: faster than [rows])
        base, tail = self.parts
        if isinstance(rows, (int, np.integer)):
            at = int(rows) + (len(self) if rows < 0 else 0)
            return base[at] if at < len(base) else tail[at - len(base)]
        at = np.arange(len(self))[rows] if isinstance(rows, slice) else _positions(rows, len(self))
        low = at < len(base)
        out = np.empty((at.size, base.shape[1]), np.int8)
        out[low] = np.take(base, at[low], axis=0)
        out[~low] = np.take(tail, at[~low] - len(base), axis=0)
        return out

    def blocks(self, size: int):
        """``(start, codes)`` of consecutive row blocks of at most ``size`` rows, within one part each."""
        start = 0
        for part in self.parts:
            for at in range(0, part.shape[0], size):
                yield start + at, part[at:at + size]
            start += part.shape[0]

    @classmethod
    def quantize(cls, matrix: np.ndarray, scales: np.ndarray | None = None,
                 offsets: np.ndarray | None = None) -> ScaledInt8:
        """Codes of ``matrix`` with the given ``scales`` and ``offsets`` (0 where only scales
        are given), or with a range that fits its rows (:func:`fitting_range`)."""
        matrix = np.asarray(matrix, dtype=np.float32)
        if scales is None:
            scales, offsets = fitting_range(matrix)
        elif offsets is None:
            offsets = np.zeros(scales.shape, np.float32)
        codes = np.empty(matrix.shape, np.int8)
        for at in range(0, matrix.shape[0], BLOCK * 8):
            part = (matrix[at:at + BLOCK * 8] - offsets) / scales
            np.clip(np.rint(part, out=part), -LEVELS, LEVELS, out=part)
            codes[at:at + BLOCK * 8] = part
        return cls(codes, scales, offsets)

    # ---- the float matrix's face -------------------------------------------------------
    @property
    def shape(self) -> tuple[int, int]:
        return (sum(p.shape[0] for p in self.parts), self.parts[0].shape[1])

    ndim = 2
    dtype = np.dtype(np.float32)

    def __len__(self) -> int:
        return sum(p.shape[0] for p in self.parts)

    @property
    def nbytes(self) -> int:
        return sum(p.nbytes for p in self.parts) + self.scales.nbytes + self.offsets.nbytes

    def __getitem__(self, rows) -> np.ndarray:
        """The float32 rows at ``rows`` (an index, a slice, an index array or a mask)."""
        if self._floats is not None:
            return self._floats[rows]
        out = self.code_rows(rows).astype(np.float32)      # scaled and offset in place: one array, not three
        out *= self.scales                  # (the same products and sums, to the last bit)
        out += self.offsets
        return out

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = np.empty(self.shape, np.float32)
        for at, codes in self.blocks(BLOCK * 8):
            block = out[at:at + codes.shape[0]]
            np.multiply(codes, self.scales, out=block)
            block += self.offsets
        return out if dtype is None else out.astype(dtype, copy=False)

    def base_score(self, query: np.ndarray) -> np.float32:
        """``q · o``, what the offsets add to every row's score."""
        return np.float32(np.dot(self.offsets, query))

    def small_floats(self) -> np.ndarray | None:
        """The rebuilt float32 rows of a matrix small enough to keep them (fewer than
        ``FLOAT_CACHE_ROWS`` rows; built on the first call, read-only), else None."""
        if self._floats is None and len(self) < FLOAT_CACHE_ROWS:
            self._floats = np.asarray(self)
            self._floats.flags.writeable = False
        return self._floats

    def __matmul__(self, query: np.ndarray) -> np.ndarray:
        """``m @ q``: each row's score ``q · o + (q ⊙ s) · c``, a block of rows at a time, by BLAS
        (a row's last bits depend on the rows beside it; :func:`row_scores` scores each row
        on its own, where filtered and unfiltered searches must agree)."""
        q = np.asarray(query, dtype=np.float32)
        floats = self.small_floats()
        if floats is not None or q.ndim != 1:
            return (floats if floats is not None else np.asarray(self)) @ q
        weighted = q * self.scales
        out = np.empty(len(self), np.float32)
        for at, codes in self.blocks(BLOCK):
            np.dot(codes.astype(np.float32), weighted, out=out[at:at + codes.shape[0]])
        out += self.base_score(q)
        return out

    def __rmatmul__(self, queries: np.ndarray) -> np.ndarray:
        return np.asarray(queries, dtype=np.float32) @ np.asarray(self)

    def mean(self, axis=None):
        return np.asarray(self).mean(axis=axis)


def _positions(rows, n: int) -> np.ndarray:
    """An index array or a mask of ``n`` rows as the row positions it selects (negatives counted from the end)."""
    at = np.asarray(rows)
    if at.dtype == bool:
        return np.flatnonzero(at)
    return np.where(at < 0, at + n, at) if at.size and at.min() < 0 else at


#: the scale of a column whose rows all hold one value (its codes are all 0, the value its
#: offset): small, so that a row added with another value widens the range
TINY = np.float32(1e-12)


def fitting_range(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(scales, offsets) per column: ``(max − min) / 254`` and ``(max + min) / 2`` of its
    rows (a column of one value: :data:`TINY` and that value; no rows: :data:`TINY` and 0,
    a range that the first rows added widen to theirs)."""
    if matrix.shape[0] == 0:
        return np.full(matrix.shape[1], TINY, np.float32), np.zeros(matrix.shape[1], np.float32)
    return scales_and_offsets(matrix.min(axis=0), matrix.max(axis=0))


def scales_and_offsets(low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The scales and offsets whose codes span ``[low, high]`` per column."""
    low, high = low.astype(np.float64), high.astype(np.float64)
    scales = np.maximum((high - low) / (2 * LEVELS), float(TINY)).astype(np.float32)
    return scales, ((high + low) / 2).astype(np.float32)


#: a range that must widen takes in this share of its new width beyond the rows that
#: widen it, on each side they pass: every widening rounds the codes held once more (each
#: time within half of the new step), and the extremes of a growing field creep outward,
#: so a range widened just to its newest extreme would be widened, and its codes rounded,
#: again and again
WIDEN_MARGIN = 1 / 16


def widened(low: np.ndarray, high: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The range ``[low, high]`` grown to take in ``[lo, hi]`` per column, with
    :data:`WIDEN_MARGIN` of the new width beyond each end that moved (an empty range,
    a new field's, grows to ``[lo, hi]`` exactly)."""
    new_low, new_high = np.minimum(low, lo), np.maximum(high, hi)
    empty = high - low <= 2 * LEVELS * float(TINY)
    margin = np.where(empty, 0.0, (new_high - new_low) * WIDEN_MARGIN)
    return (np.where(lo < low, new_low - margin, new_low), np.where(hi > high, new_high + margin, new_high))


def covered(matrix: ScaledInt8) -> tuple[np.ndarray, np.ndarray]:
    """The range ``offsets ± 127 · scales`` a code matrix's codes can express, per column."""
    span = matrix.scales.astype(np.float64) * LEVELS
    return matrix.offsets - span, matrix.offsets + span


def take(matrix, rows) -> np.ndarray | ScaledInt8:
    """``matrix[rows]`` as the same kind of matrix (codes stay codes)."""
    if isinstance(matrix, ScaledInt8):
        return ScaledInt8(matrix.code_rows(rows), matrix.scales, matrix.offsets)
    return matrix[rows]


def append(matrix, rows: np.ndarray) -> np.ndarray | ScaledInt8:
    """``matrix`` with the float ``rows`` after its own, as the same kind of matrix. Rows
    beyond the range a code matrix covers (:func:`covered`) widen it to take them in: its
    codes are rounded once to the new scales and offsets."""
    rows = np.asarray(rows, dtype=np.float32)
    if not isinstance(matrix, ScaledInt8):
        return np.concatenate([matrix, rows])
    if not rows.shape[0]:
        return matrix
    low, high = covered(matrix)
    lo, hi = rows.min(axis=0), rows.max(axis=0)
    slack = matrix.scales * 1e-3        # the float32 rounding of a range's own ends
    if np.all(lo >= low - slack) and np.all(hi <= high + slack):    # the codes held stay: the rows join the tail
        new = ScaledInt8.quantize(rows, matrix.scales, matrix.offsets).parts[0]
        tail = new if len(matrix.parts) == 1 else np.concatenate([matrix.parts[1], new])
        return ScaledInt8(matrix.parts[0], matrix.scales, matrix.offsets, tail=tail)
    scales, offsets = scales_and_offsets(*widened(low, high, lo, hi))
    codes = ScaledInt8.quantize(matrix[:], scales, offsets).codes
    return ScaledInt8(np.concatenate([codes, ScaledInt8.quantize(rows, scales, offsets).codes]), scales, offsets)


def row_scores(matrix, query: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """``matrix @ query``, or ``matrix[rows] @ query`` for an index array ``rows``, each row's
    dot product taken on its own (``np.einsum``; a BLAS product's rounding depends on the
    rows beside it), so a row scores the same to the last bit whichever rows are scored with
    it: a filtered search orders its chunks exactly as the unfiltered one. On codes,
    ``q · o + (q ⊙ s) · c`` a block of rows at a time; a matrix small enough is scored on its kept
    floats (:meth:`ScaledInt8.small_floats`)."""
    q = np.asarray(query, dtype=np.float32)
    if isinstance(matrix, ScaledInt8):
        floats = matrix.small_floats()
        if floats is None:
            weighted = q * matrix.scales
            out = np.empty(len(matrix) if rows is None else len(rows), np.float32)
            blocks = matrix.blocks(BLOCK) if rows is None else \
                ((at, matrix.code_rows(rows[at:at + BLOCK])) for at in range(0, len(rows), BLOCK))
            for at, block in blocks:
                np.einsum("ij,j->i", block.astype(np.float32), weighted, out=out[at:at + block.shape[0]])
            out += matrix.base_score(q)
            return out
        matrix = floats
    picked = matrix if rows is None else np.take(matrix, rows, axis=0)
    return np.einsum("ij,j->i", np.asarray(picked, dtype=np.float32), q)


def as_float(matrix) -> np.ndarray:
    """The matrix as a float32 array (a code matrix rebuilt; a float one as it is)."""
    return np.asarray(matrix, dtype=np.float32)
