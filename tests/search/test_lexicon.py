"""The translation lexicon, with the real multilingual USE v3 encoder."""
import base64
import json
from collections import Counter

import numpy as np
import pytest

from chaja import meta_arrays
from chaja.encoders.aligned import UseM3Encoder
from chaja.search import lexicon
from chaja.search.word_codes import WordRows


class Counting:
    """The real encoder, counting the texts it is asked to encode."""

    def __init__(self, inner):
        self.inner, self.seen = inner, []

    def encode_passages(self, texts):
        self.seen += list(texts)
        return self.inner.encode_passages(texts)


@pytest.fixture(scope="module")
def use():
    return UseM3Encoder()


TEXTS = [
    ("ko", "컴포넌트의 상태를 초기화하려면 키를 바꿉니다."),
    ("ko", "상태가 바뀌면 컴포넌트가 다시 렌더링됩니다. 서버에서 렌더링한 HTML"),
    ("ko", "서버 컴포넌트는 서버에서 실행됩니다."),
    ("en", "Resetting the state of a component: change its key."),
    ("en", "When the state changes, the component renders again. The server renders HTML."),
    ("en", "Server components run only on the server, 2024."),
    ("", "no language: never counted"),
]


def test_words_are_content_words_of_the_languages_script():
    assert lexicon.words_of("상태를 어떻게 초기화하나요? useState 2024", "ko") == ["상태", "초기화"]
    assert lexicon.words_of("How do I reset the state of a component in 2024? 상태 x", "en") == \
        ["reset", "state", "component"]


def test_counting_each_distinct_run_once_gives_the_counts_text_by_text():
    texts = TEXTS + [
        ("ko", "state를 바꿨는데 useEffect가 두 번 실행돼요. state를, return했더니 <script>에 AKI란 v-model이"),
        ("ko", "ＦＵＬＬ폭 글자와 ﬁ 합자, 2024년 3월, 상태들 상태를 상태 상태가 123 가 나 _ 밑줄_단어"),
        ("en", "State, state; STATE — the state's Ünïcode naïve café 42 setState() 상태 mixed한"),
        ("en", ""),
    ]
    want: dict = {}
    for lang, text in texts:
        if lang:
            want.setdefault(lang, Counter()).update(lexicon.words_of(text, lang))
    assert lexicon.count_words(texts) == want
    assert want["ko"]["상태"] >= 4 and want["en"]["state"] >= 4


def test_counts_keep_words_seen_twice_most_frequent_first(use, monkeypatch):
    counts = lexicon.count_words(TEXTS)
    assert set(counts) == {"ko", "en"}
    assert counts["en"]["server"] == 3 and counts["ko"]["서버"] == 3
    small = lexicon.build(TEXTS, use)          # a handful of chunks: every word, seen once or more
    assert "resetting" in small.words["en"] and "초기화" in small.words["ko"]      # each seen once
    assert small.words["en"][0] in {"server", "component"}
    monkeypatch.setattr(lexicon, "SMALL_SAMPLE", len(TEXTS))      # as a store of SMALL_SAMPLE chunks or more
    lex = lexicon.build(TEXTS, use)
    assert lex.languages == ["en", "ko"]
    assert lex.words["en"][:2] == ["server", "component"] or lex.words["en"][:2] == ["component", "server"]
    assert "reset" not in lex.words["en"]              # seen once
    assert all(counts["en"][w] >= lexicon.MIN_COUNT for w in lex.words["en"])
    for lang in lex.languages:
        assert isinstance(lex.vectors[lang], WordRows)       # int8 codes, one scale a row, as a decoded lexicon
        floats = np.asarray(lex.vectors[lang])
        assert floats.shape == (len(lex.words[lang]), 512) and floats.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(floats, axis=1), 1.0, atol=1e-5)   # as kept: unit rows
        step = np.abs(floats).max(axis=1, keepdims=True) / 127
        codes = floats / step
        np.testing.assert_allclose(codes, np.rint(codes), atol=1e-3)
        raw = use.encode_passages(lex.words[lang][:5])
        raw /= np.linalg.norm(raw, axis=1, keepdims=True)
        assert np.all(np.sum(raw * floats[:5], axis=1) > 0.999)    # within rounding of the encoder's


def test_a_korean_word_is_carried_to_its_english_translation(use):
    lex = lexicon.build(TEXTS, use)
    words = ["상태", "서버", "컴포넌트", "초콜릿"]
    found = lex.translate(use.encode_queries(words), "en", 0.7)
    assert found[:3] == ["state", "server", "component"]
    assert found[3] is None                            # nothing close enough: left untranslated
    back = lex.translate(use.encode_queries(["state", "server"]), "ko", 0.7)
    assert back == ["상태", "서버"]
    assert lex.translate(use.encode_queries(["state"]), "ja", 0.7) == [None]
    assert lex.translate(np.zeros((0, 512), np.float32), "en", 0.7) == []


def test_a_rebuild_encodes_only_new_words(use):
    counting = Counting(use)
    first = lexicon.build(TEXTS, counting)
    assert sorted(counting.seen) == sorted(w for ws in first.words.values() for w in ws)
    counting.seen = []
    more = TEXTS + [("en", "The cache keeps data."), ("en", "A cache of the state.")]
    second = lexicon.build(more, counting, previous=first)
    assert counting.seen == ["cache", "data", "keeps"]        # a small sample keeps words seen once
    assert "cache" in second.words["en"]
    for lang, ws in first.words.items():        # a known word keeps its codes and scale exactly
        rows = [second.words[lang].index(w) for w in ws]
        assert np.array_equal(second.vectors[lang].codes[rows], first.vectors[lang].codes)
        assert np.array_equal(second.vectors[lang].scales[rows], first.vectors[lang].scales)
    fresh = lexicon.build(more, use)            # and the same codes as a lexicon built from nothing
    for lang, ws in second.words.items():
        assert fresh.words[lang] == ws and np.array_equal(fresh.vectors[lang].codes, second.vectors[lang].codes)


def test_round_trip_through_the_stores_meta(use):
    lex = lexicon.build(TEXTS, use)
    back = lexicon.decode(lexicon.encode(lex))
    assert back.words == lex.words
    for lang in lex.languages:
        np.testing.assert_allclose(back.vectors[lang], lex.vectors[lang], atol=2e-3)   # float16
    assert lexicon.decode("") is None and lexicon.decode(None) is None
    assert lexicon.decode("{not json") is None
    assert lexicon.decode('{"en": {"words": ["a"], "dim": 4, "vectors": "AAAA"}}') is None   # wrong length


def test_the_packed_form_holds_the_same_lexicon_in_fewer_bytes(use):
    """A store that keeps bytes records the lexicon packed (chaja.meta_arrays): the same words,
    codes, scales and nearest-word tables as the text form, in under 80% of its bytes; a
    damaged packed value decodes to None, as a damaged text does."""
    lex = lexicon.build(TEXTS, use)
    text, packed = lexicon.encode(lex), lexicon.encode(lex, binary=True)
    assert isinstance(packed, bytes) and len(packed) < 0.8 * len(text.encode("utf-8"))
    assert lexicon.is_current(packed)
    a, b = lexicon.decode(text), lexicon.decode(packed)
    assert a.words == b.words and set(a.nearest) == set(b.nearest) == set(lex.nearest)
    for lang in lex.languages:
        np.testing.assert_array_equal(a.vectors[lang].codes, b.vectors[lang].codes)
        np.testing.assert_array_equal(a.vectors[lang].scales, b.vectors[lang].scales)
    for pair in lex.nearest:
        np.testing.assert_array_equal(a.nearest[pair][0], b.nearest[pair][0])
        np.testing.assert_array_equal(a.nearest[pair][1], b.nearest[pair][1])
    assert b.translate_words(["상태"], {"상태": b.vector_of("상태")}, "en", 0.7) == ["state"]
    assert lexicon.decode(packed[: len(packed) // 2]) is None                 # cut short
    meta, arrays = meta_arrays.unpack(packed)
    arrays["ko.en.rows"] = np.full(len(lex.words["ko"]), 99, "<i4")          # rows past the English words
    assert lexicon.decode(meta_arrays.pack(meta, arrays)) is None


def test_a_decode_gives_its_transient_heap_back_once(use, monkeypatch):
    from chaja import heap
    calls = []
    monkeypatch.setattr(heap, "give_back", lambda: calls.append(1) or True)
    text = lexicon.encode(lexicon.build(TEXTS[::-1], use))
    lexicon._DECODED.clear()
    lexicon.decode(text)
    lexicon.decode(text)                                   # kept decoded: nothing passes through the heap
    assert calls == [1]


def test_a_stored_word_needs_no_encoding(use):
    lex = lexicon.build(TEXTS, use)
    v = lex.vector_of("상태", "ko")
    assert v is not None and lex.vector_of("상태", "en") is None and lex.vector_of("초콜릿", "ko") is None
    np.testing.assert_allclose(v, use.encode_queries(["상태"])[0], atol=2e-3)
    assert lex.translate(v[None, :], "en", 0.7) == ["state"]


def test_any_languages_list_answers_a_word_and_translations_stay_bounded(use, monkeypatch):
    lex = lexicon.build(TEXTS, use)
    np.testing.assert_array_equal(lex.vector_of("state"), lex.vector_of("state", "en"))
    assert lex.vector_of("상태") is not None and lex.vector_of("없는말") is None
    monkeypatch.setattr(lexicon, "MAX_TRANSLATIONS", 3)
    lex.remember({("a", "en", 0.7): "x", ("b", "en", 0.7): None})
    lex.remember({("c", "en", 0.7): "y"})
    assert len(lex.translations) == 3
    lex.remember({("d", "en", 0.7): "z"})                  # past the bound: the old ones are forgotten
    assert lex.translations == {("d", "en", 0.7): "z"}


def _random_lexicon(n: int, dim: int = 48, seed: int = 0) -> lexicon.Lexicon:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, dim))
    mat = centres[rng.integers(0, 40, n)] + 0.5 * rng.standard_normal((n, dim))   # crowded neighbourhoods
    mat = (mat / np.linalg.norm(mat, axis=1, keepdims=True)).astype(np.float32)
    mat[7] = mat[3]                                                   # two words, one vector
    return lexicon.Lexicon({"en": [f"w{i}" for i in range(n)]}, {"en": mat})


def test_a_large_lexicon_translates_through_a_bounded_scan_to_the_words_a_full_scan_finds():
    lex = _random_lexicon(lexicon.SCAN_FROM + 1000)
    mat = lex.vectors["en"]
    rng = np.random.default_rng(1)
    queries = mat[rng.integers(0, len(mat), 300)] + 0.2 * rng.standard_normal((300, mat.shape[1])).astype(np.float32)
    queries = np.vstack([queries / np.linalg.norm(queries, axis=1, keepdims=True), mat[[3, 7]],
                         rng.standard_normal((20, mat.shape[1])).astype(np.float32) * 0.3])   # not unit, far
    for threshold in (-1.0, 0.7, 0.9):
        scores = queries @ mat.T
        full = [lex.words["en"][j] if scores[i, j] >= threshold else None
                for i, j in enumerate(scores.argmax(axis=1))]
        assert lex.translate(queries, "en", threshold) == full
    assert "en" in lex._scans                                         # the bounded scan answered
    assert lex.translate(mat[[7]], "en", 0.5) == ["w3"]               # equal vectors: the first word


def test_a_small_lexicon_is_scanned_whole():
    lex = _random_lexicon(lexicon.SCAN_FROM - 1)
    assert lex.translate(lex.vectors["en"][:2], "en", 0.5) == ["w0", "w1"]
    assert lex._scans == {}


def test_a_word_of_the_store_is_looked_up_and_finds_what_a_scan_finds(use, monkeypatch):
    lex = lexicon.build(TEXTS, use)
    assert set(lex.nearest) == {("ko", "en"), ("en", "ko")}
    known = ["상태", "서버", "컴포넌트"]
    vectors = {w: lex.vector_of(w) for w in known}
    scanned = lex.translate(np.stack(list(vectors.values())), "en", 0.7)
    vectors["초콜릿"] = use.encode_queries(["초콜릿"])[0]            # not a word of the store
    asked = []
    real = lexicon.Lexicon.translate
    monkeypatch.setattr(lexicon.Lexicon, "translate",
                        lambda self, v, lang, th: asked.append(len(v)) or real(self, v, lang, th))
    assert lex.translate_words(known + ["초콜릿", "상태"], vectors, "en", 0.7) == scanned + [None, "state"]
    assert asked == [1]                                      # only the unknown word was scanned
    assert lex.translate_words(["state"], {"state": lex.vector_of("state")}, "ko", 0.7) == ["상태"]
    row, cos = lex._nearest_known("상태", "en")
    assert lex.words["en"][row] == "state" and cos > 0.7
    assert lex.translate_words(["상태"], vectors, "en", cos + 1e-3) == [None]   # the threshold applies


def test_the_nearest_words_round_trip_and_a_lexicon_without_them_is_scanned(use):

    lex = lexicon.build(TEXTS, use)
    back = lexicon.decode(lexicon.encode(lex))
    for pair, (rows, cos) in lex.nearest.items():
        np.testing.assert_array_equal(back.nearest[pair][0], rows)
        np.testing.assert_array_equal(back.nearest[pair][1], cos)
    raw = json.loads(lexicon.encode(lex))
    for entry in raw.values():
        del entry["nearest"]                                 # as recorded before the tables existed
    old = lexicon.decode(json.dumps(raw))
    assert old is not None and old.nearest == {}
    assert old.translate_words(["상태"], {"상태": old.vector_of("상태")}, "en", 0.7) == ["state"]
    raw = json.loads(lexicon.encode(lex))
    raw["ko"]["nearest"]["en"]["rows"] = base64.b64encode(np.zeros(1, "<i4").tobytes()).decode()   # one row
    assert lexicon.decode(json.dumps(raw)) is None
    raw = json.loads(lexicon.encode(lex))
    raw["ko"]["nearest"]["en"]["rows"] = base64.b64encode(
        np.full(len(lex.words["ko"]), 99, "<i4").tobytes()).decode()                 # past the words
    assert lexicon.decode(json.dumps(raw)) is None


def test_a_rebuild_updates_the_nearest_words_to_those_of_a_fresh_build(use):
    first = lexicon.build(TEXTS, use)
    more = TEXTS[1:] + [("en", "The cache keeps data."), ("en", "A cache of the state."),
                        ("ko", "캐시에 데이터를 둡니다."), ("ko", "상태의 캐시")]
    updated = lexicon.build(more, use, previous=first)
    fresh = lexicon.build(more, use)
    assert updated.words == fresh.words and updated.words != first.words
    for pair in fresh.nearest:
        np.testing.assert_array_equal(updated.nearest[pair][0], fresh.nearest[pair][0])
        np.testing.assert_allclose(updated.nearest[pair][1], fresh.nearest[pair][1], atol=1e-5)


def test_a_lexicon_recorded_without_the_tables_is_not_current(use):

    text = lexicon.encode(lexicon.build(TEXTS, use))
    assert lexicon.is_current(text) and lexicon.is_current("")
    raw = json.loads(text)
    for entry in raw.values():
        del entry["nearest"]
    assert not lexicon.is_current(json.dumps(raw)) and not lexicon.is_current(None)


def test_a_lexicon_recorded_with_float16_vectors_still_reads(use):
    """A store recorded its lexicon's vectors as float16 before the int8 codes: it decodes
    to the same words and nearest-word tables, and today's value is about half its size."""
    lex = lexicon.build(TEXTS, use)
    raw = json.loads(lexicon.encode(lex))
    for lang, entry in raw.items():
        entry.pop("codes"), entry.pop("scales")
        entry["vectors"] = base64.b64encode(np.asarray(lex.vectors[lang]).astype(np.float16).tobytes()).decode()
    older = json.dumps(raw, ensure_ascii=False)
    got = lexicon.decode(older)
    assert got is not None and got.words == lex.words
    for lang in lex.languages:
        np.testing.assert_allclose(got.vectors[lang], lex.vectors[lang], atol=1e-3)
    assert got.translate_words(["상태"], {"상태": got.vector_of("상태")}, "en", 0.7) == ["state"]
    assert len(lexicon.encode(lex)) < 0.6 * len(older)
    counting = Counting(use)            # rebuilt from it: its words' codes from its float rows, none encoded
    again = lexicon.build(TEXTS, counting, previous=got)
    assert counting.seen == [] and again.words == lex.words
    for lang in lex.languages:
        np.testing.assert_allclose(np.asarray(again.vectors[lang]), np.asarray(lex.vectors[lang]), atol=2e-2)


def test_a_lexicon_built_without_its_tables_gets_the_same_ones_later(use):
    """A bulk load records the lexicon without its nearest-word tables; added from the
    recorded lexicon alone (no encoder), they are the tables a full build gives, and the
    words translate the same either way."""
    full = lexicon.build(TEXTS, use)
    bare = lexicon.build(TEXTS, use, tables=False)
    assert bare.nearest == {} and bare.words == full.words
    kept = lexicon.decode(lexicon.encode(bare))
    completed = lexicon.with_tables(kept)
    assert set(completed.nearest) == set(full.nearest) == {("en", "ko"), ("ko", "en")}
    for pair, (rows, cos) in full.nearest.items():
        np.testing.assert_array_equal(completed.nearest[pair][0], rows)
        np.testing.assert_array_equal(completed.nearest[pair][1], cos)
    words = ["상태", "서버", "컴포넌트"]
    vectors = {w: full.vector_of(w) for w in words}
    assert kept.translate_words(words, vectors, "en", 0.5) == completed.translate_words(words, vectors, "en", 0.5)


def test_every_word_finds_its_own_row_and_no_other():
    """Rows are looked up by sorted string hashes, per language: each word its own row, a
    word of another language's list none."""
    from chaja.search.lexicon import Lexicon
    words = {"en": [f"w{i}" for i in range(500)], "ko": [f"말{i}" for i in range(300)]}
    lex = Lexicon(words, {lang: np.eye(len(ws), 8, dtype=np.float32) for lang, ws in words.items()})
    assert all(lex._row("en", w) == i for i, w in enumerate(words["en"]))
    assert all(lex._row("ko", w) == i for i, w in enumerate(words["ko"]))
    assert lex._row("ko", "w3") is None and lex._row("en", "말3") is None and lex._row("fr", "w3") is None
