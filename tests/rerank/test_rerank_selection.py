"""Score mapping (Platt scaling) and the selected prefix."""
from __future__ import annotations

import math

import numpy as np
import pytest

from chaja.rerank import rerank_order
from chaja.rerank.selection import fit_platt, mapped, selected_count


def test_mapping_is_the_logistic_of_the_scaled_score():
    assert mapped(0.0, 1.0, 0.0) == 0.5
    assert mapped(2.0, 1.5, -1.0) == pytest.approx(1 / (1 + math.exp(-2.0)))
    assert mapped(-1e6, 1.0, 0.0) == 0.0 and mapped(1e6, 1.0, 0.0) == 1.0    # no overflow either way
    assert mapped(3.0, 2.0, 0.0) > mapped(2.0, 2.0, 0.0)                      # monotone: order kept


@pytest.mark.parametrize("probs, want", [
    ([0.9, 0.8, 0.7, 0.6, 0.2, 0.9], 4),      # stops at the first below the threshold
    ([0.9, 0.1, 0.9, 0.9], 3),                # ... but never fewer than min_k
    ([0.99] * 30, 20),                        # ... nor more than max_k
    ([0.1, 0.1], 2),                          # ... nor more than there are
    ([], 0),
])
def test_selected_prefix(probs, want):
    assert selected_count(probs, 0.5, 3, 20) == want


def test_min_k_above_max_k_is_refused():
    with pytest.raises(ValueError, match="min_k"):
        selected_count([0.9], 0.5, 5, 3)


def test_platt_fit_recovers_the_generating_mapping():
    rng = np.random.default_rng(7)
    s = rng.normal(0, 2, 20_000)
    y = rng.random(s.size) < 1 / (1 + np.exp(-(1.7 * s - 0.8)))
    a, b = fit_platt(s, y.astype(int))
    assert a == pytest.approx(1.7, abs=0.08) and b == pytest.approx(-0.8, abs=0.08)


def test_platt_fit_needs_both_kinds():
    with pytest.raises(ValueError, match="useful and not useful"):
        fit_platt([1.0, 2.0], [1, 1])


def test_ties_keep_candidate_order():
    assert rerank_order([0.5, 0.9, 0.5, 0.9, 0.1]) == [1, 3, 0, 2, 4]
