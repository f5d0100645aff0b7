"""The SQLite store's keyword index (postings file + change log) against FTS5's own
bm25() over the same stored terms (:mod:`fts5_reference`): the same chunks, the same
scores, under writes and deletes, across two store objects (as two processes), and from
a file that is missing, damaged, from another store or behind the log."""
from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from chaja.analysis import bigram_terms
from chaja.stores import bm25_maxscore, postings
from chaja.stores.sqlite import SCHEMA_VERSION, SqliteStore
from fts5_reference import FTS5_LAYOUT, Fts5Reference
from keyword_corpus import QUERIES, assert_same_lists, make


def assert_same_as_fts5(a: SqliteStore, ref: Fts5Reference) -> None:
    assert_same_lists(a, ref, rel=1e-12)


@pytest.fixture
def stores(tmp_path):
    path = tmp_path / "s.chaja"
    writer, reader, ref = SqliteStore(path), SqliteStore(path), Fts5Reference(path)
    yield path, writer, reader, ref
    for s in (writer, reader):
        s.close()


@pytest.mark.parametrize("pruned", [False, True], ids=["every-row", "maxscore"])
def test_scores_equal_fts5_through_adds_replacements_and_deletes(stores, monkeypatch, pruned):
    # maxscore: every query's best rows found by MaxScore pruning (chaja.stores.bm25_maxscore),
    # which a store this small would otherwise not use
    if pruned:
        monkeypatch.setattr(bm25_maxscore, "PRUNE_FROM", 0)
    path, writer, reader, ref = stores
    rng = random.Random(7)
    writer.put_documents([make(f"d{i}", rng) for i in range(40)])
    assert writer.compact(force=True)
    assert path.with_name("s.chaja-keywords").exists()
    assert_same_as_fts5(reader, ref)
    for step in range(6):
        for i in rng.sample(range(60), 8):       # new documents and replacements
            writer.put_document(*make(f"d{i}", rng, chunks=rng.randint(1, 3)))
        for i in rng.sample(range(60), 3):
            writer.delete_document(f"d{i}")
        assert_same_as_fts5(reader, ref)          # the reader sees the log without the file changing
        assert_same_as_fts5(writer, ref)
        if step == 3:
            writer.compact(force=True)   # log pruned under the reader: it reloads the file
            assert_same_as_fts5(reader, ref)


def test_a_new_reader_opens_the_file_and_applies_only_the_log_after_it(stores):
    path, writer, _, ref = stores
    rng = random.Random(3)
    writer.put_documents([make(f"d{i}", rng) for i in range(30)])
    writer.compact(force=True)
    writer.put_document(*make("late", rng))
    with SqliteStore(path) as late:
        bm25 = late._keywords.refresh()
        assert [s.n_rows for s in bm25.segments] == [60, 2]   # the file's rows, then the log's
        assert_same_as_fts5(late, ref)


def test_small_writes_are_not_folded_into_the_file_until_they_are_many(stores):
    path, writer, _, _ = stores
    rng = random.Random(5)
    writer.put_documents([make(f"d{i}", rng) for i in range(20)])
    assert writer.compact()                  # no file yet: written
    writer.put_document(*make("one", rng))
    assert not writer.compact()              # 2 rows of 42: kept in the log
    assert writer.compact(force=True)


@pytest.mark.parametrize("damage", ["missing", "garbage", "truncated", "other store"])
def test_a_file_that_cannot_be_trusted_is_rebuilt_from_the_stored_terms(stores, tmp_path, damage):
    path, writer, _, ref = stores
    rng = random.Random(11)
    writer.put_documents([make(f"d{i}", rng) for i in range(25)])
    writer.compact(force=True)
    side = path.with_name("s.chaja-keywords")
    if damage == "missing":
        side.unlink()
    elif damage == "garbage":
        side.write_bytes(b"not a segment at all")
    elif damage == "truncated":
        side.write_bytes(side.read_bytes()[:-100])
    else:
        other = SqliteStore(tmp_path / "other.chaja")
        other.put_documents([make(f"x{i}", rng) for i in range(5)])
        other.compact(force=True)
        other.close()
        side.write_bytes((tmp_path / "other.chaja-keywords").read_bytes())
    with SqliteStore(path) as fresh:
        assert_same_as_fts5(fresh, ref)


def in_older_layout(stores, seed: int, magic: bytes, plain: str, coded: tuple[str, ...], decoded) -> Path:
    """The writer's store compacted, its keyword file written again with ``magic`` and the
    arrays ``coded`` replaced by one array ``plain`` (``decoded(segment)``); the file's path."""
    from chaja.stores import array_file

    path, writer, _, _ = stores
    rng = random.Random(seed)
    writer.put_documents([make(f"d{i}", rng) for i in range(30)])
    writer.compact(force=True)
    side = path.with_name("s.chaja-keywords")
    arrays, meta = array_file.load(side, postings.MAGIC)
    arrays[plain] = decoded(postings.load(side))
    for name in coded:
        del arrays[name]
    array_file.save(side, magic, arrays, meta)
    return side


def test_a_keyword_file_of_an_older_format_is_written_again_by_the_next_compaction(stores):
    """A file the store cannot map (here: the format before one-byte frequencies) is built from
    the rows in memory, said to be waiting, and written by the next compaction, due or not."""
    path, _, _, ref = stores
    in_older_layout(stores, 9, b"CHJKW\x00\x01\x00", "tf", ("tf_codes", "tf_spill_at", "tf_spill"),
                    lambda seg: np.asarray(seg.tf))
    with SqliteStore(path) as fresh:
        assert fresh.keywords_to_write()
        assert_same_as_fts5(fresh, ref)
        assert fresh.compact()                         # not forced: the file is due
        assert not fresh.keywords_to_write()
        assert_same_as_fts5(fresh, ref)
    with SqliteStore(path) as again:
        assert not again.keywords_to_write() and again._keywords.base_seq is not None


def test_a_keyword_file_with_four_byte_rows_is_searched_and_written_coded_by_the_next_compaction(stores):
    """A file of the layout before the rows were coded still maps and answers as before; the
    store says it is due, and the next compaction (not forced) writes it coded."""
    from chaja.stores.row_codes import CodedRows

    path, _, _, ref = stores
    side = in_older_layout(stores, 11, postings.MAGIC_PLAIN_ROWS, "rows",
                           ("row_low", "row_run_start", "row_run_high"), lambda seg: np.asarray(seg.rows).astype(np.int32))
    with SqliteStore(path) as fresh:
        assert fresh.keywords_to_write()
        assert fresh._keywords.base_seq is not None          # mapped, not built in memory
        assert_same_as_fts5(fresh, ref)
        assert fresh.compact()
        assert not fresh.keywords_to_write()
        assert_same_as_fts5(fresh, ref)
    assert isinstance(postings.load(side).rows, CodedRows)
    with SqliteStore(path) as again:
        assert not again.keywords_to_write()


def test_a_term_of_several_tokens_is_matched_as_its_words(stores):
    _, writer, _, ref = stores
    rng = random.Random(2)
    writer.put_documents([make(f"d{i}", rng) for i in range(10)])
    # "pump.motor" is two tokens (no analyser writes such a term): its words, wherever they stand
    got = writer.keyword(["pump.motor"], 5)
    assert got and got == writer.keyword(["pump", "motor"], 5)
    assert [h.chunk_id for h in got] == [h.chunk_id for h in ref.keyword(["pump", "motor"], 5)]
    assert writer.keyword(["-", " "], 5) == writer.keyword(["\x00"], 5) == []


def test_only_the_postings_engine_is_offered(tmp_path):
    from chaja.stores.base import StoreError

    with pytest.raises(StoreError, match="keyword_engine must be one of postings"):
        SqliteStore(tmp_path / "s.chaja", keyword_engine="fts5")


def test_an_older_store_gains_the_log_and_searches_the_same(tmp_path):
    import sqlite3

    path = tmp_path / "old.chaja"
    rng = random.Random(4)
    with SqliteStore(path) as s:
        s.put_documents([make(f"d{i}", rng) for i in range(12)])
    db = sqlite3.connect(path)
    db.executescript(FTS5_LAYOUT + "DROP TABLE keyword_log; DELETE FROM meta WHERE key IN ('store_id',"
                     " 'keyword_log_pruned'); UPDATE meta SET value = '3' WHERE key = 'schema_version';")
    db.close()
    with SqliteStore(path) as s:
        assert s.get_meta("schema_version") == str(SCHEMA_VERSION) and s.get_meta("store_id")
        assert not s._db.execute("SELECT 1 FROM sqlite_schema WHERE name = 'chunks_fts'").fetchone()
        assert_same_as_fts5(s, Fts5Reference(path))


def test_fts_tokens_split_like_the_ascii_tokenizer():
    assert postings.fts_tokens("Hello, World-2 자기주식 ÉCOLE") == ["hello", "world", "2", "자기주식", "École"]
    assert postings.fts_tokens("  ") == []


def test_a_segment_saves_maps_and_merges(tmp_path):
    rows = [(5, "ko", "소각 결정", "", "소각 소각 주식"), (2, "en", "share", "buyback", "share cancel share"),
            (9, "", "", "", "")]
    seg = postings.build(rows)
    assert list(seg.rowids) == [2, 5, 9] and list(seg.lengths) == [5, 5, 0]
    r, tf = seg.postings("소각")
    assert list(seg.rowids[r]) == [5] and tf.tolist() == [[1, 0, 2]]
    assert seg.term_slot("없음") == -1
    postings.save(seg, tmp_path / "seg", {"seq": 3})
    mapped = postings.load(tmp_path / "seg")
    assert mapped.header["seq"] == 3 and sorted(mapped.terms()) == sorted(seg.terms())
    other = postings.build([(7, "ko", "결정", "", "결정 결정")])
    alive = np.array([True, False, True])
    merged = postings.merge([(mapped, alive), (other, np.ones(1, bool))])
    assert list(merged.rowids) == [2, 7, 9]
    r, tf = merged.postings("결정")
    assert list(merged.rowids[r]) == [7] and tf.tolist() == [[1, 0, 2]]
    with pytest.raises(ValueError):
        (tmp_path / "bad").write_bytes(b"x" * 40)
        postings.load(tmp_path / "bad")


def test_matched_terms_equal_the_chunks_terms_within_the_query(stores):
    _, writer, _, ref = stores
    rng = random.Random(9)
    writer.put_documents([make(f"d{i}", rng) for i in range(20)])
    writer.put_document(*make("d3", rng))           # a replacement, still in the log
    ids = [f"d{i}#{j}" for i in range(22) for j in range(2)]
    for q in QUERIES:
        terms = list(dict.fromkeys(bigram_terms(q)))
        full = writer.chunk_terms(ids)
        assert writer.matched_terms(terms, ids) == {c: t & set(terms) for c, t in full.items()}
        assert {c: t & set(terms) for c, t in ref.chunk_terms(ids).items()} == writer.matched_terms(terms, ids)


def test_a_folder_that_cannot_take_the_file_loses_nothing(stores, monkeypatch):
    _, writer, reader, ref = stores
    rng = random.Random(13)
    writer.put_documents([make(f"d{i}", rng) for i in range(15)])

    def refuse(*args, **kwargs):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(postings, "save", refuse)
    with pytest.warns(RuntimeWarning, match="change log"):
        assert writer.compact(force=True) is False
    assert writer.get_meta("keyword_log_pruned") is None      # the log is kept
    assert_same_as_fts5(reader, ref)
    assert_same_as_fts5(writer, ref)


def test_postings_built_in_batches_equal_fts5(stores, monkeypatch):
    from chaja.stores import sqlite_keywords

    path, writer, _, ref = stores
    rng = random.Random(17)
    writer.put_documents([make(f"d{i}", rng) for i in range(30)])
    writer.delete_document("d4")                                  # a gap in the rowids
    monkeypatch.setattr(sqlite_keywords, "BUILD_BATCH", 7)
    with SqliteStore(path) as fresh:                              # no file yet: built from the stored terms
        assert len(fresh._keywords.refresh().segments[0].rowids) == 58
        assert_same_as_fts5(fresh, ref)


def test_a_row_hit_only_where_the_weight_is_zero_is_kept_with_fts5s_score(stores):
    from chaja.documents import Chunk, ChunkRecord, Document, Section

    path, writer, reader, ref = stores
    items = []
    for i, (heading, body) in enumerate([("모터 교체", "필터 세척 방법"), ("필터", "모터 소음과 모터 교체")]):
        c = Chunk(id=f"h{i}#0", doc_id=f"h{i}", ordinal=0, title="안내", heading_path=(heading,), text=body, lang="ko")
        items.append((Document(id=f"h{i}", title="안내", sections=[Section((heading,), body)], lang="ko"),
                      [ChunkRecord(c, bigram_terms("안내"), bigram_terms(heading), bigram_terms(body),
                                   np.ones(4, np.float32) / 2)]))
    writer.put_documents(items)
    writer.compact(force=True)
    for kw in ({"heading_weight": 0.0}, {"heading_weight": 0.0, "title_weight": 0.0}, {}):
        got, want = reader.keyword(["모터", "교체"], 5, **kw), ref.keyword(["모터", "교체"], 5, **kw)
        assert [h.chunk_id for h in got] == [h.chunk_id for h in want], kw
        assert sorted(h.chunk_id for h in got) == ["h0#0", "h1#0"], kw
        assert [h.score for h in got] == pytest.approx([h.score for h in want], rel=1e-12, abs=1e-12)
    assert reader.keyword(["모터", "교체"], 5, heading_weight=0.0)[1].score == pytest.approx(0.0, abs=1e-12)


def test_many_small_writes_fold_their_segments_and_score_as_fts5(stores, monkeypatch):
    from chaja.stores import sqlite_keywords

    monkeypatch.setattr(sqlite_keywords, "MAX_SEGMENTS", 3)
    path, writer, reader, ref = stores
    rng = random.Random(13)
    writer.put_documents([make(f"d{i}", rng) for i in range(30)])
    assert writer.compact(force=True)
    assert_same_as_fts5(reader, ref)               # the reader's lengths are now remembered
    for step in range(7):                          # one write at a time: a segment each
        writer.put_document(*make(f"n{step}", rng, chunks=3))
        if step % 2:
            writer.delete_document(f"d{step}")
        assert_same_as_fts5(reader, ref)
    assert len(reader._keywords.bm25.segments) <= 3
    assert_same_as_fts5(writer, ref)
