"""Reading stored chunks, documents, metadata and statistics back."""
from __future__ import annotations

from chaja.documents import Chunk, DocumentInfo, Location, StoreStats
from chaja.stores.base import digest_of_sample
from chaja.stores.postgres.values import clean, filter_sql


def passing_seqs(store, where, among: list[int] | None = None) -> list[tuple[int]]:
    """The ``(seq,)`` rows of the chunks the search filter ``where`` keeps, ascending; of
    ``among`` alone where given."""
    params: dict = {} if among is None else {"among": list(among)}
    cond = (" AND seq = ANY(%(among)s)" if among is not None else "") + filter_sql(where, params)
    return store.conn.execute(store._q("SELECT seq FROM {s}.chunks WHERE true" + cond + " ORDER BY seq"),
                              params).fetchall()


def fingerprints(store, ids: list[str] | None = None) -> dict[str, str]:
    if ids is not None:
        wanted = [i for i in (clean(x) for x in ids) if i is not None]
        return store._run("cannot read fingerprints", lambda: dict(store.conn.execute(store._q(
            "SELECT id, fingerprint FROM {s}.documents WHERE id = ANY(%s::text[])"), (wanted,)).fetchall()))
    return store._run("cannot read fingerprints", lambda: dict(
        store.conn.execute(store._q("SELECT id, fingerprint FROM {s}.documents")).fetchall()
    ))


def chunks(store, ids: list[str]) -> dict[str, Chunk]:
    wanted = [i for i in (clean(x) for x in ids) if i is not None]
    if not wanted:
        return {}

    def read() -> list[tuple]:
        return store.conn.execute(
            store._q(
                "SELECT id, doc_id, ordinal, title, heading_path, text, lang, source, doc_type, date, location"
                " FROM {s}.chunks WHERE id = ANY(%s::text[])"
            ),
            (wanted,),
        ).fetchall()

    out: dict[str, Chunk] = {}
    for row in store._run("cannot read chunks", read):
        out[row[0]] = Chunk(id=row[0], doc_id=row[1], ordinal=row[2], title=row[3],
                            heading_path=tuple(row[4]), text=row[5], lang=row[6],
                            source=row[7], doc_type=row[8], date=row[9], location=Location.decode(row[10]))
    return out


def chunks_without_aligned(store, after: str = "", limit: int = 256) -> list[Chunk]:
    """The next ``limit`` chunks, by id after ``after``, that hold no aligned vector."""
    ids = [r[0] for r in store._run("cannot read chunks", lambda: store.conn.execute(store._q(
        "SELECT c.id FROM {s}.chunks c WHERE c.id > %s AND NOT EXISTS"
        " (SELECT 1 FROM {s}.chunk_aligned a WHERE a.chunk_id = c.id) ORDER BY c.id LIMIT %s"),
        (after, int(limit))).fetchall())]
    found = chunks(store, ids)
    return [found[i] for i in ids if i in found]


def chunk_sample(store, n: int) -> list[Chunk]:
    """At most ``n`` stored chunks: the first ``n`` by md5 of the chunk id, as
    :func:`chaja.stores.base.sample_order` orders them."""
    rows = store._run("cannot read chunks", lambda: store.conn.execute(store._q(
        "SELECT id FROM {s}.chunks ORDER BY md5(id) LIMIT %s"), (int(n),)).fetchall())
    ids = [r[0] for r in rows]
    found = store.chunks(ids)
    return [found[i] for i in ids if i in found]


def sample_fingerprint(store, n: int) -> str:
    """:meth:`Store.sample_fingerprint`: the chunks :func:`chunk_sample` reads, each with its
    language, section path, text length and document's fingerprint (no text read)."""
    rows = store._run("cannot read chunks", lambda: store.conn.execute(store._q(
        "SELECT c.id, c.lang, c.heading_path, length(c.text), d.fingerprint FROM {s}.chunks c"
        " JOIN {s}.documents d ON d.id = c.doc_id ORDER BY md5(c.id) LIMIT %s"), (int(n),)).fetchall())
    return digest_of_sample([r[0] for r in rows], {r[0]: tuple(r[1:]) for r in rows})


def column_of(store, ids: list[str], column: str, what: str) -> dict[str, object]:
    """chunk id → one column of each listed chunk that exists (no text read)."""
    wanted = [i for i in (clean(x) for x in ids) if i is not None]
    if not wanted:
        return {}
    return dict(store._run(f"cannot read chunk {what}", lambda: store.conn.execute(
        store._q(f"SELECT id, {column} FROM {{s}}.chunks WHERE id = ANY(%s::text[])"), (wanted,)).fetchall()))


def chunk_terms(store, ids: list[str]) -> dict[str, set[str]]:
    wanted = [i for i in (clean(x) for x in ids) if i is not None]
    if not wanted:
        return {}
    rows = store._run("cannot read chunk terms", lambda: store.conn.execute(
        store._q(
            "SELECT id, title_terms, heading_terms, body_terms FROM {s}.chunks"
            " WHERE id = ANY(%s::text[])"
        ),
        (wanted,),
    ).fetchall())
    return {cid: set(f"{t} {h} {b}".split()) for cid, t, h, b in rows}


def get_meta(store, key: str) -> str | None:
    row = store._run("cannot read metadata", lambda: store.conn.execute(
        store._q("SELECT value FROM {s}.meta WHERE key = %s"), (clean(key),)
    ).fetchone())
    return row[0] if row else None


def set_meta(store, key: str, value: str) -> None:
    store._run("cannot write metadata", lambda: store.conn.execute(
        store._q(
            "INSERT INTO {s}.meta (key, value) VALUES (%s, %s)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value"
        ),
        (clean(key), clean(value)),
    ))


def documents(store, *, after: str | None = None, limit: int = 100,
              ids: list[str] | None = None) -> list[DocumentInfo]:
    cols = "SELECT id, title, lang, source, doc_type, date, path, fingerprint, n_chunks FROM {s}.documents"
    if ids is not None:
        stmt, params = store._q(cols + " WHERE id = ANY(%s) ORDER BY id"), ([clean(i) for i in ids],)
    else:
        stmt, params = store._q(cols + " WHERE id > %s ORDER BY id LIMIT %s"), (clean(after or ""), int(limit))
    rows = store._run("cannot list documents", lambda: store.conn.execute(stmt, params).fetchall())
    return [DocumentInfo(r[0], r[1], r[2] or "", r[3] or "", r[4] or "", r[5], r[6] or "", r[7], int(r[8]))
            for r in rows]


def stats(store) -> StoreStats:
    def read() -> StoreStats:
        conn = store.conn

        def counts(col: str) -> dict[str, int]:
            rows = conn.execute(store._q(
                f"SELECT {col}, count(*) FROM {{s}}.documents GROUP BY {col} ORDER BY {col}"
            )).fetchall()
            return {k or "": int(v) for k, v in rows}

        docs = conn.execute(store._q("SELECT count(*) FROM {s}.documents")).fetchone()[0]
        n_chunks = conn.execute(store._q("SELECT count(*) FROM {s}.chunks")).fetchone()[0]
        size = conn.execute(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = %s AND c.relkind = 'r'", (store.schema,)
        ).fetchone()[0]
        return StoreStats(documents=int(docs), chunks=int(n_chunks), by_lang=counts("lang"),
                          by_source=counts("source"), by_doc_type=counts("doc_type"),
                          size_bytes=int(size))

    return store._run("cannot read statistics", read)
