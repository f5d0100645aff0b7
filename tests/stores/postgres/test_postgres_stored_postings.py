"""The PostgreSQL store's ``stored`` keyword engine (chaja.stores.postgres.stored_postings,
stored_search): the same chunks and scores as the postings a reader keeps, through another
writer's adds, replacements and deletes, folded or not yet folded, with parts merged and
built again; a reader that keeps nothing between searches."""
from __future__ import annotations

import random

import pytest

from chaja.filters import Filters

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'chaja[postgres]'")

from chaja.stores.base import StoreError  # noqa: E402
from chaja.stores.postgres import PostgresStore, stored_postings  # noqa: E402
from keyword_corpus import SETTINGS as BASE_SETTINGS, assert_same_lists, make  # noqa: E402

SETTINGS = [*BASE_SETTINGS, {"where": Filters(source=("filing",))}, {"where": Filters(lang="ko", date_from="2025-01-01")}]


@pytest.fixture
def stores(pg_dsn, pg_schema):
    writer = PostgresStore(pg_dsn, schema=pg_schema, dim=4, keyword_cache=None)
    stored = PostgresStore(pg_dsn, schema=pg_schema, keyword_engine="stored")
    ref = PostgresStore(pg_dsn, schema=pg_schema, keyword_cache=None)     # the postings a reader keeps
    yield writer, stored, ref
    for s in (writer, stored, ref):
        s.close()


def same(stored: PostgresStore, ref: PostgresStore) -> None:
    assert_same_lists(stored, ref, settings=SETTINGS, rel=1e-12)


def parts(store: PostgresStore) -> list[tuple[int, int]]:
    return store.conn.execute(store._q("SELECT part, rows FROM {s}.keyword_parts ORDER BY part")).fetchall()


def test_the_first_search_writes_the_postings_and_every_later_one_reads_them(stores):
    writer, stored, ref = stores
    rng = random.Random(1)
    for i in range(30):
        writer.put_document(*make(f"d{i}", rng))
    assert stored_postings.covered(writer) is None        # nothing kept until a stored reader asks
    same(stored, ref)
    assert stored_postings.covered(writer) is not None and len(parts(writer)) == 1
    assert stored._keywords.bm25 is None                  # the reader built no postings of its own


def test_writes_not_yet_folded_are_read_by_the_reader_and_folded_by_compaction(stores, monkeypatch):
    writer, stored, ref = stores
    monkeypatch.setattr(stored_postings, "REBUILD_SHARE", 10.0)     # keep the fold's own part
    monkeypatch.setattr(stored_postings, "REMOVED_SHARE", 10.0)
    rng = random.Random(2)
    for i in range(20):
        writer.put_document(*make(f"d{i}", rng))
    same(stored, ref)
    for i in rng.sample(range(30), 8):                     # new documents and replacements
        writer.put_document(*make(f"d{i}", rng, chunks=rng.randint(1, 3)))
    for i in rng.sample(range(30), 3):
        writer.delete_document(f"d{i}")
    before = stored_postings.covered(writer)
    same(stored, ref)                                      # the log after the parts, applied by the reader
    assert writer.compact()
    assert stored_postings.covered(writer) > before and len(parts(writer)) == 2
    assert stored_postings.removed(writer).size > 0
    same(stored, ref)


def test_parts_merge_past_the_limit_and_are_built_again_as_the_others_grow(stores, monkeypatch):
    writer, stored, ref = stores
    rng = random.Random(3)
    for i in range(40):
        writer.put_document(*make(f"d{i}", rng))
    same(stored, ref)
    monkeypatch.setattr(stored_postings, "MAX_PARTS", 2)
    monkeypatch.setattr(stored_postings, "REMOVED_SHARE", 0.9)
    base = parts(writer)[0][0]
    for step in range(6):
        writer.put_document(*make(f"n{step}", rng))
        if step % 2:
            writer.delete_document(f"d{step}")          # a row of the base part: marked removed
        writer.compact()
        now = parts(writer)
        assert len(now) <= 2 and now[0][0] == base         # the small parts merged, the base kept
        same(stored, ref)
    assert now[1][0] > base + 6                            # a part made by merging, not by a fold
    assert stored_postings.removed(writer).size == 6      # d1, d3 and d5's rows, still in the base
    for i in range(40, 70):                                # the others reach half the largest
        writer.put_document(*make(f"d{i}", rng))
    writer.compact()
    assert len(parts(writer)) == 1
    assert stored_postings.removed(writer).size == 0
    same(stored, ref)


def test_pruning_keeps_the_log_entries_the_stored_postings_need(stores, monkeypatch):
    from chaja.stores.postgres import keywords
    writer, stored, ref = stores
    monkeypatch.setattr(keywords, "LOG_KEEP_MIN", 5)
    rng = random.Random(4)
    for i in range(10):
        writer.put_document(*make(f"d{i}", rng))
    same(stored, ref)
    covered = stored_postings.covered(writer)
    for i in range(30):                                   # replacements: a long log over few chunks
        writer.put_document(*make(f"d{i % 10}", rng))
    writer._keywords.prune(stored_postings.covered(writer))      # what compaction passes
    assert 0 < int(writer.get_meta(keywords.PRUNED_KEY)) <= covered
    same(stored, ref)
    writer.compact()                                      # folds first, then prunes
    assert int(writer.get_meta(keywords.PRUNED_KEY)) > covered
    same(stored, ref)


def test_a_store_without_chunks_and_a_replica_without_postings(pg_dsn, pg_schema):
    with PostgresStore(pg_dsn, schema=pg_schema, dim=4, keyword_engine="stored") as empty:
        assert empty.keyword(["보증"], 5) == []
        empty.replica = True                               # as a streaming replica would be
        empty.conn.execute(empty._q("DELETE FROM {s}.meta WHERE key = %s"), (stored_postings.META_KEY,))
        with pytest.raises(StoreError, match="open the store once on the primary"):
            empty.keyword(["보증"], 5)


def test_index_add_folds_each_write_into_the_stored_postings(pg_dsn, pg_schema, tmp_path, encoder):
    import chaja
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# 보증\n\n보증 기간은 2년입니다.\n", encoding="utf-8")
    sep = "&" if "?" in pg_dsn else "?"
    with chaja.open(f"{pg_dsn}{sep}schema={pg_schema}&keyword_engine=stored", encoder=encoder) as idx:
        idx.add([docs])
        assert idx.search("보증 기간").doc_ids()[:1] == ["a"]
        (docs / "b.md").write_text("# warranty\n\nThe warranty period is two years.\n", encoding="utf-8")
        idx.add([docs])
        store = idx.store
        high = store.conn.execute(store._q("SELECT max(seq) FROM {s}.keyword_log")).fetchone()[0]
        assert stored_postings.covered(store) == high          # Index.add's compaction folded the write
        assert idx.search("warranty period").doc_ids()[:1] == ["b"]
        assert idx.summary()["keyword"] == {"engine": "stored", "stored": {
            "covered": high, "not_folded": 0, "parts": 1, "rows": 2, "removed": 0}}   # two parts, built again as one


@pytest.mark.parametrize("batches", [(1,), (1, 1), ()], ids=["one-batch", "two-batches", "every-row"])
def test_a_filter_asked_of_the_best_rows_in_batches_keeps_what_reading_every_row_keeps(stores, monkeypatch, batches):
    from chaja.stores.postgres import stored_search
    writer, stored, ref = stores
    rng = random.Random(6)
    for i in range(40):
        writer.put_document(*make(f"d{i}", rng))
    monkeypatch.setattr(stored_search, "FILTER_BATCHES", batches)     # small batches: the later ones, the fallback
    same(stored, ref)
