"""Vector matrices beside the SQLite store, mapped instead of read.

Reading a vector field out of SQLite means reading every row's blob (about 0.9 s per
100,000 384-d vectors here, and the whole matrix in memory per process). For fields of
at least :data:`FILE_THRESHOLD` vectors, compaction (:meth:`SqliteStore.compact`) also
writes ``<store>-<field>.vectors``: the float32 matrix in rowid order, the rowids, the
chunk ids and the language of each row, covering the same change-log entry as the
postings file. A store maps it (the pages are the operating system's cache, shared
between processes) and adds the rows written since from SQLite; a file that does not
cover exactly the postings file's entry, or belongs to another store, is not used.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from chaja.stores import array_file

MAGIC = b"CHJVEC\x01\x00"
#: a field with at least this many vectors gets a file (the keyword file's own minimum:
#: below it a store never compacts). With the file, a reader that sees another
#: process's write reads only the rows written since, not the whole field again.
FILE_THRESHOLD = 1_000


def path_of(store_path: Path, field: str) -> Path:
    return Path(f"{store_path}-{field}.vectors")


class ChunkIds(Sequence):
    """Chunk ids kept as one UTF-8 buffer and offsets; decoded on access."""

    def __init__(self, raw: np.ndarray, offsets: np.ndarray):
        self._raw, self._offsets = raw, offsets

    def __len__(self) -> int:
        return int(self._offsets.shape[0]) - 1

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        lo, hi = int(self._offsets[i]), int(self._offsets[i + 1])
        return self._raw[lo:hi].tobytes().decode("utf-8")

    def __iter__(self):
        raw, off = self._raw.tobytes(), self._offsets.tolist()
        return (raw[off[i]:off[i + 1]].decode("utf-8") for i in range(len(off) - 1))

    def take(self, rows) -> list[str]:
        """The ids of ``rows`` (a search's hits): their offsets gathered at once and each id
        decoded from a view of the buffer, not one NumPy slice per id."""
        rows = np.asarray(rows, dtype=np.int64)
        view = memoryview(self._raw)
        return [str(view[lo:hi], "utf-8")
                for lo, hi in zip(self._offsets[rows].tolist(), self._offsets[rows + 1].tolist())]


def ids_at(ids: Sequence[str], rows) -> list[str]:
    """``[ids[i] for i in rows]``, for a plain list of ids or a mapped :class:`ChunkIds`."""
    return ids.take(rows) if isinstance(ids, ChunkIds) else [ids[i] for i in rows]


def write(store_path: Path, field: str, matrix: np.ndarray, ids: Sequence[str], langs: np.ndarray,
          rowids: np.ndarray, *, seq: int, store_id: str) -> None:
    names = sorted({str(x) for x in langs})
    code = {n: i for i, n in enumerate(names)}
    encoded = [c.encode("utf-8") for c in ids]
    offsets = np.concatenate([[0], np.cumsum([len(b) for b in encoded], dtype=np.int64)]).astype(np.int64)
    array_file.save(path_of(store_path, field), MAGIC, {
        "matrix": matrix.astype(np.float32, copy=False), "rowids": rowids.astype(np.int64),
        "langs": np.fromiter((code[str(x)] for x in langs), dtype=np.uint8, count=len(langs)),
        "ids": np.frombuffer(b"".join(encoded), dtype=np.uint8), "id_offsets": offsets,
    }, {"seq": seq, "store_id": store_id, "field": field, "lang_names": names})


def read(store_path: Path, field: str, *, seq: int, store_id: str):
    """(matrix, ids, languages, rowids) of the field's file when it covers ``seq`` of this
    store, else None."""
    path = path_of(store_path, field)
    if not path.exists():
        return None
    try:
        arrays, meta = array_file.load(path, MAGIC)
        if meta.get("seq") != seq or meta.get("store_id") != store_id or meta.get("field") != field:
            return None
        names = np.array(meta["lang_names"] or [""])
        return (arrays["matrix"], ChunkIds(arrays["ids"], arrays["id_offsets"]),
                names[arrays["langs"]] if arrays["langs"].size else np.zeros(0, names.dtype), arrays["rowids"])
    except (ValueError, KeyError, OSError):
        return None
