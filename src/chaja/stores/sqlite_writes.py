"""Writing and deleting documents: a batch of documents in one transaction, a large
document a batch of chunks at a time (:mod:`chaja.stores.sqlite_staging`), each write
logged for the keyword file (:mod:`chaja.stores.sqlite_keywords`)."""
from __future__ import annotations

import json
import sqlite3

import numpy as np

from chaja.documents import ChunkRecord, Document
from chaja.stores import derived_terms, sqlite_keywords, sqlite_spool, sqlite_staging, sqlite_vectors
from chaja.stores.base import StoreError, flat_vector, refuse_non_finite
from chaja.stores.sqlite_in import select_in
from chaja.stores.sqlite_schema import VECTOR_FIELDS
from chaja.stores.text_packing import TextPacking, packed


def flat_record(r: ChunkRecord) -> tuple:
    """(record, vector, heading vector, aligned vector, aligned heading vector), each a flat
    float32 array or None."""
    return (r, flat_vector(r.vector), flat_vector(r.heading_vector), flat_vector(r.aligned_vector),
            flat_vector(r.aligned_heading_vector))


class DocumentWrites:
    """The writes of :class:`~chaja.stores.sqlite.SqliteStore`, each in one transaction
    (:meth:`~chaja.stores.sqlite_connection.SqliteConnection._writing`)."""

    def put_document(self, doc: Document, records: list[ChunkRecord]) -> None:
        self.put_documents([(doc, records)])

    def put_documents(self, items: list[tuple[Document, list[ChunkRecord]]]) -> None:
        """Insert or replace several documents in one transaction (all or none): the bulk
        path, one commit per batch instead of one per document."""
        prepared = [(doc, [flat_record(r) for r in records]) for doc, records in items]
        dims, adims, known, aknown = self._dims([row for _, rows in prepared for row in rows])
        dim = int(known) if known else (next(iter(dims)) if dims else 0)
        adim = int(aknown) if aknown else (next(iter(adims)) if adims else 0)
        # a second copy of a document in the batch replaces the first: only the last is written
        last = {doc.id: i for i, (doc, _) in enumerate(prepared)}
        prepared = [item for i, item in enumerate(prepared) if last[item[0].id] == i]
        with self._writing() as cur:
            # a store that has seen fewer chunks than a vector file's minimum keeps their vectors
            # in the rows (one file, as long as it is small); from there on they are spooled
            rows_now = cur.execute("SELECT max(rowid) FROM chunks").fetchone()[0] or 0
            spool = rows_now + sum(len(rows) for _, rows in prepared) >= sqlite_vectors.FILE_THRESHOLD
            spooled: dict[str, tuple[list[int], list[np.ndarray]]] | None = \
                {f: ([], []) for f in VECTOR_FIELDS} if spool else None
            for doc_id in self._existing(cur, list(last)):
                self._delete(cur, doc_id)
            cur.executemany("INSERT INTO documents VALUES (?,?,?,?,?,?,?,?,?)",
                            [(doc.id, doc.title, doc.lang, doc.source, doc.doc_type, doc.date,
                              doc.path, doc.fingerprint(), len(rows)) for doc, rows in prepared])
            first = cur.execute("SELECT max(rowid) FROM chunks").fetchone()[0] or 0
            flat = [row for _, rows in prepared for row in rows]
            packing = self._packing(cur, rows_now + len(flat), [row[0] for row in flat])
            derive = derived_terms.for_write(cur, [row[0] for row in flat])
            added, term_rows = self._insert_chunks(cur, flat, first + 1, spooled, packing, derive)
            for field, (rowids, vectors) in (spooled or {}).items():
                sqlite_spool.append(cur, self.path, field, adim if field.startswith("aligned") else dim,
                                    rowids, vectors)
            sqlite_keywords.log_added(cur, added)
            last_seq = sqlite_keywords.last_entry(cur)
            if dims and not known:
                cur.execute("INSERT OR REPLACE INTO meta VALUES ('dim', ?)", (str(dims.pop()),))
            if adims and not aknown:
                cur.execute("INSERT OR REPLACE INTO meta VALUES ('aligned_dim', ?)", (str(adims.pop()),))
        self._keywords.feed.add(term_rows, last_seq)     # committed: their postings may be built now

    def _packing(self, cur: sqlite3.Cursor, rows: int, records: list[ChunkRecord]) -> TextPacking | None:
        """The packing rows written in this transaction take (None: kept plain): the store's
        dictionaries, trained now where it reaches :data:`~chaja.stores.text_packing.TRAIN_AT`
        chunks (:meth:`TextPacking.ready`, on these records' texts)."""
        packing = self.text_packing
        return packing if packing.ready(cur, rows, records) else None

    @staticmethod
    def _insert_chunks(cur: sqlite3.Cursor, rows: list[tuple], first: int,
                       spooled: dict[str, tuple[list[int], list[np.ndarray]]] | None,
                       packing: TextPacking | None = None, derive: str | None = None
                       ) -> tuple[list[int], list[tuple]]:
        """Insert chunks (rows from :func:`flat_record`) and their keyword rows, under rowids
        ``first``, ``first + 1``, … (the store's largest rowid + 1 on, as SQLite would give
        them one by one), one statement per table; their rowids. With ``spooled`` (field →
        rowids, vectors), each vector's blob is left empty and the vector added there for the
        field's spool (:mod:`chaja.stores.sqlite_spool`); without it, each blob holds its vector.
        With ``packing``, each text and body terms are packed (:mod:`chaja.stores.text_packing`).
        A record whose terms the analyser ``derive`` made gets no keyword row
        (:mod:`chaja.stores.derived_terms`). Also returns the keyword rows as
        :class:`~chaja.stores.postings_feed.PostingsFeed` takes them: ``(rowid, lang, title,
        heading, body)``, the terms joined and not packed."""
        added = list(range(first, first + len(rows)))
        records = [r for r, *_ in rows]
        bodies = [" ".join(r.body_terms) for r in records]
        kept = [i for i, r in enumerate(records) if derive is None or r.terms_from != derive]
        texts, stored_bodies = packed(packing, [r.chunk.text for r in records], [bodies[i] for i in kept])
        headings: dict[tuple, str] = {}         # (a document's chunks share their headings)

        def heading(path) -> str:
            key = tuple(path)
            if key not in headings:
                headings[key] = json.dumps(list(key), ensure_ascii=False)
            return headings[key]

        def blob(v: np.ndarray | None):
            return None if v is None else sqlite_vectors.IN_FILE if spooled is not None else v.tobytes()

        def chunk_row(rowid: int, text, r: ChunkRecord, v, hv, av, ahv) -> tuple:
            c = r.chunk
            return (rowid, c.id, c.doc_id, c.ordinal, c.title, heading(c.heading_path), text, c.lang, c.source,
                    c.doc_type, c.date, c.location and c.location.encode(), blob(v), blob(hv), blob(av), blob(ahv))
        cur.executemany(
            "INSERT INTO chunks (rowid, id, doc_id, ordinal, title, heading, text, lang, source,"
            " doc_type, date, location, vector, heading_vector, aligned_vector, aligned_heading_vector)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [chunk_row(rowid, text, *row) for rowid, text, row in zip(added, texts, rows)])
        if spooled is not None:
            for rowid, (_, *vectors) in zip(added, rows):
                for field, v in zip(VECTOR_FIELDS, vectors):
                    if v is not None:
                        spooled[field][0].append(rowid)
                        spooled[field][1].append(v)
        term_rows = [(rowid, r.chunk.lang, " ".join(r.title_terms), " ".join(r.heading_terms), body)
                     for rowid, body, r in zip(added, bodies, records)]
        cur.executemany("INSERT INTO chunk_terms (rowid, title, heading, body) VALUES (?,?,?,?)",
                        [(term_rows[i][0], term_rows[i][2], term_rows[i][3], body)
                         for i, body in zip(kept, stored_bodies)])
        return added, term_rows

    def _dims(self, rows: list[tuple]) -> tuple[set[int], set[int], str | None, str | None]:
        """The e5 and aligned dimensions of these rows (from :func:`flat_record`) and the store's,
        refusing rows that disagree with each other or with the store, or hold a vector that
        is not finite (:func:`~chaja.stores.base.refuse_non_finite`)."""
        refuse_non_finite(((row[0].chunk.id, v) for row in rows for v in row[1:]),
                          given=[v for row in rows for v in row[1:] if v is not None])
        dims = {v.size for row in rows for v in row[1:3] if v is not None}
        known = self.get_meta("dim")
        if len(dims) > 1 or (known and dims and int(known) not in dims):
            raise StoreError(f"vector dimension {sorted(dims)} does not match the store's {known}")
        adims = {v.size for row in rows for v in row[3:] if v is not None}
        aknown = self.get_meta("aligned_dim")
        if len(adims) > 1 or (aknown and adims and int(aknown) not in adims):
            raise StoreError(f"aligned vector dimension {sorted(adims)} does not match the store's {aknown}")
        return dims, adims, known, aknown

    def put_aligned_vectors(self, items: list[tuple[str, object, object]]) -> int:
        """Give stored chunks that have none their aligned vectors, ``(chunk id, passage
        vector, section-name vector or None)`` each (a store of one language grown into
        several: :mod:`chaja.aligned_fill`); the chunks changed. Each is logged as written
        again, so every reader reads its row afresh."""
        rows = [(flat_vector(a), flat_vector(h), cid) for cid, a, h in items]
        refuse_non_finite((cid, v) for a, h, cid in rows for v in (a, h))
        adims = {v.size for a, h, _ in rows for v in (a, h) if v is not None}
        aknown = self.get_meta("aligned_dim")
        if len(adims) > 1 or (aknown and adims and int(aknown) not in adims):
            raise StoreError(f"aligned vector dimension {sorted(adims)} does not match the store's {aknown}")
        with self._writing() as cur:
            changed = [r for (r,) in select_in(cur, "SELECT rowid FROM chunks WHERE aligned_vector IS NULL"
                                                    " AND id IN ({marks})", [cid for *_, cid in rows])]
            cur.executemany("UPDATE chunks SET aligned_vector = ?, aligned_heading_vector = ?"
                            " WHERE id = ? AND aligned_vector IS NULL",
                            [(a.tobytes(), None if h is None else h.tobytes(), cid) for a, h, cid in rows])
            sqlite_keywords.log_added(cur, changed)       # (a row added again: read afresh, terms as they were)
            if adims and not aknown:
                cur.execute("INSERT OR REPLACE INTO meta VALUES ('aligned_dim', ?)", (str(adims.pop()),))
        return len(changed)

    # ---- large documents, a batch at a time (chaja.stores.sqlite_staging) ----------
    def resume_staged(self, doc_id: str, key: str) -> int:
        """How many leading chunks of ``doc_id`` an earlier run staged under ``key``."""
        with self._writing() as cur:
            return sqlite_staging.resume_point(cur, doc_id, key)

    def stage_chunks(self, key: str, records: list[ChunkRecord]) -> None:
        """Commit one batch of a large document's chunks where no search sees them."""
        rows = [flat_record(r) for r in records]
        self._dims(rows)
        with self._writing() as cur:
            rows_now = cur.execute("SELECT max(rowid) FROM chunks").fetchone()[0] or 0
            packing = self._packing(cur, rows_now + len(rows), [row[0] for row in rows])
            sqlite_staging.stage(cur, key, [(row[0], row[1], row[2:]) for row in rows], packing)

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

    # ---- deleting --------------------------------------------------------
    @staticmethod
    def _existing(cur: sqlite3.Cursor, doc_ids: list[str]) -> set[str]:
        """Which of these documents the store holds (a bulk load of new ones skips the deletes)."""
        return {r[0] for r in select_in(cur, "SELECT id FROM documents WHERE id IN ({marks})", doc_ids)}

    def _delete(self, cur: sqlite3.Cursor, doc_id: str) -> bool:
        sqlite_keywords.log_removed(cur, doc_id)
        cur.execute("DELETE FROM chunk_terms WHERE rowid IN (SELECT rowid FROM chunks WHERE doc_id = ?)", (doc_id,))
        cur.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
        cur.execute("DELETE FROM documents WHERE id = ?", (doc_id,))
        return cur.rowcount > 0

    def delete_document(self, doc_id: str) -> bool:
        with self._writing() as cur:
            return self._delete(cur, doc_id)
