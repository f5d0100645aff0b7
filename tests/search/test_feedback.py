"""Evidence borrowed from the query's own language (chaja.search.feedback)."""
from __future__ import annotations

import numpy as np
import pytest

from chaja.search import feedback


def test_sources_are_the_best_own_language_chunks_in_fused_order():
    fused = [("en#1", 3.0), ("ko#1", 2.5), ("en#2", 2.0), ("ko#2", 1.0), ("ko#3", 0.5)]
    own = {"ko#1": True, "ko#2": True, "ko#3": True, "en#1": False, "en#2": False}
    assert feedback.sources(fused, own, 2) == ["ko#1", "ko#2"]
    assert feedback.sources(fused, own, 10) == ["ko#1", "ko#2", "ko#3"]
    assert feedback.sources(fused, {}, 2) == []


def test_feedback_vector_is_the_unit_mean():
    a, b = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
    f = feedback.feedback_vector([a, b])
    assert f.dtype == np.float32
    assert np.allclose(f, np.array([1, 1, 0]) / np.sqrt(2))
    assert feedback.feedback_vector([]) is None
    assert feedback.feedback_vector([a, -a]) is None


def test_feedback_vector_leaves_the_basis_out():
    basis = np.array([[1.0, 0.0, 0.0]])
    f = feedback.feedback_vector([np.array([0.9, 0.3, 0.0]), np.array([0.8, 0.0, 0.4])], basis)
    assert f[0] == pytest.approx(0.0, abs=1e-7)
    assert np.linalg.norm(f) == pytest.approx(1.0)
    assert np.allclose(f, np.array([0, 0.3, 0.4]) / 0.5)


def test_lifted_stops_at_the_ceiling_and_never_lowers_through_it():
    scores = np.array([1.0, 1.0, 3.0, 1.0, 1.0])
    added = np.array([0.5, 5.0, 1.0, -0.5, 0.0])
    # no higher than its sources; already above: kept, not lowered; unlike pages fall
    assert feedback.lifted(scores, added, ceiling=2.0).tolist() == [1.5, 2.0, 3.0, 0.5, 1.0]


def test_keep_lifted_keeps_the_first_lifts_and_gives_the_rest_their_scores_back():
    #                 ko1  ko2  en-a en-b en-c en-d
    before = np.array([9.0, 8.0, 5.0, 4.0, 6.0, 3.0])
    after = np.array([9.0, 8.0, 8.0, 8.0, 7.0, 2.0])
    ranks = np.array([1, 2, 9, 3, 1, 4])
    # en-a and en-b tie at the ceiling: the better single rank keeps its lift
    assert feedback.keep_lifted(before, after, 1, ranks).tolist() == [False, False, False, True, False, False]
    assert feedback.keep_lifted(before, after, 2, ranks).tolist() == [False, False, True, True, False, False]
    raised = [False, False, True, True, True, False]
    assert feedback.keep_lifted(before, after, 0, ranks).tolist() == raised    # no limit
    assert feedback.keep_lifted(before, after, 3, ranks).tolist() == raised    # three raised: all kept
    same_rank = np.array([1, 1, 1, 1, 1, 1])
    assert feedback.keep_lifted(before, after, 1, same_rank).tolist() == [False, False, True, False, False, False]
