"""Chunk text and body terms packed with the store's own zstd dictionaries
(chaja.stores.text_packing), on real SQLite files."""
from __future__ import annotations

import random
import sqlite3

import pytest

from chaja.analysis import bigram_terms
from chaja.stores import sqlite_spool, text_packing
from chaja.stores.base import StoreError
from chaja.stores.sqlite import SqliteStore

WORDS = ("보증 기간 제품 수리 교환 고객 센터 배송 주문 결제 환불 설정 비밀번호 공유기 초기화 "
         "업데이트 warranty period product repair exchange customer service shipping order payment "
         "refund setup password router reset firmware update manual dishwasher filter cleaning").split()


def text_of(i: int) -> str:
    rng = random.Random(i)
    return f"문서 {i}: " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 90))) + f" 끝 {i}."


@pytest.fixture(autouse=True)
def train_at_1000(monkeypatch):
    """Stores of a thousand chunks get their dictionaries (5,000 by default): fewer rows to write."""
    monkeypatch.setattr(text_packing, "TRAIN_AT", 1_000)


def docs(start: int, n: int, build):
    return [build.make_doc(f"d{i:05d}", f"제목 {i}", [text_of(i)]) for i in range(start, start + n)]


def stored(path, table: str, column: str) -> list:
    with sqlite3.connect(path) as db:
        return [r[0] for r in db.execute(f"SELECT {column} FROM {table} ORDER BY rowid")]


def test_rows_are_packed_once_the_store_reaches_its_training_size_and_read_as_written(tmp_path, build):
    path = tmp_path / "s.chaja"
    with SqliteStore(path) as store:
        store.put_documents(docs(0, 600, build))                       # below TRAIN_AT: plain
        assert store.get_meta(text_packing.META_KEY) is None
        store.put_documents(docs(600, 600, build))                     # reaches it: trained, packed
        assert store.get_meta(text_packing.META_KEY) is not None
        texts, bodies = stored(path, "chunks", "text"), stored(path, "chunk_terms", "body")
        assert all(isinstance(t, str) for t in texts[:600]) and all(isinstance(b, str) for b in bodies[:600])
        assert all(isinstance(t, bytes) for t in texts[600:]) and all(isinstance(b, bytes) for b in bodies[600:])
        assert sum(map(len, texts[600:])) < 0.6 * sum(len(text_of(i).encode()) for i in range(600, 1200))
        ids = [f"d{i:05d}#0" for i in (5, 700, 1199)]
        assert {c: ch.text for c, ch in store.chunks(ids).items()} == {c: text_of(int(c[1:6])) for c in ids}
        expected = set(bigram_terms("제목 1199") + bigram_terms(text_of(1199)))
        assert store.chunk_terms(["d01199#0"])["d01199#0"] == expected
        # the keyword list reads packed and plain rows alike, from its log and from a rebuilt file
        assert "d01199#0" in [h.chunk_id for h in store.keyword(["끝", "1199"], 5)]
        store.compact(force=True, graphs=False)
        assert "d00700#0" in [h.chunk_id for h in store.keyword(["끝", "700"], 5)]
    with SqliteStore(path) as again:                                    # another connection: meta read
        assert again.chunks(["d00700#0"])["d00700#0"].text == text_of(700)


def test_a_large_document_staged_after_the_dictionaries_is_packed_too(tmp_path, build):
    path = tmp_path / "s.chaja"
    with SqliteStore(path) as store:
        store.put_documents(docs(0, 1000, build))
        doc, records = build.make_doc("big", "큰 문서", [text_of(5000 + i) for i in range(30)])
        store.stage_chunks("k1", records)
        store.put_staged(doc, "k1", len(records))
        assert isinstance(stored(path, "chunks", "text")[-1], bytes)
        assert store.chunks(["big#29"])["big#29"].text == text_of(5029)


def test_a_write_whose_training_rolled_back_trains_again(tmp_path, build, monkeypatch):
    """The dictionaries are written with the first packed rows: when that transaction fails,
    neither stays, and the next write trains afresh rather than packing with lost ones."""
    path = tmp_path / "s.chaja"
    with SqliteStore(path) as store:
        store.put_documents(docs(0, 900, build))

        def broken(*args, **kwargs):
            raise OSError("disk gone")
        with monkeypatch.context() as patched, pytest.raises(OSError):
            patched.setattr(sqlite_spool, "append", broken)
            store.put_documents(docs(900, 300, build))
        assert store.get_meta(text_packing.META_KEY) is None
        store.put_documents(docs(900, 300, build))
        assert store.get_meta(text_packing.META_KEY) is not None
    with SqliteStore(path) as again:
        assert again.chunks(["d01100#0"])["d01100#0"].text == text_of(1100)


def test_short_texts_stay_plain_and_a_frame_of_an_unknown_dictionary_is_refused(tmp_path, build):
    path = tmp_path / "s.chaja"
    with SqliteStore(path) as store:
        store.put_documents(docs(0, 1000, build))
        store.put_documents([build.make_doc("short", "짧은", ["짧은 글"])])
        assert stored(path, "chunks", "text")[-1] == "짧은 글"
        with sqlite3.connect(path) as db:
            import zstandard
            other = zstandard.train_dictionary(4096, [text_of(i).encode() for i in range(2000, 3000)])
            frame = zstandard.ZstdCompressor(dict_data=other).compress(text_of(1).encode())
            db.execute("UPDATE chunks SET text = ? WHERE id = 'd00001#0'", (frame,))
        with pytest.raises(StoreError, match="dictionary the store does not hold"):
            store.chunks(["d00001#0"])


def test_a_write_of_a_few_rows_and_one_of_many_pack_alike(tmp_path, build):
    path = tmp_path / "s.chaja"
    with SqliteStore(path) as store:
        store.put_documents(docs(0, 1_000, build))                     # trained
        for i in range(1_000, 1_003):                                   # a few rows: one by one
            store.put_document(*docs(i, 1, build)[0])
        store.put_documents(docs(1_003, text_packing.THREADS_FROM, build))   # many: on zstd's threads
        texts = stored(path, "chunks", "text")[1_000:]
        assert all(isinstance(t, bytes) for t in texts)
        ids = [f"d{i:05d}#0" for i in (1_001, 1_003 + text_packing.THREADS_FROM - 1)]
        assert {c: ch.text for c, ch in store.chunks(ids).items()} == {c: text_of(int(c[1:6])) for c in ids}
