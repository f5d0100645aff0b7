"""A merge of parts whose rows follow one another places each posting without a sort:
the same segment as the sort of every posting gives, dead rows, empty parts and any
order of the parts included."""
from __future__ import annotations

import random

import numpy as np
import pytest

from chaja.stores import postings, postings_in_order
from tests.stores.test_postings import rows, same


def sorted_merge(parts, monkeypatch) -> postings.Segment:
    """The merge by one sort of every posting (the way for parts whose rows interleave)."""
    with monkeypatch.context() as m:
        m.setattr(postings_in_order, "rowid_order", lambda parts: None)
        return postings.merge(parts)


@pytest.mark.parametrize("seed", range(6))
def test_parts_in_rowid_order_merge_as_the_sort_merges(seed, monkeypatch):
    rng = random.Random(seed)
    pages = [rows(rng, rng.randint(0, 60), start=1000 * k + 1) for k in range(5)]
    parts = [postings.build(page) for page in pages]
    alive = [np.array([rng.random() > 0.3 for _ in range(p.n_rows)], dtype=bool) for p in parts]
    if seed % 2:
        parts, alive = parts[::-1], alive[::-1]               # given in any order
    given = list(zip(parts, alive))
    assert postings_in_order.rowid_order(given) is not None
    placed = postings.merge(given)
    same(placed, sorted_merge(given, monkeypatch))
    order = pages[::-1] if seed % 2 else pages
    live = [r for page, a in zip(order, alive) for r, ok in zip(sorted(page), a) if ok]
    whole = postings.build(live)               # a merge also keeps terms whose rows all died, emptied
    assert np.array_equal(placed.rowids, whole.rowids) and np.array_equal(placed.lengths, whole.lengths)
    for term in {t for r in live for text in r[2:] for t in postings.fts_tokens(text)}:
        got_rows, got_tf = placed.postings(term)
        want_rows, want_tf = whole.postings(term)
        assert got_rows.tolist() == want_rows.tolist() and got_tf.tolist() == want_tf.tolist(), term


def test_parts_whose_rows_interleave_are_merged_by_the_sort():
    rng = random.Random(7)
    everything = rows(rng, 120)
    odd, even = everything[::2], everything[1::2]
    parts = [(postings.build(odd), np.ones(len(odd), bool)), (postings.build(even), np.ones(len(even), bool))]
    assert postings_in_order.rowid_order(parts) is None
    same(postings.merge(parts), postings.build(everything))


def test_a_part_with_no_live_row_gives_its_terms_but_no_postings(monkeypatch):
    rng = random.Random(8)
    first, dead = rows(rng, 30, start=1), rows(rng, 20, start=5000)
    parts = [(postings.build(first), np.ones(30, bool)), (postings.build(dead), np.zeros(20, bool))]
    assert postings_in_order.rowid_order(parts) == [0]
    same(postings.merge(parts), sorted_merge(parts, monkeypatch))
