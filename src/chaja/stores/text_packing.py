"""Chunk text and analysed terms kept small: zstd with dictionaries trained on the store's rows.

A chunk is a kilobyte or two, too short for a compressor to learn its language from the
chunk alone (zstd alone: 1.8× on the peers corpus's Korean and English chunk text), but
the chunks of one store share their words, markup and, once analysed, their bigrams. So
once a store holds :data:`TRAIN_AT` chunks, one dictionary for the chunks' text and one
for their analysed body terms are trained on a sample spread over its rows (zstd's
dictionary builder, COVER), kept in the store's meta and never changed; every row written
from then on keeps its text (``chunks.text``) and body terms (``chunk_terms.body``, where a
chunk keeps them: :mod:`chaja.stores.derived_terms`) as a zstd frame made with them. On the
peers corpus: text 2.4×, terms 2.7×, about 5 µs a row to pack (a write's rows in one call,
on every core) and 2.5 µs to unpack; a store of 100,000 chunks 556 → 444 MB, of a million
4,782 → 3,625 MiB (``benchmarks/results/bulk-load-packing.md``, ``packing-1m.md``).

A row is a ``str`` (written before the dictionaries, or too short to gain) or ``bytes``
(a frame); a reader tells them apart by type, so a store written before packing, or
partly packed, reads as it is (its plain rows are packed by its next compaction:
:mod:`chaja.stores.text_repacking`). Title and heading stay plain:
they are short. The dictionaries are written in the transaction that writes the first
packed rows, and every write asks for them inside its own transaction, so no committed
row is packed with a dictionary the store lacks; a frame names its dictionary, so a
reader holding other ones reads them again.
"""
from __future__ import annotations

import base64
import json
import sqlite3
import threading
from collections.abc import Sequence

import zstandard

from chaja.stores.base import StoreError

#: the store's dictionaries in meta: {"text": base64, "terms": base64}
META_KEY = "text_dictionaries"
#: a store gets its dictionaries once it holds (or a write brings it to) this many chunks
TRAIN_AT = 5_000
#: meta key: the last rowid written before the dictionaries, which may hold plain text ("0": none;
#: :mod:`chaja.stores.text_repacking` packs them)
PLAIN_KEY = "text_dictionaries.plain_through"
#: the rows a dictionary is trained on, at most
SAMPLE = 2_000
#: the size of each dictionary (64 KB: 112 KB gained nothing on the peers corpus)
DICT_BYTES = 64_000
#: a write compresses its rows on zstd's threads from this many rows: starting them costs more
#: than a few rows' compression (10 rows of 200 words: 22 µs a row on threads, 4.6 µs one by one;
#: 1,000 rows: 4 µs either way, on two cores)
THREADS_FROM = 256
#: zstd's level (3: 2.4× on text at 6 µs a row; 1: 2.1× at 5 µs)
LEVEL = 3
#: shorter values stay plain: a frame's header costs more than it saves
MIN_BYTES = 64
FIELDS = ("text", "terms")


class TextPacking:
    """The packing of one store (``db``): :meth:`pack_many` for rows about to be
    written, :meth:`unpack` for rows read. The dictionaries are read from meta when first needed
    (a reader sees a frame another process wrote) and kept: they never change."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db
        self._raw: str | None = None          # the meta value the loaded dictionaries came from
        self._dicts: dict[str, zstandard.ZstdCompressionDict] = {}
        self._local = threading.local()       # a (de)compressor is not for two threads at once

    def _load(self, cur: sqlite3.Cursor | sqlite3.Connection | None = None) -> bool:
        """Whether the store has its dictionaries, (re)loading them from meta where they are
        not loaded or ``cur`` (a write's transaction, or the connection) sees others."""
        if self._raw is not None and cur is None:
            return True
        row = (cur or self.db).execute("SELECT value FROM meta WHERE key = ?", (META_KEY,)).fetchone()
        if row is None:
            self.forget()
            return False
        if row[0] != self._raw:
            self._use({f: zstandard.ZstdCompressionDict(base64.b64decode(v)) for f, v in json.loads(row[0]).items()})
            self._raw = row[0]
        return True

    def _use(self, dicts: dict[str, zstandard.ZstdCompressionDict]) -> None:
        self._dicts = dicts
        self._local = threading.local()

    def _coder(self, kind: str, field: str):
        """This thread's compressor (``kind`` "pack") or decompressor of ``field``'s dictionary."""
        made = self._local.__dict__.setdefault(kind, {})
        if field not in made:
            d = self._dicts[field]
            made[field] = zstandard.ZstdCompressor(level=LEVEL, dict_data=d) if kind == "pack" \
                else zstandard.ZstdDecompressor(dict_data=d)
        return made[field]

    def unpack(self, value: str | bytes | None, field: str = "text") -> str | None:
        """A stored text as written: a ``str`` as it is, a frame decompressed with the
        dictionary its header names (read from meta again if another is loaded)."""
        if not isinstance(value, bytes):
            return value
        wanted = zstandard.get_frame_parameters(value).dict_id

        def held() -> bool:
            return field in self._dicts and self._dicts[field].dict_id() == wanted
        if not (self._load() and held()):
            self._load(self.db)
        if not held():
            raise StoreError("a chunk's text is compressed with a dictionary the store does not hold: "
                             "the store is damaged; index its documents again")
        return self._coder("unpack", field).decompress(value).decode("utf-8")

    def ready(self, cur: sqlite3.Cursor, rows: int, records: Sequence) -> bool:
        """Whether rows written now are packed: the dictionaries are there, or the store will
        hold ``rows`` ≥ :data:`TRAIN_AT` chunks and they are trained now
        (:func:`training_sample`, ``records`` the chunk records being written) and written in
        the caller's transaction (``cur``). Asked in every write's transaction, so a write
        whose dictionaries were rolled back trains them again rather than packing rows with
        dictionaries the store does not hold. The last row written before them is recorded
        (:data:`PLAIN_KEY`), for :mod:`chaja.stores.text_repacking`."""
        if self._load(cur):
            return True
        if rows < TRAIN_AT:
            return False
        picked = training_sample(cur, rows, *stored_texts(None, records))
        try:
            trained = {f: zstandard.train_dictionary(DICT_BYTES, [s.encode("utf-8") for s in picked[f] if s])
                       for f in FIELDS}
        except zstandard.ZstdError:       # too little text to learn from: stay plain, try again later
            return False
        cur.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                    (META_KEY, json.dumps({f: base64.b64encode(d.as_bytes()).decode("ascii")
                                           for f, d in trained.items()})))
        last = cur.execute("SELECT max(rowid) FROM chunks").fetchone()[0] or 0
        cur.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (PLAIN_KEY, str(last)))
        self._use(trained)
        self._raw = None          # not committed yet: the next read compares with meta
        return True

    def forget(self) -> None:
        """Read the dictionaries from meta again when next needed."""
        self._raw = None
        self._use({})

    def pack_many(self, values: Sequence[str], field: str = "text") -> list[str | bytes]:
        """``values`` as they are stored: a frame each where the dictionaries are loaded and it
        gains (:data:`MIN_BYTES` or more, and smaller packed), else the text; compressed in one
        call on every core (zstd's own threads, outside the GIL) for :data:`THREADS_FROM` rows
        or more, else one by one: the rows of one write."""
        if not self._dicts:
            return list(values)
        raw = [v.encode("utf-8") if v is not None else b"" for v in values]
        worth = [i for i, r in enumerate(raw) if len(r) >= MIN_BYTES]
        out: list[str | bytes] = list(values)
        if worth:
            coder = self._coder("pack", field)
            if len(worth) >= THREADS_FROM:
                frames = [f.tobytes() for f in coder.multi_compress_to_buffer([raw[i] for i in worth], threads=-1)]
            else:
                frames = [coder.compress(raw[i]) for i in worth]
            for i, packed in zip(worth, frames):
                if len(packed) < len(raw[i]):
                    out[i] = packed
        return out


def stored_texts(packing: TextPacking | None, records: Sequence) -> tuple[list, list]:
    """The texts and the joined body terms of chunk ``records`` as a write stores them:
    packed where ``packing`` is given (:meth:`TextPacking.pack_many`), else as they are."""
    return packed(packing, [r.chunk.text for r in records], [" ".join(r.body_terms) for r in records])


def packed(packing: TextPacking | None, texts: list[str], bodies: list[str]) -> tuple[list, list]:
    """``texts`` and joined body terms ``bodies`` as a write stores them: packed where
    ``packing`` is given, else as they are."""
    if packing is None:
        return texts, bodies
    return packing.pack_many(texts), packing.pack_many(bodies, "terms")


def training_sample(cur: sqlite3.Cursor, rows: int, texts: list[str], bodies: list[str]) -> dict[str, list[str]]:
    """At most :data:`SAMPLE` texts and bodies to train on, spread evenly over the store's
    rows and the ones being written (``texts``, ``bodies``), each in proportion to its share
    of the ``rows`` the store will hold (a first batch of one source alone made a dictionary
    that packed the rest badly: 485 MB against 444 at 100,000 chunks)."""
    from_batch = min(len(texts), round(SAMPLE * len(texts) / rows))
    step = max(1, len(texts) // max(from_batch, 1))
    picked = {"text": texts[::step][:from_batch], "terms": bodies[::step][:from_batch]}
    stored_rows = rows - len(texts)
    if stored_rows > 0 and from_batch < SAMPLE:
        stride = max(1, stored_rows // (SAMPLE - from_batch))
        for text, body in cur.execute("SELECT c.text, f.body FROM chunks c JOIN chunk_terms f ON f.rowid = c.rowid"
                                      " WHERE c.rowid % ? = 0 LIMIT ?", (stride, SAMPLE - from_batch)):
            if isinstance(text, str) and isinstance(body, str):
                picked["text"].append(text)
                picked["terms"].append(body)
    return picked
