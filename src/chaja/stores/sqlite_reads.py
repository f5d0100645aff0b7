"""Reads by id and over the whole store: chunks and documents, their terms, the vectors
and vector scores of given chunks, samples, and the store's counts."""
from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from chaja.documents import Chunk, DocumentInfo, Location, StoreStats
from chaja.stores import derived_terms, sqlite_ann, sqlite_spool, sqlite_vectors
from chaja.stores.base import digest_of_sample, first_by_digest
from chaja.stores.candidate_rows import CandidateRows
from chaja.stores.quantized import ScaledInt8
from chaja.stores.sorted_keys import positions
from chaja.stores.sqlite_in import select_in
from chaja.stores.sqlite_schema import VECTOR_FIELDS

#: rows turned into float32 at once by :meth:`ChunkReads.language_means` (24 MB of 384-d rows)
MEAN_BLOCK = 16_384


class ChunkReads:
    """The reads of :class:`~chaja.stores.sqlite.SqliteStore` other than the candidate
    lists: SQL for text and documents, the cached matrices
    (:class:`~chaja.stores.sqlite_matrices.CachedMatrices`) for vectors and languages."""

    # ---- vectors of given chunks ------------------------------------------
    def vector_scores(self, query: np.ndarray, ids: list[str], *, field: str = "chunk") -> dict[str, float]:
        """Cosine of ``query`` with the ``field`` vector of each chunk in ``ids`` that has one."""
        ids = list(dict.fromkeys(ids))
        scores = self.vector_scores_at(ids, [(query, field)])[1][0]
        return {cid: s for cid, s in zip(ids, scores.tolist()) if not math.isnan(s)}

    def vector_scores_at(self, ids: list[str], asked: Sequence[tuple[np.ndarray, str]]
                         ) -> tuple[np.ndarray, list[np.ndarray]]:
        """The language of each of ``ids`` (None for an id the store does not hold) and, for
        each (query, field) of ``asked``, the cosine of the query with each id's ``field``
        vector (NaN where it has none), as arrays aligned with ``ids`` (:meth:`candidate_rows`)."""
        found = self.candidate_rows(ids)
        return found.langs, [found.cosines(query, field) for query, field in asked]

    def candidate_rows(self, ids: list[str]) -> CandidateRows:
        """``ids`` looked up once, in the chunk matrix, for any number of questions about
        their languages, vectors and cosines (:class:`~chaja.stores.candidate_rows.CandidateRows`;
        each field's rows found by their rowids and decoded when first asked for)."""
        known, rows = self._chunk_rows(ids)
        langs = np.full(len(ids), None, dtype=object)
        langs[known] = self._vectors("chunk")[2][rows]
        return CandidateRows(ids, known, rows, langs, lambda field: self._vectors(field)[0], self._field_rows)

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
        rows = self._row_of("chunk").rows(ids)
        known = np.flatnonzero(rows >= 0)
        return known, rows[known]

    def _field_rows(self, field: str, chunk_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where the chunks at ``chunk_rows`` of the chunk matrix sit in the ``field``
        matrix (loaded by the caller), and which of them have a ``field`` vector."""
        return positions(self._matrix_rowids[field], self._matrix_rowids["chunk"][chunk_rows])

    def chunk_languages(self, ids: list[str]) -> dict[str, str]:
        """The language of each listed chunk, from the in-memory chunk matrix's columns."""
        langs = self.vector_scores_at(ids, [])[0]
        return {cid: lang for cid, lang in zip(ids, langs.tolist()) if lang is not None}

    # ---- samples and means ------------------------------------------------
    def vector_sample(self, n: int, *, field: str = "chunk") -> np.ndarray:
        """At most ``n`` stored ``field`` vectors: the first ``n`` by :func:`sample_order`."""
        mat = self._vectors(field)[0]
        if mat.shape[0] <= n:
            return np.asarray(mat, dtype=np.float32)
        return mat[np.sort(self._sample_rows(field, n)[0])]

    def vector_sample_fingerprint(self, n: int, *, field: str = "chunk") -> str:
        """A digest of what :meth:`vector_sample` of ``n`` gives, from the rows' stored form
        (their int8 codes with the field's scales and offsets, or their floats), none
        decoded: equal digests, the same rows."""
        mat = self._vectors(field)[0]
        rows = np.arange(mat.shape[0]) if mat.shape[0] <= n else np.sort(self._sample_rows(field, n)[0])
        h = hashlib.md5(f"{field} {rows.size} {mat.shape[1] if mat.ndim == 2 else 0}".encode())
        if isinstance(mat, ScaledInt8):
            for part in (mat.scales, mat.offsets, mat.code_rows(rows)):
                h.update(np.ascontiguousarray(part).tobytes())
        else:
            h.update(np.ascontiguousarray(np.asarray(mat, dtype=np.float32)[rows]).tobytes())
        return h.hexdigest()

    def chunk_sample(self, n: int) -> list[Chunk]:
        """At most ``n`` stored chunks: the first ``n`` by :func:`sample_order`."""
        ids = self._sample_rows("chunk", n)[1]
        found: dict[str, Chunk] = {}
        for at in range(0, len(ids), 5000):
            found.update(self.chunks(ids[at:at + 5000]))
        return [found[i] for i in ids if i in found]

    def sample_fingerprint(self, n: int) -> str:
        """A digest of what :meth:`chunk_sample` of ``n`` reads: each sampled chunk's id,
        language, section path and stored text length, with its document's fingerprint, in
        sample order. Equal digests, the same sample (a chunk's text comes from its
        document, whose fingerprint covers it), with no text read."""
        ids = self._sample_rows("chunk", n)[1]
        rows = {r[0]: r[1:] for r in select_in(
            self._db, "SELECT c.id, c.lang, c.heading, length(c.text), d.fingerprint FROM chunks c"
                      " JOIN documents d ON d.id = c.doc_id WHERE c.id IN ({marks})", ids)}
        return digest_of_sample(ids, rows)

    def _sample_rows(self, field: str, n: int) -> tuple[np.ndarray, list[str]]:
        """The rows of the field's matrix of its first ``n`` chunks by :func:`sample_order`
        (in that order), and their ids."""
        ids = self._vectors(field)[1]
        rows = first_by_digest(self._sample_digests(field), n)
        return rows, sqlite_vectors.ids_at(ids, rows)

    def _sample_digests(self, field: str) -> np.ndarray:
        """The :func:`~chaja.stores.base.sample_digests` of the field's rows, in its matrix's
        order: the chunk field's taken once while the change log stays put (the statistics
        and the lexicon sample the same chunks), from its file where the file keeps them
        (:meth:`ChunkIds.sample_digests <chaja.stores.sqlite_vectors.ChunkIds.sample_digests>`;
        computing a million took 0.9 s), the other fields' gathered from them by rowid."""
        self._vectors(field)
        kept = self._chunk_digests
        if kept is None or kept[0] != self._keywords.seq:
            ids = self._vectors("chunk")[1]
            kept = self._chunk_digests = (self._keywords.seq, ids, sqlite_vectors.digests_of(ids))
        if field == "chunk":
            return kept[2]
        # every chunk row has a chunk vector (the column is NOT NULL): a field's rows are chunk rows
        return kept[2][np.searchsorted(self._matrix_rowids["chunk"], self._matrix_rowids[field])]

    def _kept_digests(self, ids) -> np.ndarray | None:
        """The chunk rows' sample digests taken for exactly these ``ids`` (the same object),
        if they are still kept: a compaction writing the chunk file gives them to it."""
        kept = self._chunk_digests
        return kept[2] if kept is not None and kept[1] is ids else None

    def language_means(self) -> dict[str, tuple[int, np.ndarray]]:
        """Summed a block of rows at a time, each block's sums per language one product with
        the rows' languages as 0/1 columns, added up in float64: taking each language's rows
        at once made a float32 copy of them (1.5 GB for a million 384-d chunks, in a bulk load)."""
        mat, _, langs = self._vectors()
        names, which = np.unique(langs, return_inverse=True)
        one_hot = np.eye(names.size, dtype=np.float32)          # a row's language as a row of 0s and a 1
        sums = np.zeros((names.size, mat.shape[1]), np.float64)
        for at in range(0, mat.shape[0], MEAN_BLOCK):
            sums += one_hot[which[at:at + MEAN_BLOCK]].T @ np.asarray(mat[at:at + MEAN_BLOCK], dtype=np.float32)
        counts = np.bincount(which, minlength=names.size)
        return {str(name): (int(count), (total / count).astype(np.float32))
                for name, count, total in zip(names, counts, sums)}

    def chunks_without_aligned(self, after: str = "", limit: int = 256) -> list[Chunk]:
        """The next ``limit`` chunks, by id after ``after``, that hold no aligned vector."""
        ids = [r[0] for r in self._db.execute("SELECT id FROM chunks WHERE aligned_vector IS NULL AND id > ?"
                                              " ORDER BY id LIMIT ?", (after, int(limit)))]
        found = self.chunks(ids)
        return [found[i] for i in ids if i in found]

    # ---- rows ---------------------------------------------------------------
    def doc_ids(self, ids: list[str]) -> dict[str, str]:
        """The document of each listed chunk: the row's first columns only, so none of its
        text or vectors (stored after them, on overflow pages for a long chunk) is read."""
        return dict(select_in(self._db, "SELECT id, doc_id FROM chunks WHERE id IN ({marks})", ids))

    def chunks(self, ids: list[str]) -> dict[str, Chunk]:
        rows = select_in(self._db, "SELECT id, doc_id, ordinal, title, heading, text, lang, source, doc_type, date,"
                                   " location FROM chunks WHERE id IN ({marks})", ids)
        unpack = self.text_packing.unpack
        return {row[0]: Chunk(id=row[0], doc_id=row[1], ordinal=row[2], title=row[3],
                              heading_path=tuple(json.loads(row[4])), text=unpack(row[5]), lang=row[6] or "",
                              source=row[7] or "", doc_type=row[8] or "", date=row[9],
                              location=Location.decode(row[10])) for row in rows}

    def matched_terms(self, terms: list[str], ids: list[str]) -> dict[str, set[str]]:
        """Which of ``terms`` each listed chunk holds: ``chunk_terms(ids)[c] & set(terms)``,
        from the postings when they can answer (no chunk text is read)."""
        tokens = self._tokens(terms)
        if tokens != list(dict.fromkeys(terms)):          # a term the postings hold as other tokens
            wanted = set(terms)
            return {c: t & wanted for c, t in self.chunk_terms(ids).items()}
        rowid_of = self._rowids_of(ids)
        held = self._keywords.refresh().holding(tokens, list(rowid_of.values()))
        return {c: held[r] for c, r in rowid_of.items()}

    def chunk_terms(self, ids: list[str]) -> dict[str, set[str]]:
        """Each listed chunk's terms, kept or derived again (:mod:`chaja.stores.derived_terms`)."""
        rowid_of = self._rowids_of(list(dict.fromkeys(ids)))
        id_at = {r: c for c, r in rowid_of.items()}
        return {id_at[rowid]: set(f"{t} {h} {b}".split())
                for rowid, _, t, h, b in derived_terms.rows_at(self._db, id_at, self.text_packing.unpack)}

    def fingerprints(self, ids: list[str] | None = None) -> dict[str, str]:
        if ids is not None:
            return dict(select_in(self._db, "SELECT id, fingerprint FROM documents WHERE id IN ({marks})",
                                  list(dict.fromkeys(ids))))
        return dict(self._db.execute("SELECT id, fingerprint FROM documents"))

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
        """The store's counts (:meth:`_counts`) and the size of its files."""
        docs, chunks, by = self._counts()
        beside = [Path(f"{self.path}-wal"), Path(f"{self.path}-keywords"),
                  *(sqlite_ann.graph_path(self.path, f) for f in VECTOR_FIELDS),
                  *(sqlite_ann.groups_path(self.path, f) for f in VECTOR_FIELDS),
                  *sqlite_vectors.files_of(self.path), *sqlite_spool.files_of(self.path)]
        size = sum(p.stat().st_size for p in (self.path, *beside) if p.exists())
        return StoreStats(documents=docs, chunks=chunks, by_lang=dict(by[0]), by_source=dict(by[1]),
                          by_doc_type=dict(by[2]), size_bytes=size)

    def _counts(self) -> tuple[int, int, tuple[dict[str, int], dict[str, int], dict[str, int]]]:
        """Documents, chunks, and documents by language, source and type: the three counts in
        one pass over the documents (three passes took 0.97 s at a million, one 0.45), kept
        until a write could have changed them, this object's (a write transaction ended) or
        another connection's (``PRAGMA data_version``): an index run reads them for its
        statistics and again for its report, with only settings written between (0.5 s each
        at a million chunks)."""
        when = (self._db, self._db.execute("PRAGMA data_version").fetchone()[0], self.write_transactions)
        kept = self._kept_counts
        if kept is not None and kept[0][0] is when[0] and kept[0][1:] == when[1:]:
            return kept[1]
        by: tuple[dict[str, int], dict[str, int], dict[str, int]] = ({}, {}, {})
        docs = 0
        for *keys, n in self._db.execute("SELECT lang, source, doc_type, COUNT(*) FROM documents"
                                         " GROUP BY lang, source, doc_type"):
            docs += n
            for counts, key in zip(by, keys):
                counts[key or ""] = counts.get(key or "", 0) + n
        chunks = self._db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        # (read inside a write transaction, they may change before it ends: not kept)
        self._kept_counts = None if self._db.in_transaction else (when, (docs, chunks, by))
        return docs, chunks, by
