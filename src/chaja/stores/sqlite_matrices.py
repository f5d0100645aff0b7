"""The vector matrices and graphs a store object keeps in memory, and how they are kept
level with what any process has committed.

Each vector field is one matrix (float32, or int8 codes with an offset and a scale per dimension where its
file keeps them so: :mod:`chaja.stores.quantized`; rows in rowid order, with the chunk ids, their
languages and rowids beside it): mapped from the field's recorded vector file
(:mod:`chaja.stores.sqlite_vectors`, the one copy of the vectors it holds) with the rows
written since read from the field's spool (:mod:`chaja.stores.sqlite_spool`) or, for a row
whose blob holds its vector, from SQLite; a field without a file (fewer than
:data:`~chaja.stores.sqlite_vectors.FILE_THRESHOLD` vectors, or a bulk load before its
first compaction) is read from the rows and the spool. A write any process commits is applied by the rows the change log
touched since (a few rows read, not the whole field); after a compaction they are read
afresh. A field's HNSW graph (:mod:`chaja.stores.sqlite_ann`) is loaded again when its
record in meta changes.
"""
from __future__ import annotations

import numpy as np

from chaja.language_means import META_KEY as LANGUAGE_MEANS, store_basis
from chaja.stores import quantized, sqlite_ann, sqlite_spool, sqlite_vectors
from chaja.stores.base import StoreError
from chaja.stores.id_rows import IdRows
from chaja.stores.sorted_keys import positions
from chaja.stores.sqlite_in import select_in
from chaja.stores.sqlite_schema import VECTOR_FIELDS


class CachedMatrices:
    """The in-memory vectors of :class:`~chaja.stores.sqlite.SqliteStore`: ``_matrix``
    (field → matrix, ids, languages), ``_matrix_rowids``, the log entries they are as of
    (``_matrix_seq``, ``_matrix_base``), the chunk id maps (``_rows``), the ids decoded
    from a file (``_base_ids``) and the graphs (``_graphs``, ``_graphs_seq``)."""

    def _dim(self, field: str) -> int:
        return int(self.get_meta("aligned_dim" if field.startswith("aligned") else "dim") or 0)

    def _row_of(self, field: str) -> IdRows:
        """chunk id → its row in the ``field`` matrix (:class:`~chaja.stores.id_rows.IdRows`);
        kept with the matrix until a write."""
        row = self._rows.get(field)
        if row is None:
            row = self._rows[field] = IdRows(self._vectors(field)[1])
        return row

    def _ids_of(self, rowids: list[int]) -> dict[int, str]:
        """rowid → chunk id of the live rows among ``rowids``: from the chunk matrix's
        rowids (current as of :meth:`_fresh`), SQL for any it lacks (a chunk with no vector)."""
        _, ids, _ = self._vectors("chunk")
        known = self._matrix_rowids.get("chunk")
        want = np.asarray(rowids, dtype=np.int64)
        if known is None or not known.size or not want.size:
            found, missing = {}, rowids
        else:
            pos, hit = positions(known, want)
            found = dict(zip(want[hit].tolist(), sqlite_vectors.ids_at(ids, pos[hit])))
            missing = want[~hit].tolist()
        if missing:
            found.update(select_in(self._db, "SELECT rowid, id FROM chunks WHERE rowid IN ({marks})", missing))
        return found

    def _rowids_of(self, ids: list[str]) -> dict[str, int]:
        """chunk id → rowid of the live chunks among ``ids``, as :meth:`_ids_of` finds them."""
        rows = self._row_of("chunk").rows(ids)
        known = self._matrix_rowids.get("chunk")
        found = {c: int(known[r]) for c, r in zip(ids, rows.tolist()) if r >= 0}
        missing = [c for c in ids if c not in found]
        if missing:
            found.update(select_in(self._db, "SELECT id, rowid FROM chunks WHERE id IN ({marks})", missing))
        return found

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
                    row.extended(self._matrix[field][1], before.size)
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
        rowids in ``_matrix_rowids``): mapped from the field's file with the rows written
        since, else read from the rows; kept until :meth:`_fresh` sees a write."""
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
                # memory and without a file is read in the same pass over the rows, which
                # costs what reading the last of them alone does (see _read_matrices)
                wanted = [field] + ([f for f in VECTOR_FIELDS if f != field and f not in self._matrix
                                     and self.get_meta(sqlite_vectors.record_key(f)) is None]
                                    if self._keywords.base_seq is None else [])
                read = self._spooled_matrices(wanted)
                rest = [f for f in wanted if VECTOR_FIELDS[f] not in read]
                if rest:
                    read.update(self._read_matrices({VECTOR_FIELDS[f]: self._dim(f) for f in rest}))
                for f in wanted:
                    self._matrix[f], self._matrix_rowids[f] = read[VECTOR_FIELDS[f]]
            m = self._matrix[field]
        return m

    def _mapped_matrix(self, field: str, column: str):
        """The field's recorded vector file with the rows the change log touched since it
        read from SQLite, or a schema-5 store's copy where it covers the postings file's log
        entry (as of the last :meth:`_fresh`); None when the field has neither."""
        got = self._vector_file(field)
        if got is None:
            kw = self._keywords
            got = None if kw.base_seq is None else self._vector_copy(field, kw.base_seq)
            if got is None:
                return None
            touched = sorted(kw.touched)
        else:
            touched = [r for (r,) in self._db.execute(
                "SELECT DISTINCT row FROM keyword_log WHERE seq > ? ORDER BY row", (got[4],))]
        mat, ids, langs, rowids = got[:4]
        if not touched:
            return (mat, ids, langs), rowids
        return self._overlay(field, column, (mat, ids, langs), rowids, touched)

    def _vector_file(self, field: str):
        """(matrix, ids, languages, rowids, seq) of the field's recorded file, or None where
        its vectors are in the rows; :class:`StoreError` when the file the store names is
        missing or damaged (its vectors are nowhere else)."""
        for attempt in (0, 1):
            value = self.get_meta(sqlite_vectors.record_key(field))
            if value is None:
                return None
            try:
                got = sqlite_vectors.read_recorded(self.path, field, value, store_id=self._keywords.store_id)
            except sqlite_vectors.MissingVectors as exc:
                if attempt == 0 and not self._db.in_transaction:
                    continue        # a compaction in another process replaced it just now: read the record again
                raise StoreError(f"the {field} vectors of {self.path.name} are kept in a file beside it, and {exc}:"
                                 " restore the file, or run `chaja check --repair` and index those documents"
                                 " again") from None
            if got[0].shape[1:] != (self._dim(field),):
                raise StoreError(f"{self.path.name}: the {field} vector file holds {got[0].shape[1]}-d vectors,"
                                 f" the store {self._dim(field)}-d")
            return got
        return None

    def _vector_copy(self, field: str, seq: int):
        """(matrix, ids, languages, rowids) of a schema-5 store's copy of the field's vectors
        when it covers the log entry ``seq`` with the field's dimension, else None."""
        got = sqlite_vectors.read_copy(self.path, field, seq=seq, store_id=self._keywords.store_id)
        return got if got is not None and got[0].shape[1:] == (self._dim(field),) else None

    def _spool(self, field: str) -> sqlite_spool.Spool:
        """The field's spool as of the store's snapshot (:mod:`chaja.stores.sqlite_spool`),
        mapped once per record; :class:`StoreError` where the file the store names is
        missing or short (its vectors are nowhere else)."""
        for attempt in (0, 1):
            value = self.get_meta(sqlite_spool.record_key(field)) or ""
            held = self._spools.get(field)
            if held is not None and held[0] == value:
                return held[1]
            try:
                spool = sqlite_spool.read(self.path, field, value, self._dim(field))
            except sqlite_spool.MissingSpool as exc:
                if attempt == 0 and not self._db.in_transaction:
                    continue        # a compaction in another process folded it just now: read the record again
                raise StoreError(f"the {field} vectors of the latest writes to {self.path.name} are kept in a"
                                 f" file beside it, and {exc}: restore the file, or run `chaja check --repair`"
                                 " and index those documents again") from None
            self._spools[field] = (value, spool)
            return spool
        raise AssertionError("unreachable")

    def _row_vectors(self, field: str, rows: list[tuple]) -> tuple[list[tuple], np.ndarray, list[int]]:
        """Of ``rows`` (rowid, id, lang, blob) with a vector in ``field``: those whose vector
        is found, with their vectors (a blob, or the spool's record for an empty blob), and
        the rowids of the empty blobs the spool does not hold (their vectors are in the
        field's file)."""
        dim = self._dim(field)
        blobs = [r for r in rows if r[3]]
        empty = [r for r in rows if not r[3]]
        vectors = [np.frombuffer(b"".join(r[3] for r in blobs), np.float32).reshape(len(blobs), dim)]
        if empty:
            held, spooled = self._spool(field).find(np.asarray([r[0] for r in empty], np.int64))
            vectors.append(np.asarray(spooled, np.float32))
            blobs += [r for r, h in zip(empty, held.tolist()) if h]
            filed = [r[0] for r, h in zip(empty, held.tolist()) if not h]
        else:
            filed = []
        return blobs, np.concatenate(vectors) if len(vectors) > 1 else vectors[0], filed

    def _overlay(self, field: str, column: str, matrix: tuple, rowids: np.ndarray, touched: list[int]):
        """``matrix`` (matrix, ids, languages in ``rowids`` order) with the ``touched`` rows
        taken out and those of them that still hold a ``column`` vector read back in: from
        their blob or the field's spool; a row whose vector is in the file stays as it was."""
        mat, ids, langs = matrix
        found = select_in(self._db, f"SELECT rowid, id, lang, {column} FROM chunks WHERE {column} IS NOT NULL"
                                    " AND rowid IN ({marks})", touched)
        rows, added, filed = self._row_vectors(field, found)
        gone = np.setdiff1d(np.asarray(touched, np.int64), np.asarray(filed, np.int64))
        keep = ~np.isin(rowids, gone)
        new_rowids = np.asarray([r[0] for r in rows], np.int64)
        if keep.all() and (not rows or not rowids.size or new_rowids.min() > rowids[-1]):
            # only new rows, after every kept one (the common case: documents added)
            order = np.argsort(new_rowids, kind="stable")
            return ((quantized.append(mat, added[order]),
                     sqlite_vectors.extended(ids, [rows[i][1] for i in order]),
                     sqlite_vectors.extended(langs, [rows[i][2] or "" for i in order])),
                    np.concatenate([rowids, new_rowids[order]]))
        all_rowids = np.concatenate([rowids[keep], new_rowids])
        order = np.argsort(all_rowids, kind="stable")
        if isinstance(ids, list):
            id_array = np.array(ids, dtype=object)
        else:   # the file's ids, decoded once per file
            base = self._base_ids.get(field)
            if base is None or base[0] is not ids:
                base = self._base_ids[field] = (ids, np.array(list(ids), dtype=object))
            id_array = base[1]
        all_ids = np.concatenate([id_array[keep], np.array([r[1] for r in rows], dtype=object)])
        all_langs = np.concatenate([langs[keep], np.array([r[2] or "" for r in rows]) if rows else langs[:0]])
        return ((quantized.take(quantized.append(quantized.take(mat, keep), added), order),
                 all_ids[order].tolist(), all_langs[order]),
                all_rowids[order])

    def _spooled_matrices(self, fields: list[str]) -> dict[str, tuple[tuple[np.ndarray, list[str], np.ndarray],
                                                                     np.ndarray]]:
        """For each of ``fields`` whose every vector is in its spool, one record a row in
        rowid order (a bulk load before its first compaction): (the spool's mapped vectors,
        ids, languages), rowids, by column, the matrix the spool's pages rather than a copy
        of them (at a million chunks the four fields' float32 copies were 3 GB of the load's
        own memory). The other fields are left out, for :meth:`_read_matrices`."""
        own = not self._db.in_transaction      # one snapshot for the spools' records and the rows
        if own:
            self._db.execute("BEGIN")
        try:
            spools = {f: self._spool(f) for f in fields}
            spools = {f: sp for f, sp in spools.items() if len(sp) and sp.in_rowid_order()}
            if not spools:
                return {}
            columns = [VECTOR_FIELDS[f] for f in spools]
            rows = self._db.execute(f"SELECT rowid, id, lang, {', '.join(f'length({c})' for c in columns)}"
                                    f" FROM chunks WHERE {' OR '.join(f'{c} IS NOT NULL' for c in columns)}"
                                    " ORDER BY rowid").fetchall()
        finally:
            if own:
                self._db.execute("COMMIT")
        out = {}
        for k, (field, spool) in enumerate(spools.items(), start=3):
            held = [r for r in rows if r[k] is not None]
            if len(held) != len(spool) or any(r[k] for r in held):      # a vector kept in its row's blob
                continue
            rowids = np.fromiter((r[0] for r in held), dtype=np.int64, count=len(held))
            if np.array_equal(rowids, spool.rowids):
                out[VECTOR_FIELDS[field]] = ((spool.vectors, [r[1] for r in held],
                                              np.array([r[2] or "" for r in held])), rowids)
        return out

    def _read_matrix(self, column: str, dim: int) -> tuple[tuple[np.ndarray, list[str], np.ndarray], np.ndarray]:
        """All non-null vectors of ``column`` in rowid order, with ids, languages, rowids."""
        return self._read_matrices({column: dim})[column]

    def _read_matrices(self, columns: dict[str, int]
                       ) -> dict[str, tuple[tuple[np.ndarray, list[str], np.ndarray], np.ndarray]]:
        """For each vector ``column`` (→ its dimension), all the vectors its rows hold (as
        blobs, or in the field's spool for an empty blob), in rowid order, read in batches into
        one preallocated matrix (memory: the matrices plus one batch), with ids, languages,
        rowids; one pass over the rows for every column.

        A chunk's vectors held as blobs lie on its row's overflow pages, which SQLite walks from the
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
            field_of = {column: field for field, column in VECTOR_FIELDS.items()}
            cur = self._db.execute(f"SELECT rowid, id, lang, {', '.join(names)} FROM chunks"
                                   f" WHERE {' OR '.join(f'{c} IS NOT NULL' for c in names)} ORDER BY rowid")
            while batch := cur.fetchmany(4096):
                for k, c in enumerate(names, start=3):
                    # (an empty blob: in the field's spool; in its file, which a field read here lacks)
                    rows, vectors, _ = self._row_vectors(field_of[c], [(r[0], r[1], r[2], r[k]) for r in batch
                                                                       if r[k] is not None])
                    if not rows:
                        continue
                    order = np.argsort([r[0] for r in rows], kind="stable")
                    rows = [rows[i] for i in order]
                    start, end = at[c], at[c] + len(rows)
                    mats[c][start:end] = vectors[order]
                    rowids[c][start:end] = [r[0] for r in rows]
                    ids[c] += [r[1] for r in rows]
                    langs[c] += [r[2] or "" for r in rows]
                    at[c] = end
        finally:
            if own:
                self._db.execute("COMMIT")
        return {c: ((mats[c][:at[c]], ids[c], np.array(langs[c])), rowids[c][:at[c]]) for c in names}
