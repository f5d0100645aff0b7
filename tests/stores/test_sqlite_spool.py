"""New rows' vectors go to a spool beside the store (chaja.stores.sqlite_spool), not into
SQLite: read by every reader before any compaction, the last record of a rowid the live
one, what a failed write appended never read, a missing spool named, and compaction
folding it into the field's vector file."""
from __future__ import annotations

import numpy as np
import pytest

from chaja.documents import Chunk, ChunkRecord, Document, Section
from chaja.stores import sqlite_keywords, sqlite_spool, sqlite_vectors
from chaja.stores.base import StoreError
from chaja.stores.sqlite import SqliteStore

DIM = 16


@pytest.fixture(autouse=True)
def spool_from_the_first_write(monkeypatch):
    # a store spools once it has seen a vector file's minimum of chunks; these are smaller
    monkeypatch.setattr(sqlite_vectors, "FILE_THRESHOLD", 1)


def unit(rng) -> np.ndarray:
    v = rng.standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def doc(i: int, rng) -> tuple[Document, list[ChunkRecord]]:
    c = Chunk(id=f"d{i}#0", doc_id=f"d{i}", ordinal=0, title=f"d{i}", heading_path=("h",), text=f"text {i}",
              lang="en")
    return (Document(id=c.doc_id, title=c.doc_id, sections=[Section(("h",), c.text)], lang="en"),
            [ChunkRecord(c, [c.doc_id], ["h"], ["text", str(i)], unit(rng), unit(rng) if i % 3 else None)])


def blobs(store: SqliteStore) -> list[int]:
    return [n for (n,) in store._db.execute("SELECT length(vector) FROM chunks")]


def test_written_vectors_are_spooled_not_stored_in_rows_and_every_reader_finds_them(tmp_path):
    rng = np.random.default_rng(1)
    items = [doc(i, rng) for i in range(50)]
    with SqliteStore(tmp_path / "s.chaja") as writer, SqliteStore(tmp_path / "s.chaja") as reader:
        writer.put_documents(items[:30])
        reader.vector(items[0][1][0].vector, 1)          # the reader holds its matrices ...
        writer.put_documents(items[30:])                 # ... and sees a later write's spooled rows
        assert set(blobs(writer)) == {0}                 # every row's blob empty: its vector is in the spool
        assert len(sqlite_spool.read(writer.path, "chunk", writer.get_meta("spool.chunk"), DIM)) == 50
        for store in (writer, reader):
            for i in (0, 17, 42):
                assert store.vector(items[i][1][0].vector, 1)[0].chunk_id == f"d{i}#0"
            heading = store._vectors("heading")[1]
            assert sorted(heading) == sorted(f"d{i}#0" for i in range(50) if i % 3)
        assert writer.check() == []


def test_the_stores_size_counts_its_spools(tmp_path):
    rng = np.random.default_rng(7)
    with SqliteStore(tmp_path / "s.chaja") as s:
        s.put_documents([doc(i, rng) for i in range(40)])
        spools = sqlite_spool.files_of(s.path)
        assert spools and all(p.stat().st_size > 0 for p in spools)
        rest = sum(p.stat().st_size for p in tmp_path.iterdir()
                   if p not in spools and not p.name.endswith("-shm"))     # (SQLite's shared-memory index)
        assert s.stats().size_bytes == rest + sum(p.stat().st_size for p in spools)


def test_a_rowid_given_again_reads_its_last_record(tmp_path):
    rng = np.random.default_rng(2)
    with SqliteStore(tmp_path / "s.chaja") as s:
        s.put_documents([doc(i, rng) for i in range(5)])
        last = s._db.execute("SELECT max(rowid) FROM chunks").fetchone()[0]
        s.delete_document("d4")                          # the largest rowid, which SQLite gives again
        again = doc(99, rng)
        s.put_documents([again])
        assert s._db.execute("SELECT rowid FROM chunks WHERE id = 'd99#0'").fetchone()[0] == last
        spool = sqlite_spool.read(s.path, "chunk", s.get_meta("spool.chunk"), DIM)
        assert len(spool) == 6 and len(spool.latest()[0]) == 5
        mat, ids, _ = s._vectors("chunk")
        assert ids[-1] == "d99#0" and np.allclose(mat[len(ids) - 1], again[1][0].vector)
        assert "d4#0" not in ids and s.check() == []


def test_what_a_failed_write_appended_is_never_read_and_the_next_write_cuts_it_off(tmp_path, monkeypatch):
    rng = np.random.default_rng(3)
    with SqliteStore(tmp_path / "s.chaja") as s:
        s.put_documents([doc(i, rng) for i in range(10)])
        size = sqlite_spool.files_of(s.path, "chunk")[0].stat().st_size

        def fail(cur, rowids):                             # after the spool append, before the commit
            raise KeyboardInterrupt

        log_added = sqlite_keywords.log_added
        monkeypatch.setattr(sqlite_keywords, "log_added", fail)
        with pytest.raises(KeyboardInterrupt):
            s.put_documents([doc(i, rng) for i in range(10, 20)])
        monkeypatch.setattr(sqlite_keywords, "log_added", log_added)
        spool_file = sqlite_spool.files_of(s.path, "chunk")[0]
        assert spool_file.stat().st_size > size          # appended, not counted
        assert len(s._vectors("chunk")[1]) == 10 and s.check() == []
        later = [doc(i, rng) for i in range(20, 25)]
        s.put_documents(later)
        assert spool_file.stat().st_size == size + 5 * (8 + 4 * DIM)
        assert sorted(s._vectors("chunk")[1]) == sorted([f"d{i}#0" for i in range(10)] + [f"d{i}#0" for i in range(20, 25)])
        assert s.vector(later[2][1][0].vector, 1)[0].chunk_id == "d22#0"


def test_a_missing_spool_is_named_by_search_and_check_and_repair_removes_its_documents(tmp_path):
    rng = np.random.default_rng(4)
    path = tmp_path / "s.chaja"
    with SqliteStore(path) as s:
        s.put_documents([doc(i, rng) for i in range(12)])
    for spool in sqlite_spool.files_of(path):
        spool.unlink()
    with SqliteStore(path) as s:
        with pytest.raises(StoreError, match=r"spool is missing.*check --repair"):
            s.vector(unit(rng), 1)
        faults = s.check()
        assert any("chunk vectors of 12 chunks" in f and ".spool is missing" in f for f in faults)
        with pytest.raises(StoreError, match=r"spool, which keeps the chunk vectors.*is missing"):
            s.put_documents([doc(50, rng)])                # a write does not append after the lost records
        done = s.repair(lambda text: text.split())
        assert any("removed document 'd0'" in d for d in done)
        assert s.check() == [] and s.stats().chunks == 0
        later = doc(50, rng)
        s.put_documents([later])                           # repaired: writes start a new spool
        assert s.vector(later[1][0].vector, 1)[0].chunk_id == "d50#0"


def test_compaction_folds_the_spool_into_the_vector_file(tmp_path, monkeypatch):
    monkeypatch.setattr(sqlite_vectors, "FILE_THRESHOLD", 20)
    rng = np.random.default_rng(5)
    items = [doc(i, rng) for i in range(40)]
    with SqliteStore(tmp_path / "s.chaja") as s, SqliteStore(tmp_path / "s.chaja") as reader:
        s.put_documents(items)
        reader.vector(items[3][1][0].vector, 1)           # maps the spool before it is folded
        spool = sqlite_spool.files_of(s.path, "chunk")[0]
        assert s.compact(force=True)
        assert s.get_meta("spool.chunk") is None and not spool.exists()
        assert sqlite_vectors.files_of(s.path, "chunk") and set(blobs(s)) == {0}
        for store in (s, reader):
            assert store.vector(items[3][1][0].vector, 1)[0].chunk_id == "d3#0"
        later = doc(40, rng)
        s.put_documents([later])                          # later writes start a new spool
        assert s.get_meta("spool.chunk") and s.vector(later[1][0].vector, 1)[0].chunk_id == "d40#0"
        assert s.check() == []


def test_a_small_store_keeps_its_vectors_in_its_rows_until_it_has_seen_a_files_minimum(tmp_path, monkeypatch):
    monkeypatch.setattr(sqlite_vectors, "FILE_THRESHOLD", 30)
    rng = np.random.default_rng(6)
    items = [doc(i, rng) for i in range(40)]
    with SqliteStore(tmp_path / "s.chaja") as s:
        s.put_documents(items[:20])
        assert set(blobs(s)) == {4 * DIM} and s.get_meta("spool.chunk") is None    # one file
        assert not sqlite_spool.files_of(s.path)
        s.put_documents(items[20:])                                                 # 40 >= 30: spooled
        assert sorted(blobs(s)).count(0) == 20 and s.get_meta("spool.chunk")
        assert sorted(s._vectors("chunk")[1]) == sorted(f"d{i}#0" for i in range(40)) and s.check() == []


WRITER = r"""
import sys
import numpy as np
from chaja.stores import sqlite_vectors
from chaja.stores.sqlite import SqliteStore
sys.path.insert(0, sys.argv[2])
from test_sqlite_spool import doc
sqlite_vectors.FILE_THRESHOLD = 1
start = int(sys.argv[3])
with SqliteStore(sys.argv[1]) as s:
    for batch in range(start, start + 10_000):
        s.put_documents([doc(batch * 10 + i, np.random.default_rng(batch * 10 + i)) for i in range(10)])
        print(batch, flush=True)
"""


def test_a_writer_killed_at_random_points_leaves_every_committed_vector_readable(tmp_path):
    import random
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    path = tmp_path / "k.chaja"
    rnd = random.Random(11)
    committed: list[int] = []
    start = 0
    for _ in range(8):
        child = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(Path(__file__).parent), str(start)],
                                 stdout=subprocess.PIPE, text=True)
        first = child.stdout.readline()                   # at least one batch committed
        time.sleep(rnd.uniform(0.0, 0.3))
        child.send_signal(signal.SIGKILL)
        out, _ = child.communicate()
        done = [int(x) for x in (first + out).split()]
        committed += done
        start = max(done) + 1
        with SqliteStore(path) as s:
            assert s.check() == []
            held = set(s._vectors("chunk")[1])
            assert {f"d{b * 10 + i}#0" for b in committed for i in range(10)} <= held
            for b in rnd.sample(committed, 3):
                want = doc(b * 10 + 3, np.random.default_rng(b * 10 + 3))[1][0].vector
                assert s.vector(want, 1)[0].chunk_id == f"d{b * 10 + 3}#0"


def test_a_bulk_loaded_field_is_read_as_its_spools_pages_not_copied(tmp_path):
    rng = np.random.default_rng(11)
    items = [doc(i, rng) for i in range(60)]
    with SqliteStore(tmp_path / "s.chaja") as writer:
        writer.put_documents(items[:40])
        writer.put_documents(items[40:])
    with SqliteStore(tmp_path / "s.chaja") as store:
        mat, ids, langs = store._vectors("chunk")
        spool = store._spool("chunk")
        assert np.shares_memory(mat, spool.vectors) and not mat.flags.writeable      # no copy
        assert ids == [f"d{i}#0" for i in range(60)] and list(langs) == ["en"] * 60
        assert np.array_equal(mat, np.stack([r[0].vector for _, r in items]))
        heading, heading_ids, _ = store._vectors("heading")             # a field with rows left out
        assert np.shares_memory(heading, store._spool("heading").vectors)
        assert heading_ids == [f"d{i}#0" for i in range(60) if i % 3]
        for i in (0, 33, 59):
            assert store.vector(items[i][1][0].vector, 1)[0].chunk_id == f"d{i}#0"
        store.compact(force=True)                                        # folded into the field's file
        assert store.vector(items[33][1][0].vector, 1)[0].chunk_id == "d33#0"


def test_a_spool_that_holds_a_rowid_twice_is_read_as_before(tmp_path):
    rng = np.random.default_rng(12)
    items = [doc(i, rng) for i in range(20)]
    with SqliteStore(tmp_path / "s.chaja") as writer:
        writer.put_documents(items)
        writer.delete_document("d19")               # the last rowid, given again to the next row
        again = doc(19, np.random.default_rng(99))
        writer.put_documents([again])
    with SqliteStore(tmp_path / "s.chaja") as store:
        spool = store._spool("chunk")
        assert len(spool) == 21 and not spool.in_rowid_order()
        mat, ids, _ = store._vectors("chunk")
        assert not np.shares_memory(mat, spool.vectors)
        assert ids[-1] == "d19#0" and np.allclose(mat[-1], again[1][0].vector)
