import math

import pytest

from chaja.config import SearchConfig
from chaja.search import relevance

CFG = SearchConfig(relevance_scale=0.5, relevance_gap=1.0, relevance_shift=-5.0)


def test_probability_weighs_the_score_and_its_distance_below_the_best():
    assert relevance.probability(10.0, 10.0, CFG) == pytest.approx(0.5)        # σ(0.5·10 − 5)
    assert relevance.probability(10.0, 12.0, CFG) == pytest.approx(1 / (1 + math.exp(2.0)))   # 2 below the best
    assert relevance.probability(-1e6, 0.0, CFG) == 0.0
    assert relevance.mapping(CFG, 12.0)(10.0) == relevance.probability(10.0, 12.0, CFG)
    assert relevance.mapping(SearchConfig(mode="vector"), 1.0) is None          # fit on hybrid scores only
    assert relevance.mapping(SearchConfig(fusion="rrf"), 1.0) is None


def test_the_cut_keeps_the_top_of_the_ranking():
    scores = {"a": 14.0, "b": 13.5, "c": 11.0, "d": 4.0}
    order = ["a", "b", "c", "d"]
    assert relevance.cut(order, scores, CFG) == order                           # min_probability 0: every result
    cfg = SearchConfig(relevance_scale=0.5, relevance_gap=1.0, relevance_shift=-5.0, min_probability=0.5)
    assert relevance.cut(order, scores, cfg) == ["a", "b"]       # p = 0.88, 0.78, 0.08, 0.00
    cfg.min_probability = 0.99
    assert relevance.cut(order, scores, cfg) == []
    assert relevance.cut(["a", "x"], scores, SearchConfig(min_probability=0.01)) == ["a"]   # no score: dropped


def test_chance_evidence_is_the_expected_best_of_n_background_draws():
    w = {"vector": 1.0, "heading": 0.25, "aligned": 0.5, "aligned_heading": 0.5}
    assert relevance.chance_evidence(w, 3896) == pytest.approx(2.25 * math.sqrt(2 * math.log(3896)))
    assert relevance.chance_evidence(w, 14) < relevance.chance_evidence(w, 1_000_000)
    assert relevance.chance_evidence({"vector": 1.0, "heading": 0.0}, 1) == pytest.approx(math.sqrt(2 * math.log(2)))
