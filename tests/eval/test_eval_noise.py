import itertools

import numpy as np
import pytest

from chaja.eval import noise
from chaja.eval.noise import bootstrap_ci, bootstrap_means, compare_paired, compare_runs, randomization_p, verdict


def test_identical_runs_are_within_noise():
    rng = np.random.default_rng(1)
    a = rng.random(200)
    c = compare_paired(a, a.copy(), "nDCG@10")
    assert (c.diff, c.ci_low, c.ci_high, c.p) == (0.0, 0.0, 0.0, 1.0)
    assert c.verdict == "within noise"


def test_clearly_better_and_worse_runs():
    rng = np.random.default_rng(2)
    a = rng.random(300)
    b = np.clip(a + 0.15 + rng.normal(0, 0.05, 300), 0, 1)
    better = compare_paired(a, b)
    assert better.verdict == "better" and better.ci_low > 0 and better.p < 0.001
    worse = compare_paired(b, a)
    assert worse.verdict == "worse" and worse.ci_high < 0
    assert worse.diff == pytest.approx(-better.diff)


def test_small_noisy_difference_is_within_noise():
    rng = np.random.default_rng(3)
    a = rng.random(60)
    b = a + rng.normal(0.01, 0.3, 60)
    c = compare_paired(a, b)
    assert c.ci_low < 0 < c.ci_high and c.p > 0.05 and c.verdict == "within noise"


def test_exact_randomization_matches_enumeration():
    rng = np.random.default_rng(4)
    d = rng.normal(0.2, 1, 9)
    obs = abs(d.mean())
    count = sum(abs(np.mean(np.array(s) * d)) >= obs - 1e-12 for s in itertools.product((-1, 1), repeat=9))
    assert randomization_p(d) == pytest.approx(count / 2 ** 9)
    # five equal wins: only the all-plus and all-minus patterns are as extreme → p = 2/32
    assert randomization_p([1, 1, 1, 1, 1]) == pytest.approx(2 / 32)
    assert verdict(0.5, 1.0, 2 / 32) == "within noise"        # CI above zero is not enough


def test_monte_carlo_p_is_close_to_exact_and_reproducible():
    rng = np.random.default_rng(5)
    d = rng.normal(0.15, 1, 16)                               # 2^16 > 10,000: sampled
    obs = abs(d.mean())
    signs = ((np.arange(2 ** 16)[:, None] >> np.arange(16)) & 1) * 2 - 1
    exact = np.mean(np.abs((signs * d).mean(axis=1)) >= obs - 1e-12)
    p1, p2 = randomization_p(d, seed=0), randomization_p(d, seed=0)
    assert p1 == p2
    assert p1 == pytest.approx(exact, abs=0.02)


def test_bootstrap_is_deterministic_and_batching_does_not_change_it(monkeypatch):
    x = np.random.default_rng(6).random(500)
    whole = bootstrap_means(x, 2000, seed=9)
    monkeypatch.setattr(noise, "_BATCH_CELLS", 500 * 7)        # 7 resamples a batch
    assert np.array_equal(bootstrap_means(x, 2000, seed=9), whole)
    lo, hi = bootstrap_ci(x, 2000, seed=9)
    assert lo < x.mean() < hi
    # the percentile CI of a mean is close to mean ± 1.96 standard errors
    se = x.std(ddof=1) / np.sqrt(x.size)
    assert lo == pytest.approx(x.mean() - 1.96 * se, abs=0.25 * se)
    assert hi == pytest.approx(x.mean() + 1.96 * se, abs=0.25 * se)


def test_compare_runs_pairs_by_question_id():
    a = {"q1": {"m": 0.0}, "q2": {"m": 1.0}, "q3": {"m": 0.5}}
    b = {"q3": {"m": 0.5}, "q2": {"m": 1.0}, "q1": {"m": 0.0}, "q9": {"m": 1.0}}
    (row,) = compare_runs(a, b, ["m"])
    assert row.n == 3 and row.diff == 0.0 and row.verdict == "within noise"
    with pytest.raises(ValueError, match="share no question"):
        compare_runs({"x": {"m": 1}}, {"y": {"m": 1}}, ["m"])


def test_compare_groups_tests_each_group_on_its_own_questions():
    from chaja.eval.noise import compare_groups

    # group "x": B is better on all 30 questions; group "y": identical; "z" only in A
    a = {f"x{i}": {"m": 0.0} for i in range(30)} | {f"y{i}": {"m": i % 2} for i in range(20)} | {"z": {"m": 1.0}}
    b = {f"x{i}": {"m": 1.0} for i in range(30)} | {f"y{i}": {"m": i % 2} for i in range(20)}
    group_of = {q: q[0] for q in a}
    rows = compare_groups(a, b, group_of, "m", resamples=2000)
    assert [(r.metric, r.n, r.verdict) for r in rows] == [("x", 30, "better"), ("y", 20, "within noise")]
    assert rows[0].diff == 1.0 and rows[1].diff == 0.0
