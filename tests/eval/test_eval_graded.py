import math
import random

import pytest
import pytrec_eval

from chaja.eval.graded import (CUTOFFS, question_scores, rank_candidates, score_at, selected_prefix_precision,
                               summarize_graded)
from chaja.eval.questions import ABSTAIN


def _case(rng, n_queries=150):
    """Random pools graded 0-3 and rankings of 60 documents (judged and unjudged)."""
    pools, rankings = {}, {}
    for i in range(n_queries):
        q = f"q{i}"
        n = rng.randint(3, 40)
        grades = [rng.choice([0, 0, 0, 1, 1, 2, 3]) for _ in range(n)]
        pools[q] = {f"{q}-d{j}": g for j, g in enumerate(grades)}
        docs = list(pools[q]) + [f"{q}-u{j}" for j in range(60 - n)]   # unjudged fill
        rng.shuffle(docs)
        rankings[q] = docs
    return pools, rankings


def _run(rankings):
    return {q: {d: 1000.0 - r for r, d in enumerate(docs)} for q, docs in rankings.items()}


def test_graded_metrics_agree_with_pytrec_eval():
    rng = random.Random(3)
    pools, rankings = _case(rng)
    run = _run(rankings)
    cut = ",".join(map(str, CUTOFFS))
    # nDCG with gain 2^g - 1: give pytrec_eval the transformed grades as its (linear) gains
    exp_qrels = {q: {d: 2 ** g - 1 for d, g in p.items()} for q, p in pools.items()}
    ndcg = pytrec_eval.RelevanceEvaluator(exp_qrels, {f"ndcg_cut.{cut}"}).evaluate(run)
    # useful = grade >= 2
    binary = pytrec_eval.RelevanceEvaluator(pools, {f"P.{cut}", f"recall.{cut}", f"success.{cut}"},
                                            relevance_level=2).evaluate(run)
    answerable = 0
    for q in pools:
        useful = sum(g >= 2 for g in pools[q].values())
        answerable += useful > 0
        for k in CUTOFFS:
            s = score_at(rankings[q], pools[q], k)
            assert s.retained == k
            assert s.ndcg == pytest.approx(ndcg[q][f"ndcg_cut_{k}"], abs=1e-9)
            assert s.precision == pytest.approx(binary[q][f"P_{k}"], abs=1e-9)
            assert s.hit == pytest.approx(binary[q][f"success_{k}"], abs=1e-9)
            if useful:
                assert s.recall == pytest.approx(binary[q][f"recall_{k}"], abs=1e-9)
            else:
                assert s.recall is None
    assert 0 < answerable < len(pools)


def test_abstained_positions_are_omitted_without_backfill():
    judg = {"a": ABSTAIN, "b": 3, "c": 0, "d": ABSTAIN, "e": 2, "f": 1}
    ranking = ["a", "b", "c", "d", "e", "f"]
    assert score_at(ranking, judg, 1) is None                  # nothing retained at 1
    s = score_at(ranking, judg, 3)                               # retained: b, c (no backfill from e)
    idcg3 = 7 + 3 / math.log2(3) + 1 / 2                          # pool grades 3, 2, 1
    assert (s.retained, s.hit, s.precision, s.recall) == (2, 1.0, 0.5, 0.5)
    assert s.ndcg == pytest.approx(7 / idcg3)
    s = score_at(ranking, judg, 5)                               # b, c, e reindexed to 1, 2, 3
    assert s.retained == 3 and s.precision == pytest.approx(2 / 3) and s.recall == 1.0
    assert s.ndcg == pytest.approx((7 + 0 + 3 / math.log2(4)) / idcg3)


def test_abstention_matches_pytrec_eval_on_the_retained_list():
    rng = random.Random(8)
    pools, rankings = _case(rng, 80)
    for q, pool in pools.items():          # abstain on about a fifth of each pool
        for d in list(pool):
            if rng.random() < 0.2:
                pool[d] = ABSTAIN
    clean = {q: {d: 2 ** g - 1 for d, g in p.items() if g != ABSTAIN} for q, p in pools.items()}
    ev = pytrec_eval.RelevanceEvaluator(clean, {"ndcg_cut.1,3,5,10,20,50"})
    checked = 0
    for k in CUTOFFS:
        retained = {q: [d for d in r[:k] if pools[q].get(d) != ABSTAIN] for q, r in rankings.items()}
        ref = ev.evaluate(_run({q: r for q, r in retained.items() if r}))
        for q, kept in retained.items():
            s = score_at(rankings[q], pools[q], k)
            if not kept:
                assert s is None
                continue
            assert s.retained == len(kept)
            assert s.ndcg == pytest.approx(ref[q][f"ndcg_cut_{k}"], abs=1e-9)
            useful = sum(1 for d in kept if pools[q].get(d, 0) >= 2)
            assert s.precision == pytest.approx(useful / len(kept))
            checked += len(kept) < k
    assert checked > 0   # some cutoffs really lost positions


def test_ties_keep_candidate_order_and_selected_prefix():
    assert rank_candidates(["a", "b", "c", "d"], [0.5, 0.9, 0.5, 0.9]) == ["b", "d", "a", "c"]
    judg = {"a": 3, "b": 0, "c": ABSTAIN, "d": 2}
    assert selected_prefix_precision(["a", "b", "c", "d"], judg, selected=3) == 0.5   # a, b retained
    assert selected_prefix_precision(["a", "b", "c", "d"], judg) == pytest.approx(2 / 3)
    assert selected_prefix_precision(["c"], judg) is None


def test_views_answerable_and_all():
    pools = [{"a": 3, "b": 0}, {"c": 1, "d": 0}, {"e": 2, "f": 2, "g": ABSTAIN}]
    rankings = [["b", "a"], ["c", "d"], ["g", "x", "e"]]
    per_q = [question_scores(r, p, cutoffs=(1, 3)) for r, p in zip(rankings, pools)]
    s = summarize_graded(per_q, pools, cutoffs=(1, 3))
    assert (s["questions"], s["answerable_questions"]) == (3, 2)
    a, every = s["answerable"], s["all"]
    assert a["n@1"] == 1 and a["n@3"] == 2                    # question 3 has nothing retained at 1
    assert a["Hit@1"] == 0.0 and a["Hit@3"] == 1.0
    assert a["P@3"] == pytest.approx((1 / 2 + 1 / 2) / 2)
    assert a["Recall@3"] == pytest.approx((1 + 1 / 2) / 2)
    assert every["n@3"] == 3 and "Recall@3" not in every
    assert every["Hit@3"] == pytest.approx(2 / 3)
    assert every["nDCG@1"] == pytest.approx((0 + 1) / 2)      # question 2: grade 1 first, ideal 1
    assert s["random"]["questions"] == 2
