import math
import random

import pytest
import pytrec_eval

from chaja.eval.single import all_gold_scores, documents_from_chunks, gold_rank, mean_scores, single_scores


def test_formulas_by_hand():
    assert single_scores(1) == {"nDCG@10": 1.0, "R@1": 1.0, "R@3": 1.0, "R@5": 1.0, "MRR": 1.0}
    s = single_scores(3)
    assert s["nDCG@10"] == pytest.approx(0.5)            # 1/log2(4)
    assert (s["R@1"], s["R@3"], s["R@5"], s["MRR"]) == (0.0, 1.0, 1.0, pytest.approx(1 / 3))
    s = single_scores(4)
    assert s["nDCG@10"] == pytest.approx(1 / math.log2(5)) and (s["R@3"], s["R@5"]) == (0.0, 1.0)
    assert single_scores(11)["nDCG@10"] == 0.0 and single_scores(11)["MRR"] == pytest.approx(1 / 11)
    assert single_scores(None) == {"nDCG@10": 0.0, "R@1": 0.0, "R@3": 0.0, "R@5": 0.0, "MRR": 0.0}
    means = mean_scores([single_scores(1), single_scores(None), single_scores(2)])
    assert means["R@1"] == pytest.approx(1 / 3)
    assert means["nDCG@10"] == pytest.approx((1 + 0 + 1 / math.log2(3)) / 3)
    assert means["MRR"] == pytest.approx(0.5)


def test_best_ranked_gold_and_chunk_grouping():
    assert gold_rank(["a", "b", "c", "d"], ["d", "b"]) == 2
    assert gold_rank(["a", "b"], ["z"]) is None
    chunks = ["a", "b", "a", "c", "b", "d", "d", "e", "f", "g", "h", "i"]
    # ten chunks → documents in order of first appearance; "h" and "i" come from chunks 11 and 12
    assert documents_from_chunks(chunks) == ["a", "b", "c", "d", "e", "f", "g"]
    assert documents_from_chunks(chunks, depth=3) == ["a", "b"]


def _random_case(rng, n_queries=300, n_docs=25):
    qrels, run, ranked = {}, {}, {}
    for i in range(n_queries):
        q = f"q{i}"
        docs = [f"d{j}" for j in range(n_docs)]
        rng.shuffle(docs)
        ranked[q] = docs[:10]
        run[q] = {d: 100.0 - r for r, d in enumerate(ranked[q])}   # strictly decreasing
        gold = rng.sample([f"d{j}" for j in range(n_docs)], rng.choice([1, 1, 1, 2, 3]))
        qrels[q] = {g: 1 for g in gold}
    return qrels, run, ranked


def test_single_gold_agrees_with_pytrec_eval():
    rng = random.Random(11)
    qrels, run, ranked = _random_case(rng)
    single = {q: g for q, g in qrels.items() if len(g) == 1}
    ev = pytrec_eval.RelevanceEvaluator(single, {"recip_rank", "ndcg_cut.10", "success.1,3,5"})
    ref = ev.evaluate({q: run[q] for q in single})
    hits = 0
    for q in single:
        ours = single_scores(gold_rank(ranked[q], single[q]))
        assert ours["MRR"] == pytest.approx(ref[q]["recip_rank"], abs=1e-9)
        assert ours["nDCG@10"] == pytest.approx(ref[q]["ndcg_cut_10"], abs=1e-9)
        for k in (1, 3, 5):
            assert ours[f"R@{k}"] == pytest.approx(ref[q][f"success_{k}"], abs=1e-9)
        hits += ours["R@5"] > 0
    assert 0 < hits < len(single)   # the case mixes hits and misses


def test_several_gold_documents_use_the_best_ranked_one():
    rng = random.Random(5)
    qrels, run, ranked = _random_case(rng)
    multi = {q: g for q, g in qrels.items() if len(g) > 1}
    assert len(multi) > 30
    ev = pytrec_eval.RelevanceEvaluator(multi, {"recip_rank", "success.1,3,5", "ndcg_cut.10", "recall.10"})
    ref = ev.evaluate({q: run[q] for q in multi})
    for q, gold in multi.items():
        r = gold_rank(ranked[q], gold)
        ours = single_scores(r)
        # MRR and R@k already look at the first relevant document
        assert ours["MRR"] == pytest.approx(ref[q]["recip_rank"], abs=1e-9)
        for k in (1, 3, 5):
            assert ours[f"R@{k}"] == pytest.approx(ref[q][f"success_{k}"], abs=1e-9)
        # nDCG@10 is the discount of the best gold rank, not the multi-relevant nDCG ...
        assert ours["nDCG@10"] == pytest.approx(0.0 if r is None else 1 / math.log2(r + 1))
        # ... which all_gold_scores gives
        full = all_gold_scores(ranked[q], gold)
        assert full["nDCG@10"] == pytest.approx(ref[q]["ndcg_cut_10"], abs=1e-9)
        assert full["recall@10"] == pytest.approx(ref[q]["recall_10"], abs=1e-9)
