"""Chunk id → row of a vector matrix, in 12 bytes a chunk instead of a dictionary's ~140.

Every search maps its candidates' chunk ids to rows of the chunk matrix. A dictionary of
a million ids (the id strings decoded from the mapped vector file, and a hash table over
them) held 137 MB of a serving process's own memory. Here each id is kept as its 64-bit
string hash (Python's ``hash``: the same within a process, which is all an in-memory
index needs), sorted, with the row it came from: a lookup is a binary search, and the
candidate row's id is compared with the one asked for, so two ids whose hashes collide
never stand for each other. Rows appended later (a write applied to the matrices) go to
a small dictionary beside the arrays until they are an eighth of them, when the arrays
are built again. The rows of the ids asked for lately are remembered (:data:`MEMO` of them;
a search asks for most of its candidates two or three times: 440 ids, 239 of them again, at
a million chunks), and forgotten whenever the rows change.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from chaja.stores.sqlite_vectors import ids_at

#: appended ids kept in the dictionary beside the arrays, as a share of the rows, before a rebuild
REBUILD_SHARE = 0.125
#: ids whose rows are remembered (then forgotten at once)
MEMO = 4096


#: one id's hash (the arrays' are :func:`_hashes`)
_hash = hash


def _hashes(ids: Iterable[str], count: int) -> np.ndarray:
    return np.fromiter(map(hash, ids), dtype=np.int64, count=count)


class IdRows:
    """``ids`` (a list or a mapped :class:`~chaja.stores.sqlite_vectors.ChunkIds`) → row."""

    def __init__(self, ids: Sequence[str]):
        self._build(ids)

    def _build(self, ids: Sequence[str]) -> None:
        self.ids = ids
        hashes = _hashes(ids, len(ids))
        order = np.argsort(hashes, kind="stable")
        self._sorted = hashes[order]
        self._order = order.astype(np.int32) if len(order) < 2**31 else order    # half the bytes
        self._extra: dict[str, int] = {}
        self._memo: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.ids)

    def rows(self, wanted: Sequence[str]) -> np.ndarray:
        """The row of each of ``wanted``, −1 for an id not held."""
        wanted = list(wanted)
        memo = self._memo
        out = np.fromiter((memo.get(c, -2) for c in wanted), dtype=np.int64, count=len(wanted))
        new = np.flatnonzero(out == -2)
        if new.size:
            asked = [wanted[i] for i in new.tolist()]
            found = self._looked_up(asked)
            out[new] = found
            if len(memo) + len(asked) > MEMO:
                memo.clear()
            memo.update(zip(asked, found.tolist()))
        return out

    def _looked_up(self, wanted: list[str]) -> np.ndarray:
        """:meth:`rows` without the memo: a binary search of the ids' hashes."""
        out = np.full(len(wanted), -1, dtype=np.int64)
        if not wanted:
            return out
        if self._sorted.size:
            h = _hashes(wanted, len(wanted))
            at = np.searchsorted(self._sorted, h)
            inside = np.flatnonzero(at < self._sorted.size)
            inside = inside[self._sorted[at[inside]] == h[inside]]
            rows = self._order[at[inside]]
            same = np.array([a == b for a, b in zip(ids_at(self.ids, rows), (wanted[i] for i in inside))],
                            dtype=bool)
            out[inside[same]] = rows[same]
            for i in inside[~same].tolist():              # (hashes that collide: the next ones of the same hash)
                out[i] = self._colliding(wanted[i], int(h[i]), int(at[i]))
        if self._extra:
            for i, cid in enumerate(wanted):
                if out[i] < 0:
                    out[i] = self._extra.get(cid, -1)
        return out

    def _colliding(self, cid: str, h: int, at: int) -> int:
        while at < self._sorted.size and int(self._sorted[at]) == h:
            row = int(self._order[at])
            if self.ids[row] == cid:
                return row
            at += 1
        return -1

    def get(self, cid: str, default: int = -1) -> int:
        """The row of one id (a binary search on scalars: ``rows([cid])`` builds arrays
        for it, 34 against 2 µs, and a search looks up its query words one by one)."""
        row = -1
        if self._sorted.size:
            h = _hash(cid)
            row = self._colliding(cid, h, int(self._sorted.searchsorted(h)))
        if row < 0 and self._extra:
            row = self._extra.get(cid, -1)
        return row if row >= 0 else default

    def __contains__(self, cid: str) -> bool:
        return self.get(cid) >= 0

    def __getitem__(self, cid: str) -> int:
        row = self.get(cid)
        if row < 0:
            raise KeyError(cid)
        return row

    def extended(self, ids: Sequence[str], start: int) -> None:
        """The matrix grew to ``ids``, its rows from ``start`` on new (the rows before unchanged)."""
        self._memo.clear()                                # (an id not held may be now)
        for i in range(start, len(ids)):
            self._extra[ids[i]] = i
        if len(self._extra) > REBUILD_SHARE * max(len(ids), 1):
            self._build(ids)
        else:
            self.ids = ids
