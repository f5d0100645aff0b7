"""A posting's term frequencies (title, heading, body) in one byte.

A keyword segment kept each posting's three frequencies as 16-bit numbers: 6 of its 10 bytes,
58% of the keyword file. Almost every posting holds small ones: on the peers corpus the body
frequency is above 15 for 0.03% of postings, the title's above 4 and the heading's above 2 for
fewer still. So each posting keeps one code::

    code = 48·title + 16·heading + body      (title ≤ 4, heading ≤ 2, body ≤ 15: codes 0–239)

and a posting outside those ranges keeps :data:`SPILL` (255) and its three numbers in a short
side list, sorted by the posting's place (``spill_at``, ``spill``). A 100,000-chunk keyword
file: 92 → 48 MB; a million chunks: 889 → 452 MB.

:class:`CodedTf` reads like the ``[postings, 3]`` array it replaces: a slice is a view (a term's
postings cost nothing to take), any other index decodes the rows it picks through a 256-row
table, and :meth:`CodedTf.weighted` gives BM25's ``f = Σ_c w_c · tf_c`` from a table of the
256 codes' values, each computed as the columns would give it (the same sums, bit for bit).
"""
from __future__ import annotations

import numpy as np

#: the code of a posting whose frequencies are kept in the side list
SPILL = 255
#: the largest title, heading and body frequencies a code holds
MAX_TITLE, MAX_HEADING, MAX_BODY = 4, 2, 15
_T, _H = (MAX_HEADING + 1) * (MAX_BODY + 1), MAX_BODY + 1

_codes = np.arange(256)
#: code → (title, heading, body); the spill code's row is never read
TABLE = np.stack([_codes // _T, (_codes // _H) % (MAX_HEADING + 1), _codes % _H], axis=1).astype(np.uint16)
TABLE[(MAX_TITLE + 1) * _T:] = 0


class CodedTf:
    """``[n, 3]`` term frequencies as codes (``uint8 [n]``) and the segment's spilled postings
    (``spill_at``: their places in the segment, ascending; ``spill``: ``uint16 [m, 3]``);
    ``base``: where this view's first posting stands in the segment."""

    __slots__ = ("codes", "spill_at", "spill", "base")

    def __init__(self, codes: np.ndarray, spill_at: np.ndarray, spill: np.ndarray, base: int = 0):
        self.codes, self.spill_at, self.spill, self.base = codes, spill_at, spill, base

    @classmethod
    def encode(cls, tf: np.ndarray) -> "CodedTf":
        """Codes of a ``[n, 3]`` frequency array (numbers above 65,535 kept as 65,535)."""
        tf = np.asarray(tf).reshape(-1, 3)
        t, h, b = tf[:, 0], tf[:, 1], tf[:, 2]
        fits = (t <= MAX_TITLE) & (h <= MAX_HEADING) & (b <= MAX_BODY)
        codes = np.full(tf.shape[0], SPILL, np.uint8)
        codes[fits] = (t[fits] * _T + h[fits] * _H + b[fits]).astype(np.uint8)
        spill_at = np.flatnonzero(~fits).astype(np.int64)
        return cls(codes, spill_at, np.minimum(tf[spill_at], 65535).astype(np.uint16))

    @property
    def shape(self) -> tuple[int, int]:
        return (int(self.codes.shape[0]), 3)

    def __len__(self) -> int:
        return int(self.codes.shape[0])

    def spills(self) -> tuple[np.ndarray, np.ndarray]:
        """(places in this view, their ``[m, 3]`` frequencies) of the postings whose frequencies
        do not fit a code."""
        return self._spills()

    def _spills(self, picked: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(places in this view, or in ``picked``; spill rows) of the spilled postings among them."""
        if picked is None:           # the view's own: a binary search in the sorted places
            lo, hi = np.searchsorted(self.spill_at, (self.base, self.base + len(self)))
            return self.spill_at[lo:hi] - self.base, self.spill[lo:hi]
        where = np.flatnonzero(self.codes[picked] == SPILL)
        if not where.size:
            return where, self.spill[:0]
        return where, self.spill[np.searchsorted(self.spill_at, self.base + picked[where])]

    def __getitem__(self, key):
        if isinstance(key, slice) and key.step in (None, 1):
            start, stop, _ = key.indices(len(self))
            return CodedTf(self.codes[start:max(start, stop)], self.spill_at, self.spill, self.base + start)
        if isinstance(key, tuple):
            rows, column = key
            return self.decoded(rows)[:, column]
        return self.decoded(key)

    def decoded(self, key=slice(None)) -> np.ndarray:
        """The ``uint16 [k, 3]`` frequencies of the postings ``key`` picks (a slice, an index
        array or a mask)."""
        if isinstance(key, slice) and key.step in (None, 1):      # a run of postings: no index array
            view = self[key]
            out = TABLE[view.codes]
            where, rows = view._spills()
        else:
            key = np.asarray(key) if not isinstance(key, slice) else np.arange(len(self))[key]
            picked = np.flatnonzero(key) if key.dtype == bool else key.astype(np.int64)
            out = TABLE[self.codes[picked]]
            where, rows = self._spills(picked)
        out[where] = rows
        return out

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = self.decoded()
        return out if dtype is None else out.astype(dtype, copy=False)

    def tolist(self) -> list[list[int]]:
        return self.decoded().tolist()

    def weighted(self, weights: np.ndarray) -> np.ndarray:
        """``f = tf_title · w_0 + tf_heading · w_1 + tf_body · w_2`` of every posting, in float64,
        summed column by column as the ``[n, 3]`` array would give it."""
        f = _weighted_table(weights)[self.codes]
        where, rows = self._spills()
        if where.size:
            spilled = rows[:, 0] * weights[0]
            spilled += rows[:, 1] * weights[1]
            spilled += rows[:, 2] * weights[2]
            f[where] = spilled
        return f


def weighted(tf: "CodedTf | np.ndarray", weights: np.ndarray) -> np.ndarray:
    """BM25's ``f = Σ_c w_c · tf_c`` of postings' frequencies, coded (:meth:`CodedTf.weighted`)
    or a decoded ``[n, 3]`` array, summed column by column in both."""
    if isinstance(tf, CodedTf):
        return tf.weighted(weights)
    f = tf[:, 0] * weights[0]     # (no BLAS call: a search runs this beside its graph walks,
    f += tf[:, 1] * weights[1]    # and BLAS's threads would compete with them for the cores)
    f += tf[:, 2] * weights[2]
    return f


_tables: dict[bytes, np.ndarray] = {}


def _weighted_table(weights: np.ndarray) -> np.ndarray:
    """Each code's ``f`` for ``weights`` (the last few weightings kept: a search asks for one
    per term and segment)."""
    key = np.asarray(weights, np.float64).tobytes()
    table = _tables.get(key)
    if table is None:
        table = TABLE[:, 0] * weights[0]
        table += TABLE[:, 1] * weights[1]
        table += TABLE[:, 2] * weights[2]
        if len(_tables) >= 16:
            _tables.clear()
        _tables[key] = table
    return table


def placed(parts: list[tuple[CodedTf, np.ndarray | None, np.ndarray]], total: int) -> CodedTf:
    """The postings of several coded arrays put at new places in one of ``total`` postings:
    each part is (its codes, which of its postings are kept (None: all), the new place of each
    kept one); every place must be filled."""
    codes = np.empty(total, np.uint8)
    at, rows = [], []
    for tf, keep, place in parts:
        codes[place] = tf.codes if keep is None else tf.codes[keep]
        spilled = tf.spill_at - tf.base
        inside = (spilled >= 0) & (spilled < len(tf))
        spilled, values = spilled[inside], tf.spill[inside]
        if keep is not None:
            alive = keep[spilled]
            spilled, values = np.cumsum(keep)[spilled[alive]] - 1, values[alive]
        at.append(place[spilled])
        rows.append(values)
    spill_at = np.concatenate(at).astype(np.int64) if at else np.zeros(0, np.int64)
    spill = np.concatenate(rows).reshape(-1, 3).astype(np.uint16) if rows else np.zeros((0, 3), np.uint16)
    order = np.argsort(spill_at, kind="stable")
    return CodedTf(codes, spill_at[order], spill[order])
