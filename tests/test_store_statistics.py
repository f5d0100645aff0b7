"""The statistics a store records: the translation lexicon's nearest-word tables, left out
by a bulk load and added later from the recorded lexicon (a real SQLite store, the real
aligned encoder)."""
from __future__ import annotations

import numpy as np
import pytest

from chaja import store_statistics
from chaja.documents import Chunk, ChunkRecord, Document, Section
from chaja.encoders.aligned import UseM3Encoder
from chaja.search import lexicon
from chaja.stores.sqlite import SqliteStore

TEXTS = [("ko", "컴포넌트의 상태를 초기화하려면 키를 바꿉니다."), ("ko", "서버 컴포넌트는 서버에서 실행됩니다."),
         ("en", "Resetting the state of a component: change its key."), ("en", "Server components run on the server.")]


@pytest.fixture(scope="module")
def use():
    return UseM3Encoder()


@pytest.fixture
def store(tmp_path):
    s = SqliteStore(tmp_path / "s.chaja")
    items = []
    for i, (lang, text) in enumerate(TEXTS):
        did = f"d{i}"
        chunk = Chunk(id=f"{did}#0", doc_id=did, ordinal=0, title=did, heading_path=(), text=text, lang=lang)
        vector = np.eye(8, dtype=np.float32)[i]
        items.append((Document(id=did, title=did, sections=[Section((), text)], lang=lang),
                      [ChunkRecord(chunk, [did], [], text.split(), vector)]))
    s.put_documents(items)
    yield s
    s.close()


def test_a_bulk_loads_lexicon_waits_for_its_tables_and_gets_a_full_builds(store, use):
    store_statistics.record_lexicon(store, use, tables=False)
    recorded = lexicon.decode(store.get_meta(lexicon.META_KEY))
    assert store_statistics.tables_deferred(store) and recorded.nearest == {} and recorded.words["ko"]
    assert store_statistics.complete_lexicon(store)
    assert not store_statistics.tables_deferred(store)
    completed = lexicon.decode(store.get_meta(lexicon.META_KEY))
    full = lexicon.of_store(store, use)
    assert set(completed.nearest) == set(full.nearest) == {("en", "ko"), ("ko", "en")}
    for pair, (rows, cos) in full.nearest.items():
        np.testing.assert_array_equal(completed.nearest[pair][0], rows)
        np.testing.assert_array_equal(completed.nearest[pair][1], cos)
    assert not store_statistics.complete_lexicon(store)          # nothing left to add


def test_a_full_record_clears_the_mark_and_a_store_of_one_language_never_sets_it(store, use):
    store_statistics.record_lexicon(store, use, tables=False)
    store_statistics.record_lexicon(store, use)
    assert not store_statistics.tables_deferred(store)
    assert lexicon.decode(store.get_meta(lexicon.META_KEY)).nearest
    store_statistics.record_lexicon(store, None, tables=False)
    assert store.get_meta(lexicon.META_KEY) == "" and not store_statistics.tables_deferred(store)
    assert not store_statistics.complete_lexicon(store)


def test_a_bulk_load_stopped_between_the_mark_and_the_lexicon_still_gets_its_tables(store, use, monkeypatch):
    """The mark is written first: a run stopped before its lexicon leaves the tables to
    build (the lexicon recorded before stays readable), never a lexicon that lacks them
    unmarked."""
    store_statistics.record_lexicon(store, use)
    before = store.get_meta(lexicon.META_KEY)
    real = store.set_meta

    def stopped(key, value):
        if key == lexicon.META_KEY:
            raise KeyboardInterrupt
        real(key, value)

    monkeypatch.setattr(store, "set_meta", stopped)
    with pytest.raises(KeyboardInterrupt):
        store_statistics.record_lexicon(store, use, tables=False)
    monkeypatch.setattr(store, "set_meta", real)
    assert store_statistics.tables_deferred(store) and store.get_meta(lexicon.META_KEY) == before
    assert store_statistics.complete_lexicon(store) and not store_statistics.tables_deferred(store)
    assert lexicon.decode(store.get_meta(lexicon.META_KEY)).nearest


def test_a_lexicon_and_statistics_recorded_as_text_are_packed_without_the_encoder(store, use):
    """A store written by a version that kept the lexicon and the background statistics as
    base64 JSON moves to the packed form (chaja.meta_arrays) at its next index run, from what
    they hold alone; a store that cannot keep bytes keeps the text, and a damaged text stays
    for the next recount."""
    from chaja.search import background
    built = lexicon.of_store(store, use)
    stats = background.of_store(store)
    store.set_meta(lexicon.META_KEY, lexicon.encode(built))                    # as recorded before
    store.set_meta(background.META_KEY, background.encode(stats))
    store.binary_meta = False                                                # (a store that keeps text)
    assert store_statistics.repack(store) == []
    assert isinstance(store.get_meta(lexicon.META_KEY), str)
    del store.binary_meta
    assert store_statistics.repack(store) == [lexicon.META_KEY, background.META_KEY]
    packed = store.get_meta(lexicon.META_KEY)
    assert isinstance(packed, bytes) and lexicon.is_current(packed)
    back = lexicon.decode(packed)
    assert back.words == built.words and set(back.nearest) == set(built.nearest)
    for pair, (rows, cos) in built.nearest.items():
        np.testing.assert_array_equal(back.nearest[pair][0], rows)
    got = background.decode(store.get_meta(background.META_KEY))
    assert set(got) == {f for f, s in stats.items() if s is not None}
    for f, s in got.items():
        assert s["n"] == stats[f]["n"]
        np.testing.assert_array_equal(s["mean"], stats[f]["mean"])
        np.testing.assert_array_equal(s["cov"], stats[f]["cov"])
    assert store_statistics.repack(store) == []                             # once
    store.set_meta(background.META_KEY, "{not json")
    assert store_statistics.repack(store) == []


def test_bytes_of_another_form_are_recounted_not_misread(store, use):
    """Statistics kept as bytes this version does not read (another version's packing) read
    as none (no translation, the prior alone) and the next index run counts them again."""
    from chaja.search import background
    store_statistics.record(store, lambda: use, drift=1.0)
    foreign = b"chaja-a1" + bytes(64)
    store.set_meta(lexicon.META_KEY, foreign)
    store.set_meta(background.META_KEY, foreign)
    assert lexicon.decode(foreign) is None and background.decode(foreign) == {}
    assert not lexicon.is_current(foreign) and not background.is_current(foreign)
    store_statistics.record(store, lambda: use, drift=1.0, changed=False)     # an index run with nothing new
    assert lexicon.decode(store.get_meta(lexicon.META_KEY)).words["ko"]
    assert set(background.decode(store.get_meta(background.META_KEY))) == {"chunk"}


def test_the_deferred_work_splits_into_vector_fields_and_the_tables():
    assert store_statistics.split_deferred(["chunk", "translation tables", "heading"]) == (["chunk", "heading"], True)
    assert store_statistics.split_deferred(["aligned"]) == (["aligned"], False)
    assert store_statistics.split_deferred([]) == ([], False)
