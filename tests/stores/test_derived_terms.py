"""Terms a built-in analyser made are not written but derived again where they are read
(chaja.stores.derived_terms), on real SQLite files: every keyword list, from the fed
writes, a rebuilt postings file and another process's writes, is the one a store that
keeps every row gives."""
from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from chaja.analysis import bigram_terms, kiwi_terms, whitespace_terms
from chaja.stores import derived_terms, text_packing
from chaja.stores.sqlite import SqliteStore

from keyword_corpus import assert_same_lists, make


def batch(start: int, n: int, terms_from: str | None) -> list:
    out = []
    for i in range(start, start + n):
        doc, records = make(f"d{i:04d}", random.Random(i), chunks=3)
        for r in records:
            r.terms_from = terms_from
        out.append((doc, records))
    return out


def term_rows(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT count(*) FROM chunk_terms").fetchone()[0]


def without_postings_file(pair, n: int) -> Path:
    """The pair's stores given the same ``n`` documents and compacted, the deriving one closed
    and its postings file removed (a cache: rebuilt from the chunks' own text); its path."""
    derived, kept = pair
    for store, made in ((derived, "bigram"), (kept, None)):
        store.put_documents(batch(0, n, made))
        store.compact(force=True, graphs=False)
    derived.close()
    Path(f"{derived.path}-keywords").unlink()
    return derived.path


@pytest.fixture
def pair(tmp_path):
    """A store that derives its terms and one that keeps them, the same documents in each."""
    derived, kept = SqliteStore(tmp_path / "derived.chaja"), SqliteStore(tmp_path / "kept.chaja")
    yield derived, kept
    derived.close()
    kept.close()


def test_the_analysers_that_can_be_derived_are_named_by_identity():
    assert derived_terms.name_of(bigram_terms) == "bigram"
    assert derived_terms.name_of(whitespace_terms) == "whitespace"
    assert derived_terms.name_of(kiwi_terms) is None                 # (its output follows its model)
    assert derived_terms.name_of(lambda text: bigram_terms(text)) is None


def test_derived_terms_write_no_rows_and_search_as_kept_ones(pair):
    derived, kept = pair
    derived.put_documents(batch(0, 40, "bigram"))
    kept.put_documents(batch(0, 40, None))
    assert term_rows(derived.path) == 0 and term_rows(kept.path) == 120
    assert derived.get_meta(derived_terms.META_KEY) == "bigram" and kept.get_meta(derived_terms.META_KEY) is None
    assert_same_lists(derived, kept, rel=1e-12)
    ids = [f"d{i:04d}#{j}" for i in range(40) for j in range(3)]
    assert derived.chunk_terms(ids) == kept.chunk_terms(ids)
    assert derived.check() == []


def test_a_rebuilt_postings_file_derives_every_row(pair):
    path = without_postings_file(pair, 30)
    with SqliteStore(path) as again:
        assert_same_lists(again, pair[1], rel=1e-12)


def test_rows_another_writer_added_are_derived_by_a_reader(pair):
    derived, kept = pair
    derived.put_documents(batch(0, 20, "bigram"))
    kept.put_documents(batch(0, 20, None))
    derived.keyword(["배당"], 5)                           # the reader's index is loaded now
    with SqliteStore(derived.path) as writer:             # another connection writes; the reader reads its rows
        writer.put_documents(batch(20, 20, "bigram"))
        writer.delete_document("d0003")
    kept.put_documents(batch(20, 20, None))
    kept.delete_document("d0003")
    assert_same_lists(derived, kept, rel=1e-12)


def test_terms_made_otherwise_are_kept_in_a_store_that_derives(pair):
    derived, kept = pair
    derived.put_documents(batch(0, 10, "bigram") + batch(10, 10, None) + batch(20, 10, "whitespace"))
    kept.put_documents(batch(0, 30, None))
    assert term_rows(derived.path) == 60                 # the twenty documents not made by the store's analyser
    assert_same_lists(derived, kept, rel=1e-12)


def test_packed_text_is_unpacked_to_derive(pair, monkeypatch):
    monkeypatch.setattr(text_packing, "TRAIN_AT", 300)
    path = without_postings_file(pair, 120)               # 360 chunks: the dictionaries are trained
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE key = ?", (text_packing.META_KEY,)).fetchone()
        assert all(isinstance(t, bytes) for (t,) in db.execute("SELECT text FROM chunks WHERE length(text) > 200"))
    with SqliteStore(path) as again:
        assert_same_lists(again, pair[1], rel=1e-12)


def test_a_write_that_rolls_back_records_no_analyser(tmp_path):
    with SqliteStore(tmp_path / "s.chaja") as store:
        docs = batch(0, 2, "bigram")
        docs[1][1][0].vector = docs[1][1][0].vector * float("nan")      # refused: nothing is written
        with pytest.raises(Exception):
            store.put_documents(docs)
        assert store.get_meta(derived_terms.META_KEY) is None
        store.put_documents(batch(0, 2, None))
        assert store.get_meta(derived_terms.META_KEY) is None and term_rows(store.path) == 6


def test_a_store_whose_analyser_this_chaja_cannot_derive_says_so(tmp_path):
    with SqliteStore(tmp_path / "s.chaja") as store:
        store.put_documents(batch(0, 3, "bigram"))
        store.set_meta(derived_terms.META_KEY, "morphemes-9")
        with pytest.raises(ValueError, match="morphemes-9"):
            store.chunk_terms(["d0000#0"])


def test_kept_rows_the_analyser_makes_again_are_dropped_by_the_next_compaction(pair):
    derived, kept = pair                       # "derived": a store an older chaja wrote, every row kept
    odd = batch(40, 5, None)
    for _, records in odd:                     # terms made otherwise: not what the analyser makes
        for r in records:
            r.body_terms = r.body_terms[1:] + ["extra"]
    for store in pair:
        store.put_documents(batch(0, 40, None) + odd)
    assert not derived.terms_to_drop()         # (no analyser recorded: nothing to compare with)
    derived.set_meta("index.analyzer", "bigram")
    assert derived.terms_to_drop() and term_rows(derived.path) == 135
    derived.compact(force=True, graphs=False)
    assert term_rows(derived.path) == 15       # the odd documents' rows stay
    assert derived.get_meta(derived_terms.META_KEY) == "bigram" and not derived.terms_to_drop()
    assert_same_lists(derived, kept, rel=1e-12)
    derived.put_documents(batch(45, 2, None))  # kept rows written later are looked at by the next one
    kept.put_documents(batch(45, 2, None))
    assert derived.terms_to_drop()
    derived.compact(force=True, graphs=False)
    assert term_rows(derived.path) == 15 and not derived.terms_to_drop()
    path = derived.path
    derived.close()
    Path(f"{path}-keywords").unlink()
    with SqliteStore(path) as again:
        assert_same_lists(again, kept, rel=1e-12)


def test_a_file_schema_8_wrote_opens_as_schema_9_and_keeps_its_rows_until_compared(tmp_path, pair):
    from chaja.stores.sqlite_schema import SCHEMA_VERSION

    _, kept = pair
    path = tmp_path / "old.chaja"
    with SqliteStore(path) as old:
        old.put_documents(batch(0, 20, None))
        old.set_meta("index.analyzer", "bigram")
        old.set_meta("schema_version", "8")               # every row kept, as schema 8 kept them
    kept.put_documents(batch(0, 20, None))
    with SqliteStore(path) as store:
        assert store.get_meta("schema_version") == str(SCHEMA_VERSION) == "9"
        assert term_rows(path) == 60 and store.terms_to_drop()
        assert_same_lists(store, kept, rel=1e-12)
        store.compact(force=True, graphs=False)
        assert term_rows(path) == 0
        assert_same_lists(store, kept, rel=1e-12)


def test_a_comparison_stopped_midway_leaves_rows_kept_or_dropped_and_the_next_one_goes_on(pair, monkeypatch):
    derived, kept = pair
    for store in pair:
        store.put_documents(batch(0, 30, None))
    derived.set_meta("index.analyzer", "bigram")
    monkeypatch.setattr(derived_terms, "BATCH", 40)
    real_terms, calls = derived_terms.terms, []

    def failing_in_the_second_batch(*args):
        calls.append(1)
        if len(calls) > 40:
            raise OSError("disk gone")
        return real_terms(*args)
    monkeypatch.setattr(derived_terms, "terms", failing_in_the_second_batch)
    with pytest.raises(OSError):
        derived.compact(force=True, graphs=False)
    assert term_rows(derived.path) == 50                  # the first 40 rowids dropped, the rest kept
    assert derived.get_meta(derived_terms.CHECKED_KEY) == "40" and derived.terms_to_drop()
    assert_same_lists(derived, kept, rel=1e-12)
    monkeypatch.setattr(derived_terms, "terms", real_terms)
    derived.compact(force=True, graphs=False)
    assert term_rows(derived.path) == 0 and not derived.terms_to_drop()
    assert_same_lists(derived, kept, rel=1e-12)


def test_a_helper_process_derives_its_half_of_a_rebuilt_page(pair, monkeypatch):
    from chaja.stores import postings, postings_helper

    path = without_postings_file(pair, 40)
    monkeypatch.setattr(postings, "HELPER_MIN_ROWS", 50)    # the 120 rows' page is split with a helper
    answered = []
    real_result = postings_helper.Helper.result

    def result(self):
        segment = real_result(self)
        answered.append(segment is not None and segment.n_rows)
        return segment
    monkeypatch.setattr(postings_helper.Helper, "result", result)
    with SqliteStore(path) as again:
        assert_same_lists(again, pair[1], rel=1e-12)
    assert answered == [60]                                  # the helper built (and derived) its half
