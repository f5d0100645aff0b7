"""``SqliteStore.check``: a whole store has no faults, and each kind of damage is named."""
from __future__ import annotations

import sqlite3

import pytest

from chaja.stores.sqlite import SqliteStore


@pytest.fixture
def store(tmp_path, build):
    s = SqliteStore(tmp_path / "c.chaja")
    for i in range(3):
        d, r = build.make_doc(f"d{i}", f"문서 {i}", ["첫째 조각", "둘째 조각"], headings=[("가",), ("나",)])
        for rec in r:
            rec.heading_vector = build.unit(i + 100)
        s.put_document(d, r)
    yield s
    s.close()


def damage(store, sql: str, *args) -> list[str]:
    with sqlite3.connect(store.path) as db:
        db.execute(sql, args)
    return store.check()


def test_a_whole_store_has_no_faults(store):
    assert store.check() == []


@pytest.mark.parametrize("sql, args, needle", [
    ("DELETE FROM chunks WHERE id = ?", ("d1#1",), "document 'd1': records 2 chunks, holds 1"),
    ("DELETE FROM chunk_terms WHERE rowid = (SELECT rowid FROM chunks WHERE id = ?)", ("d0#0",),
     "chunk 'd0#0': no keyword row"),
    ("INSERT INTO chunk_terms (rowid, title, heading, body) VALUES (?, 'x', 'y', 'z')", (999,),
     "keyword row 999: no chunk"),
    ("UPDATE chunks SET vector = ? WHERE id = 'd2#0'", (b"\x00" * 12,), "vector holds 3 numbers"),
    ("UPDATE chunks SET heading_vector = ? WHERE id = 'd2#1'", (b"\x00" * 4,), "heading_vector holds 1 numbers"),
    ("UPDATE documents SET n_chunks = ? WHERE id = 'd0'", (5,), "document 'd0': records 5 chunks"),
    ("UPDATE meta SET value = ? WHERE key = 'schema_version'", ("99",), "schema: version 99"),
])
def test_each_kind_of_damage_is_named(store, sql, args, needle):
    found = damage(store, sql, *args)
    assert any(needle in f for f in found), found


def test_an_orphan_chunk_is_named(store):
    with sqlite3.connect(store.path) as db:
        db.execute("PRAGMA foreign_keys=OFF")
        db.execute("DELETE FROM documents WHERE id = 'd2'")
    assert any("chunk 'd2#0': its document is missing" in f for f in store.check())


@pytest.mark.parametrize("sql, args, act", [
    ("DELETE FROM chunk_terms WHERE rowid = (SELECT rowid FROM chunks WHERE id = ?)", ("d0#0",),
     "wrote the keyword row of chunk 'd0#0'"),
    ("INSERT INTO chunk_terms (rowid, title, heading, body) VALUES (?, 'x', 'y', 'z')", (999,),
     "removed keyword row 999"),
    ("DELETE FROM chunks WHERE id = ?", ("d1#1",), "removed document 'd1'"),
    ("UPDATE chunks SET vector = ? WHERE id = 'd2#0'", (b"\x00" * 12,), "removed document 'd2'"),
])
def test_repair_mends_what_needs_no_encoding(store, sql, args, act):
    from chaja.analysis import bigram_terms
    from chaja.stores.sqlite import SqliteStore

    assert damage(store, sql, *args)
    done = store.repair(bigram_terms)
    assert any(act in line for line in done), done
    assert store.check() == []
    reopened = SqliteStore(store.path)         # the keyword file was rebuilt to match
    try:
        hits = reopened.keyword(bigram_terms("첫째 조각"), 10)
        assert {h.chunk_id.split("#")[0] for h in hits} == set(reopened.fingerprints())
    finally:
        reopened.close()
