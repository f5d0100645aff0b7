import itertools
import math
import random

import pytest

from chaja.eval.graded import score_at
from chaja.eval.random_order import random_hit, random_ndcg, random_precision, random_recall, reference


def test_hit_formula_known_values():
    assert random_hit(50, 1, 20) == pytest.approx(20 / 50)
    assert random_hit(10, 10, 1) == 1.0
    assert random_hit(10, 0, 5) == 0.0
    assert random_hit(5, 2, 9) == 1.0                        # cutoff beyond the pool
    assert random_hit(50, 21, 20) == pytest.approx(1 - math.comb(29, 20) / math.comb(50, 20))


@pytest.mark.parametrize("seed", range(6))
def test_formulas_equal_the_mean_over_every_order(seed):
    rng = random.Random(seed)
    n = rng.randint(2, 6)
    grades = [rng.choice([0, 1, 2, 3]) for _ in range(n)]
    grades[0] = max(grades[0], 2)                            # answerable
    pool = {f"d{i}": g for i, g in enumerate(grades)}
    r = sum(g >= 2 for g in grades)
    orders = list(itertools.permutations(pool))
    for k in (1, 2, 3, n, n + 2, 50):
        scores = [score_at(list(o), pool, k) for o in orders]
        mean = {f: sum(getattr(s, f) for s in scores) / len(scores) for f in ("hit", "precision", "recall", "ndcg")}
        assert mean["hit"] == pytest.approx(random_hit(n, r, k), abs=1e-12)
        assert mean["precision"] == pytest.approx(random_precision(n, r), abs=1e-12)
        assert mean["recall"] == pytest.approx(random_recall(n, k), abs=1e-12)
        assert mean["ndcg"] == pytest.approx(random_ndcg(grades, k), abs=1e-12)


def test_reference_averages_answerable_pools_only():
    pools = [{"a": 3, "b": 0}, {"c": 1, "d": 0}, {"e": 2, "f": 2, "g": 0, "h": "abstain"}]
    ref = reference(pools, (1, 2))
    assert ref["questions"] == 2
    assert ref["P@1"] == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert ref["Hit@2"] == pytest.approx((1.0 + (1 - math.comb(1, 2) / math.comb(3, 2))) / 2)
    assert ref["Recall@1"] == pytest.approx((1 / 2 + 1 / 3) / 2)
