"""Vector matrices beside the SQLite store: each vector kept once, mapped instead of read.

For a field of at least :data:`FILE_THRESHOLD` vectors, compaction
(:meth:`SqliteStore.compact`) writes the field's float32 matrix in rowid order, with the
rowids, the chunk ids and the language of each row, to a new file
``<store>-<field>.<seq>-<token>.vectors`` and, in the same transaction, records it in
the store's meta (``vectors.<field>``: the file's name and the change-log entry ``seq`` it
covers) and empties the rows' own copies: a row whose blob is empty (:data:`IN_FILE`)
keeps its vector in the recorded file. The file is the one copy of those vectors; rows
written since hold theirs in SQLite until the next compaction. A store maps the
recorded file (the pages are the operating system's cache, shared between processes)
and applies the rows the change log touched since its ``seq``.

Crash safety: the file is written whole (fsync, rename) under the write lock before the
transaction that names it commits, so a crash leaves the committed record and its file
as they were, the rows still holding theirs; a file no record names is removed by the
next compaction. The file the old record named is removed once the new one commits.

Each file keeps its vectors in the store's :data:`ENCODINGS` form: ``int8`` (the default:
codes with an offset and a scale per dimension, :mod:`chaja.stores.quantized`, a quarter of the bytes)
or ``float32``. A store reads either; a compaction writes a field's file again where its
form is not the store's.

A store written before schema 6 keeps every vector in its rows, and may hold a
``<store>-<field>.vectors`` file (a copy of them, used only while it covers the keyword
file's entry: :func:`read_copy`); its next compaction moves the vectors into a recorded
file and removes the copy, without encoding anything again.
"""
from __future__ import annotations

import glob
import json
import secrets
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from chaja.stores import array_file
from chaja.stores.base import sample_digests
from chaja.stores.quantized import ScaledInt8

MAGIC = b"CHJVEC\x01\x00"
#: an empty blob in a vector column: the row's vector is in the field's recorded file
IN_FILE = b""
#: a field with at least this many vectors gets a file (the keyword file's own minimum:
#: below it a store never compacts). With the file, a reader that sees another
#: process's write reads only the rows written since, not the whole field again.
FILE_THRESHOLD = 1_000
#: the forms a vector file keeps its vectors in; the first is a new store's
ENCODINGS = ("int8", "float32")
#: the field whose file keeps its rows' sample digests (the other fields' are gathered from them by rowid)
DIGESTS_FIELD = "chunk"


def copy_path(store_path: Path, field: str) -> Path:
    """A schema-5 store's copy of a field's vectors (its rows hold them too)."""
    return Path(f"{store_path}-{field}.vectors")


def record_key(field: str) -> str:
    return f"vectors.{field}"


def files_beside(store_path: Path, field: str | None, suffix: str) -> list[Path]:
    """Every ``<store>-<field>.*<suffix>`` file beside the store (of any field for None)."""
    fields = "*" if field is None else field
    return sorted(store_path.parent.glob(f"{glob.escape(store_path.name)}-{fields}.*{suffix}"))


def remove_all_but(paths: list[Path], kept: set[str]) -> None:
    """Remove each of ``paths`` whose name is not in ``kept``; only under the store's write
    lock, where no other writer has a file it has not yet recorded."""
    for path in paths:
        if path.name not in kept:
            path.unlink(missing_ok=True)


def files_of(store_path: Path, field: str | None = None) -> list[Path]:
    """Every vector file beside the store (of ``field``), recorded or not, copies included."""
    return files_beside(store_path, field, "vectors")


class ChunkIds(Sequence):
    """Chunk ids kept as one UTF-8 buffer and offsets, decoded on access; then the ids of
    rows appended since (``tail``, :meth:`extended`), so that a row added to a million does
    not decode the million into a list."""

    def __init__(self, raw: np.ndarray, offsets: np.ndarray, tail: Sequence[str] = (),
                 digests: np.ndarray | None = None):
        self._raw, self._offsets, self._tail = raw, offsets, list(tail)
        self._base = int(offsets.shape[0]) - 1
        #: the file's rows' sample digests where the file keeps them (:meth:`sample_digests`)
        self._digests = digests if digests is not None and digests.shape == (self._base, 16) else None

    def __len__(self) -> int:
        return self._base + len(self._tail)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        i = int(i) + (len(self) if i < 0 else 0)
        if i >= self._base:
            return self._tail[i - self._base]
        lo, hi = int(self._offsets[i]), int(self._offsets[i + 1])
        return self._raw[lo:hi].tobytes().decode("utf-8")

    def __iter__(self):
        raw, off = self._raw.tobytes(), self._offsets.tolist()
        yield from (raw[off[i]:off[i + 1]].decode("utf-8") for i in range(len(off) - 1))
        yield from self._tail

    def take(self, rows) -> list[str]:
        """The ids of ``rows`` (a search's hits, or every row): their offsets gathered at once
        and each id decoded from a view of the buffer, not one NumPy slice per id; a row of
        the tail read from it."""
        rows = np.asarray(rows, dtype=np.int64)
        if not self._tail or not rows.size or int(rows.max()) < self._base:
            return self._decoded(rows)
        out = np.empty(rows.size, dtype=object)
        low = rows < self._base
        out[low] = self._decoded(rows[low])
        out[~low] = [self._tail[r] for r in (rows[~low] - self._base).tolist()]
        return out.tolist()

    def _decoded(self, rows: np.ndarray) -> list[str]:
        view = memoryview(self._raw)
        return [str(view[lo:hi], "utf-8")
                for lo, hi in zip(self._offsets[rows].tolist(), self._offsets[rows + 1].tolist())]

    def extended(self, ids: Sequence[str]) -> ChunkIds:
        """These ids with ``ids`` after them (the buffer shared, not copied)."""
        return ChunkIds(self._raw, self._offsets, [*self._tail, *ids], self._digests)

    def sample_digests(self) -> np.ndarray:
        """Every row's :func:`~chaja.stores.base.sample_digests`: the file's rows' as the file
        keeps them (a chunk matrix's file written since they were kept), the tail's computed;
        every row's computed where the file keeps none."""
        if self._digests is None:
            return sample_digests(self.take(np.arange(len(self))))
        if not self._tail:
            return self._digests
        return np.concatenate([self._digests, sample_digests(self._tail)])


class RowLanguages:
    """Each row's language as the file keeps it: one-byte codes (mapped) and the names they
    stand for. A string array of them took 8 bytes a row of the process's own memory (14 MB
    for the four fields of a million-chunk store); this keeps none. It answers what a
    search asks of a language column: ``langs == "ko"``, ``langs[rows]`` (names), ``len``,
    and ``np.asarray(langs)`` (every name, for the rarer whole-column work)."""

    __hash__ = None          # compared row by row, as an array is

    def __init__(self, codes: np.ndarray, names: np.ndarray):
        self.codes, self.names = codes, names

    def __len__(self) -> int:
        return int(self.codes.shape[0])

    @property
    def shape(self) -> tuple[int, ...]:
        return self.codes.shape

    def __eq__(self, lang) -> np.ndarray:
        found = np.flatnonzero(self.names == lang)
        return self.codes == found[0] if found.size else np.zeros(len(self), dtype=bool)

    def __getitem__(self, rows) -> np.ndarray:
        return self.names[self.codes[rows]]

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = self.names[self.codes]
        return out if dtype is None else out.astype(dtype, copy=False)

    def __iter__(self):
        return iter(self.names[self.codes].tolist())

    def extended(self, langs: Sequence[str]) -> RowLanguages:
        """These rows' languages with ``langs`` after them, still codes (a name new here
        added to the names), not a string array of every row's."""
        names = list(self.names.tolist())
        names += sorted(set(langs) - set(names))
        at = {n: i for i, n in enumerate(names)}
        return RowLanguages(np.concatenate([self.codes, np.array([at[x] for x in langs], np.uint8)]),
                            np.array(names))


def extended(column, new: Sequence[str]):
    """A matrix's ids or languages (as a file keeps them, a list or an array) with ``new``
    after them: the file's kinds extend themselves (:meth:`ChunkIds.extended`,
    :meth:`RowLanguages.extended`), the others are joined."""
    if not new:
        return column
    if isinstance(column, (ChunkIds, RowLanguages)):
        return column.extended(new)
    if isinstance(column, np.ndarray):
        return np.concatenate([column, np.array(new)])
    return list(column) + list(new)


def digests_of(ids: Sequence[str]) -> np.ndarray:
    """Every row's :func:`~chaja.stores.base.sample_digests`: a file's ids give those the file
    keeps (:meth:`ChunkIds.sample_digests`), a list has each id hashed."""
    return ids.sample_digests() if isinstance(ids, ChunkIds) else sample_digests(list(ids))


def ids_at(ids: Sequence[str], rows) -> list[str]:
    """``[ids[i] for i in rows]``, for a plain list of ids or a mapped :class:`ChunkIds`."""
    if isinstance(ids, ChunkIds):
        return ids.take(rows)
    return [ids[i] for i in (rows.tolist() if isinstance(rows, np.ndarray) else rows)]


def remove_unrecorded(store_path: Path, field: str, recorded: str | None) -> None:
    """Remove the field's files but the ``recorded`` one and a schema-5 copy (:func:`remove_all_but`)."""
    remove_all_but(files_of(store_path, field), {copy_path(store_path, field).name, recorded or ""})


def encoding_of(matrix) -> str:
    """The form ``matrix`` keeps its numbers in: ``int8`` codes or ``float32``."""
    return "int8" if isinstance(matrix, ScaledInt8) else "float32"


def in_encoding(matrix, encoding: str):
    """``matrix`` in the form ``encoding`` (itself when it is in that form)."""
    if encoding not in ENCODINGS:
        raise ValueError(f"vector encoding must be one of {', '.join(ENCODINGS)}, not {encoding!r}")
    if encoding_of(matrix) == encoding:
        return matrix
    return ScaledInt8.quantize(matrix) if encoding == "int8" else np.asarray(matrix, dtype=np.float32)


def write(store_path: Path, field: str, matrix, ids: Sequence[str], langs: np.ndarray,
          rowids: np.ndarray, *, seq: int, store_id: str, encoding: str = ENCODINGS[0],
          digests: np.ndarray | None = None) -> str:
    """Write the field's matrix to a new file in the form ``encoding``; the record (JSON)
    that names it. The chunk field's file keeps its rows' sample digests too (``digests``,
    where the caller has them; else computed): ordering the statistics' samples took the md5
    of every chunk id at every index run, 0.9 s at a million chunks."""
    name = f"{store_path.name}-{field}.{seq}-{secrets.token_hex(4)}.vectors"
    if field == DIGESTS_FIELD and (digests is None or digests.shape != (len(ids), 16)):
        digests = digests_of(ids)
    _save(store_path.with_name(name), field, in_encoding(matrix, encoding), ids, langs, rowids,
          seq=seq, store_id=store_id, digests=digests if field == DIGESTS_FIELD else None)
    return record(name, seq, matrix.shape[0], encoding)


def record(name: str, seq: int, rows: int, encoding: str) -> str:
    return json.dumps({"file": name, "seq": seq, "rows": int(rows), "encoding": encoding})


def recorded_encoding(rec: dict) -> str:
    """The form a record's file keeps its vectors in (a record without one: ``float32``)."""
    return rec.get("encoding", "float32")


def _save(path: Path, field: str, matrix, ids: Sequence[str], langs: np.ndarray,
          rowids: np.ndarray, *, seq: int, store_id: str, digests: np.ndarray | None = None) -> None:
    names, lang_codes = _language_codes(langs)
    encoded = [c.encode("utf-8") for c in ids]
    offsets = np.concatenate([[0], np.cumsum([len(b) for b in encoded], dtype=np.int64)]).astype(np.int64)
    numbers = ({"codes": matrix.codes, "scales": matrix.scales, "offsets": matrix.offsets}
               if isinstance(matrix, ScaledInt8)
               else {"matrix": matrix.astype(np.float32, copy=False)})
    array_file.save(path, MAGIC, {
        **numbers, "rowids": rowids.astype(np.int64), "langs": lang_codes,
        "ids": np.frombuffer(b"".join(encoded), dtype=np.uint8), "id_offsets": offsets,
        **({} if digests is None else {"digests": np.asarray(digests, dtype=np.uint8)}),
    }, {"seq": seq, "store_id": store_id, "field": field, "lang_names": names})


def _language_codes(langs) -> tuple[list[str], np.ndarray]:
    """(the names in use, sorted; each row's place among them, one byte a row)."""
    if isinstance(langs, RowLanguages):          # as read from a file: each code renamed, not each row
        used = np.unique(langs.codes)
        names = sorted(str(n) for n in langs.names[used])
        renamed = np.zeros(max(len(langs.names), 1), np.uint8)
        renamed[used] = [names.index(str(n)) for n in langs.names[used]]
        return names, renamed[langs.codes]
    names = sorted({str(x) for x in langs})
    code = {n: i for i, n in enumerate(names)}
    # (a list, not np.fromiter over a generator: a KeyboardInterrupt raised inside one
    # by Ctrl-C was seen lost there, the compaction going on as if nothing happened)
    return names, np.array([code[str(x)] for x in langs], dtype=np.uint8)


class MissingVectors(ValueError):
    """The file a field's record names is missing, damaged or not this store's."""


def read_recorded(store_path: Path, field: str, value: str, *, store_id: str):
    """(matrix, ids, languages, rowids, seq) of the file the record ``value`` names;
    :class:`MissingVectors` when it cannot be read as this store's."""
    rec = json.loads(value)
    path = store_path.with_name(rec["file"])
    try:
        got = _load(path, field, store_id)
    except FileNotFoundError:
        raise MissingVectors(f"{path.name} is missing") from None
    except (ValueError, KeyError, OSError) as exc:
        raise MissingVectors(f"{path.name} cannot be read ({exc})") from None
    if got[0].shape[0] != rec["rows"]:
        raise MissingVectors(f"{path.name} holds {got[0].shape[0]} rows, the store recorded {rec['rows']}")
    return (*got, int(rec["seq"]))


def read_copy(store_path: Path, field: str, *, seq: int, store_id: str):
    """(matrix, ids, languages, rowids) of a schema-5 store's copy when it covers ``seq``
    of this store, else None."""
    path = copy_path(store_path, field)
    if not path.exists():
        return None
    try:
        got = _load(path, field, store_id, seq=seq)
    except (ValueError, KeyError, OSError):
        return None
    return got


def _load(path: Path, field: str, store_id: str, *, seq: int | None = None):
    arrays, meta = array_file.load(path, MAGIC)
    if meta.get("store_id") != store_id or meta.get("field") != field or (seq is not None and meta.get("seq") != seq):
        raise ValueError("another store's or another entry's")
    names = np.array(meta["lang_names"] or [""])
    # (a file written before the offsets were kept holds symmetric codes: offset 0)
    matrix = ScaledInt8(arrays["codes"], arrays["scales"], arrays.get("offsets")) if "codes" in arrays \
        else arrays["matrix"]
    if arrays["langs"].size and int(arrays["langs"].max()) >= names.size:
        raise ValueError("a row's language code names no language")
    ids = ChunkIds(arrays["ids"], arrays["id_offsets"], digests=arrays.get("digests"))
    return matrix, ids, RowLanguages(arrays["langs"], names), arrays["rowids"]
