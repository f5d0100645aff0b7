import unicodedata

import pytest

from chaja.analysis import bigram_terms, get_analyzer, hangul_bigrams, query_terms, whitespace_terms


def test_bigrams_of_a_hangul_run():
    assert hangul_bigrams("소각결정") == ["소각", "각결", "결정"]
    assert hangul_bigrams("가") == ["가"]


def test_mixed_script_digits_and_particles():
    assert bigram_terms("React 18에서") == ["react", "18", "에서"]
    assert bigram_terms("useState를 쓰세요") == ["usestate", "를", "쓰세", "세요"]
    assert bigram_terms("v2.0.1") == ["v2", "0", "1"]


def test_punctuation_and_underscores_split_words():
    assert bigram_terms("hello, world! (foo_bar)") == ["hello", "world", "foo", "bar"]
    assert bigram_terms("“소각”·결정…") == ["소각", "결정"]


def test_nfd_hangul_matches_nfc():
    nfd = unicodedata.normalize("NFD", "소각결정")
    assert nfd != "소각결정"
    assert bigram_terms(nfd) == bigram_terms("소각결정")


def test_jamo_and_fullwidth():
    # compatibility jamo become one word token, never syllable pairs
    assert len(bigram_terms("ㅋㅋㅋ")) == 1
    assert bigram_terms("ＲＥＡＣＴ") == ["react"]


def test_empty_and_symbols_only():
    assert bigram_terms("") == []
    assert bigram_terms("*** -- () \"\" 🙂") == []


def test_whitespace_analyser_keeps_korean_words_whole():
    assert whitespace_terms("소각결정을 했다") == ["소각결정을", "했다"]


def test_query_terms_are_distinct_in_order():
    assert query_terms(bigram_terms, "결정 소각 결정") == ["결정", "소각"]


def test_unknown_analyser():
    with pytest.raises(ValueError, match="unknown analyser"):
        get_analyzer("nope")


def test_kiwi_analyser_finds_nouns():
    pytest.importorskip("kiwipiepy", reason="the kiwi extra is not installed")
    terms = get_analyzer("kiwi")("자기주식을 소각했습니다")
    assert "소각" in terms


def test_ascii_text_takes_the_short_way_to_the_same_terms():
    """Any ASCII text gives the terms the Unicode path gives it (a Hangul syllable after it
    sends the text that way and adds one term of its own)."""
    import random

    def unicode_path(text: str) -> list[str]:
        terms = bigram_terms(text + " 가")
        assert terms[-1] == "가"
        return terms[:-1]

    every = "".join(map(chr, range(128)))
    assert bigram_terms(every) == unicode_path(every) == ["0123456789"] + ["abcdefghijklmnopqrstuvwxyz"] * 2
    rng = random.Random(7)
    for _ in range(2000):
        text = "".join(rng.choice(every) for _ in range(rng.randint(0, 40)))
        assert bigram_terms(text) == unicode_path(text), repr(text)
    assert bigram_terms("Hello_World-2025 useState()") == ["hello", "world", "2025", "usestate"]
