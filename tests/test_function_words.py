"""Korean suffix stripping: the longest suffix that leaves enough of the word."""
from __future__ import annotations

import itertools

from chaja.function_words import KO_ENDINGS, KO_PARTICLES, korean_stem, strip_suffix
from chaja.search.query import KO_QUESTION_ENDINGS

SUFFIX_SETS = (KO_ENDINGS, KO_PARTICLES, KO_QUESTION_ENDINGS, ("하", "되"))


def one_by_one(word: str, suffixes: tuple[str, ...]) -> str:
    """The rule read literally: suffixes tried longest first, each compared in turn."""
    for suf in sorted(suffixes, key=len, reverse=True):
        rest = word[: -len(suf)]
        if word.endswith(suf) and word != suf and len(rest) >= (2 if len(suf) == 1 else 1):
            return rest
    return word


def test_strip_suffix_takes_the_longest_suffix_that_leaves_enough():
    assert strip_suffix("서버에서는", KO_PARTICLES) == "서버"        # 에서는, not 는
    assert strip_suffix("차는", KO_PARTICLES) == "차는"               # one syllable would be left
    assert strip_suffix("자동차는", KO_PARTICLES) == "자동차"
    assert strip_suffix("에서", KO_PARTICLES) == "에서"               # a suffix alone stays
    assert strip_suffix("설정하기", KO_ENDINGS) == "설정"
    assert korean_stem("설치하는") == "설치" and korean_stem("추가") == "추가"


def test_strip_suffix_agrees_with_the_rule_read_literally():
    stems = ["", "가", "자동", "설정값", "하"]
    suffixes = sorted({s for group in SUFFIX_SETS for s in group})
    words = {stem + a + b for stem in stems for a, b in itertools.product([""] + suffixes, ["", "는", "요"])}
    checked = 0
    for word in words:
        if not word:
            continue
        for group in SUFFIX_SETS:
            assert strip_suffix(word, group) == one_by_one(word, group), (word, group)
            checked += 1
    assert checked > 1000
