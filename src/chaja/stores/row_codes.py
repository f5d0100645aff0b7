"""A keyword file's posting rows in two bytes each.

A segment's postings name their chunk by its local row number, an ``int32``: 4 of a
posting's 5 bytes, 35.5 of a 100,000-chunk keyword file's 48 MB. A row number is
``high · 65536 + low``; postings run through the file term by term, each term's by row, so
long stretches of postings share ``high`` (a segment of 100,000 rows has two values of it;
the peers corpus's 8.9 million postings change it 143,000 times). The file keeps ``low``
(``uint16``, a posting) and, per run of postings that share ``high``, where the run starts and
its ``high``::

    row(p) = run_high[i] · 65536 + low[p]      for run_start[i] ≤ p < run_start[i + 1]

100,000 chunks: 35.5 → 19 MB of rows.

:class:`CodedRows` reads like the ``int32 [P]`` array it replaces: a slice gives the rows
decoded (a term's postings: one or a few runs), ``np.asarray`` decodes them all.
"""
from __future__ import annotations

import numpy as np

#: bits of a row number kept per posting
LOW_BITS = 16
#: a decode of more runs than this builds one array of high parts instead of adding slice by slice
MANY_RUNS = 64


class CodedRows:
    """Row numbers as ``low`` (``uint16 [P]``) and runs (``run_start``: ``int64 [U]``, ascending,
    the first 0; ``run_high``: ``int32 [U]``) of postings that share the high bits."""

    __slots__ = ("low", "run_start", "run_high")

    def __init__(self, low: np.ndarray, run_start: np.ndarray, run_high: np.ndarray):
        self.low, self.run_start, self.run_high = low, run_start, run_high

    @classmethod
    def encode(cls, rows: np.ndarray) -> "CodedRows":
        """Codes of non-negative row numbers below 2³¹ (worked in ``int32``: a million-chunk
        file's 90 million postings in a quarter of the time ``int64`` took)."""
        rows = np.asarray(rows)
        if rows.size and (rows.min() < 0 or rows.max() >= 2 ** 31):
            raise ValueError("row numbers must lie in [0, 2**31)")
        rows = rows.astype(np.int32, copy=False)
        high = rows >> LOW_BITS
        start = np.flatnonzero(high[1:] != high[:-1]) + 1 if rows.size else np.zeros(0, np.int64)
        run_start = np.concatenate([[0], start]).astype(np.int64)
        run_high = high[run_start].astype(np.int32) if rows.size else np.zeros(1, np.int32)
        return cls(rows.astype(np.uint16), run_start, run_high)

    @property
    def shape(self) -> tuple[int]:
        return (int(self.low.shape[0]),)

    @property
    def size(self) -> int:
        return int(self.low.shape[0])

    def __len__(self) -> int:
        return self.size

    def decoded(self, lo: int = 0, hi: int | None = None) -> np.ndarray:
        """The ``int32`` row numbers of postings ``lo:hi``."""
        hi = self.size if hi is None else hi
        if hi <= lo:
            return np.zeros(0, np.int32)
        if self.run_start.size == 1:                # rows below 65,536: no run to look for
            return self.low[lo:hi].astype(np.int32)
        first = int(np.searchsorted(self.run_start, lo, side="right")) - 1
        last = int(np.searchsorted(self.run_start, hi, side="left"))
        low = self.low[lo:hi]
        if last - first == 1:                       # one run: one high part for all, one pass
            return np.add(low, np.int32(int(self.run_high[first]) << LOW_BITS), dtype=np.int32)
        if last - first > MANY_RUNS:                # the whole file (a merge): one index array
            bounds = np.empty(last - first + 1, np.int64)
            bounds[:-1] = self.run_start[first:last]
            bounds[0], bounds[-1] = lo, hi
            return np.add(low, np.repeat(self.run_high[first:last] << LOW_BITS, np.diff(bounds)), dtype=np.int32)
        out = low.astype(np.int32)
        starts = self.run_start[first:last].tolist()
        highs = self.run_high[first:last].tolist()
        for i, high in enumerate(highs):            # a term's runs: a few slices, no index array
            if high:
                a = max(starts[i], lo) - lo
                b = (starts[i + 1] if i + 1 < len(starts) else hi) - lo
                out[a:b] += np.int32(high << LOW_BITS)
        return out

    def __getitem__(self, key):
        if isinstance(key, slice) and key.step in (None, 1):
            lo, hi, _ = key.indices(self.size)
            return self.decoded(lo, hi)
        return self.decoded()[key]

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = self.decoded()
        return out if dtype is None else out.astype(dtype, copy=False)


class DecodedMemo:
    """Decoded rows of the terms read lately, kept read-only up to ``limit`` rows in all
    (then forgotten at once, as a segment forgets its term slots)."""

    __slots__ = ("rows", "size", "limit")

    def __init__(self, limit: int):
        self.rows: dict[int, np.ndarray] = {}
        self.size, self.limit = 0, limit

    def get(self, key: int, lo: int, hi: int, coded: CodedRows) -> np.ndarray:
        """The rows of postings ``lo:hi`` of ``coded`` (a term's: ``key``), decoded once."""
        rows = self.rows.get(key)
        if rows is None:
            rows = coded.decoded(lo, hi)
            rows.flags.writeable = False
            if self.size + rows.size > self.limit:
                self.rows.clear()
                self.size = 0
            if rows.size <= self.limit:
                self.rows[key] = rows
                self.size += rows.size
        return rows
