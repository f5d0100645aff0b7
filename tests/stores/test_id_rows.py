"""Chunk id → row by sorted hashes (chaja.stores.id_rows): every id found, none invented,
colliding hashes told apart, appended rows found before and after a rebuild."""
import numpy as np

from chaja.stores import id_rows
from chaja.stores.id_rows import IdRows
from chaja.stores.sqlite_vectors import ChunkIds


def mapped(ids: list[str]) -> ChunkIds:
    raw = [i.encode() for i in ids]
    return ChunkIds(np.frombuffer(b"".join(raw), np.uint8), np.cumsum([0] + [len(r) for r in raw]).astype(np.int64))


def test_every_id_has_its_row_and_an_unknown_one_none():
    ids = [f"doc{i}#{j}" for i in range(500) for j in range(3)]
    for held in (ids, mapped(ids)):
        index = IdRows(held)
        assert index.rows(ids[::-1]).tolist() == list(range(len(ids)))[::-1]
        assert index.rows(["doc9#9", "", "doc1#0"]).tolist() == [-1, -1, 3]
        assert "doc2#1" in index and index["doc2#1"] == 7 and index.get("nope", -5) == -5


def test_ids_whose_hashes_collide_are_told_apart(monkeypatch):
    # every id hashes to one of two values: the binary search lands among equal hashes
    monkeypatch.setattr(id_rows, "_hashes", lambda ids, n: np.fromiter((len(i) % 2 for i in ids), np.int64, n))
    monkeypatch.setattr(id_rows, "_hash", lambda i: len(i) % 2)
    ids = ["a", "bb", "ccc", "dddd", "e", "ff"]
    index = IdRows(ids)
    assert index.rows(["e", "ff", "a", "ccc", "g", "hh"]).tolist() == [4, 5, 0, 2, -1, -1]
    assert [index.get(i) for i in ("e", "ff", "a", "ccc", "g", "hh")] == [4, 5, 0, 2, -1, -1]   # one at a time


def test_appended_rows_are_found_beside_the_arrays_and_after_a_rebuild(monkeypatch):
    monkeypatch.setattr(id_rows, "REBUILD_SHARE", 0.5)
    ids = [f"c{i}" for i in range(10)]
    index = IdRows(ids)
    grown = ids + ["c10", "c11"]
    index.extended(grown, 10)
    assert index._extra and index.rows(["c11", "c3", "c10"]).tolist() == [11, 3, 10]
    grown = grown + [f"c{i}" for i in range(12, 24)]
    index.extended(grown, 12)                          # 14 beside 24 rows: built again
    assert not index._extra and index.rows(grown).tolist() == list(range(24))
    index.extended(grown + ["c24"], 24)
    assert index.get("c24") == 24 and index.get("c5") == 5 and index.get("c25") == -1


def test_ids_asked_again_come_from_memory_until_the_rows_change(monkeypatch):
    ids = [f"c{i}" for i in range(100)]
    index = IdRows(list(ids))
    looked: list[int] = []
    real = IdRows._looked_up
    monkeypatch.setattr(IdRows, "_looked_up", lambda self, w: looked.append(len(w)) or real(self, w))
    assert index.rows(["c5", "c200", "c7"]).tolist() == [5, -1, 7]
    assert index.rows(["c7", "c200", "c5", "c9"]).tolist() == [7, -1, 5, 9] and looked == [3, 1]
    index.extended(ids + ["c200"], 100)                      # an id not held before is now
    assert index.rows(["c200", "c5"]).tolist() == [100, 5] and looked == [3, 1, 2]
    monkeypatch.setattr(id_rows, "MEMO", 4)                   # past the memo's size: forgotten at once
    index.rows([f"c{i}" for i in range(10, 16)])
    assert len(index._memo) <= 6 and index.rows(["c10"]).tolist() == [10]
