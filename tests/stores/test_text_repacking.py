"""Rows written before a store had its text dictionaries, packed by the next compaction
(chaja.stores.text_repacking), on real SQLite files."""
from __future__ import annotations

import sqlite3

import pytest

from chaja.cli import main
from chaja.stores import text_packing, text_repacking
from chaja.stores.sqlite import SqliteStore

from test_text_packing import docs, stored, text_of


@pytest.fixture(autouse=True)
def train_at_1000(monkeypatch):
    """Stores of a thousand chunks get their dictionaries (5,000 by default): fewer rows to write."""
    monkeypatch.setattr(text_packing, "TRAIN_AT", 1_000)
    monkeypatch.setattr(text_repacking, "TRAIN_AT", 1_000)


def plain_store(path, build, monkeypatch, n: int = 1_200) -> None:
    """A store of ``n`` chunks with every row plain, as a chaja before packing wrote it."""
    with monkeypatch.context() as older:
        older.setattr(text_packing, "TRAIN_AT", 10**9)
        with SqliteStore(path) as store:
            store.put_documents(docs(0, n, build))
            store.compact(force=True, graphs=False)
            assert store.get_meta(text_packing.META_KEY) is None


def lists(store: SqliteStore) -> list:
    return [[(h.chunk_id, h.score) for h in store.keyword(["끝", str(i), "보증"], 10)] for i in (3, 650, 1199)]


def test_rows_written_before_the_dictionaries_are_packed_by_the_next_compaction(tmp_path, build):
    path = tmp_path / "s.chaja"
    with SqliteStore(path) as store:
        store.put_documents(docs(0, 600, build))                       # below TRAIN_AT: plain
        assert not store.text_to_pack()
        store.put_documents(docs(600, 600, build))                     # trained: these packed
        assert store.get_meta(text_packing.PLAIN_KEY) == "600" and store.text_to_pack()
        before = lists(store)
        store.compact(force=True, graphs=False)
        assert store.get_meta(text_packing.PLAIN_KEY) == "0" and not store.text_to_pack()
        assert all(isinstance(t, bytes) for t in stored(path, "chunks", "text"))
        assert all(isinstance(b, bytes) for b in stored(path, "chunk_terms", "body"))
        assert lists(store) == before
        ids = [f"d{i:05d}#0" for i in (0, 599, 1199)]
        assert {c: ch.text for c, ch in store.chunks(ids).items()} == {c: text_of(int(c[1:6])) for c in ids}


def test_a_store_an_older_chaja_wrote_gets_dictionaries_and_packed_rows(tmp_path, build, monkeypatch):
    path = tmp_path / "old.chaja"
    plain_store(path, build, monkeypatch)
    plain_bytes = sum(len(t.encode()) for t in stored(path, "chunks", "text"))
    with SqliteStore(path) as store:
        assert store.text_to_pack()
        before, terms = lists(store), store.chunk_terms(["d00650#0"])
        store.compact(graphs=False)                 # not due for the files: the text is packed anyway
        assert store.get_meta(text_packing.META_KEY) is not None and not store.text_to_pack()
        assert lists(store) == before and store.chunk_terms(["d00650#0"]) == terms
        assert store.chunks(["d00650#0"])["d00650#0"].text == text_of(650)
    packed = stored(path, "chunks", "text")
    assert all(isinstance(t, bytes) for t in packed)
    assert sum(map(len, packed)) < 0.6 * plain_bytes


def test_a_repacking_that_fails_midway_leaves_every_row_readable_and_the_next_one_finishes(
        tmp_path, build, monkeypatch):
    path = tmp_path / "old.chaja"
    plain_store(path, build, monkeypatch)
    monkeypatch.setattr(text_repacking, "BATCH", 300)
    calls = {"n": 0}
    real = text_packing.TextPacking.pack_many

    def failing(self, values, field="text"):
        calls["n"] += 1
        if calls["n"] == 5:                      # the third window's text, after two committed
            raise OSError("disk gone")
        return real(self, values, field)
    with SqliteStore(path) as store:
        with monkeypatch.context() as patched, pytest.raises(OSError):
            patched.setattr(text_packing.TextPacking, "pack_many", failing)
            store.compact(force=True, graphs=False)
    texts = stored(path, "chunks", "text")
    assert all(isinstance(t, bytes) for t in texts[:600]) and all(isinstance(t, str) for t in texts[600:])
    with SqliteStore(path) as store:
        assert store.text_to_pack()
        assert store.chunks(["d00100#0", "d00900#0"])["d00900#0"].text == text_of(900)
        store.compact(graphs=False)
        assert not store.text_to_pack()
        assert store.chunks(["d00100#0"])["d00100#0"].text == text_of(100)
    assert all(isinstance(t, bytes) for t in stored(path, "chunks", "text"))


def test_a_store_too_small_for_dictionaries_has_nothing_to_pack(tmp_path, build):
    path = tmp_path / "s.chaja"
    with SqliteStore(path) as store:
        store.put_documents(docs(0, 300, build))
        store.compact(force=True, graphs=False)
        assert not store.text_to_pack() and store.get_meta(text_packing.META_KEY) is None
    assert all(isinstance(t, str) for t in stored(path, "chunks", "text"))


def test_optimize_packs_an_older_stores_text_and_says_so(tmp_path, build, monkeypatch, capsys):
    path = tmp_path / "old.chaja"
    plain_store(path, build, monkeypatch)
    main(["check", "--store", str(path)])      # (a fault too: the store records no statistics)
    assert "note: text: chunks written before the store's text dictionaries" in capsys.readouterr().out
    plain_bytes, size = sum(len(t.encode()) for t in stored(path, "chunks", "text")), path.stat().st_size
    assert main(["optimize", "--store", str(path), "--quiet"]) == 0
    assert "chunk text packed with the store's own dictionaries:" in capsys.readouterr().out
    saved = plain_bytes - sum(map(len, stored(path, "chunks", "text")))
    assert size - path.stat().st_size >= 0.8 * saved > 0          # the file rewritten: the pages given back
    main(["check", "--store", str(path)])
    assert "note: text:" not in capsys.readouterr().out
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE key = ?", (text_packing.PLAIN_KEY,)).fetchone() == ("0",)
    assert main(["optimize", "--store", str(path), "--quiet"]) == 0
    assert "chunk text packed" not in capsys.readouterr().out
