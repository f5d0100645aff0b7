"""Documents longer than one ingest batch: their finished chunks are committed a batch at
a time into ``staged_chunks``, where no search reads them, then moved into the store's
tables in one transaction inside PostgreSQL (see :mod:`chaja.stores.sqlite_staging`)."""
from __future__ import annotations

from chaja.documents import ChunkRecord, Document
from chaja.stores.base import StoreError, flat_vector, refuse_non_finite, staged_prefix
from chaja.stores.postgres.documents import FTS_INSERT, count_fts, log_chunks, replace, write_document
from chaja.stores.postgres.hnsw import type_aligned_columns
from chaja.stores.postgres.values import chunk_row, clean, section


def resume_staged(store, doc_id: str, key: str) -> int:
    """How many leading chunks of ``doc_id`` an earlier run staged under ``key`` (rows
    under another key, or after a gap, are deleted)."""
    def resume() -> int:
        conn = store.conn
        with conn.transaction():
            conn.execute(store._q("DELETE FROM {s}.staged_chunks WHERE doc_id = %s AND stage_key != %s"),
                         (clean(doc_id), key))
            ordinals = [r[0] for r in conn.execute(store._q(
                "SELECT ordinal FROM {s}.staged_chunks WHERE doc_id = %s ORDER BY ordinal"), (clean(doc_id),))]
            done = staged_prefix(ordinals)
            conn.execute(store._q("DELETE FROM {s}.staged_chunks WHERE doc_id = %s AND ordinal >= %s"),
                         (clean(doc_id), done))
            return done

    return store._run(f"cannot read the staged chunks of {doc_id!r}", resume)


def stage_chunks(store, key: str, records: list[ChunkRecord]) -> None:
    """Commit one batch of a large document's chunks where no search sees them."""
    refuse_non_finite((r.chunk.id, flat_vector(v)) for r in records
                      for v in (r.vector, r.heading_vector, r.aligned_vector, r.aligned_heading_vector))
    rows = []
    for r in records:
        vec = flat_vector(r.vector)
        if store._dim is not None and vec.size != store._dim:
            raise StoreError(f"dimension mismatch: the store holds {store._dim}-dimensional vectors, "
                             f"got {vec.size}")
        key_of_section = section(r.chunk) if r.heading_vector is not None else None
        rows.append((clean(r.chunk.doc_id), key) + chunk_row(r, vec)[2:] + (
            clean(r.chunk.id), key_of_section, flat_vector(r.heading_vector), flat_vector(r.aligned_vector),
            flat_vector(r.aligned_heading_vector)))

    def stage() -> None:
        with store.conn.transaction(), store.conn.cursor() as cur:
            cur.execute(store._q("DELETE FROM {s}.staged_chunks WHERE doc_id = %s AND ordinal = ANY(%s)"),
                        (rows[0][0], [row[2] for row in rows]))
            cur.executemany(store._q(
                "INSERT INTO {s}.staged_chunks (doc_id, stage_key, ordinal, title, heading_path, text, lang,"
                " source, doc_type, date, title_terms, heading_terms, body_terms, embedding, location, id,"
                " section, heading_embedding, aligned_embedding, aligned_name_embedding)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %b, %s, %s, %s, %b, %b, %b)"), rows)

    if rows:
        store._run("cannot stage chunks", stage)


def put_staged(store, doc: Document, key: str, n_chunks: int) -> None:
    """Replace the stored ``doc`` with its ``n_chunks`` staged chunks, in one transaction
    that moves the rows inside PostgreSQL."""
    store._row_counts.clear()
    did = clean(doc.id)

    def write() -> None:
        conn = store.conn
        with conn.transaction():
            got, dim = conn.execute(store._q(
                "SELECT count(*), max(vector_dims(embedding)) FROM {s}.staged_chunks"
                " WHERE doc_id = %s AND stage_key = %s"), (did, key)).fetchone()
            if got != n_chunks:
                raise StoreError(f"{doc.id}: {got} of its {n_chunks} chunks are staged")
            replace(store, doc, n_chunks, dim)
            _move_chunks(store, doc, key)
            conn.execute(store._q("DELETE FROM {s}.staged_chunks WHERE doc_id = %s"), (did,))

    write_document(store, doc, write)


def _move_chunks(store, doc: Document, key: str) -> None:
    """Copy the chunks staged under ``key`` into the store's tables: the chunk rows, their
    keyword rows, statistics and log entries, then the heading and aligned vectors."""
    conn, did = store.conn, clean(doc.id)
    staged = " FROM {s}.staged_chunks s WHERE s.doc_id = %s AND s.stage_key = %s"
    conn.execute(store._q(
        "INSERT INTO {s}.chunks (id, doc_id, ordinal, title, heading_path, text, lang, source, doc_type,"
        " date, title_terms, heading_terms, body_terms, embedding, location) SELECT s.id, s.doc_id,"
        " s.ordinal, s.title, s.heading_path, s.text, s.lang, s.source, s.doc_type, s.date,"
        " s.title_terms, s.heading_terms, s.body_terms, s.embedding, s.location" + staged + " ORDER BY s.ordinal"),
        (did, key))
    conn.execute(store._q(FTS_INSERT), (did,))
    count_fts(store, doc.id, +1)
    log_chunks(store, doc.id, True)
    # a section's first chunk leads it in the heading index (as put_document does)
    conn.execute(store._q(
        "INSERT INTO {s}.chunk_headings (chunk_id, seq, doc_id, lang, section, lead, embedding)"
        " SELECT c.id, c.seq, c.doc_id, c.lang, s.section,"
        " s.ordinal = min(s.ordinal) OVER (PARTITION BY s.section), s.heading_embedding"
        " FROM {s}.staged_chunks s JOIN {s}.chunks c ON c.id = s.id"
        " WHERE s.doc_id = %s AND s.stage_key = %s AND s.heading_embedding IS NOT NULL"), (did, key))
    (adim,) = conn.execute(store._q(
        "SELECT max(vector_dims(aligned_embedding)) FROM {s}.staged_chunks"
        " WHERE doc_id = %s AND stage_key = %s"), (did, key)).fetchone()
    if adim is not None and store._aligned_dim != adim:
        type_aligned_columns(store, int(adim))
    conn.execute(store._q(
        "INSERT INTO {s}.chunk_aligned (chunk_id, seq, lang, embedding, name_embedding)"
        " SELECT c.id, c.seq, c.lang, s.aligned_embedding, s.aligned_name_embedding"
        " FROM {s}.staged_chunks s JOIN {s}.chunks c ON c.id = s.id"
        " WHERE s.doc_id = %s AND s.stage_key = %s AND s.aligned_embedding IS NOT NULL"), (did, key))


def staged(store) -> dict[str, int]:
    """doc_id → chunks staged by a run that has not published the document (yet)."""
    return store._run("cannot read the staged chunks", lambda: dict(store.conn.execute(store._q(
        "SELECT doc_id, count(*) FROM {s}.staged_chunks GROUP BY doc_id")).fetchall()))


def discard_staged(store) -> int:
    """Delete every staged chunk (an interrupted large document); how many."""
    def discard() -> int:
        with store.conn.transaction():
            return store.conn.execute(store._q("DELETE FROM {s}.staged_chunks")).rowcount

    return store._run("cannot discard the staged chunks", discard)
