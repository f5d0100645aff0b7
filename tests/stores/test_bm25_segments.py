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


def _zipf_rows(rng, n_rows, start=1):
    words = [f"w{i}" for i in range(400)]
    p = 1.0 / np.arange(1, len(words) + 1)
    p /= p.sum()
    return [(start + i, " ".join(rng.choice(words, size=int(rng.integers(5, 40)), p=p))) for i in range(n_rows)]


@pytest.mark.parametrize("n", [1, 10, 60])
def test_bounding_by_the_rare_tokens_keeps_every_score_and_order(monkeypatch, n):
    """MaxScore (``_within_reach``) reads the common tokens only for rows the rare ones hold:
    the top ``n`` must be exactly the full sum's, scores to the last bit, on two segments
    with a killed row; and it must have ruled rows out for some queries, or nothing was tested."""
    from chaja.stores import bm25_segments

    rng = np.random.default_rng(7)
    bm25 = SegmentedBM25.of(_segment(_zipf_rows(rng, 3000)))
    bm25.add(_segment(_zipf_rows(rng, 1000, start=5001)))
    bm25.kill(np.array([17, 5003]))
    bm25.recount()
    monkeypatch.setattr(bm25_segments, "PRUNE_FROM_POSTINGS", 0)
    reached = []
    original = SegmentedBM25._within_reach

    def counted(self, *args):
        got = original(self, *args)
        reached.append(got is not None)
        return got

    monkeypatch.setattr(SegmentedBM25, "_within_reach", counted)
    for q in range(60):
        tokens = [f"w{int(i)}" for i in rng.choice(400, size=int(rng.integers(2, 7)), replace=False)]
        tokens[0] = f"w{int(rng.integers(0, 5))}"           # a common token in every query
        bounded = bm25.search(tokens, n, title_weight=2.0, heading_weight=1.5)
        monkeypatch.setattr(SegmentedBM25, "_within_reach", lambda self, *args: None)
        full = bm25.search(tokens, n, title_weight=2.0, heading_weight=1.5)
        monkeypatch.setattr(SegmentedBM25, "_within_reach", counted)
        assert bounded == full, tokens
    assert sum(reached) >= 10


def test_no_bound_is_tried_with_a_filter_or_a_language():
    rng = np.random.default_rng(3)
    bm25 = SegmentedBM25.of(_segment(_zipf_rows(rng, 500)))
    tried = []
    bm25._within_reach = lambda *args: tried.append(args) or None
    bm25.search(["w0", "w300"], 10, title_weight=2.0, heading_weight=1.5, lang="en")
    bm25.search(["w0", "w300"], 10, title_weight=2.0, heading_weight=1.5, allow=np.arange(1, 100))
    assert not tried
    bm25.search(["w0", "w300"], 10, title_weight=2.0, heading_weight=1.5)
    assert len(tried) == 1
