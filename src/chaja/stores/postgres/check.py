"""What :meth:`PostgresStore.check` verifies and :meth:`PostgresStore.repair` mends: the
schema version, each document's chunks, every chunk's keyword row, and the keyword
statistics (``fts_stats``) against the rows."""
from __future__ import annotations

from chaja.stores.postgres.documents import FTS_INSERT, log_chunks
from chaja.stores.postgres.migrations import SCHEMA_VERSION, current_version


def check(store, limit: int = 50) -> list[str]:
    """Faults that make this store less than whole, one line each (empty: whole): the
    schema version, each document's chunks, keyword rows both ways, the keyword
    statistics (``fts_stats``) against the rows. One repeatable-read snapshot."""
    def read() -> list[str]:
        out: list[str] = []
        conn = store.conn
        with conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            version = current_version(store)
            if version > SCHEMA_VERSION:
                out.append(f"schema: version {version} is not one this chaja knows")
            for doc_id, want, got in conn.execute(store._q(
                    "SELECT d.id, d.n_chunks, count(c.id) FROM {s}.documents d LEFT JOIN {s}.chunks c"
                    " ON c.doc_id = d.id GROUP BY d.id, d.n_chunks HAVING count(c.id) != d.n_chunks LIMIT %s"),
                    (limit,)):
                out.append(f"document {doc_id!r}: records {want} chunks, holds {got}")
            for (cid,) in conn.execute(store._q(
                    "SELECT c.id FROM {s}.chunks c LEFT JOIN {s}.chunk_fts f ON f.chunk_id = c.id"
                    " WHERE f.chunk_id IS NULL LIMIT %s"), (limit,)):
                out.append(f"chunk {cid!r}: no keyword row")
            chunks, fts, tokens, recorded = conn.execute(store._q(
                "SELECT (SELECT count(*) FROM {s}.chunks), (SELECT count(*) FROM {s}.chunk_fts),"
                " (SELECT coalesce(sum(n_tokens), 0) FROM {s}.chunk_fts),"
                " (SELECT row(chunks, tokens)::text FROM {s}.fts_stats LIMIT 1)")).fetchone()
            if fts != chunks:
                out.append(f"keyword rows: {fts} for {chunks} chunks")
            if recorded != f"({fts},{tokens})":
                out.append(f"keyword statistics: fts_stats says {recorded}, the rows hold ({fts},{tokens})")
        return out

    return store._run("cannot check the store", read)


def repair(store) -> list[str]:
    """Mend what :func:`check` finds without encoding anything again, in one
    transaction: a document whose chunks do not match its record is removed (index
    its file again); a chunk without its keyword row gets it back from the terms the
    chunk row keeps; ``fts_stats`` is recounted from the rows. Returns what was done,
    one line per act."""
    def mend() -> list[str]:
        done: list[str] = []
        conn = store.conn
        with conn.transaction():
            # the fts_stats row lock first, as every writer takes it (the log's order)
            conn.execute(store._q("SELECT 1 FROM {s}.fts_stats FOR UPDATE"))
            broken = [r[0] for r in conn.execute(store._q(
                "SELECT d.id FROM {s}.documents d LEFT JOIN {s}.chunks c ON c.doc_id = d.id"
                " GROUP BY d.id, d.n_chunks HAVING count(c.id) != d.n_chunks ORDER BY d.id"))]
            for doc_id in broken:
                log_chunks(store, doc_id, False)
                conn.execute(store._q("DELETE FROM {s}.documents WHERE id = %s"), (doc_id,))
                done.append(f"removed document {doc_id!r} (damaged; index its file again)")
            missing = [r[0] for r in conn.execute(store._q(
                "SELECT c.id FROM {s}.chunks c LEFT JOIN {s}.chunk_fts f ON f.chunk_id = c.id"
                " WHERE f.chunk_id IS NULL ORDER BY c.id"))]
            if missing:
                conn.execute(store._q(FTS_INSERT.replace("WHERE doc_id = %s", "WHERE id = ANY(%s)")),
                             (missing,))
                done += [f"rebuilt the keyword row of chunk {cid!r}" for cid in missing]
            row = conn.execute(store._q(
                "SELECT (SELECT count(*) FROM {s}.chunk_fts), (SELECT coalesce(sum(n_tokens), 0)"
                " FROM {s}.chunk_fts), (SELECT row(chunks, tokens)::text FROM {s}.fts_stats LIMIT 1)")).fetchone()
            if row[2] != f"({row[0]},{row[1]})":
                conn.execute(store._q("DELETE FROM {s}.fts_stats"))
                conn.execute(store._q("INSERT INTO {s}.fts_stats (chunks, tokens) VALUES (%s, %s)"), row[:2])
                done.append(f"recounted the keyword statistics ({row[0]} rows, {row[1]} tokens)")
        return done

    store._row_counts.clear()
    return store._run("cannot repair the store", mend)
