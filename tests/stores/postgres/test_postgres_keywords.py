"""The PostgreSQL store's postings engine (chaja.stores.postgres.keywords) against the
SQL engine on the same schema: the same chunks and scores under adds, replacements and
deletes made by another store object (as another process), with filters, from the
cache file and after it is damaged or describes another database."""
from __future__ import annotations

import random
import warnings

import pytest

from chaja.filters import Filters

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'chaja[postgres]'")

from chaja.stores.postgres import PostgresStore  # noqa: E402
from keyword_corpus import SETTINGS as BASE_SETTINGS, assert_same_lists, make  # noqa: E402

SETTINGS = [*BASE_SETTINGS, {"where": Filters(source=("filing",))}, {"where": Filters(date_from="2025-01-01")}]


def assert_same_as_sql(a: PostgresStore, ref: PostgresStore) -> None:
    # ts_rank_cd, inside the SQL engine's sum, is single precision
    assert_same_lists(a, ref, settings=SETTINGS, rel=1e-6)


def written(stores, seed: int, n: int) -> random.Random:
    """``n`` documents (``d0``…) written by the writer from ``random.Random(seed)``, the
    reader then level with the SQL engine; the generator, to go on with."""
    writer, reader, ref, _ = stores
    rng = random.Random(seed)
    for i in range(n):
        writer.put_document(*make(f"d{i}", rng))
    assert_same_as_sql(reader, ref)
    return rng


@pytest.fixture
def stores(pg_dsn, pg_schema, tmp_path):
    cache = tmp_path / "cache"
    writer = PostgresStore(pg_dsn, schema=pg_schema, dim=4, keyword_cache=cache)
    reader = PostgresStore(pg_dsn, schema=pg_schema, keyword_cache=cache)
    ref = PostgresStore(pg_dsn, schema=pg_schema, keyword_engine="sql")
    yield writer, reader, ref, cache
    for s in (writer, reader, ref):
        s.close()


def test_scores_equal_the_sql_engine_through_another_writers_adds_replacements_and_deletes(stores):
    writer, reader, ref, _ = stores
    rng = written(stores, 7, 40)
    for _ in range(4):
        for i in rng.sample(range(60), 8):       # new documents and replacements
            writer.put_document(*make(f"d{i}", rng, chunks=rng.randint(1, 3)))
        for i in rng.sample(range(60), 3):
            writer.delete_document(f"d{i}")
        assert_same_as_sql(reader, ref)          # the reader applies the log the writer wrote
    assert reader._keywords.bm25.n_rows == writer.stats().chunks


def test_a_new_reader_maps_the_cache_and_applies_only_the_log_after_it(stores, pg_dsn, pg_schema):
    writer, _, ref, cache = stores
    rng = written(stores, 3, 30)
    files = list(cache.glob("*.keywords"))
    assert len(files) == 1 and files[0].stem == writer.get_meta("store_id")
    for i in range(5):
        writer.put_document(*make(f"n{i}", rng))
    writer.delete_document("d0")
    with PostgresStore(pg_dsn, schema=pg_schema, keyword_cache=cache) as fresh:
        assert_same_as_sql(fresh, ref)
        assert fresh._keywords.from_cache
        assert len(fresh._keywords.bm25.segments) == 2     # the cached segment and the log's rows


def test_a_damaged_or_foreign_cache_is_rebuilt(stores, pg_dsn, pg_schema):
    _, _, ref, cache = stores
    written(stores, 5, 20)
    path = next(cache.glob("*.keywords"))
    path.write_bytes(path.read_bytes()[:100])          # truncated
    with PostgresStore(pg_dsn, schema=pg_schema, keyword_cache=cache) as damaged:
        assert_same_as_sql(damaged, ref)
        assert not damaged._keywords.from_cache
    # a cache that covers the log but not these rows (as after restoring a backup)
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        (tokens,) = conn.execute(f'SELECT sum(f.n_tokens) FROM "{pg_schema}".chunk_fts f JOIN "{pg_schema}".chunks c'
                                 " ON c.id = f.chunk_id WHERE c.doc_id = 'd1'").fetchone()
        conn.execute(f'DELETE FROM "{pg_schema}".documents WHERE id = %s', ("d1",))   # outside chaja: no log entry
        conn.execute(f'UPDATE "{pg_schema}".fts_stats SET chunks = chunks - 2, tokens = tokens - %s', (tokens,))
    with PostgresStore(pg_dsn, schema=pg_schema, keyword_cache=cache) as restored:
        assert_same_as_sql(restored, ref)
        assert not restored._keywords.from_cache and restored._keywords.bm25.n_rows == 38


def test_an_unwritable_cache_warns_and_searches_from_memory(pg_dsn, pg_schema, tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    store = PostgresStore(pg_dsn, schema=pg_schema, dim=4, keyword_cache=blocker / "cache")
    ref = PostgresStore(pg_dsn, schema=pg_schema, keyword_engine="sql")
    try:
        rng = random.Random(11)
        for i in range(10):
            store.put_document(*make(f"d{i}", rng))
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            assert_same_as_sql(store, ref)
        assert any("keyword cache" in str(w.message) for w in seen)
        store.put_document(*make("d99", rng))
        assert_same_as_sql(store, ref)
    finally:
        store.close()
        ref.close()


def test_without_a_cache_the_postings_live_in_memory(pg_dsn, pg_schema):
    store = PostgresStore(pg_dsn, schema=pg_schema, dim=4, keyword_cache=None)
    ref = PostgresStore(pg_dsn, schema=pg_schema, keyword_engine="sql")
    try:
        rng = random.Random(13)
        for i in range(12):
            store.put_document(*make(f"d{i}", rng))
        assert_same_as_sql(store, ref)
        assert not store._keywords.from_cache
    finally:
        store.close()
        ref.close()


def test_the_small_segments_merge_once_they_are_many(stores, monkeypatch):
    from chaja.stores.postgres import keywords

    monkeypatch.setattr(keywords, "MERGE_MIN_ROWS", 4)
    writer, reader, ref, _ = stores
    rng = written(stores, 17, 10)
    for i in range(10, 16):
        writer.put_document(*make(f"d{i}", rng))
        assert_same_as_sql(reader, ref)
    assert len(reader._keywords.bm25.segments) <= 2


def test_an_unknown_engine_is_refused(pg_dsn, pg_schema):
    from chaja.stores.base import StoreError

    with pytest.raises(StoreError, match="keyword_engine must be one of postings, stored, sql"):
        PostgresStore(pg_dsn, schema=pg_schema, keyword_engine="fts5")


def test_a_url_chooses_the_engine_and_the_cache(pg_dsn, pg_schema, tmp_path):
    from urllib.parse import quote

    from chaja.stores import open_store

    sep = "&" if "?" in pg_dsn else "?"
    plain = open_store(f"{pg_dsn}{sep}schema={pg_schema}&keyword_engine=sql")
    cached = open_store(f"{pg_dsn}{sep}schema={pg_schema}&keyword_cache={quote(str(tmp_path / 'c'))}")
    bare = open_store(f"{pg_dsn}{sep}schema={pg_schema}&keyword_cache=none")
    try:
        assert (plain.schema, plain.keyword_engine) == (pg_schema, "sql")
        assert cached.keyword_engine == "postings" and cached._keywords.cache == tmp_path / "c"
        assert bare._keywords.cache is None
    finally:
        for s in (plain, cached, bare):
            s.close()


def test_refresh_applies_other_writers_before_the_next_search(stores):
    writer, reader, ref, _ = stores
    rng = random.Random(19)
    writer.put_document(*make("d0", rng))
    assert reader.refresh() is True          # the first build
    assert reader.refresh() is False         # nothing new
    writer.put_document(*make("d1", rng))
    assert reader.refresh() is True
    assert reader._keywords.bm25.n_rows == writer.stats().chunks
    assert_same_as_sql(reader, ref)
    assert ref.refresh() is False            # the SQL engine keeps nothing to refresh


def test_writers_at_once_leave_a_log_every_reader_can_follow(stores, pg_dsn, pg_schema):
    """Two store objects writing in parallel threads (as two processes would) while a
    third searches: the log's order is the commit order, so the reader misses nothing."""
    import threading

    writer, reader, ref, cache = stores
    second = PostgresStore(pg_dsn, schema=pg_schema, keyword_cache=cache)
    errors: list[BaseException] = []

    def write(store, prefix, seed):
        rng = random.Random(seed)
        try:
            for i in range(25):
                store.put_document(*make(f"{prefix}{rng.randint(0, 12)}", rng, chunks=rng.randint(1, 3)))
                if i % 5 == 4:
                    store.delete_document(f"{prefix}{rng.randint(0, 12)}")
        except BaseException as exc:       # pragma: no cover - shown by the assert below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(writer, "a", 1)), threading.Thread(target=write, args=(second, "b", 2))]
    try:
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads):
            reader.keyword(["소각"], 5)      # following the log while it grows
        for t in threads:
            t.join()
        assert not errors
        assert_same_as_sql(reader, ref)
        assert reader._keywords.bm25.n_rows == writer.stats().chunks
    finally:
        second.close()



def log_rows(store: PostgresStore) -> int:
    return store.conn.execute(store._q("SELECT count(*) FROM {s}.keyword_log")).fetchone()[0]


def test_compaction_prunes_the_log_and_readers_behind_it_start_afresh(stores, pg_dsn, pg_schema, monkeypatch):
    from chaja.stores.postgres import keywords
    monkeypatch.setattr(keywords, "LOG_KEEP_MIN", 10)
    writer, reader, ref, cache = stores
    rng = written(stores, 11, 12)                 # the reader is at the log's current end
    behind = reader._keywords.seq
    (saved,) = cache.glob("*.keywords")
    stale = saved.read_bytes()                        # the cache as of the reader's entry
    # a long run of replacements (as many chunks as before, other words): the log grows far
    # past the store's chunk count while the chunk count stays
    for _ in range(6):
        for i in range(12):
            writer.put_document(*make(f"d{i}", rng))
    chunks = writer.stats().chunks
    before = log_rows(writer)
    assert before > 2 * max(10, chunks)
    assert writer.compact() is True
    after = log_rows(writer)
    pruned = int(writer.get_meta("keyword_log_pruned"))
    assert after <= max(10, chunks) + 1 and pruned > behind
    assert writer.compact() is False                 # nothing more to prune yet
    # the reader's entry is older than the pruned point: it builds afresh, and agrees
    assert_same_as_sql(reader, ref)
    assert reader._keywords.seq >= pruned
    # so does a new process that finds a cache file from before the pruning
    saved.write_bytes(stale)
    fresh = PostgresStore(pg_dsn, schema=pg_schema, keyword_cache=cache)
    try:
        assert_same_as_sql(fresh, ref)
        assert fresh._keywords.from_cache is False
    finally:
        fresh.close()


def test_index_add_and_delete_keep_the_log_bounded(pg_dsn, pg_schema, tmp_path, monkeypatch, encoder):
    from chaja.index import Index
    from chaja.stores.postgres import keywords
    monkeypatch.setattr(keywords, "LOG_KEEP_MIN", 5)
    docs = tmp_path / "docs"
    docs.mkdir()
    store = PostgresStore(pg_dsn, schema=pg_schema, keyword_cache=tmp_path / "cache")
    idx = Index(store, encoder=encoder)
    try:
        for round_ in range(8):
            for i in range(3):
                (docs / f"n{i}.md").write_text(f"# note {i}\n\n보증 기간 {round_} warranty {i} 배당 {round_ * i}\n",
                                               encoding="utf-8")
            idx.add([docs])
        chunks = store.stats().chunks
        assert log_rows(store) <= 2 * max(5, chunks) + 3
        assert idx.search("보증 기간").documents
        assert idx.delete("n0") and log_rows(store) <= 2 * max(5, chunks) + 3
    finally:
        idx.close()
