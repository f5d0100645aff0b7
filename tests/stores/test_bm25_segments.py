"""BM25 over postings segments: what a search keeps between calls follows the segments."""
import numpy as np
import pytest

from chaja.stores import postings
from chaja.stores.bm25_segments import SegmentedBM25


def _segment(rows):
    return postings.build([(rowid, "en", "", "", body) for rowid, body in rows])


def _scores(bm25, tokens):
    return bm25.search(tokens, 10, title_weight=2.0, heading_weight=1.0)


def test_a_folded_tail_is_scored_with_its_own_lengths():
    head = _segment([(1, "pump motor"), (2, "filter filter pump")])
    bm25 = SegmentedBM25.of(head)
    bm25.add(_segment([(3, "pump"), (4, "motor one two three four five")]))
    bm25.add(_segment([(5, "router")]))
    bm25.recount()
    _scores(bm25, ["pump", "motor"])          # the length terms of every segment are remembered
    # the same rows and tokens in all, so the same mean length, spread otherwise
    tail = _segment([(3, "pump one two three four"), (4, "motor five"), (5, "router")])
    bm25.fold_tail(tail)
    bm25.recount()
    fresh = SegmentedBM25.of(head)
    fresh.add(tail)
    fresh.recount()
    assert fresh.n_tokens == bm25.n_tokens and len(bm25.segments) == 2
    got, want = _scores(bm25, ["pump", "motor"]), _scores(fresh, ["pump", "motor"])
    assert [r for r, _ in got] == [r for r, _ in want]
    assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-12)


def test_rows_killed_in_one_segment_leave_the_others_unmasked():
    bm25 = SegmentedBM25.of(_segment([(1, "pump"), (2, "pump motor")]))
    bm25.add(_segment([(3, "pump")]))
    bm25.recount()
    bm25.kill(np.array([2]))
    bm25.recount()
    assert bm25.whole == [False, True]
    assert sorted(r for r, _ in _scores(bm25, ["pump"])) == [1, 3]
