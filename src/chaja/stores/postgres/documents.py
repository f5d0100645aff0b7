"""Writing and deleting documents: each write is one transaction that replaces the old
version's rows, with its keyword rows (``chunk_fts``), the BM25 statistics
(``fts_stats``) and the keyword log kept in step, so readers see either the old or the
new version of a document."""
from __future__ import annotations

from chaja.documents import ChunkRecord, Document
from chaja.stores.base import StoreError, flat_vector, refuse_non_finite
from chaja.stores.postgres.hnsw import fix_dim, stored_dim_safe, type_aligned_columns
from chaja.stores.postgres.values import chunk_row, clean, section

# Title terms weigh A, heading terms B, body terms D (ts_rank_cd's weights array
# is ordered {D, C, B, A}). to_tsvector keeps positions, which ts_rank_cd needs.
FTS_INSERT = """
INSERT INTO {s}.chunk_fts (chunk_id, seq, lang, tsv, title_tsv, n_tokens)
SELECT chunk_id, seq, lang, tsv, title_tsv, {s}.tsvector_tokens(tsv) FROM (
  SELECT id AS chunk_id, seq, lang,
         setweight(to_tsvector('pg_catalog.simple'::regconfig, title_terms), 'A')
         || setweight(to_tsvector('pg_catalog.simple'::regconfig, heading_terms), 'B')
         || setweight(to_tsvector('pg_catalog.simple'::regconfig, body_terms), 'D') AS tsv,
         setweight(to_tsvector('pg_catalog.simple'::regconfig, title_terms), 'A') AS title_tsv
  FROM {s}.chunks WHERE doc_id = %s) AS c
"""


def count_fts(store, doc_id: str, sign: int) -> None:
    """Add (+1) or remove (−1) a stored document's chunks and tokens in fts_stats."""
    store.conn.execute(store._q(
        "UPDATE {s}.fts_stats SET chunks = chunks + %(sign)s * d.n, tokens = tokens + %(sign)s * d.t"
        " FROM (SELECT count(*) AS n, coalesce(sum(f.n_tokens), 0) AS t FROM {s}.chunk_fts AS f"
        "       JOIN {s}.chunks AS c ON c.id = f.chunk_id WHERE c.doc_id = %(doc)s) AS d"),
        {"sign": int(sign), "doc": clean(doc_id)})


def log_chunks(store, doc_id: str, added: bool) -> None:
    """Append the document's chunk rows to ``keyword_log``, as added or as removed.
    Every caller has already updated ``fts_stats`` in this transaction, whose row
    lock orders the store's writers, so the log's ``seq`` grows in commit order."""
    store.conn.execute(store._q(
        "INSERT INTO {s}.keyword_log (row, added) SELECT seq, %s FROM {s}.chunks WHERE doc_id = %s ORDER BY seq"),
        (bool(added), clean(doc_id)))


def remove(store, doc_id: str) -> int:
    """Take a stored document out of the statistics, the log and the tables (its chunks
    go with it); how many documents were removed (0 or 1)."""
    count_fts(store, doc_id, -1)
    log_chunks(store, doc_id, False)
    return store.conn.execute(store._q("DELETE FROM {s}.documents WHERE id = %s"), (clean(doc_id),)).rowcount


def replace(store, doc: Document, n_chunks: int, dim: int | None) -> None:
    """Remove the stored version of ``doc``, give the vector columns their dimension on the
    first write (or raise on a mismatch), and record ``doc`` with ``n_chunks`` chunks."""
    remove(store, doc.id)
    if dim is not None and store._dim != dim:
        fix_dim(store, int(dim))
    store.conn.execute(
        store._q(
            "INSERT INTO {s}.documents (id, fingerprint, title, lang, source, doc_type,"
            " date, path, n_chunks) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
        ),
        (clean(doc.id), doc.fingerprint(), clean(doc.title), clean(doc.lang or ""),
         clean(doc.source or ""), clean(doc.doc_type or ""), clean(doc.date),
         clean(doc.path or ""), n_chunks),
    )


def write_document(store, doc: Document, write) -> None:
    """Run ``write`` (one transaction) as the store's call; after a failure the vector
    dimensions are read again, since the write may have typed a column, then rolled back."""
    try:
        store._run(f"cannot store document {doc.id!r}", write)
    except StoreError:
        store._dim = stored_dim_safe(store)
        store._aligned_dim = None             # read again: the write may have typed it, then rolled back
        raise


def put_document(store, doc: Document, records: list[ChunkRecord]) -> None:
    """Store ``doc`` with its chunks and their vectors in one transaction, replacing any
    earlier version."""
    store._row_counts.clear()
    vectors = [flat_vector(r.vector) for r in records]
    headings, sections = [], set()
    for r in records:
        if r.heading_vector is not None:
            key = section(r.chunk)
            headings.append((flat_vector(r.heading_vector), key, key not in sections, clean(r.chunk.id)))
            sections.add(key)
    aligned = [(flat_vector(r.aligned_vector), flat_vector(r.aligned_heading_vector), clean(r.chunk.id))
               for r in records if r.aligned_vector is not None]
    refuse_non_finite([*zip((r.chunk.id for r in records), vectors), *((h[3], h[0]) for h in headings),
                       *((cid, v) for a, h, cid in aligned for v in (a, h))])
    dims = sorted({v.size for v in vectors} | {h[0].size for h in headings})
    if len(dims) > 1:
        raise StoreError(f"dimension mismatch: the chunks of {doc.id!r} have vectors of {dims} dimensions")
    for r in records:
        if r.chunk.doc_id != doc.id:
            raise StoreError(f"chunk {r.chunk.id!r} belongs to {r.chunk.doc_id!r}, not {doc.id!r}")
    dim = dims[0] if dims else None

    def write() -> None:
        with store.conn.transaction():
            # Remove the old version first: a failure below rolls this back too.
            replace(store, doc, len(records), dim)
            if records:
                _insert_chunks(store, doc, records, vectors)
            _insert_vectors(store, headings, aligned)

    write_document(store, doc, write)


def _insert_chunks(store, doc: Document, records: list[ChunkRecord], vectors: list) -> None:
    """The chunk rows, then their keyword rows, statistics and log entries."""
    conn = store.conn
    with conn.cursor() as cur:
        cur.executemany(
            store._q(
                "INSERT INTO {s}.chunks (id, doc_id, ordinal, title, heading_path, text,"
                " lang, source, doc_type, date, title_terms, heading_terms, body_terms,"
                " embedding, location)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %b, %s)"
            ),
            [chunk_row(r, v) for r, v in zip(records, vectors)],
        )
    # The tsvectors are computed in the database from the stored terms.
    conn.execute(store._q(FTS_INSERT), (clean(doc.id),))
    count_fts(store, doc.id, +1)
    log_chunks(store, doc.id, True)


def _insert_vectors(store, headings: list[tuple], aligned: list[tuple]) -> None:
    """The heading vectors (a section's first chunk leads it) and the aligned vectors of
    chunks just written."""
    conn = store.conn
    if headings:
        with conn.cursor() as cur:
            cur.executemany(store._q(
                "INSERT INTO {s}.chunk_headings (chunk_id, seq, doc_id, lang, section, lead, embedding)"
                " SELECT id, seq, doc_id, lang, %s, %s, %b FROM {s}.chunks WHERE id = %s"),
                [(key, lead, v, cid) for v, key, lead, cid in headings])
    if aligned:
        if store._aligned_dim != aligned[0][0].size:
            type_aligned_columns(store, aligned[0][0].size)   # first write, or raises on a mismatch
        with conn.cursor() as cur:
            cur.executemany(store._q(
                "INSERT INTO {s}.chunk_aligned (chunk_id, seq, lang, embedding, name_embedding)"
                " SELECT id, seq, lang, %b, %b FROM {s}.chunks WHERE id = %s"), aligned)


def put_aligned_vectors(store, items: list[tuple[str, object, object]]) -> int:
    """Give stored chunks that have none their aligned vectors, ``(chunk id, passage vector,
    section-name vector or None)`` each, in one transaction; the chunks changed."""
    store._row_counts.clear()
    aligned = [(flat_vector(a), flat_vector(h), clean(cid)) for cid, a, h in items]
    refuse_non_finite((cid, v) for a, h, cid in aligned for v in (a, h))
    if not aligned:
        return 0

    def write() -> int:
        with store.conn.transaction():
            if store._aligned_dim != aligned[0][0].size:
                type_aligned_columns(store, aligned[0][0].size)   # first write, or raises on a mismatch
            changed = 0
            with store.conn.cursor() as cur:
                for row in aligned:
                    cur.execute(store._q(
                        "INSERT INTO {s}.chunk_aligned (chunk_id, seq, lang, embedding, name_embedding)"
                        " SELECT id, seq, lang, %b, %b FROM {s}.chunks c WHERE id = %s AND NOT EXISTS"
                        " (SELECT 1 FROM {s}.chunk_aligned a WHERE a.chunk_id = c.id)"), row)
                    changed += cur.rowcount
            return changed

    try:
        return store._run("cannot store aligned vectors", write)
    except StoreError:
        store._aligned_dim = None             # read again: the write may have typed it, then rolled back
        raise


def delete_document(store, doc_id: str) -> bool:
    """Remove a document and its chunks; False when there was none."""
    store._row_counts.clear()

    def delete() -> bool:
        with store.conn.transaction():
            return remove(store, doc_id) > 0

    return store._run(f"cannot delete document {doc_id!r}", delete)
