"""New rows' vectors, appended to a file beside the store instead of written into SQLite.

A write (:meth:`SqliteStore.put_documents`) used to store each vector as a blob in its
chunk's row; the next compaction copied it into the field's vector file
(:mod:`chaja.stores.sqlite_vectors`), emptied the blob (an UPDATE of every row) and gave the
freed pages back (a rewrite of the whole file): a bulk load wrote its vectors three times
over. Now a written row holds an empty blob (:data:`~chaja.stores.sqlite_vectors.IN_FILE`)
and its vector goes to the field's *spool*, ``<store>-<field>.<token>.spool``: fixed-size
records of ``(rowid: int64, vector: float32[dim])``, appended in the write's own
transaction. Meta ``spool.<field>`` names the file and the records it holds
(``{"file", "rows"}``); a reader maps the file and reads that many records, so what a
crash appended past them is never read, and the next writer cuts it off.

Where a rowid appears more than once (a rowid SQLite gave again after the row was deleted),
its last record is the live one. A row whose blob is empty keeps its vector in the spool
where the spool holds its rowid, else in the field's vector file. A row whose blob is not
empty (a large document moved whole from staging, aligned vectors added later, a store
written before schema 8) keeps it there, as before.

Crash safety: the records are written and flushed to disk (fsync) under the store's write
lock before the transaction that counts them commits; a crash before the commit leaves the
count, and so what readers see, as it was. Compaction folds the spool into the field's
vector file and, in the same transaction, drops the record; the file is removed once that
commits, and a spool no record names is removed by the next compaction.
"""
from __future__ import annotations

import json
import mmap
import os
import secrets
import sqlite3
from pathlib import Path

import numpy as np

from chaja.stores import sqlite_vectors
from chaja.stores.base import StoreError
from chaja.stores.sorted_keys import positions


def record_key(field: str) -> str:
    return f"spool.{field}"


def files_of(store_path: Path, field: str | None = None) -> list[Path]:
    """Every spool file beside the store (of ``field``), recorded or not."""
    return sqlite_vectors.files_beside(store_path, field, ".spool")


def _record_dtype(dim: int) -> np.dtype:
    return np.dtype([("rowid", "<i8"), ("vector", "<f4", (dim,))])


class MissingSpool(ValueError):
    """The spool a field's record names is missing or shorter than the record says."""


def append(cur: sqlite3.Cursor, store_path: Path, field: str, dim: int, rowids: list[int],
           vectors: list[np.ndarray]) -> None:
    """Append ``(rowid, vector)`` records to the field's spool and count them in meta, inside
    the caller's write transaction (the records are on disk before it commits)."""
    if not rowids:
        return
    row = cur.execute("SELECT value FROM meta WHERE key = ?", (record_key(field),)).fetchone()
    rec = json.loads(row[0]) if row else {"file": f"{store_path.name}-{field}.{secrets.token_hex(4)}.spool",
                                          "rows": 0}
    records = np.empty(len(rowids), _record_dtype(dim))
    records["rowid"] = rowids
    records["vector"] = np.stack(vectors)
    size = _record_dtype(dim).itemsize
    path = store_path.with_name(rec["file"])
    if row and (not path.exists() or path.stat().st_size < rec["rows"] * size):
        raise StoreError(f"{path.name}, which keeps the {field} vectors of {store_path.name}'s latest writes, is"
                         f" {'missing' if not path.exists() else 'shorter than the store recorded'}: restore it,"
                         " or run `chaja check --repair` and index those documents again")
    # (an OSError here, a full disk say, rolls the caller's transaction back and is said as
    # SQLite's own errors are: SqliteConnection._sentences; the next write cuts off what was appended)
    with open(path, "r+b" if row else "w+b") as f:
        f.truncate(rec["rows"] * size)              # (what a crash appended past the count)
        f.seek(rec["rows"] * size)
        f.write(records.tobytes())
        f.flush()
        os.fsync(f.fileno())
    rec["rows"] += len(rowids)
    cur.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (record_key(field), json.dumps(rec)))


class Spool:
    """The records a field's spool holds: ``rowids`` and ``vectors`` (mapped, in append
    order); the last record of each rowid is the live one."""

    def __init__(self, rowids: np.ndarray, vectors: np.ndarray):
        self.rowids, self.vectors = rowids, vectors
        self._last: tuple[np.ndarray, np.ndarray] | None = None

    @classmethod
    def empty(cls, dim: int) -> "Spool":
        return cls(np.zeros(0, np.int64), np.zeros((0, dim), np.float32))

    def __len__(self) -> int:
        return int(self.rowids.size)

    def _latest_records(self) -> tuple[np.ndarray, np.ndarray]:
        """(record of each rowid's last appearance, that rowid), in rowid order; worked out once."""
        if self._last is None:
            r = self.rowids
            if self.in_rowid_order():                           # the common case: rowids only grew
                order = np.arange(r.size)
            else:
                order = np.argsort(r, kind="stable")                # append order kept within a rowid
                ordered = r[order]
                last = np.ones(order.size, dtype=bool)
                last[:-1] = ordered[1:] != ordered[:-1]
                order = order[last]
            self._last = order, r[order]
        return self._last

    def in_rowid_order(self) -> bool:
        """One record a rowid, in rowid order (a bulk load's spool): the records are the rows."""
        r = self.rowids
        return r.size < 2 or bool((r[1:] > r[:-1]).all())

    def latest(self) -> tuple[np.ndarray, np.ndarray]:
        """(rowids, vectors) of every rowid's last record, in rowid order (copied out)."""
        order, keys = self._latest_records()
        return keys, self.vectors[order]

    def find(self, rowids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(held, vectors): which of ``rowids`` the spool holds, and their vectors in that order."""
        rowids = np.asarray(rowids, np.int64)
        order, keys = self._latest_records()
        if not keys.size:
            return np.zeros(rowids.size, dtype=bool), self.vectors[:0]
        at, held = positions(keys, rowids)
        return held, self.vectors[order[at[held]]]


def read(store_path: Path, field: str, value: str | None, dim: int) -> Spool:
    """The records the record ``value`` counts (mapped, not read; none where there is no
    spool); :class:`MissingSpool` where the file is missing or short."""
    kind = _record_dtype(dim)
    if not value:
        return Spool.empty(dim)
    rec = json.loads(value)
    path = store_path.with_name(rec["file"])
    want = rec["rows"] * kind.itemsize
    try:
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size < want:
                raise MissingSpool(f"{path.name} holds fewer than the {rec['rows']} vectors the store recorded")
            if not want:
                return Spool.empty(dim)
            mapped = mmap.mmap(f.fileno(), want, access=mmap.ACCESS_READ)
    except FileNotFoundError:
        raise MissingSpool(f"{path.name} is missing") from None
    records = np.frombuffer(mapped, dtype=kind, count=rec["rows"])
    return Spool(records["rowid"], records["vector"])


def recorded_file(value: str | None) -> str | None:
    return json.loads(value)["file"] if value else None


def remove_unrecorded(store_path: Path, field: str, recorded: str | None) -> None:
    """Remove the field's spools but the ``recorded`` one (:func:`sqlite_vectors.remove_all_but`)."""
    sqlite_vectors.remove_all_but(files_of(store_path, field), {recorded or ""})
