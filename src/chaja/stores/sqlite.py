"""The embedded store: one SQLite file holding documents, chunks, an FTS5 index
and the chunk vectors.

Keyword search is FTS5 with BM25 (Robertson/Spärck Jones; FTS5's ``bm25()`` with
k1 = 1.2, b = 0.75) over three columns (title, heading path, body) whose weights
the caller sets. Terms are stored already analysed and joined by spaces; the
FTS5 ``ascii`` tokenizer then splits on those spaces only and keeps every
non-ASCII character, so a stored term matches exactly the same query term.
Each query term becomes a quoted FTS5 string, so nothing a user types is syntax.

Vector search is exact: all vectors are held in one float32 matrix and scored by
dot product (cosine, as vectors are L2-normalised), fine up to a few 100k chunks.
Heading vectors (one per chunk that has a heading) sit beside the chunk vector
and are searched the same way (``field="heading"``).

Aligned vectors (``field="aligned"`` for the passage, ``"aligned_heading"`` for
the section name) come from a second, cross-lingually aligned encoder and have a
dimension of their own (meta ``aligned_dim``).

Keyword top-k is served by :mod:`chaja.stores.sqlite_keywords` (postings in a file
beside the store, ``<store>-keywords``, kept in step by a change log), which gives FTS5's
BM25 scores without scoring every matching row; FTS5 stays the source it is built from
and answers queries whose terms FTS5 reads as phrases (``keyword_engine="fts5"`` always).

Schema 2 added the heading-vector column, schema 3 the two aligned-vector
columns, schema 4 the keyword change log and the store's random ``store_id``, schema 5
each chunk's ``location`` in its file (``page:3:4``: :meth:`chaja.documents.Location.encode`);
an older file gains them when opened, and searches as before.
"""
from __future__ import annotations

import functools
import json
import math
import os
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from chaja.documents import Chunk, ChunkRecord, Document, DocumentInfo, Hit, Location, StoreStats
from chaja.filters import Filters
from chaja.language_means import META_KEY as LANGUAGE_MEANS, project_rows_in_place, store_basis
from chaja.stores import side_by_side, sqlite_ann, sqlite_errors, sqlite_keywords, sqlite_staging, sqlite_vectors
from chaja.stores.sqlite_in import select_in
from chaja.stores.base import StoreError, flat_vector, sample_order
from chaja.stores.bm25_segments import SegmentedBM25
from chaja.stores.one_view import OneViewReads

SCHEMA_VERSION = 5
KEYWORD_ENGINES = ("postings", "fts5")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY, title TEXT NOT NULL, lang TEXT, source TEXT, doc_type TEXT,
    date TEXT, path TEXT, fingerprint TEXT NOT NULL, n_chunks INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
    rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,
    doc_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL, title TEXT NOT NULL, heading TEXT NOT NULL, text TEXT NOT NULL,
    lang TEXT, source TEXT, doc_type TEXT, date TEXT, location TEXT, vector BLOB NOT NULL, heading_vector BLOB,
    aligned_vector BLOB, aligned_heading_vector BLOB
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    title, heading, body, tokenize = 'ascii'
);
""" + sqlite_keywords.LOG_SCHEMA + sqlite_staging.SCHEMA


def fts_query(terms: list[str], column: str | None = None) -> str | None:
    """An FTS5 MATCH expression: OR of the terms, each a quoted literal string."""
    # FTS5 ends a string at NUL, so NUL never reaches it
    cleaned = (t.replace("\x00", "") for t in terms)
    quoted = ['"' + t.replace('"', '""') + '"' for t in dict.fromkeys(cleaned) if t.strip()]
    if not quoted:
        return None
    expr = " OR ".join(quoted)
    return f"{{{column}}} : ({expr})" if column else expr


def _flat(r: ChunkRecord) -> tuple:
    """(record, vector, heading vector, aligned vector, aligned heading vector), each a flat
    float32 array or None."""
    return (r, *(flat_vector(v) for v in (r.vector, r.heading_vector, r.aligned_vector, r.aligned_heading_vector)))


#: vector field → column
VECTOR_FIELDS = {"chunk": "vector", "heading": "heading_vector", "aligned": "aligned_vector",
                 "aligned_heading": "aligned_heading_vector"}


def _positions(sorted_rowids: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each of ``keys`` would sit in ``sorted_rowids`` (non-empty, ascending), and
    whether it is there."""
    pos = np.minimum(np.searchsorted(sorted_rowids, keys), sorted_rowids.size - 1)
    return pos, sorted_rowids[pos] == keys


def _exact(q: np.ndarray, n: int, mat: np.ndarray, ids, langs: np.ndarray, lang: str | None,
           passing: np.ndarray | None) -> list[Hit]:
    """Best ``n`` rows of ``mat`` by ``mat @ q`` (of ``lang``, of the ``passing`` rows), ties by row."""
    scores = mat @ q
    if lang:
        scores = np.where(langs == lang, scores, -np.inf)
    if passing is not None:
        scores = np.where(passing, scores, -np.inf)
    n = min(n, int(np.isfinite(scores).sum()))
    if n == 0:
        return []
    top = np.argpartition(-scores, n - 1)[:n] if n < len(scores) else np.arange(len(scores))
    top = top[np.lexsort((top, -scores[top]))]
    return [Hit(cid, s) for cid, s in zip(sqlite_vectors.ids_at(ids, top), scores[top].tolist())]


def _approximate(graph: sqlite_ann.Graph, q: np.ndarray, n: int, mat: np.ndarray, ids, rowids: np.ndarray,
                 touched: np.ndarray) -> list[Hit]:
    """Top ``n`` from the graph's candidates (:meth:`~chaja.stores.sqlite_ann.Graph.candidates`)
    plus every row written since it (``touched``), rescored exactly (see
    :mod:`chaja.stores.sqlite_ann`)."""
    basis = graph.basis
    part = basis @ q if basis.size else None
    if part is not None and float(np.abs(part).max()) > 1e-4 * float(np.abs(q).max()):
        # a query with its language component, on a graph without it (sqlite_ann)
        keys = graph.search((q - basis.T @ part).astype(np.float32),
                            graph.candidates(n, sqlite_ann.RAW_QUERY_FACTOR) + touched.size)
    else:
        keys = graph.search(q, graph.candidates(n) + touched.size)
    if touched.size:
        keys = keys[~np.isin(keys, touched)]
        keys = np.concatenate([keys, touched])
    pos, hit = _positions(rowids, keys)
    rows = np.unique(pos[hit])
    scores = mat[rows] @ q
    order = np.lexsort((rows, -scores))[:n]
    return [Hit(cid, s) for cid, s in zip(sqlite_vectors.ids_at(ids, rows[order]), scores[order].tolist())]


class SqliteStore(OneViewReads):
    """One-file store. Safe for one writer and many readers (WAL); one object per thread.

    A write waits up to ``busy_timeout_s`` (default :data:`~chaja.stores.sqlite_errors.BUSY_TIMEOUT_S`,
    30 s, or ``$CHAJA_BUSY_TIMEOUT_S``) for another process's write lock, then raises
    :class:`~chaja.stores.base.StoreBusy`; a full disk, a read-only file and the like raise
    :class:`StoreError` with one sentence (:mod:`chaja.stores.sqlite_errors`), the write rolled
    back. A store that cannot be written (a read-only file or file system: ``read_only`` says
    why) opens read-only, for searching."""

    def __init__(self, path: str | os.PathLike, *, keyword_engine: str = "postings",
                 ann_threshold: int | None = None, busy_timeout_s: float | None = None):
        if keyword_engine not in KEYWORD_ENGINES:
            raise StoreError(f"keyword_engine must be one of {', '.join(KEYWORD_ENGINES)}, not {keyword_engine!r}")
        self.path = Path(path)
        self._db = None
        self.busy_timeout_s = (sqlite_errors.default_busy_timeout() if busy_timeout_s is None
                               else max(0.0, float(busy_timeout_s)))
        if self.path.exists() and self.path.is_dir():
            raise StoreError(f"{self.path} is a directory, not a store file")
        #: why this store cannot be written (it was opened read-only), or None
        self.read_only: str | None = sqlite_errors.read_only_reason(self.path) if self.path.exists() else None
        if self.read_only is None and not self.path.exists():
            sqlite_errors.make_folder(self.path)
        try:
            if self.read_only:
                self._db = sqlite_errors.connect_read_only(self.path, self.busy_timeout_s)
                self._db.execute("PRAGMA foreign_keys=ON")
                self._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            else:
                self._db = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False,
                                           timeout=self.busy_timeout_s)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA foreign_keys=ON")
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            self._close_quietly()
            said = sqlite_errors.explain(exc, self.path, self.busy_timeout_s, opening=True)
            if said is None:
                raise StoreError(f"{self.path} is not a chaja store ({exc})") from None
            if not (sqlite_errors.disk_full(exc, self.path) and self.path.exists() and not self.read_only):
                raise said from exc
            try:            # a full disk: SQLite cannot make its -shm file, but the store can be searched
                self._db = sqlite_errors.connect_read_only(self.path, self.busy_timeout_s, shm=False)
            except (sqlite3.Error, StoreError):
                raise said from exc
            self.read_only = f"the disk is full ({exc})"
        except StoreError:
            self._close_quietly()
            raise
        try:
            store_id = self._opened()
        except BaseException:
            self._close_quietly()
            raise
        self.keyword_engine = keyword_engine
        self._keywords = sqlite_keywords.SqliteKeywordIndex(self._db, Path(f"{self.path}-keywords"), store_id)
        self.ann_threshold = sqlite_ann.ANN_THRESHOLD if ann_threshold is None else ann_threshold
        self._lock = threading.Lock()
        self._matrix: dict[str, tuple[np.ndarray, list[str], np.ndarray]] = {}
        self._matrix_rowids: dict[str, np.ndarray] = {}
        self._matrix_seq = -1
        self._matrix_base: int | None = None   # the keyword file's log entry when the matrices were read
        self._allowed: dict[tuple, np.ndarray] = {}   # (filters, log seq) → sorted rowids that pass
        self._base_ids: dict[str, tuple[int, np.ndarray]] = {}   # field → (file's log entry, its chunk ids)
        self._rows: dict[str, dict[str, int]] = {}
        self._graphs: dict[str, tuple[str | None, sqlite_ann.Graph | None]] = {}   # field → (its meta, graph)
        self._graphs_seq: int | None = -1

    def _opened(self) -> str | None:
        """Check the schema of the file just opened (a new one is given it, an older one
        brought up to date) and give it a ``store_id``; the store's id."""
        with self._sentences():
            version = self.get_meta("schema_version")
            if version is None:
                self.set_meta("schema_version", str(SCHEMA_VERSION))
            elif int(version) > SCHEMA_VERSION:
                raise StoreError(f"{self.path} was written by a newer chaja (schema {version})")
            elif int(version) < SCHEMA_VERSION:
                if self.read_only:
                    raise StoreError(f"{self.path} was written by an older chaja (schema {version}) and cannot "
                                     f"be brought up to date here: {self.read_only}; open it once where it can "
                                     "be written")
                self._migrate(int(version))
            store_id = self.get_meta("store_id")
            if store_id is None and not self.read_only:
                self._db.execute("INSERT OR IGNORE INTO meta VALUES ('store_id', ?)", (uuid.uuid4().hex,))
                store_id = self.get_meta("store_id")
        return store_id

    def _migrate(self, version: int) -> None:
        """Bring an older file up to :data:`SCHEMA_VERSION`, in one transaction."""
        sqlite_errors.begin_immediate(self._db, self.busy_timeout_s, self.path)
        try:
            for table in ("chunks", "staged_chunks"):
                columns = {row[1] for row in self._db.execute(f"PRAGMA table_info({table})")}
                for column, kind in (("heading_vector", "BLOB"), ("aligned_vector", "BLOB"),
                                     ("aligned_heading_vector", "BLOB"), ("location", "TEXT")):
                    if column not in columns:
                        self._db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            self._db.execute("COMMIT")
        except BaseException as exc:
            self._rollback(exc)
            raise

    def _close_quietly(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    # ---- writing ---------------------------------------------------------
    @contextmanager
    def _sentences(self) -> Iterator[None]:
        """SQLite's errors a person can act on (busy, disk full, read-only, I/O) raised as
        one sentence each (:func:`chaja.stores.sqlite_errors.explain`), the SQLite error
        kept as the cause; any other error as it is."""
        try:
            yield
        except sqlite3.Error as exc:
            said = sqlite_errors.explain(exc, self.path, self.busy_timeout_s)
            if said is None:
                raise
            raise said from exc

    def _writable(self) -> None:
        """Refuse a write to a store opened read-only, before SQLite is asked."""
        if self.read_only:
            raise StoreError(f"cannot write {self.path}: {self.read_only}; it was opened read-only, for "
                             "searching. Nothing was written")

    def _rollback(self, cause: BaseException) -> None:
        sqlite_errors.rollback(self._db, cause)

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Cursor]:
        """One write transaction under this object's lock: committed when the block
        ends, rolled back (and the error raised) when it fails. It waits for another
        process's write lock up to ``busy_timeout_s``."""
        with self._lock:
            self._writable()
            with self._sentences():
                sqlite_errors.begin_immediate(self._db, self.busy_timeout_s, self.path)
            cur = self._db.cursor()
            try:
                with self._sentences():
                    yield cur
                    cur.execute("COMMIT")
            except BaseException as exc:
                self._rollback(exc)
                raise

    def put_document(self, doc: Document, records: list[ChunkRecord]) -> None:
        self.put_documents([(doc, records)])

    def put_documents(self, items: list[tuple[Document, list[ChunkRecord]]]) -> None:
        """Insert or replace several documents in one transaction (all or none): the bulk
        path, one commit per batch instead of one per document."""
        prepared = [(doc, [_flat(r) for r in records]) for doc, records in items]
        dims, adims, known, aknown = self._dims([row for _, rows in prepared for row in rows])
        with self._writing() as cur:
            added = []
            stored = self._existing(cur, [doc.id for doc, _ in prepared])
            for doc, rows in prepared:
                if doc.id in stored:
                    self._delete(cur, doc.id)
                stored.add(doc.id)              # a second copy in this batch replaces the first
                cur.execute(
                    "INSERT INTO documents VALUES (?,?,?,?,?,?,?,?,?)",
                    (doc.id, doc.title, doc.lang, doc.source, doc.doc_type, doc.date,
                     doc.path, doc.fingerprint(), len(rows)),
                )
                for r, vec, *extra in rows:
                    c = r.chunk
                    cur.execute(
                        "INSERT INTO chunks (id, doc_id, ordinal, title, heading, text, lang, source,"
                        " doc_type, date, location, vector, heading_vector, aligned_vector, aligned_heading_vector)"
                        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        (c.id, c.doc_id, c.ordinal, c.title, json.dumps(list(c.heading_path), ensure_ascii=False),
                         c.text, c.lang, c.source, c.doc_type, c.date, c.location and c.location.encode(),
                         vec.tobytes(),
                         *(None if v is None else v.tobytes() for v in extra)),
                    )
                    cur.execute(
                        "INSERT INTO chunks_fts (rowid, title, heading, body) VALUES (?,?,?,?)",
                        (cur.lastrowid, " ".join(r.title_terms), " ".join(r.heading_terms),
                         " ".join(r.body_terms)),
                    )
                    added.append(cur.lastrowid)
            sqlite_keywords.log_added(cur, added)
            if dims and not known:
                cur.execute("INSERT OR REPLACE INTO meta VALUES ('dim', ?)", (str(dims.pop()),))
            if adims and not aknown:
                cur.execute("INSERT OR REPLACE INTO meta VALUES ('aligned_dim', ?)", (str(adims.pop()),))

    def _dims(self, rows: list[tuple]) -> tuple[set[int], set[int], str | None, str | None]:
        """The e5 and aligned dimensions of these rows (from :func:`_flat`) and the store's,
        refusing rows that disagree with each other or with the store."""
        dims = {v.size for row in rows for v in row[1:3] if v is not None}
        known = self.get_meta("dim")
        if len(dims) > 1 or (known and dims and int(known) not in dims):
            raise StoreError(f"vector dimension {sorted(dims)} does not match the store's {known}")
        adims = {v.size for row in rows for v in row[3:] if v is not None}
        aknown = self.get_meta("aligned_dim")
        if len(adims) > 1 or (aknown and adims and int(aknown) not in adims):
            raise StoreError(f"aligned vector dimension {sorted(adims)} does not match the store's {aknown}")
        return dims, adims, known, aknown

    # ---- large documents, a batch at a time (chaja.stores.sqlite_staging) ----------
    def resume_staged(self, doc_id: str, key: str) -> int:
        """How many leading chunks of ``doc_id`` an earlier run staged under ``key``."""
        with self._writing() as cur:
            return sqlite_staging.resume_point(cur, doc_id, key)

    def stage_chunks(self, key: str, records: list[ChunkRecord]) -> None:
        """Commit one batch of a large document's chunks where no search sees them."""
        rows = [_flat(r) for r in records]
        self._dims(rows)
        with self._writing() as cur:
            sqlite_staging.stage(cur, key, [(row[0], row[1], row[2:]) for row in rows])

    def put_staged(self, doc: Document, key: str, n_chunks: int) -> None:
        """Replace the stored ``doc`` with its ``n_chunks`` staged chunks, in one transaction."""
        with self._writing() as cur:
            got = sqlite_staging.staged_count(cur, doc.id, key)
            if got != n_chunks:
                raise StoreError(f"{doc.id}: {got} of its {n_chunks} chunks are staged")
            if self._existing(cur, [doc.id]):
                self._delete(cur, doc.id)
            sqlite_staging.publish(cur, doc, key, n_chunks)
            for meta, column in (("dim", "vector"), ("aligned_dim", "aligned_vector")):
                if n_chunks and self.get_meta(meta) is None:
                    size = cur.execute(f"SELECT length({column}) FROM chunks WHERE doc_id = ?"
                                       f" AND {column} IS NOT NULL LIMIT 1", (doc.id,)).fetchone()
                    if size:
                        cur.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (meta, str(size[0] // 4)))

    def staged(self) -> dict[str, int]:
        """doc_id → chunks staged by a run that has not published the document (yet)."""
        return sqlite_staging.leftovers(self._db.cursor())

    def discard_staged(self) -> int:
        """Delete every staged chunk (an interrupted large document); how many."""
        with self._lock:
            if self.read_only and self._db.execute("SELECT 1 FROM staged_chunks LIMIT 1").fetchone() is None:
                return 0
            self._writable()
            with self._sentences():
                return self._db.execute("DELETE FROM staged_chunks").rowcount

    @staticmethod
    def _existing(cur: sqlite3.Cursor, doc_ids: list[str]) -> set[str]:
        """Which of these documents the store holds (a bulk load of new ones skips the deletes)."""
        return {r[0] for r in select_in(cur, "SELECT id FROM documents WHERE id IN ({marks})", doc_ids)}

    def _delete(self, cur: sqlite3.Cursor, doc_id: str) -> bool:
        sqlite_keywords.log_removed(cur, doc_id)
        cur.execute("DELETE FROM chunks_fts WHERE rowid IN (SELECT rowid FROM chunks WHERE doc_id = ?)", (doc_id,))
        cur.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
        cur.execute("DELETE FROM documents WHERE id = ?", (doc_id,))
        return cur.rowcount > 0

    def delete_document(self, doc_id: str) -> bool:
        with self._writing() as cur:
            return self._delete(cur, doc_id)

    # ---- reading ---------------------------------------------------------
    def fingerprints(self) -> dict[str, str]:
        return dict(self._db.execute("SELECT id, fingerprint FROM documents"))

    def _tokens(self, terms: list[str]) -> list[str] | None:
        """The query terms as single FTS5 tokens for the postings engine, or None where
        FTS5 must answer (the ``fts5`` engine, or a term FTS5 reads as a phrase)."""
        if self.keyword_engine != "postings":
            return None
        return SegmentedBM25.query_tokens(terms)

    def keyword(self, terms: list[str], n: int, *, title_weight: float = 2.0,
                heading_weight: float = 1.5, field: str = "all", lang: str | None = None,
                where: Filters | None = None) -> list[Hit]:
        if n > 0:
            tokens = self._tokens(terms)
            if tokens is not None:
                index = self._keywords.refresh()
                allow = self.allowed_rowids(where) if where else None
                hits = index.search(tokens, n, title_weight=title_weight, heading_weight=heading_weight,
                                    field=field, lang=lang, allow=allow)
                ids = self._ids_of([r for r, _ in hits])
                return [Hit(ids[r], s) for r, s in hits if r in ids]
        expr = fts_query(terms, "title" if field == "title" else None)
        if expr is None or n <= 0:
            return []
        sql = (
            "SELECT c.id, -bm25(chunks_fts, ?, ?, 1.0) AS s FROM chunks_fts"
            " JOIN chunks c ON c.rowid = chunks_fts.rowid WHERE chunks_fts MATCH ?"
        )
        args: list = [title_weight, heading_weight, expr]
        if lang:
            sql += " AND c.lang = ?"
            args.append(lang)
        for cond in self._filter_sql(where, args, "c."):
            sql += " AND " + cond
        sql += " ORDER BY s DESC, c.rowid LIMIT ?"
        args.append(int(n))
        return [Hit(cid, float(s)) for cid, s in self._db.execute(sql, args)]

    @staticmethod
    def _filter_sql(where: Filters | None, args: list, table: str = "") -> list[str]:
        if not where:
            return []

        def param(value: object) -> str:
            args.append(value)
            return "?"
        return where.sql(lambda name: table + name, param, lambda col, ph: f"instr({col}, {ph}) = 1")

    def allowed_rowids(self, where: Filters) -> np.ndarray:
        """Sorted rowids of the chunks that pass ``where`` (kept until the next write)."""
        self._fresh()
        key = (where, self._keywords.seq)
        got = self._allowed.get(key)
        if got is None:
            args: list = []
            conds = self._filter_sql(where, args)
            rows = self._db.execute("SELECT rowid FROM chunks WHERE " + " AND ".join(conds) + " ORDER BY rowid",
                                    args).fetchall()
            got = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            if len(self._allowed) > 32:
                self._allowed.clear()
            self._allowed[key] = got
        return got

    def _ids_of(self, rowids: list[int]) -> dict[int, str]:
        """rowid → chunk id of the live rows among ``rowids``: from the chunk matrix's
        rowids (current as of :meth:`_fresh`), SQL for any it lacks (a chunk with no vector)."""
        _, ids, _ = self._vectors("chunk")
        known = self._matrix_rowids.get("chunk")
        want = np.asarray(rowids, dtype=np.int64)
        if known is None or not known.size or not want.size:
            found, missing = {}, rowids
        else:
            pos, hit = _positions(known, want)
            found = dict(zip(want[hit].tolist(), sqlite_vectors.ids_at(ids, pos[hit])))
            missing = want[~hit].tolist()
        if missing:
            found.update(select_in(self._db, "SELECT rowid, id FROM chunks WHERE rowid IN ({marks})", missing))
        return found

    def _rowids_of(self, ids: list[str]) -> dict[str, int]:
        """chunk id → rowid of the live chunks among ``ids``, as :meth:`_ids_of` finds them."""
        row = self._row_of("chunk")
        known = self._matrix_rowids.get("chunk")
        found = {c: int(known[row[c]]) for c in ids if c in row}
        missing = [c for c in ids if c not in found]
        if missing:
            found.update(select_in(self._db, "SELECT id, rowid FROM chunks WHERE id IN ({marks})", missing))
        return found

    def _dim(self, field: str) -> int:
        return int(self.get_meta("aligned_dim" if field.startswith("aligned") else "dim") or 0)

    def compact(self, *, force: bool = False, full_graphs: bool = False, graphs: bool = True,
                progress: Callable[[str], None] | None = None) -> bool:
        """Fold recent writes into the keyword file (:mod:`chaja.stores.sqlite_keywords`)
        and bring the vector graphs of fields above the ANN threshold up to date
        (:mod:`chaja.stores.sqlite_ann`: updated in place with the rows written since, or
        built anew when there is none, too much has changed, or ``full_graphs``), once the
        writes are many enough or now with ``force``; True when the files were written.
        With ``graphs`` False (a bulk load) no graph is built: every field is searched
        exactly until a later compaction builds them (:meth:`deferred_graphs` lists the
        fields waiting). ``progress(step)`` is told each step as it starts (``"keyword
        postings"``, ``"vectors chunk"``, ``"graph chunk (100,000 vectors)"``, ``"graph
        chunk: 5,000 rows changed"``, ...)."""
        tell = progress or (lambda step: None)

        def vectors_and_graphs(seq: int) -> None:
            in_memory = self._matrices_at(seq)
            self._matrix, self._rows, self._matrix_rowids = {}, {}, {}
            basis = store_basis(self.get_meta(LANGUAGE_MEANS))
            kw = self._keywords             # as of the file being replaced: its entry, the rows touched since
            touched = np.sort(np.fromiter(kw.touched, dtype=np.int64, count=len(kw.touched)))
            for field, column in VECTOR_FIELDS.items():
                tell(f"vectors {field}")
                # this transaction's rows: the matrix in memory where it is current, else the
                # field's file where it covers them, else read from the rows; a file that
                # covers them is not written again (a compaction with nothing new to fold, as
                # `chaja optimize` after a bulk load: 92 s of rewriting at 1,000,000 chunks)
                kept = in_memory.pop(field, None)
                on_file = self._vector_file(field, seq)
                if kept is None and on_file is not None:
                    kept = on_file[:3], on_file[3]
                (mat, ids, langs), rowids = kept or self._read_matrix(column, self._dim(field))
                vectors_file = sqlite_vectors.path_of(self.path, field)
                if on_file is not None:
                    pass                    # the file is current: nothing to write
                elif mat.shape[0] >= sqlite_vectors.FILE_THRESHOLD:
                    sqlite_vectors.write(self.path, field, mat, ids, langs, rowids, seq=seq,
                                         store_id=self._keywords.store_id)
                elif vectors_file.exists():
                    vectors_file.unlink()
                if graphs and mat.shape[0] >= self.ann_threshold and sqlite_ann.available():
                    projected = field in sqlite_ann.PROJECTED_FIELDS and basis.size > 0
                    if projected:          # the space the searcher's queries are in
                        if kept is not None:                       # not the matrix searches may still hold
                            mat = np.array(mat)
                        project_rows_in_place(mat, basis)          # (the vector file is written already)
                    key, previous = f"ann.{field}", self.get_meta(f"ann.{field}")
                    counts = None
                    if previous is not None and not full_graphs:
                        tell(f"graph {field}: {touched.size:,} rows changed")
                        pos, held = _positions(rowids, touched)
                        counts = sqlite_ann.update(self.path, field, previous, kw.base_seq, touched,
                                                   rowids[pos[held]], mat[pos[held]], projected)
                    if counts is None:
                        tell(f"graph {field} ({mat.shape[0]:,} vectors)")
                        sqlite_ann.build(self.path, field, rowids, mat)
                        counts = {}
                    self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                                     (key, sqlite_ann.meta_value(seq, mat.shape[0], projected, **counts)))
                else:
                    self._db.execute("DELETE FROM meta WHERE key = ?", (f"ann.{field}",))
                del mat, ids, langs, rowids, kept, on_file

        self._writable()
        with self._lock, self._sentences():
            done = self._keywords.compact(
                force=force, also=vectors_and_graphs, progress=tell,
                begin=lambda: sqlite_errors.begin_immediate(self._db, self.busy_timeout_s, self.path))
        self._graphs_seq = -1
        return done

    def _matrices_at(self, seq: int) -> dict[str, tuple[tuple[np.ndarray, Sequence[str], np.ndarray], np.ndarray]]:
        """The vector matrices already in memory that hold every row as of the log entry
        ``seq`` (:meth:`_fresh` brought them there; rows in rowid order), so a compaction
        need not read them from the rows again: after a bulk load's statistics, every field."""
        if self._matrix_seq != seq:
            return {}
        return {field: (m, self._matrix_rowids[field]) for field, m in self._matrix.items()
                if m[0].shape[1] == self._dim(field)}

    def deferred_graphs(self) -> list[str]:
        """The vector fields large enough for a graph (:data:`~chaja.stores.sqlite_ann.ANN_THRESHOLD`)
        that have no current one, and are searched exactly until a compaction builds it:
        after a bulk load (``compact(graphs=False)``), or where the ``ann`` extra is missing."""
        return [field for field in VECTOR_FIELDS
                if self._vectors(field)[0].shape[0] >= self.ann_threshold and self._graph(field) is None]

    def _graph(self, field: str) -> sqlite_ann.Graph | None:
        """The field's HNSW graph when one covers the keyword file's log entry; loaded
        again when its record in meta changes, so a graph another process built (``chaja
        optimize`` beside a running hub) is used from the next search on."""
        base = self._keywords.base_seq
        if self._graphs_seq != base:
            self._graphs, self._graphs_seq = {}, base
        meta = self.get_meta(f"ann.{field}")
        held = self._graphs.get(field)
        if held is None or held[0] != meta:
            graph = None if base is None else sqlite_ann.load(self.path, field, meta, base)
            if graph is not None and graph.projected:      # the basis it was built with, read once
                graph.basis = store_basis(self.get_meta(LANGUAGE_MEANS))
            held = self._graphs[field] = (meta, graph)
        return held[1]

    def _catch_up(self) -> None:
        self._fresh()

    def _fresh(self) -> None:
        """Bring the cached matrices up to what any process has committed: by the rows the
        change log touched since they were read (a few rows read, not the whole field),
        or, after a compaction, by reading them afresh."""
        kw = self._keywords
        kw.refresh()
        if kw.seq == self._matrix_seq:
            return
        if not (self._matrix and kw.base_seq == self._matrix_base and self._advance(kw.seq)):
            self._matrix, self._rows, self._matrix_rowids = {}, {}, {}
        self._matrix_seq, self._matrix_base = kw.seq, kw.base_seq

    def _advance(self, seq: int) -> bool:
        """Apply the log entries after the matrices' entry up to ``seq`` to every cached
        field; False when compaction has pruned entries they need."""
        own = not self._db.in_transaction
        if own:
            self._db.execute("BEGIN")
        try:
            pruned = int(self.get_meta("keyword_log_pruned") or 0)
            if pruned > self._matrix_seq:
                return False
            touched = sorted({r for (r,) in self._db.execute(
                "SELECT row FROM keyword_log WHERE seq > ? AND seq <= ?", (self._matrix_seq, seq))})
            rows, self._rows = self._rows, {}
            for field, (mat, ids, langs) in list(self._matrix.items()):
                if mat.shape[1] != self._dim(field):      # read before the field had vectors
                    del self._matrix[field], self._matrix_rowids[field]
                    continue
                before = self._matrix_rowids[field]
                self._matrix[field], after = self._overlay(
                    field, VECTOR_FIELDS[field], (mat, ids, langs), before, touched)
                self._matrix_rowids[field] = after
                row = rows.get(field)
                if (row is not None and not np.isin(touched, before).any()
                        and np.array_equal(after[:before.size], before)):
                    # no row it held was touched, new ones came after: extend the id map
                    new_ids = self._matrix[field][1]
                    row.update((new_ids[i], i) for i in range(before.size, after.size))
                    self._rows[field] = row
        finally:
            if own:
                self._db.execute("COMMIT")
        return True

    def refresh(self) -> bool:
        """Apply every write committed since this store last looked (any process's) to the
        keyword index and the vector matrices already read, and rebuild the chunk id map (the
        one a search looks ids up in), so that the next search does not pay for it (a search
        would do it first); True when there was a write to apply."""
        before = self._keywords.seq if self._keywords.bm25 is not None else None
        self._fresh()
        if "chunk" in self._matrix:
            self._row_of("chunk")
        return self._keywords.seq != before

    def _vectors(self, field: str = "chunk") -> tuple[np.ndarray, list[str], np.ndarray]:
        """(matrix, chunk ids, languages) of one vector field, rows in rowid order (the
        rowids in ``_matrix_rowids``): mapped from the field's file when one is current,
        else read from the rows; kept until :meth:`_fresh` sees a write."""
        self._fresh()              # every committed write applied
        m = self._matrix.get(field)
        if m is None:
            column = VECTOR_FIELDS.get(field)
            if column is None:
                raise StoreError(f"vector field must be one of {', '.join(VECTOR_FIELDS)}, not {field!r}")
            mapped = self._mapped_matrix(field, column)
            if mapped is not None:
                self._matrix[field], self._matrix_rowids[field] = mapped
            else:
                # no file yet (a bulk load before its first compaction): every field not in
                # memory is read in the same pass over the rows, which costs what reading the
                # last of them alone does (see _read_matrices)
                wanted = [field] + ([f for f in VECTOR_FIELDS if f != field and f not in self._matrix]
                                    if self._keywords.base_seq is None else [])
                read = self._read_matrices({VECTOR_FIELDS[f]: self._dim(f) for f in wanted})
                for f in wanted:
                    self._matrix[f], self._matrix_rowids[f] = read[VECTOR_FIELDS[f]]
            m = self._matrix[field]
        return m

    def _mapped_matrix(self, field: str, column: str):
        """The field's vector file (:mod:`chaja.stores.sqlite_vectors`) when it covers the
        postings file's log entry (as of the last :meth:`_fresh`), with the rows written
        since read from SQLite; None when there is no such file."""
        kw = self._keywords
        got = None if kw.base_seq is None else self._vector_file(field, kw.base_seq)
        if got is None:
            return None
        mat, ids, langs, rowids = got
        if not kw.touched:
            return (mat, ids, langs), rowids
        return self._overlay(field, column, (mat, ids, langs), rowids, sorted(kw.touched))

    def _vector_file(self, field: str, seq: int):
        """(matrix, ids, languages, rowids) of the field's vector file when it covers the log
        entry ``seq`` of this store with the field's dimension, else None."""
        got = sqlite_vectors.read(self.path, field, seq=seq, store_id=self._keywords.store_id)
        return got if got is not None and got[0].shape[1:] == (self._dim(field),) else None

    def _overlay(self, field: str, column: str, matrix: tuple, rowids: np.ndarray, touched: list[int]):
        """``matrix`` (matrix, ids, languages in ``rowids`` order) with the ``touched`` rows
        taken out and those of them that still hold a ``column`` vector read back in."""
        mat, ids, langs = matrix
        dim = mat.shape[1]
        rows = select_in(self._db, f"SELECT rowid, id, lang, {column} FROM chunks WHERE {column} IS NOT NULL"
                                   " AND rowid IN ({marks})", touched)
        keep = ~np.isin(rowids, np.asarray(touched, np.int64))
        new_rowids = np.asarray([r[0] for r in rows], np.int64)
        added = (np.frombuffer(b"".join(r[3] for r in rows), np.float32).reshape(len(rows), dim)
                 if rows else np.zeros((0, dim), np.float32))
        if keep.all() and (not rows or not rowids.size or new_rowids.min() > rowids[-1]):
            # only new rows, after every kept one (the common case: documents added)
            order = np.argsort(new_rowids, kind="stable")
            return ((np.concatenate([mat, added[order]]), list(ids) + [rows[i][1] for i in order],
                     np.concatenate([langs, np.array([rows[i][2] or "" for i in order]) if rows else langs[:0]])),
                    np.concatenate([rowids, new_rowids[order]]))
        all_rowids = np.concatenate([rowids[keep], new_rowids])
        order = np.argsort(all_rowids, kind="stable")
        if isinstance(ids, list):
            id_array = np.array(ids, dtype=object)
        else:   # the file's ids, decoded once per file
            base = self._base_ids.get(field)
            if base is None or base[0] != self._keywords.base_seq:
                base = self._base_ids[field] = (self._keywords.base_seq, np.array(list(ids), dtype=object))
            id_array = base[1]
        all_ids = np.concatenate([id_array[keep], np.array([r[1] for r in rows], dtype=object)])
        all_langs = np.concatenate([langs[keep], np.array([r[2] or "" for r in rows]) if rows else langs[:0]])
        return ((np.concatenate([mat[keep], added])[order], all_ids[order].tolist(), all_langs[order]),
                all_rowids[order])

    def _read_matrix(self, column: str, dim: int) -> tuple[tuple[np.ndarray, list[str], np.ndarray], np.ndarray]:
        """All non-null vectors of ``column`` in rowid order, with ids, languages, rowids."""
        return self._read_matrices({column: dim})[column]

    def _read_matrices(self, columns: dict[str, int]) -> dict[str, tuple[tuple[np.ndarray, list[str], np.ndarray], np.ndarray]]:
        """For each vector ``column`` (→ its dimension), all its non-null vectors in rowid
        order, read in batches into one preallocated matrix (memory: the matrices plus one
        batch), with ids, languages, rowids; one pass over the rows for every column.

        A chunk's vectors lie on its row's overflow pages, which SQLite walks from the
        first to reach a column, so reading the four columns in four passes walks every
        chain four times: at 1,000,000 chunks 13 s for the first column and 26–28 s for
        each of the last two."""
        names = list(columns)
        own = not self._db.in_transaction      # one snapshot for the counts and the rows
        if own:
            self._db.execute("BEGIN")
        try:
            counts = self._db.execute("SELECT " + ", ".join(f"COUNT({c})" for c in names) + " FROM chunks").fetchone()
            mats = {c: np.empty((total, columns[c]), np.float32) for c, total in zip(names, counts)}
            ids: dict[str, list[str]] = {c: [] for c in names}
            langs: dict[str, list[str]] = {c: [] for c in names}
            rowids = {c: np.empty(total, np.int64) for c, total in zip(names, counts)}
            at = dict.fromkeys(names, 0)
            cur = self._db.execute(f"SELECT id, lang, rowid, {', '.join(names)} FROM chunks"
                                   f" WHERE {' OR '.join(f'{c} IS NOT NULL' for c in names)} ORDER BY rowid")
            while batch := cur.fetchmany(4096):
                for k, c in enumerate(names, start=3):
                    rows = [r for r in batch if r[k] is not None]
                    if not rows:
                        continue
                    start, end = at[c], at[c] + len(rows)
                    mats[c][start:end] = np.frombuffer(b"".join(r[k] for r in rows),
                                                       dtype=np.float32).reshape(len(rows), columns[c])
                    rowids[c][start:end] = [r[2] for r in rows]
                    ids[c] += [r[0] for r in rows]
                    langs[c] += [r[1] or "" for r in rows]
                    at[c] = end
        finally:
            if own:
                self._db.execute("COMMIT")
        return {c: ((mats[c], ids[c], np.array(langs[c])), rowids[c]) for c in names}

    def vector(self, query: np.ndarray, n: int, *, lang: str | None = None, field: str = "chunk",
               where: Filters | None = None) -> list[Hit]:
        return self._vector_job(query, n, lang, field, where)[0]()

    def vector_many(self, requests: Sequence[tuple[np.ndarray, int, str]], where: Filters | None = None, *,
                    meanwhile: Callable[[], object] | None = None) -> list[list[Hit]]:
        """:meth:`vector` for each (query, n, field) of ``requests``: the same hits, in the
        same order, as one call each. Graph walks run side by side
        (:mod:`chaja.stores.side_by_side`); exact scans run first, one at a time, since
        their matrix product already uses every core and its threads stall a walk beside it.
        ``meanwhile``: the caller's own work (a search's keyword lists), run in this
        thread while the pool walks the graphs."""
        jobs = [self._vector_job(q, n, None, field, where) for q, n, field in requests]
        found: list = [None if on_graph else job() for job, on_graph in jobs]
        walks = [i for i, (_, on_graph) in enumerate(jobs) if on_graph]
        first = [meanwhile] if meanwhile is not None else []
        done = side_by_side.run(first + [jobs[i][0] for i in walks])
        for i, hits in zip(walks, done[len(first):]):
            found[i] = hits
        return found

    def _vector_job(self, query: np.ndarray, n: int, lang: str | None, field: str,
                    where: Filters | None) -> tuple[Callable[[], list[Hit]], bool]:
        """Read what a vector search needs from the store now (in this thread), and return
        the search itself, which only computes on those arrays, and whether it walks a graph."""
        self._fresh()
        allow = self.allowed_rowids(where) if where else None
        mat, ids, langs = self._vectors(field)
        if n <= 0 or mat.shape[0] == 0:
            return list, False
        q = np.asarray(query, dtype=np.float32).ravel()
        if q.size != mat.shape[1]:
            raise StoreError(f"query vector has dimension {q.size}, the store holds {mat.shape[1]}")
        rowids = self._matrix_rowids[field]
        graph = self._graph(field) if lang is None and not where and 4 * n < mat.shape[0] else None
        if graph is not None:
            touched = np.fromiter(self._keywords.touched, dtype=np.int64, count=len(self._keywords.touched))
            return functools.partial(_approximate, graph, q, n, mat, ids, rowids, touched), True
        passing = np.isin(rowids, allow, assume_unique=True) if allow is not None else None
        return functools.partial(_exact, q, n, mat, ids, langs, lang, passing), False

    def _row_of(self, field: str) -> dict[str, int]:
        """chunk id → its row in the ``field`` matrix; kept with the matrix until a write."""
        row = self._rows.get(field)
        if row is None:
            row = self._rows[field] = {cid: i for i, cid in enumerate(self._vectors(field)[1])}
        return row

    def vector_scores(self, query: np.ndarray, ids: list[str], *, field: str = "chunk") -> dict[str, float]:
        """Cosine of ``query`` with the ``field`` vector of each chunk in ``ids`` that has one."""
        ids = list(dict.fromkeys(ids))
        scores = self.vector_scores_at(ids, [(query, field)])[1][0]
        return {cid: s for cid, s in zip(ids, scores.tolist()) if not math.isnan(s)}

    def vector_scores_at(self, ids: list[str], asked: Sequence[tuple[np.ndarray, str]]
                         ) -> tuple[np.ndarray, list[np.ndarray]]:
        """The language of each of ``ids`` (None for an id the store does not hold) and, for
        each (query, field) of ``asked``, the cosine of the query with each id's ``field``
        vector (NaN where it has none), as arrays aligned with ``ids``: the ids are looked
        up once, in the chunk matrix, and each field's rows found by their rowids."""
        known, rows = self._chunk_rows(ids)
        langs = np.full(len(ids), None, dtype=object)
        langs[known] = self._vectors("chunk")[2][rows]
        out = []
        for query, field in asked:
            mat = self._vectors(field)[0]
            scores = np.full(len(ids), np.nan)
            out.append(scores)
            if mat.shape[0] == 0 or known.size == 0:
                continue
            pos, present = self._field_rows(field, rows)
            if not present.any():
                continue
            q = np.asarray(query, dtype=np.float32).ravel()
            if q.size != mat.shape[1]:
                raise StoreError(f"query vector has dimension {q.size}, the store holds {mat.shape[1]}")
            scores[known[present]] = mat[pos[present]] @ q
        return langs, out

    def stored_vectors(self, ids: list[str], field: str = "chunk") -> dict[str, np.ndarray]:
        """The stored ``field`` vector of each of ``ids`` that has one (rows of the mapped
        matrix: read only)."""
        ids = list(dict.fromkeys(ids))
        known, rows = self._chunk_rows(ids)
        mat = self._vectors(field)[0]
        if mat.shape[0] == 0 or known.size == 0:
            return {}
        pos, present = self._field_rows(field, rows)
        return {ids[i]: mat[p] for i, p in zip(known[present].tolist(), pos[present].tolist())}

    def _chunk_rows(self, ids: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """The indices in ``ids`` of the chunks the store holds, and their rows in the chunk
        matrix (every committed write applied first)."""
        self._fresh()
        row = self._row_of("chunk")
        rows = np.fromiter((row.get(c, -1) for c in ids), dtype=np.int64, count=len(ids))
        known = np.flatnonzero(rows >= 0)
        return known, rows[known]

    def _field_rows(self, field: str, chunk_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where the chunks at ``chunk_rows`` of the chunk matrix sit in the ``field``
        matrix (loaded by the caller), and which of them have a ``field`` vector."""
        return _positions(self._matrix_rowids[field], self._matrix_rowids["chunk"][chunk_rows])

    def vector_sample(self, n: int, *, field: str = "chunk") -> np.ndarray:
        """At most ``n`` stored ``field`` vectors: the first ``n`` by :func:`sample_order`."""
        mat, ids, _ = self._vectors(field)
        if mat.shape[0] <= n:
            return mat
        chosen = sorted(range(len(ids)), key=lambda i: sample_order(ids[i]))[:n]
        return mat[np.sort(np.asarray(chosen, dtype=np.int64))]

    def chunk_sample(self, n: int) -> list[Chunk]:
        """At most ``n`` stored chunks: the first ``n`` by :func:`sample_order`."""
        ids = sorted(self._vectors("chunk")[1], key=sample_order)[:n]
        found: dict[str, Chunk] = {}
        for at in range(0, len(ids), 5000):
            found.update(self.chunks(ids[at:at + 5000]))
        return [found[i] for i in ids if i in found]

    def chunk_languages(self, ids: list[str]) -> dict[str, str]:
        """The language of each listed chunk, from the in-memory chunk matrix's columns."""
        langs = self.vector_scores_at(ids, [])[0]
        return {cid: lang for cid, lang in zip(ids, langs.tolist()) if lang is not None}

    def language_means(self) -> dict[str, tuple[int, np.ndarray]]:
        mat, _, langs = self._vectors()
        return {str(lang): (int((langs == lang).sum()), mat[langs == lang].mean(axis=0))
                for lang in np.unique(langs)}

    def doc_ids(self, ids: list[str]) -> dict[str, str]:
        """The document of each listed chunk: the row's first columns only, so none of its
        text or vectors (stored after them, on overflow pages for a long chunk) is read."""
        return dict(select_in(self._db, "SELECT id, doc_id FROM chunks WHERE id IN ({marks})", ids))

    def chunks(self, ids: list[str]) -> dict[str, Chunk]:
        rows = select_in(self._db, "SELECT id, doc_id, ordinal, title, heading, text, lang, source, doc_type, date,"
                                   " location FROM chunks WHERE id IN ({marks})", ids)
        return {row[0]: Chunk(id=row[0], doc_id=row[1], ordinal=row[2], title=row[3],
                              heading_path=tuple(json.loads(row[4])), text=row[5], lang=row[6] or "",
                              source=row[7] or "", doc_type=row[8] or "", date=row[9],
                              location=Location.decode(row[10])) for row in rows}

    def matched_terms(self, terms: list[str], ids: list[str]) -> dict[str, set[str]]:
        """Which of ``terms`` each listed chunk holds: ``chunk_terms(ids)[c] & set(terms)``,
        from the postings when they can answer (no chunk text is read)."""
        tokens = self._tokens(terms)
        if tokens is None or tokens != list(dict.fromkeys(terms)):
            wanted = set(terms)
            return {c: t & wanted for c, t in self.chunk_terms(ids).items()}
        rowid_of = self._rowids_of(ids)
        held = self._keywords.refresh().holding(tokens, list(rowid_of.values()))
        return {c: held[r] for c, r in rowid_of.items()}

    def chunk_terms(self, ids: list[str]) -> dict[str, set[str]]:
        rows = select_in(self._db, "SELECT c.id, f.title, f.heading, f.body FROM chunks c JOIN chunks_fts f"
                                   " ON f.rowid = c.rowid WHERE c.id IN ({marks})", ids)
        return {cid: set(f"{t} {h} {b}".split()) for cid, t, h, b in rows}

    def get_meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self._writable()
        with self._sentences():
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def check(self) -> list[str]:
        """Faults that make this store less than whole (:mod:`chaja.stores.sqlite_check`);
        empty when it is whole. One read transaction, so a writer beside it does not
        show as a fault."""
        from chaja.stores import sqlite_check

        with self._lock:
            self._db.execute("BEGIN")
            try:
                return sqlite_check.faults(self._db, SCHEMA_VERSION)
            finally:
                self._db.execute("COMMIT")

    def repair(self, analyzer) -> list[str]:
        """Mend what :meth:`check` finds that can be derived without encoding again
        (:func:`chaja.stores.sqlite_check.repair`), then rebuild the keyword file from
        the keyword rows; returns what was done."""
        from chaja.stores import sqlite_check

        with self._writing() as cur:
            done = sqlite_check.repair(cur, analyzer, self._delete)
        if done:
            self._keywords.path.unlink(missing_ok=True)       # rebuilt from the keyword rows themselves
            self._keywords.bm25 = None
            self._matrix, self._rows, self._matrix_rowids = {}, {}, {}
            self._matrix_seq = -1
            self.compact(force=True)
        return done

    def documents(self, *, after: str | None = None, limit: int = 100,
                  ids: list[str] | None = None) -> list[DocumentInfo]:
        cols = "SELECT id, title, lang, source, doc_type, date, path, fingerprint, n_chunks FROM documents"
        if ids is not None:
            rows = select_in(self._db, cols + " WHERE id IN ({marks})", list(dict.fromkeys(ids)))
            rows.sort()
        else:
            rows = self._db.execute(cols + " WHERE id > ? ORDER BY id LIMIT ?", (after or "", int(limit))).fetchall()
        return [DocumentInfo(r[0], r[1], r[2] or "", r[3] or "", r[4] or "", r[5], r[6] or "", r[7], int(r[8]))
                for r in rows]

    def stats(self) -> StoreStats:
        def counts(col: str) -> dict[str, int]:
            return {k or "": v for k, v in self._db.execute(f"SELECT {col}, COUNT(*) FROM documents GROUP BY {col}")}
        docs = self._db.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
        chunks = self._db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        beside = [Path(f"{self.path}-wal"), Path(f"{self.path}-keywords"),
                  *(sqlite_ann.graph_path(self.path, f) for f in VECTOR_FIELDS),
                  *(sqlite_vectors.path_of(self.path, f) for f in VECTOR_FIELDS)]
        size = sum(p.stat().st_size for p in (self.path, *beside) if p.exists())
        return StoreStats(documents=docs, chunks=chunks, by_lang=counts("lang"),
                          by_source=counts("source"), by_doc_type=counts("doc_type"), size_bytes=size)

    def close(self) -> None:
        if self._db is not None:
            if not self.read_only:
                try:
                    # a checkpoint waits for every writer and reader: briefly, not busy_timeout_s
                    # (another process's long write only leaves the -wal longer)
                    self._db.execute(f"PRAGMA busy_timeout = {int(min(self.busy_timeout_s, 0.5) * 1000)}")
                    self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                except sqlite3.Error:
                    pass
            self._db.close()
            self._db = None

    def __enter__(self) -> "SqliteStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
