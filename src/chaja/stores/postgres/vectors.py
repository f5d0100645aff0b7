"""Vector search: nearest chunks by cosine similarity (``1 - (a <=> b)``) through the HNSW
indexes, or exactly on small tables and where the index falls short; scores of given
chunks, stored vectors, samples and the per-language mean vectors."""
from __future__ import annotations

import time

import numpy as np

from chaja.documents import Hit
from chaja.filters import Filters
from chaja.stores.base import StoreError
from chaja.stores.postgres.hnsw import VECTOR_TABLES, stored_dim
from chaja.stores.postgres.values import clean, filter_sql

#: The default floor for ``hnsw.ef_search``.
HNSW_EF_SEARCH_MIN = 40
#: Each vector query searches the graph with ``hnsw.ef_search`` ≥ this many times n.
#: Query vectors with the language direction projected out sit off the stored
#: vectors' distribution, and the graph finds their neighbours less well: on the
#: React docs (3,896 chunks, n = 60) ef_search = n returned 0.90 of the exact top 60
#: and cost 0.053 nDCG@10; 4n returns 0.995 of it, 8n 0.9997, for 1-3 ms more per query.
HNSW_EF_SEARCH_FACTOR = 8
#: pgvector caps ``hnsw.ef_search`` at 1000.
HNSW_EF_SEARCH_MAX = 1000
#: Tables with at most this many rows are searched exactly (a sequential scan),
#: where an approximate index buys little time and costs recall: on the React docs
#: (3,896 chunks) HNSW at ef_search = 8n still left vector-only nDCG@10 0.003
#: below the exact search.
EXACT_BELOW = 20_000
#: Seconds a table's row count is reused before it is counted again.
ROW_COUNT_TTL = 30.0

#: aligned fields: (table, id column, vector column); always searched exactly
ALIGNED = {"aligned": ("chunk_aligned", "embedding"), "aligned_heading": ("chunk_aligned", "name_embedding")}
#: every field: (table, chunk id column, vector column), for scoring given chunks and sampling
FIELD_COLUMNS = {"chunk": ("chunks", "id", "embedding"), "heading": ("chunk_headings", "chunk_id", "embedding"),
                 "aligned": ("chunk_aligned", "chunk_id", "embedding"),
                 "aligned_heading": ("chunk_aligned", "chunk_id", "name_embedding")}


def array(vec) -> np.ndarray:
    """A pgvector value (or a plain sequence) as a float32 array."""
    return np.asarray(vec.to_numpy() if hasattr(vec, "to_numpy") else vec, dtype=np.float32)


def _columns(field: str) -> tuple[str, str, str]:
    """(table, chunk id column, vector column) of ``field``; StoreError for an unknown one."""
    if field not in FIELD_COLUMNS:
        raise StoreError(f"vector field must be one of {', '.join(FIELD_COLUMNS)}, not {field!r}")
    return FIELD_COLUMNS[field]


def vector(store, query: np.ndarray, n: int, *, lang: str | None = None, field: str = "chunk",
           where: Filters | None = None) -> list[Hit]:
    """Best ``n`` chunks by cosine similarity, best first (``field="heading"``: by
    the vectors of their headings, from ``chunk_headings``).

    The HNSW index answers with ``hnsw.ef_search`` ≥ ``n``. When it returns fewer
    than ``n`` rows although more chunks qualify (a ``lang`` filter that rejects
    most of the candidates the index visits, or ``n`` above pgvector's limit of
    1000), the query is answered again by an exact scan.
    """
    q = np.asarray(query, dtype=np.float32).ravel()
    if store._dim is None:  # another process may have written since we opened
        store._dim = store._run("cannot read the vector dimension", lambda: stored_dim(store))
    if n <= 0 or store._dim is None:
        return []
    if q.size != store._dim and field not in ALIGNED:
        raise StoreError(
            f"dimension mismatch: the query vector has {q.size} dimensions, the store holds {store._dim}"
        )
    if not np.all(np.isfinite(q)) or not np.any(q):
        return []
    if field in ALIGNED:
        return _aligned_vector(store, q, int(n), lang, field, where)
    if field not in VECTOR_TABLES:
        raise StoreError(f"vector field must be one of {', '.join(FIELD_COLUMNS)}, not {field!r}")
    table, indexed = VECTOR_TABLES[field]
    n = int(n)
    params = {"q": q, "lang": clean(lang), "n": n}
    passing = filter_sql(where, params, None if field == "chunk" else "chunk_id")
    conditions = [c for c in (indexed, "lang = %(lang)s" if lang else None) if c]
    condition = "WHERE " + " AND ".join(conditions + ["TRUE"]) + passing
    if field == "chunk":
        inner = (
            "SELECT id, seq, embedding <=> %(q)b AS dist FROM {s}.chunks " + condition +
            " ORDER BY embedding <=> %(q)b LIMIT %(n)s"
        )
        stmt = store._q("SELECT id, 1 - dist FROM (" + inner + ") AS best ORDER BY dist, seq")
    else:  # the n best sections by their lead rows, then every chunk of them
        inner = (
            "SELECT doc_id, section, embedding <=> %(q)b AS dist FROM {s}.chunk_headings " + condition +
            " ORDER BY embedding <=> %(q)b LIMIT %(n)s"
        )
        stmt = store._q(
            "SELECT h.chunk_id, 1 - best.dist FROM (" + inner + ") AS best"
            " JOIN {s}.chunk_headings AS h ON h.doc_id = best.doc_id AND h.section = best.section"
            + filter_sql(where, params, "h.chunk_id") +
            " ORDER BY best.dist, h.seq LIMIT %(n)s"
        )

    # every row that could be returned (for headings: every chunk of every section)
    count = store._q(f"SELECT count(*) FROM {{s}}.{table} WHERE " + ("lang = %(lang)s" if lang else "TRUE") + passing)
    rows = store._run("vector search failed", lambda: _nearest(
        store, table, stmt, stmt, count, params, n, filtered=bool(lang or where)))
    return [Hit(cid, float(score)) for cid, score in rows]


def _nearest(store, table: str, indexed, exact, count, params: dict, n: int, *, filtered: bool,
             exact_only: bool = False) -> list[tuple]:
    """Rows of a nearest-neighbour statement, in one transaction: ``exact`` with index
    scans off for a table of at most ``exact_below`` rows (or ``exact_only``); above it
    ``indexed`` with ``hnsw.ef_search = max(ef_search, 8n)`` (iterative scans for a
    ``filtered`` query where pgvector has them), and ``exact`` again when the index
    returned fewer than ``n`` rows although ``count`` says more qualify."""
    conn = store.conn
    with conn.transaction():
        if exact_only or row_count(store, table) <= store.exact_below:
            conn.execute("SELECT set_config('enable_indexscan', 'off', true)")
            return conn.execute(exact, params).fetchall()
        ef = min(HNSW_EF_SEARCH_MAX, max(store.ef_search, HNSW_EF_SEARCH_FACTOR * n))
        conn.execute("SELECT set_config('hnsw.ef_search', %s, true)", (str(ef),))
        if filtered and store._iterative_scan:
            conn.execute("SELECT set_config('hnsw.iterative_scan', 'strict_order', true)")
        rows = conn.execute(indexed, params).fetchall()
        if len(rows) < n and conn.execute(count, params).fetchone()[0] > len(rows):
            # Exact answer: a sequential scan with a top-n sort.
            conn.execute("SELECT set_config('enable_indexscan', 'off', true)")
            rows = conn.execute(exact, params).fetchall()
    return rows


def _aligned_vector(store, q: np.ndarray, n: int, lang: str | None, field: str,
                    where: Filters | None = None) -> list[Hit]:
    """The aligned fields as the chunk field: an exact scan up to ``exact_below`` rows,
    above it their HNSW index (once the columns are typed), again exactly when the
    index returns fewer than ``n`` of the rows that qualify."""
    table, column = ALIGNED[field]
    params = {"q": q, "lang": clean(lang), "n": n}
    condition = (f"WHERE {column} IS NOT NULL" + (" AND lang = %(lang)s" if lang else "")
                 + filter_sql(where, params, "chunk_id"))
    exact = store._q(
        f"SELECT chunk_id, 1 - ({column} <=> %(q)b) FROM {{s}}.{table} {condition}"
        f" ORDER BY {column} <=> %(q)b, seq LIMIT %(n)s")
    indexed = store._q(
        f"SELECT chunk_id, 1 - dist FROM (SELECT chunk_id, seq, {column} <=> %(q)b AS dist"
        f" FROM {{s}}.{table} {condition} ORDER BY {column} <=> %(q)b LIMIT %(n)s) AS best ORDER BY dist, seq")

    count = store._q(f"SELECT count(*) FROM {{s}}.{table} {condition}")

    def search() -> list[tuple[str, float]]:
        if store._aligned_dim is None:            # another process may have typed them since
            store._aligned_dim = stored_dim(store, table)
        dim = store._aligned_dim
        if dim is None:                          # untyped columns: the dimension of a stored row
            found = store.conn.execute(store._q(f"SELECT vector_dims({column}) FROM {{s}}.{table} "
                                                f"WHERE {column} IS NOT NULL LIMIT 1")).fetchone()
            if found is None:
                return []
            dim = found[0]
        if dim != q.size:
            raise StoreError(f"dimension mismatch: the query vector has {q.size} dimensions, "
                             f"the store's {field} vectors {dim}")
        return _nearest(store, table, indexed, exact, count, params, n, filtered=bool(lang or where),
                        exact_only=store._aligned_dim is None)

    return [Hit(cid, float(score)) for cid, score in store._run("vector search failed", search)]


def vector_scores(store, query: np.ndarray, ids: list[str], *, field: str = "chunk") -> dict[str, float]:
    """Cosine of ``query`` with the ``field`` vector of each chunk in ``ids`` that has one."""
    table, key, column = _columns(field)
    wanted = [i for i in (clean(x) for x in dict.fromkeys(ids)) if i is not None]
    q = np.asarray(query, dtype=np.float32).ravel()
    if not wanted or not np.all(np.isfinite(q)):
        return {}
    stmt = store._q(f"SELECT {key}, 1 - ({column} <=> %(q)b) FROM {{s}}.{table}"
                    f" WHERE {key} = ANY(%(ids)s::text[]) AND {column} IS NOT NULL")
    rows = store._run("cannot score chunks", lambda: store.conn.execute(
        stmt, {"q": q, "ids": wanted}).fetchall())
    return {cid: float(score) for cid, score in rows}


def stored_vectors(store, ids: list[str], field: str = "chunk") -> dict[str, np.ndarray]:
    """The stored ``field`` vector of each listed chunk that has one."""
    table, key, column = _columns(field)
    wanted = [i for i in (clean(x) for x in dict.fromkeys(ids)) if i is not None]
    if not wanted:
        return {}
    stmt = store._q(f"SELECT {key}, {column} FROM {{s}}.{table}"
                    f" WHERE {key} = ANY(%(ids)s::text[]) AND {column} IS NOT NULL")
    rows = store._run("cannot read vectors", lambda: store.conn.execute(stmt, {"ids": wanted}).fetchall())
    return {cid: array(vec) for cid, vec in rows}


def vector_sample(store, n: int, *, field: str = "chunk") -> np.ndarray:
    """At most ``n`` stored ``field`` vectors: the first ``n`` by md5 of the chunk id,
    as :func:`chaja.stores.base.sample_order` orders them."""
    table, key, column = _columns(field)
    rows = store._run("cannot read vectors", lambda: store.conn.execute(store._q(
        f"SELECT {column} FROM {{s}}.{table} WHERE {column} IS NOT NULL"
        f" ORDER BY md5({key}) LIMIT %s"), (int(n),)).fetchall())
    if not rows:
        return np.zeros((0, 0), dtype=np.float32)
    return np.stack([array(r[0]) for r in rows])


def row_count(store, table: str) -> int:
    """Rows in ``table``, counted at most every ROW_COUNT_TTL seconds (and after
    this object's own writes); decides between exact and HNSW search."""
    now = time.monotonic()
    seen = store._row_counts.get(table)
    if seen is None or now - seen[0] > ROW_COUNT_TTL:
        count = store.conn.execute(store._q(f"SELECT count(*) FROM {{s}}.{table}")).fetchone()[0]
        seen = store._row_counts[table] = (now, int(count))
    return seen[1]


def language_means(store) -> dict[str, tuple[int, np.ndarray]]:
    """language → (chunk count, mean chunk vector), computed in the database."""
    rows = store._run("cannot compute language means", lambda: store.conn.execute(
        store._q("SELECT lang, count(*), avg(embedding) FROM {s}.chunks GROUP BY lang ORDER BY lang")
    ).fetchall())
    out = {}
    for lang, count, mean in rows:
        arr = mean.to_numpy() if hasattr(mean, "to_numpy") else mean
        out[lang] = (int(count), np.asarray(arr, dtype=np.float32).copy())
    return out
