"""Postings built beside the writes (chaja.stores.postings_feed): a bulk load's keyword
index is the one built from the stored rows, scored as FTS5 scores, whatever happened to
the rows between the write and the refresh."""
from __future__ import annotations

import random
import sys

import pytest

from chaja.stores import postings_feed, postings_helper, sqlite_keywords
from chaja.stores.sqlite import SqliteStore
from fts5_reference import Fts5Reference
from keyword_corpus import assert_same_lists, make


@pytest.fixture
def stores(tmp_path, monkeypatch):
    monkeypatch.setattr(postings_feed, "PAGE_ROWS", 7)      # pages of a few rows: many handed over
    path = tmp_path / "s.chaja"
    writer, other, ref = SqliteStore(path), SqliteStore(path), Fts5Reference(path)
    yield path, writer, other, ref
    for s in (writer, other):
        s.close()


@pytest.fixture
def taken(monkeypatch):
    """The parts each take() gave back, and the helpers started."""
    got: dict[str, list] = {"parts": [], "helpers": []}
    take, start = postings_feed.PostingsFeed.take, postings_helper.start

    def recorded_take(self, *args, **kwargs):
        parts = take(self, *args, **kwargs)
        got["parts"].append(parts)
        return parts

    def recorded_start():
        helper = start()
        got["helpers"].append(helper)
        return helper
    monkeypatch.setattr(postings_feed.PostingsFeed, "take", recorded_take)
    monkeypatch.setattr(postings_helper, "start", recorded_start)
    return got


def bulk(store, rng: random.Random, n: int, prefix: str = "d", batch: int = 4) -> None:
    for at in range(0, n, batch):
        store.put_documents([make(f"{prefix}{i}", rng) for i in range(at, min(n, at + batch))])


def test_a_bulk_load_is_searched_from_the_postings_built_beside_its_writes(stores, taken, monkeypatch):
    path, writer, _, ref = stores
    bulk(writer, random.Random(1), 30)                       # 60 rows, 8 pages
    assert taken["helpers"] and taken["helpers"][0] is not None      # two cores or more here
    monkeypatch.setattr(sqlite_keywords, "build_all", lambda *a, **k: pytest.fail("rows read back"))
    assert_same_lists(writer, ref, rel=1e-12)
    parts = taken["parts"][0]
    assert sum(seg.n_rows for seg, _ in parts) == 60 and all(alive.all() for _, alive in parts)
    assert taken["helpers"][0].proc is None                  # the feed taken: its helper ended
    assert len(writer._keywords.feed) == 0
    assert writer.compact(force=True)
    with SqliteStore(path) as fresh:                          # the file written from them
        assert_same_lists(fresh, ref, rel=1e-12)


def test_rows_replaced_deleted_or_written_by_another_store_are_read_from_the_store(stores, taken):
    path, writer, other, ref = stores
    rng = random.Random(2)
    bulk(writer, rng, 20)
    writer.put_document(*make("d3", rng, chunks=3))          # replaced: its first rows dead
    writer.delete_document("d7")
    other.put_document(*make("theirs", rng))                  # a write the feed never saw
    other.delete_document("d11")
    bulk(writer, rng, 6, prefix="late")
    assert_same_lists(writer, ref, rel=1e-12)
    parts = taken["parts"][0]
    dead = sum(int((~alive).sum()) for _, alive in parts)
    assert dead == 6                         # d3's first two rows, d7's and d11's: read from the store
    assert sum(seg.n_rows for seg, _ in parts) == 40 + 3 + 12


def test_rowids_given_back_after_the_last_rows_were_deleted_start_a_page_of_their_own(stores, taken):
    _, writer, _, ref = stores
    rng = random.Random(3)
    bulk(writer, rng, 5)
    writer.delete_document("d4")                  # the last two rows: their rowids come back
    writer.put_document(*make("again", rng))
    assert_same_lists(writer, ref, rel=1e-12)
    parts = taken["parts"][0]
    rowids = [r for seg, alive in parts for r in seg.rowids[alive].tolist()]
    assert len(rowids) == len(set(rowids)) == 10   # each live rowid once, as fed last


def test_a_feed_whose_log_another_store_pruned_is_not_used(stores, taken):
    _, writer, other, ref = stores
    bulk(writer, random.Random(4), 12)
    assert other.compact(force=True)              # the log the feed's rows were added by is gone
    assert_same_lists(writer, ref, rel=1e-12)
    assert taken["parts"] == [[]]


def test_rows_written_again_by_the_aligned_fill_are_read_afresh(stores, taken):
    import numpy as np
    _, writer, _, ref = stores
    bulk(writer, random.Random(5), 6)
    assert writer.put_aligned_vectors([("d2#0", np.ones(3, np.float32) / 3 ** 0.5, None)]) == 1
    assert_same_lists(writer, ref, rel=1e-12)
    assert sum(int((~alive).sum()) for _, alive in taken["parts"][0]) == 1


def test_without_a_helper_the_rows_are_built_here(stores, taken, monkeypatch):
    _, writer, _, ref = stores
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")
    bulk(writer, random.Random(6), 10)
    assert taken["helpers"] == [None]
    assert_same_lists(writer, ref, rel=1e-12)
    assert sum(seg.n_rows for seg, _ in taken["parts"][0]) == 20


def test_a_write_rolled_back_feeds_nothing(stores, monkeypatch):
    _, writer, _, ref = stores
    bulk(writer, random.Random(7), 2)
    fed = len(writer._keywords.feed)

    def refuse(*args, **kwargs):
        raise OSError("disk full")
    monkeypatch.setattr(sqlite_keywords, "log_added", refuse)
    with pytest.raises(Exception):
        writer.put_documents([make("lost", random.Random(8))])
    assert len(writer._keywords.feed) == fed
    monkeypatch.undo()
    assert_same_lists(writer, ref, rel=1e-12)


def test_closing_the_store_ends_its_helper(tmp_path, taken, monkeypatch):
    monkeypatch.setattr(postings_feed, "PAGE_ROWS", 3)
    store = SqliteStore(tmp_path / "s.chaja")
    bulk(store, random.Random(9), 6)
    helper = taken["helpers"][0]
    assert helper is not None and helper.proc is not None
    proc = helper.proc
    store.close()
    assert helper.proc is None and proc.poll() is not None
