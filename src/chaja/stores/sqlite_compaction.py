"""Compaction: recent writes folded into the files beside the store, in one write
transaction: the keyword file (:mod:`chaja.stores.sqlite_keywords`), each vector field's
file (:mod:`chaja.stores.sqlite_vectors`) and, for a field above the ANN threshold, its
graph (:mod:`chaja.stores.sqlite_ann`), updated in place or built anew; then the keyword rows
the store's analyser makes again are dropped (:mod:`chaja.stores.derived_terms`) and the text
of rows written before the store's text dictionaries is packed (:mod:`chaja.stores.text_repacking`)."""
from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence

import numpy as np

from chaja.language_means import META_KEY as LANGUAGE_MEANS
from chaja.language_means import project_rows_in_place, store_basis
from chaja.stores import (derived_terms, sqlite_ann, sqlite_errors, sqlite_space, sqlite_spool, sqlite_vectors,
                          text_repacking)
from chaja.stores.sqlite_schema import MOVE_VECTORS, VECTOR_FIELDS

#: meta key: the form the store's vector files keep their vectors in
ENCODING_KEY = "vectors.encoding"


class Compaction:
    """:meth:`compact` of :class:`~chaja.stores.sqlite.SqliteStore`, which takes the
    matrices it holds (:class:`~chaja.stores.sqlite_matrices.CachedMatrices`) where they
    are current."""

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
        chunk: 5,000 rows changed"``, ...). Rows whose text waits to be packed are packed
        after it, whether or not the files were due (:meth:`text_to_pack`)."""
        tell = progress or (lambda step: None)

        def vectors_and_graphs(seq: int) -> None:
            self._vectors_and_graphs(seq, tell, graphs=graphs, full_graphs=full_graphs)

        self._writable()

        def begin() -> None:
            sqlite_errors.begin_immediate(self._db, self.busy_timeout_s, self.path)

        with self._lock, self._sentences():
            self._vector_files_done, self._vector_bytes_moved, self._columns_to_empty = [], 0, []
            before = {f: self.get_meta(sqlite_vectors.record_key(f)) for f in VECTOR_FIELDS}
            spools = {f: sqlite_spool.recorded_file(self.get_meta(sqlite_spool.record_key(f))) for f in VECTOR_FIELDS}
            try:
                done = self._keywords.compact(force=force, also=vectors_and_graphs, progress=tell, begin=begin)
            finally:
                self._remove_unrecorded(before)
                self._remove_folded_spools(spools)
            packed = 0
            if derived_terms.waiting(self._db):       # (before packing: the rows it drops are not packed)
                packed = derived_terms.drop_kept(self._db, self.text_packing.unpack, self._transaction, tell)
            if text_repacking.waiting(self._db):
                packed += text_repacking.repack(self._db, self.text_packing, self._transaction, tell)
            if done or packed:
                try:
                    # a forced compaction (chaja optimize) that packed text rewrites the file for it
                    sqlite_space.reclaim(self._db, moved=self._vector_bytes_moved + packed,
                                         rewrite=force and packed > 0)
                except sqlite3.Error:      # (busy or full: the free pages serve later rows instead)
                    pass
        self._graphs_seq = -1
        return done

    def _remove_unrecorded(self, before: dict[str, str | None]) -> None:
        """After a compaction, committed or not: remove the files it wrote that no record
        names (rolled back), the files the records named before it (replaced), and a
        schema-5 copy of a field now recorded. Files of a compaction another process runs
        now are not touched: only names this one wrote or read are."""
        now = {f: self.get_meta(sqlite_vectors.record_key(f)) for f in VECTOR_FIELDS}
        named = {json.loads(v)["file"] for v in now.values() if v}
        candidates = {json.loads(v)["file"] for v in (*before.values(), *self._vector_files_done) if v}
        for name in candidates - named:
            self.path.with_name(name).unlink(missing_ok=True)
        for field, value in now.items():
            if value:
                sqlite_vectors.copy_path(self.path, field).unlink(missing_ok=True)

    def _remove_folded_spools(self, before: dict[str, str | None]) -> None:
        """After a compaction, committed or not: remove the spools the records named before
        it and name no longer (folded into a vector file; :mod:`chaja.stores.sqlite_spool`)."""
        for field, name in before.items():
            if name and sqlite_spool.recorded_file(self.get_meta(sqlite_spool.record_key(field))) != name:
                self.path.with_name(name).unlink(missing_ok=True)

    def _vectors_and_graphs(self, seq: int, tell: Callable[[str], None], *, graphs: bool,
                            full_graphs: bool) -> None:
        """Each vector field's file and graph as of the log entry ``seq``, in the compaction's
        transaction; the cached matrices are dropped (they are read afresh after it)."""
        in_memory = self._matrices_at(seq)
        self._matrix, self._rows, self._matrix_rowids = {}, {}, {}
        basis = store_basis(self.get_meta(LANGUAGE_MEANS))
        kw = self._keywords             # as of the file being replaced: its entry, the rows touched since
        touched = np.sort(np.fromiter(kw.touched, dtype=np.int64, count=len(kw.touched)))
        for field, column in VECTOR_FIELDS.items():
            tell(f"vectors {field}")
            (mat, ids, langs), rowids, held = self._field_file(field, column, seq, in_memory)
            if graphs and mat.shape[0] >= self.ann_threshold and sqlite_ann.available():
                self._field_graph(field, seq, mat, rowids, held=held, basis=basis, touched=touched,
                                  full=full_graphs, tell=tell)
            else:
                self._db.execute("DELETE FROM meta WHERE key = ?", (f"ann.{field}",))
            del mat, ids, langs, rowids
        self._empty_filed_blobs()
        self._db.execute("DELETE FROM meta WHERE key = ?", (MOVE_VECTORS,))

    def _empty_filed_blobs(self) -> None:
        """Empty, in one pass over the rows, the blobs of every field this compaction wrote
        to a file: the rows written since the field's previous file, or every row where it
        had none (one UPDATE a field walked each row's overflow pages once per field: 10 s
        more at 100,000 chunks). Records the bytes moved (:func:`sqlite_space.reclaim`)."""
        todo, self._columns_to_empty = self._columns_to_empty, []
        if not todo:
            return
        sinces = [since for _, since in todo]
        where = "(" + " OR ".join(f"length({c}) > 0" for c, _ in todo) + ")"
        args: tuple = ()
        if None not in sinces:
            where += " AND rowid IN (SELECT row FROM keyword_log WHERE seq > ?)"
            args = (min(sinces),)
        held = " + ".join(f"ifnull(length({c}), 0)" for c, _ in todo)
        self._vector_bytes_moved = int(self._db.execute(f"SELECT total({held}) FROM chunks WHERE {where}", args)
                                       .fetchone()[0])
        sets = ", ".join(f"{c} = CASE WHEN length({c}) > 0 THEN ? ELSE {c} END" for c, _ in todo)
        self._db.execute(f"UPDATE chunks SET {sets} WHERE {where}", (sqlite_vectors.IN_FILE,) * len(todo) + args)

    def _field_file(self, field: str, column: str, seq: int, in_memory: dict) -> tuple:
        """((matrix, ids, languages), rowids, held) of one field as of ``seq``, its vectors
        moved to a new file where rows hold some (:mod:`chaja.stores.sqlite_vectors`);
        ``held``: whether the matrix is one that searches may still hold (not read for this)."""
        # the matrix in memory where it is current, else the recorded file with the rows
        # written since, else read from the rows
        kept = in_memory.pop(field, None) or self._mapped_matrix(field, column)
        (mat, ids, langs), rowids = kept or self._read_matrix(column, self._dim(field))
        spool_key = sqlite_spool.record_key(field)
        # (under the write lock: a spool no record names is one a crashed write left)
        sqlite_spool.remove_unrecorded(self.path, field, sqlite_spool.recorded_file(self.get_meta(spool_key)))
        key = sqlite_vectors.record_key(field)
        value = self.get_meta(key)
        rec = None if value is None else json.loads(value)
        since = None if rec is None else rec["seq"]
        encoding = self.vector_encoding
        if since is not None and sqlite_vectors.recorded_encoding(rec) == encoding and not self._db.execute(
                "SELECT 1 FROM keyword_log WHERE seq > ? LIMIT 1", (since,)).fetchone():
            # nothing written since the file (`chaja optimize` after a bulk load: 92 s of
            # rewriting at 1,000,000 chunks saved): the same file covers this entry too
            if since != seq:
                self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                                 (key, sqlite_vectors.record(rec["file"], seq, mat.shape[0], encoding)))
        elif since is not None or mat.shape[0] >= sqlite_vectors.FILE_THRESHOLD:
            # (under the write lock: a file no record names is one a crashed compaction left)
            sqlite_vectors.remove_unrecorded(self.path, field, None if rec is None else rec["file"])
            mat = sqlite_vectors.in_encoding(mat, encoding)
            written = sqlite_vectors.write(self.path, field, mat, ids, langs, rowids, seq=seq,
                                           store_id=self._keywords.store_id, encoding=encoding,
                                           digests=self._kept_digests(ids) if field == "chunk" else None)
            self._vector_files_done.append(written)
            self._columns_to_empty.append((column, since))
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, written))
            self._db.execute("DELETE FROM meta WHERE key = ?", (spool_key,))    # folded into the file
        return (mat, ids, langs), rowids, kept is not None

    def _field_graph(self, field: str, seq: int, mat: np.ndarray, rowids: np.ndarray, *, held: bool,
                     basis: np.ndarray, touched: np.ndarray, full: bool, tell: Callable[[str], None]) -> None:
        """Bring the field's graph to ``seq``: updated with the ``touched`` rows where one
        exists and ``full`` is not asked, else built anew; its record written to meta."""
        projected = field in sqlite_ann.PROJECTED_FIELDS and basis.size > 0
        if not isinstance(mat, np.ndarray):            # int8 codes: the graph is built from floats
            mat, held = np.asarray(mat, dtype=np.float32), False
        if projected:          # the space the searcher's queries are in
            if held:                                   # not the matrix searches may still hold
                mat = np.array(mat)
            project_rows_in_place(mat, basis)          # (the vector file is written already)
        key, previous = f"ann.{field}", self.get_meta(f"ann.{field}")
        counts = None
        if previous is not None and not full:
            tell(f"graph {field}: {touched.size:,} rows changed")
            counts = sqlite_ann.update(self.path, field, previous, self._keywords.base_seq, touched,
                                       rowids, mat, projected)
        if counts is None:
            tell(f"graph {field} ({mat.shape[0]:,} vectors)")
            counts = sqlite_ann.build(self.path, field, rowids, mat)
        self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                         (key, sqlite_ann.meta_value(seq, mat.shape[0], projected, **counts)))

    def _matrices_at(self, seq: int) -> dict[str, tuple[tuple[np.ndarray, Sequence[str], np.ndarray], np.ndarray]]:
        """The vector matrices already in memory that hold every row as of the log entry
        ``seq`` (:meth:`_fresh` brought them there; rows in rowid order), so a compaction
        need not read them from the rows again: after a bulk load's statistics, every field."""
        if self._matrix_seq != seq:
            return {}
        return {field: (m, self._matrix_rowids[field]) for field, m in self._matrix.items()
                if m[0].shape[1] == self._dim(field)}

    def vectors_to_move(self) -> bool:
        """Whether the store was written by schema 5 and its vectors wait in the rows for
        the compaction that moves them into files, or a field's file keeps its vectors in
        another form than the store's (:mod:`chaja.stores.sqlite_vectors`)."""
        if self.get_meta(MOVE_VECTORS) is not None:
            return True
        records = (self.get_meta(sqlite_vectors.record_key(f)) for f in VECTOR_FIELDS)
        return any(sqlite_vectors.recorded_encoding(json.loads(v)) != self.vector_encoding for v in records if v)

    def keywords_to_write(self) -> bool:
        """Whether the keyword file is missing or one this store cannot map (damaged, or of an
        older format), so that each process builds the postings from the rows until the next
        compaction writes it."""
        with self._lock, self._sentences():
            return self._keywords.file_unusable()

    def text_to_pack(self) -> bool:
        """Whether rows written before the store's text dictionaries (or a store an older
        chaja wrote) wait for the compaction that packs them (:mod:`chaja.stores.text_repacking`)."""
        with self._lock, self._sentences():
            return text_repacking.waiting(self._db)

    def terms_to_drop(self) -> bool:
        """Whether kept keyword rows wait for the compaction that drops those the store's
        analyser makes again (:func:`chaja.stores.derived_terms.drop_kept`)."""
        with self._lock, self._sentences():
            return derived_terms.waiting(self._db)

    @property
    def vector_encoding(self) -> str:
        """The form the store's vector files keep their vectors in (meta ``vectors.encoding``;
        :data:`~chaja.stores.sqlite_vectors.ENCODINGS`, the first when unset)."""
        return self.get_meta(ENCODING_KEY) or sqlite_vectors.ENCODINGS[0]

    def set_vector_encoding(self, encoding: str) -> None:
        """Keep the vector files in ``encoding`` from the next compaction on (``chaja optimize
        --vectors``): ``int8`` codes with an offset and a scale per dimension, or ``float32``."""
        if encoding not in sqlite_vectors.ENCODINGS:
            raise ValueError(f"vector encoding must be one of {', '.join(sqlite_vectors.ENCODINGS)},"
                             f" not {encoding!r}")
        self.set_meta(ENCODING_KEY, encoding)

    def reclaim_space(self) -> int:
        """Give back the pages compaction freed, rewriting the file where it must
        (:func:`chaja.stores.sqlite_space.reclaim`); the bytes given back."""
        self._writable()
        with self._lock, self._sentences():
            return sqlite_space.reclaim(self._db, rewrite=True)

    def deferred_graphs(self) -> list[str]:
        """The vector fields large enough for a graph (:data:`~chaja.stores.sqlite_ann.ANN_THRESHOLD`)
        that have no current one, and are searched exactly until a compaction builds it:
        after a bulk load (``compact(graphs=False)``), or where the ``ann`` extra is missing."""
        return [field for field in VECTOR_FIELDS
                if self._vectors(field)[0].shape[0] >= self.ann_threshold and self._graph(field) is None]
