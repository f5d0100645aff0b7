import math

import numpy as np
import pytest

from chaja.documents import Hit
from chaja.search.calibrated import (calibrated, held_share, keyword_evidence, keyword_values, language_share, logistic,
                                     neutral_for_other_languages, other_language_tail, tail_yielded, vector_evidence)

NAN = float("nan")


def neutral(kv, vector, lang, qlang, depth, best_share=0.0):
    """neutral_for_other_languages on mappings, candidates in id order (as the searcher passes them)."""
    ids = sorted(vector)
    out = neutral_for_other_languages(np.array([kv.get(c, 0.0) for c in ids]), np.array([vector[c] for c in ids]),
                                      np.array([lang.get(c) == qlang for c in ids]), depth, best_share)
    return {c: v for c, v in zip(ids, out.tolist()) if c in kv or v}


def test_a_missing_field_borrows_the_partner_field_so_missing_is_neutral():
    z = {"chunk": np.array([2.0, 3.0]), "heading": np.array([4.0, NAN])}          # candidates a, b
    v = vector_evidence(z, {"chunk": 1.0, "heading": 0.5}, 2)
    assert v.tolist() == [2.0 + 0.5 * 4.0, 3.0 + 0.5 * 3.0]     # b has no heading: its own text counts
    assert vector_evidence(z, {"aligned": 1.0}, 2).tolist() == [0.0, 0.0]   # a field the store lacks adds nothing
    assert vector_evidence({}, {"chunk": 1.0}, 3).tolist() == [0.0, 0.0, 0.0]   # no field has a background
    alone = {"aligned_heading": np.array([1.0, NAN])}           # no partner field: a missing value adds nothing
    assert vector_evidence(alone, {"aligned_heading": 2.0}, 2).tolist() == [2.0, 0.0]


def test_keyword_values_weigh_bm25_by_the_share_of_terms_held():
    hits = [Hit("a", 10.0), Hit("b", 5.0), Hit("c", 0.0)]
    assert keyword_values(hits, {"a": 1.0, "b": 0.5}) == {"a": 1.0, "b": 0.25 * 0.5, "c": 0.0}
    assert keyword_values([], {}) == {}
    title = [Hit("b", 2.0)]          # a chunk takes its best value over the keyword-like lists
    assert keyword_evidence(["a", "b", "x"], [hits, title], {"a": 1.0, "b": 0.5}).tolist() == [1.0, 0.25, 0.0]


def test_the_share_of_terms_held_counts_to_the_configured_power():
    """K(c) = share^p · s / max s: at p = 1.5 a chunk holding a quarter of the terms keeps
    1/8 of its BM25 share (1/16 at the square), and the best hit holding every term stays 1."""
    hits = [Hit("a", 8.0), Hit("b", 8.0), Hit("c", 4.0)]
    shares = {"a": 1.0, "b": 0.25, "c": 0.25}
    assert keyword_values(hits, shares, 1.5) == {"a": 1.0, "b": 0.125, "c": 0.0625}
    assert keyword_values(hits, shares, 2.0) == {"a": 1.0, "b": 0.0625, "c": 0.03125}
    assert keyword_values(hits, shares, 0.0) == {"a": 1.0, "b": 1.0, "c": 0.5}     # BM25 alone
    assert keyword_evidence(["c", "b"], [hits], shares, 1.5).tolist() == [0.0625, 0.125]


def test_language_share_falls_as_another_language_overtakes():
    own = np.array([True, False])                         # ko1, en1 for a Korean query
    lead = language_share(np.array([9.0, 3.0]), own, d0=-1.0, tau=0.25)
    behind = language_share(np.array([3.0, 9.0]), own, d0=-1.0, tau=0.25)
    assert lead == pytest.approx(1.0, abs=1e-6) and behind == pytest.approx(0.0, abs=1e-6)
    assert language_share(np.array([5.0]), np.array([True]), -1.0, 0.25) == 1.0   # one language: the keyword list counts fully
    assert language_share(np.array([5.0]), np.array([False]), -1.0, 0.25) == 0.0
    assert language_share(np.zeros(0), np.zeros(0, dtype=bool), -1.0, 0.25) == 1.0
    assert logistic(-800) == 0.0 and logistic(800) == 1.0 and logistic(0) == 0.5


def test_calibrated_score_is_vector_evidence_plus_shared_keyword_evidence():
    z = {"chunk": {"a": 3.0, "b": 2.5, "c": 1.0}}
    keyword = [Hit("b", 8.0), Hit("c", 4.0)]
    shares = {"b": 1.0, "c": 1.0}
    order, g = calibrated(z, keyword, shares, weights={"chunk": 1.0}, keyword_weight=2.0,
                          lang_of={"a": "ko", "b": "ko", "c": "ko"}, qlang="ko", d0=-1.0, tau=0.25,
                          best_rank={"a": 1, "b": 1, "c": 2})
    assert g == 1.0
    assert order == [("b", 4.5), ("a", 3.0), ("c", 2.0)]


def test_ties_keep_the_best_single_rank_then_the_id():
    order, _ = calibrated({"chunk": {"x": 1.0, "y": 1.0, "z": 1.0}}, [], {}, weights={"chunk": 1.0},
                          keyword_weight=1.0, lang_of={}, qlang="en", d0=0.0, tau=1.0,
                          best_rank={"x": 2, "y": 1, "z": 2})
    assert [c for c, _ in order] == ["y", "x", "z"]
    assert all(math.isfinite(s) for _, s in order)


def test_other_language_chunks_get_the_neutral_keyword_value():
    vector = {"ko1": 9.0, "ko2": 8.0, "ko3": 1.0, "en1": 8.5, "en2": 2.0, "en3": 1.2}
    lang = {"ko1": "ko", "ko2": "ko", "ko3": "ko", "en1": "en", "en2": "en", "en3": "en"}
    kv = {"ko1": 1.0, "ko2": 0.0, "ko3": 0.5, "en2": 0.9}
    out = neutral(kv, vector, lang, "ko", depth=2)
    assert out["en1"] == 0.5                      # the mean of the two Korean chunks nearest in V (1.0 and 0.0)
    assert out["en2"] == 0.9                      # a real keyword match is kept when higher
    # a chunk with little vector evidence takes the keyword value of its Korean peers (ko3 0.5, ko2 0.0),
    # not that of the best Korean chunks
    assert out["en3"] == 0.25
    assert {c: out[c] for c in ("ko1", "ko2", "ko3")} == {"ko1": 1.0, "ko2": 0.0, "ko3": 0.5}
    assert neutral(kv, vector, lang, "ko", depth=0) == kv
    one = {"ko1": 9.0, "ko2": 8.0}
    assert neutral({"ko1": 1.0}, one, lang, "ko", depth=5) == {"ko1": 1.0}   # one language


def test_the_neutral_value_can_lean_on_the_best_keyword_match():
    vector = {"ko1": 9.0, "ko2": 8.0, "ko3": 1.0, "en1": 8.5, "en2": 2.0}
    lang = {"ko1": "ko", "ko2": "ko", "ko3": "ko", "en1": "en", "en2": "en"}
    kv = {"ko1": 0.2, "ko2": 0.0, "ko3": 1.0}          # the best match is the weakest by vector evidence
    half = neutral(kv, vector, lang, "ko", depth=2, best_share=0.5)
    assert half["en1"] == pytest.approx(0.5 * 0.1 + 0.5 * 1.0)     # its peers ko1, ko2: mean 0.1
    assert half["en2"] == pytest.approx(0.5 * 0.5 + 0.5 * 1.0)     # its peers ko3, ko2: mean 0.5
    full = neutral(kv, vector, lang, "ko", depth=2, best_share=1.0)
    # with a = 1 the keyword list lifts no chunk of the query's language above one of another
    assert min(full[c] for c in ("en1", "en2")) >= max(full[c] for c in ("ko1", "ko2", "ko3"))
    assert neutral(kv, vector, lang, "ko", depth=2, best_share=0.0)["en1"] == pytest.approx(0.1)


def test_fused_order_follows_the_neutral_share():
    """A Korean query: the English chunk has better vector evidence than the Korean chunk that
    holds every term, and comes close to the best Korean chunk (g(q) ≈ 0.12). With the
    neutral value at the mean of the best Korean chunks the keyword list lifts the Korean
    chunk above it; leaning on the best match by 1 − g(q) leaves the vector evidence to
    decide between the two."""
    z = {"chunk": {"ko-match": 2.2, "ko-near": 3.0, "en-answer": 2.5}}
    keyword = [Hit("ko-match", 10.0)]
    lang = {"ko-match": "ko", "ko-near": "ko", "en-answer": "en"}
    common = dict(weights={"chunk": 1.0}, keyword_weight=8.0, lang_of=lang, qlang="ko", d0=-1.0, tau=0.25,
                  best_rank={"ko-match": 1, "ko-near": 2, "en-answer": 1}, neutral_depth=5)

    def order(share):
        fused, _ = calibrated(z, keyword, {"ko-match": 1.0}, neutral_best_share=share, **common)
        return [c for c, _ in fused]

    assert order(0.0).index("ko-match") < order(0.0).index("en-answer")
    assert order(1.0).index("en-answer") < order(1.0).index("ko-match")


def test_the_neutral_value_stays_at_the_mean_where_the_query_language_clearly_leads():
    """g(q) = 1 (the best Korean chunk leads by far): the neutral value is the mean of the best
    Korean chunks whatever the share, so other-language filler is not lifted past Korean
    chunks by a keyword match it does not have."""
    z = {"chunk": {"ko-match": 6.0, "ko-2": 3.0, "ko-3": 2.9, "en-filler": 2.8}}
    keyword = [Hit("ko-match", 10.0)]
    lang = {"ko-match": "ko", "ko-2": "ko", "ko-3": "ko", "en-filler": "en"}
    common = dict(weights={"chunk": 1.0}, keyword_weight=8.0, lang_of=lang, qlang="ko", d0=-1.0, tau=0.25,
                  best_rank={"ko-match": 1, "ko-2": 2, "ko-3": 3, "en-filler": 4}, neutral_depth=5)
    for share in (0.0, 1.0):
        fused, g = calibrated(z, keyword, {"ko-match": 1.0}, neutral_best_share=share, **common)
        assert g > 0.999
        scores = dict(fused)
        assert scores["en-filler"] == pytest.approx(2.8 + 8.0 * g * (1.0 / 3), abs=1e-2)   # mean of the three


def test_a_translated_keyword_match_counts_for_the_other_language_only():
    """K_T is added with w_T · (1 − g·K*) to chunks outside the query's language: a Korean
    question's words found in translation lift the English page that holds them, never a
    Korean chunk, and no more than the weight allows."""
    z = {"chunk": {"ko-near": 3.0, "en-answer": 2.9, "en-other": 2.8}}
    lang = {"ko-near": "ko", "en-answer": "en", "en-other": "en"}
    common = dict(weights={"chunk": 1.0}, keyword_weight=8.0, lang_of=lang, qlang="ko", d0=-1.0, tau=0.25,
                  best_rank={"ko-near": 1, "en-answer": 2, "en-other": 3}, neutral_depth=5)
    plain, _ = calibrated(z, [], {}, **common)
    assert [c for c, _ in plain] == ["ko-near", "en-answer", "en-other"]
    translated = {"en-answer": 0.5, "ko-near": 1.0}           # a Korean chunk's value is never used
    fused, g = calibrated(z, [], {}, translated=translated, translated_weight=4.0, **common)
    scores = dict(fused)
    assert [c for c, _ in fused] == ["en-answer", "ko-near", "en-other"]
    assert scores["en-answer"] == pytest.approx(2.9 + 4.0 * 0.5)     # no own-language keyword match: K* = 0
    assert scores["ko-near"] == pytest.approx(3.0) and scores["en-other"] == pytest.approx(2.8)
    off, _ = calibrated(z, [], {}, translated=translated, translated_weight=0.0, **common)
    assert off == plain


def test_a_translated_match_fades_where_the_query_language_holds_an_exact_match():
    """g(q) ≈ 1 and the best Korean chunk holds every query term (K* = 1): the translated
    list adds nothing, so it cannot overrule an exact match in the query's language."""
    z = {"chunk": {"ko-match": 6.0, "en-1": 2.0}}
    lang = {"ko-match": "ko", "en-1": "en"}
    common = dict(weights={"chunk": 1.0}, keyword_weight=8.0, lang_of=lang, qlang="ko", d0=-1.0, tau=0.25,
                  best_rank={"ko-match": 1, "en-1": 2}, neutral_depth=0)
    fused, g = calibrated(z, [Hit("ko-match", 5.0)], {"ko-match": 1.0}, translated={"en-1": 1.0},
                          translated_weight=4.0, **common)
    assert g > 0.999
    assert dict(fused)["en-1"] == pytest.approx(2.0 + 4.0 * (1.0 - g), abs=1e-6)
    half, _ = calibrated(z, [Hit("ko-match", 5.0)], {"ko-match": 0.5 ** 0.5}, translated={"en-1": 1.0},
                         translated_weight=4.0, **common)
    assert dict(half)["en-1"] == pytest.approx(2.0 + 4.0 * (1.0 - g * 0.5), abs=1e-3)   # K* = share² = 0.5


def test_without_any_vector_evidence_the_keyword_evidence_decides():
    """A store whose vector fields have no background (or a search with none asked) still
    fuses: every candidate's V is 0 and K orders them."""
    order, g = calibrated({}, [Hit("a", 2.0), Hit("b", 1.0)], {"a": 1.0, "b": 1.0}, weights={"chunk": 1.0},
                          keyword_weight=1.0, lang_of={"a": "en", "b": "en", "c": "en"}, qlang="en", d0=0.0,
                          tau=1.0, best_rank={"a": 1, "b": 2, "c": 1})
    assert g == 1.0 and order == [("a", 1.0), ("b", 0.5), ("c", 0.0)]


def test_a_keyword_hit_holding_the_query_in_its_language_holds_the_share_up():
    assert held_share(0.02, 1.0, hold=1.0, floor=0.5) == 1.0        # every term held: the share stays whole
    assert held_share(0.02, 0.75, hold=1.0, floor=0.5) == pytest.approx(0.5)   # halfway from the gate's share
    assert held_share(0.02, 0.5, hold=1.0, floor=0.5) == 0.02       # the gate's share or less adds nothing
    assert held_share(0.9, 1.0, hold=0.5, floor=0.5) == 0.9         # never lowers g(q)
    assert held_share(0.02, 1.0, hold=0.0, floor=0.5) == 0.02       # off
    assert held_share(0.02, 1.0, hold=1.0, floor=1.0) == 1.0        # a gate that asks for every term


def test_a_held_share_keeps_a_full_keyword_match_above_another_languages_page():
    # a Korean question: the English page leads on vectors by a margin that takes g(q) to 0;
    # the Korean page is the keyword list's best hit and holds every term
    z = {"chunk": {"ko1": 2.0, "en1": 3.0, "ko2": 1.0}}
    keyword = [Hit("ko1", 8.0), Hit("ko2", 2.0)]
    shares = {"ko1": 1.0, "ko2": 0.5}
    common = dict(weights={"chunk": 1.0}, keyword_weight=4.0, lang_of={"ko1": "ko", "ko2": "ko", "en1": "en"},
                  qlang="ko", d0=-1.0, tau=0.25, best_rank={"ko1": 1, "en1": 1, "ko2": 2})
    order, g = calibrated(z, keyword, shares, **common)
    assert g < 0.01 and order[0][0] == "en1"
    order, g = calibrated(z, keyword, shares, own_coverage=1.0, hold=1.0, **common)
    assert g == 1.0 and order[0][0] == "ko1"


def test_the_keyword_floor_keeps_reordering_the_query_language_when_another_leads():
    """An English page leads on vector evidence (g(q) ≈ 0). Without a floor the keyword list
    falls silent and the Korean pages keep their vector order; with f = 0.5 the Korean page
    that holds every term passes its Korean neighbour, m(q) = f + (1 − f)·g(q), while the
    English page, which takes the best Korean keyword value as its neutral value, stays first."""
    z = {"chunk": {"en-lead": 6.0, "ko-near": 3.0, "ko-match": 2.6}}
    keyword = [Hit("ko-match", 10.0), Hit("ko-near", 2.0)]
    shares = {"ko-match": 1.0, "ko-near": 0.5}
    lang = {"en-lead": "en", "ko-near": "ko", "ko-match": "ko"}
    common = dict(weights={"chunk": 1.0}, keyword_weight=8.0, lang_of=lang, qlang="ko", d0=-1.0, tau=0.25,
                  best_rank={"en-lead": 1, "ko-match": 1, "ko-near": 2}, neutral_depth=5)
    silent, g = calibrated(z, keyword, shares, **common)
    assert g < 1e-3
    assert [c for c, _ in silent] == ["en-lead", "ko-near", "ko-match"]
    held, _ = calibrated(z, keyword, shares, keyword_floor=0.5, **common)
    assert [c for c, _ in held] == ["en-lead", "ko-match", "ko-near"]
    m = 0.5 + 0.5 * g
    assert dict(held)["ko-match"] == pytest.approx(2.6 + 8.0 * m * 1.0)
    assert dict(held)["en-lead"] == pytest.approx(6.0 + 8.0 * m * 1.0, rel=1e-3)   # its neutral value: the best K


def test_the_keyword_floor_changes_nothing_on_a_store_of_one_language():
    """g(q) = 1 where every candidate is in the query's language, so m(q) = 1 whatever f:
    KorQuAD, SciFact and any one-language store rank as before."""
    z = {"chunk": {"a": 3.0, "b": 2.5, "c": 1.0}}
    keyword = [Hit("c", 8.0), Hit("b", 4.0)]
    common = dict(weights={"chunk": 1.0}, keyword_weight=8.0, lang_of={"a": "ko", "b": "ko", "c": "ko"},
                  qlang="ko", d0=-1.0, tau=0.25, best_rank={"a": 1, "b": 2, "c": 1})
    runs = [calibrated(z, keyword, {"b": 0.5, "c": 1.0}, keyword_floor=f, **common) for f in (0.0, 0.5, 1.0)]
    assert runs[0] == runs[1] == runs[2]


def test_the_other_languages_tail_lies_past_their_best_documents():
    """Past the two best documents of the other languages (ranked by their best chunk), every
    chunk of theirs is the tail; a kept document's weaker chunks are not, nor is any chunk of
    the query's language."""
    scores = np.array([9.0, 8.0, 7.5, 7.0, 6.0, 5.0, 4.0])
    own = np.array([True, False, False, True, False, False, False])
    docs = np.array(["ko1", "en1", "en1", "ko2", "en2", "en3", "en1"], dtype=object)
    tail = other_language_tail(scores, own, docs, keep=2)
    assert tail.tolist() == [False, False, False, False, False, True, False]
    assert other_language_tail(scores, own, docs, keep=1).tolist() == [False, False, False, False, True, True, False]
    assert not other_language_tail(scores, np.ones(7, dtype=bool), docs, keep=0).any()   # one language: no tail


def test_the_tail_yields_as_much_as_the_query_language_is_where_the_answer_is():
    """score'(c) = score(c) − y · g(q) for the tail: nothing where g(q) = 0 (another language
    leads), the whole y where the query's language clearly leads; the other language's best
    documents and the query's language keep their scores."""
    own = np.array([True, False, False, False])
    docs = np.array(["ko1", "en1", "en2", "en3"], dtype=object)

    def scored(g, y):
        return tail_yielded(np.array([5.0, 4.0, 3.0, 2.0]), own, docs, g, keep=2, weight=y)

    assert scored(1.0, 2.0).tolist() == [5.0, 4.0, 3.0, 0.0]
    assert scored(0.5, 2.0).tolist() == [5.0, 4.0, 3.0, 1.0]
    assert scored(0.0, 2.0).tolist() == scored(1.0, 0.0).tolist() == [5.0, 4.0, 3.0, 2.0]
