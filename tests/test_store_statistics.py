"""The statistics a store records: the translation lexicon's nearest-word tables, left out
by a bulk load and added later from the recorded lexicon (a real SQLite store, the real
aligned encoder)."""
from __future__ import annotations

import numpy as np
import pytest

from chaja import store_statistics
from chaja.documents import Chunk, ChunkRecord, Document, Section
from chaja.encoders.aligned import UseM3Encoder
from chaja.search import background, lexicon
from chaja.stores.base import sample_digests
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


def put(store, did: str, lang: str, text: str) -> None:
    chunk = Chunk(id=f"{did}#0", doc_id=did, ordinal=0, title=did, heading_path=(), text=text, lang=lang)
    store.put_documents([(Document(id=did, title=did, sections=[Section((), text)], lang=lang),
                          [ChunkRecord(chunk, [did], [], text.split(), np.full(8, 0.1, np.float32))])])


def sample_order(did: str) -> str:
    return sample_digests([f"{did}#0"]).tobytes().hex()


class Counting:
    """lexicon.of_store, counting its calls."""

    def __init__(self):
        self.calls, self.real = 0, lexicon.of_store

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.real(*args, **kwargs)


def test_a_lexicon_counted_over_the_same_sample_is_kept(store, use, monkeypatch):
    """On a store larger than the lexicon's sample, an index run that writes no sampled
    chunk keeps the recorded lexicon: the same sample gives the same lexicon, and counting
    it again is most of the step. A new chunk inside the sample, or a sampled chunk whose
    document changed, is counted again."""
    monkeypatch.setattr(lexicon, "SAMPLE", 3)
    counting = Counting()
    monkeypatch.setattr(lexicon, "of_store", counting)
    store_statistics.record_lexicon(store, use)
    recorded, key = store.get_meta(lexicon.META_KEY), store.get_meta(store_statistics.SAMPLED)
    assert counting.calls == 1 and key
    cut = sorted(sample_order(f"d{i}") for i in range(len(TEXTS)))[2]       # the third sampled chunk's place
    outside = next(f"x{i}" for i in range(100) if sample_order(f"x{i}") > cut)
    inside = next(f"y{i}" for i in range(100) if sample_order(f"y{i}") < cut)
    put(store, outside, "en", "Caching is outside the sample.")
    store_statistics.record_lexicon(store, use)
    assert counting.calls == 1 and store.get_meta(lexicon.META_KEY) == recorded
    assert store.get_meta(store_statistics.SAMPLED) == key
    assert counting.real(store, use).words == lexicon.decode(recorded).words     # what a count would give
    put(store, inside, "en", "Hydration mismatches are inside it.")
    store_statistics.record_lexicon(store, use)
    assert counting.calls == 2 and store.get_meta(store_statistics.SAMPLED) != key
    assert "hydration" in lexicon.decode(store.get_meta(lexicon.META_KEY)).words["en"]
    sampled = min(((sample_order(f"d{i}"), i) for i in range(len(TEXTS))))[1]
    lang, text = TEXTS[sampled]
    put(store, f"d{sampled}", lang, text + " " + ("로딩 상태" if lang == "ko" else "Loading states."))
    store_statistics.record_lexicon(store, use)
    assert counting.calls == 3                                   # a sampled chunk's document changed
    value = store.get_meta(lexicon.META_KEY)
    store.set_meta(lexicon.META_KEY, value[:len(value) // 2])     # damaged: counted again, whatever the key
    store_statistics.record_lexicon(store, use)
    assert counting.calls == 4 and lexicon.decode(store.get_meta(lexicon.META_KEY)).words == lexicon.decode(value).words


def put_vector(store, did: str, lang: str, vector: np.ndarray) -> None:
    chunk = Chunk(id=f"{did}#0", doc_id=did, ordinal=0, title=did, heading_path=(), text=did, lang=lang)
    store.put_documents([(Document(id=did, title=did, sections=[Section((), did)], lang=lang),
                          [ChunkRecord(chunk, [did], [], [did], vector)])])


def test_background_statistics_fit_on_the_same_samples_are_kept(store, monkeypatch):
    """On a store larger than the background's sample, an index run that writes no sampled
    chunk keeps the recorded statistics, which are what a fit gives; a new chunk inside the
    sample, a sampled chunk written again with another vector, or a damaged value is fit again."""
    monkeypatch.setattr(background, "SAMPLE", 3)
    fits = []
    real = background.of_store
    monkeypatch.setattr(background, "of_store", lambda s: fits.append(1) or real(s))
    assert store_statistics.record_background(store) and len(fits) == 1
    assert not store.get_meta(store_statistics.BACKGROUND_SAMPLED)   # nothing was there to keep: no key made
    assert store_statistics.record_background(store, chunks=3) and len(fits) == 2      # no larger than the sample
    assert not store.get_meta(store_statistics.BACKGROUND_SAMPLED)
    assert store_statistics.record_background(store, chunks=len(TEXTS)) and len(fits) == 3   # the key made
    key = store.get_meta(store_statistics.BACKGROUND_SAMPLED)
    assert key
    cut = sorted(sample_order(f"d{i}") for i in range(len(TEXTS)))[2]
    outside = next(f"x{i}" for i in range(100) if sample_order(f"x{i}") > cut)
    inside = next(f"y{i}" for i in range(100) if sample_order(f"y{i}") < cut)
    put_vector(store, outside, "en", np.linspace(-1, 1, 8, dtype=np.float32))
    assert not store_statistics.record_background(store) and len(fits) == 3
    assert store.get_meta(store_statistics.BACKGROUND_SAMPLED) == key
    kept, fresh = background.decode(store.get_meta(background.META_KEY)), real(store)
    assert all(np.array_equal(kept[f]["cov"], fresh[f]["cov"]) and np.array_equal(kept[f]["mean"], fresh[f]["mean"])
               for f in fresh if fresh[f] is not None)
    put_vector(store, inside, "ko", np.linspace(1, -1, 8, dtype=np.float32))
    assert store_statistics.record_background(store) and len(fits) == 4
    key = store.get_meta(store_statistics.BACKGROUND_SAMPLED)
    sampled = min((sample_order(f"d{i}"), i) for i in range(len(TEXTS)))[1]
    put_vector(store, f"d{sampled}", TEXTS[sampled][0], np.full(8, -0.3, np.float32))   # the same id, another vector
    assert store_statistics.record_background(store) and len(fits) == 5
    assert store.get_meta(store_statistics.BACKGROUND_SAMPLED) != key
    value = store.get_meta(background.META_KEY)
    store.set_meta(background.META_KEY, value[:len(value) // 2])      # damaged: fit again, whatever the key
    assert store_statistics.record_background(store) and len(fits) == 6


def test_a_store_that_cannot_fingerprint_its_samples_fits_every_time(tmp_path, monkeypatch):
    class Unsaid(SqliteStore):
        vector_sample_fingerprint = None

    s = Unsaid(tmp_path / "u.chaja")
    try:
        put_vector(s, "a", "en", np.eye(8, dtype=np.float32)[0])
        put_vector(s, "b", "en", np.eye(8, dtype=np.float32)[1])
        assert background.sample_key(s) is None
        assert store_statistics.record_background(s) and store_statistics.record_background(s)
        assert not s.get_meta(store_statistics.BACKGROUND_SAMPLED)
    finally:
        s.close()


def test_a_deferred_lexicon_over_the_same_sample_gets_its_tables_without_a_count(store, use, monkeypatch):
    counting = Counting()
    monkeypatch.setattr(lexicon, "of_store", counting)
    store_statistics.record_lexicon(store, use, tables=False)
    assert store_statistics.tables_deferred(store)
    store_statistics.record_lexicon(store, use)
    assert counting.calls == 1 and not store_statistics.tables_deferred(store)
    assert lexicon.decode(store.get_meta(lexicon.META_KEY)).nearest


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
    put(store, "d9", "en", "A new page about caching components.")     # a new sample: a count again
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
    assert store.get_meta(store_statistics.SAMPLED) == ""        # cleared first: the old sample's key is gone
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
