"""Postings segments: one build of all rows equals the merge of builds of its parts, and
the frequencies and lengths are FTS5's ascii tokenizer's."""
from __future__ import annotations

import random

import numpy as np

from chaja.stores import postings

ARRAYS = ("hashes", "term_bytes", "term_offsets", "offsets", "rows", "tf", "rowids", "lengths", "langs")
WORDS = "소각 결정 배당 주주 warranty pump React hook state-of-the-art v18 2025 ünïcode".split()


def rows(rng: random.Random, n: int, start: int = 1) -> list[tuple]:
    return [(start + 3 * i, rng.choice(["ko", "en", ""]), " ".join(rng.choices(WORDS, k=rng.randint(0, 3))),
             " ".join(rng.choices(WORDS, k=rng.randint(0, 2))), " ".join(rng.choices(WORDS, k=rng.randint(0, 30))))
            for i in range(n)]


def same(a: postings.Segment, b: postings.Segment) -> None:
    for name in ARRAYS:
        x, y = np.asarray(getattr(a, name)), np.asarray(getattr(b, name))
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    assert a.lang_names == b.lang_names or not a.n_rows


def test_one_build_equals_the_merge_of_its_parts_in_any_row_order():
    rng = random.Random(1)
    everything = rows(rng, 300)
    shuffled = everything[:]
    rng.shuffle(shuffled)
    whole = postings.build(shuffled)
    parts = [postings.build(everything[i:i + 70]) for i in range(0, 300, 70)]
    merged = postings.merge([(p, np.ones(p.n_rows, bool)) for p in parts])
    assert merged.lang_names == whole.lang_names or set(merged.lang_names) == set(whole.lang_names)
    for name in ("hashes", "term_bytes", "term_offsets", "offsets", "rows", "tf", "rowids", "lengths"):
        assert np.array_equal(np.asarray(getattr(whole, name)), np.asarray(getattr(merged, name))), name
    assert [whole.lang_names[i] for i in whole.langs] == [merged.lang_names[i] for i in merged.langs]


def test_terms_are_found_with_their_frequencies_per_column():
    seg = postings.build([(7, "en", "React hook", "", "hook hook state-of-the-art"), (2, "ko", "", "소각", "")])
    assert list(seg.rowids) == [2, 7] and list(seg.lengths) == [1, 8]
    got_rows, tf = seg.postings("hook")
    assert list(got_rows) == [1] and tf.tolist() == [[1, 0, 2]]
    assert seg.postings("state")[1].tolist() == [[0, 0, 1]]       # split where FTS5's ascii tokenizer splits
    assert seg.postings("소각")[1].tolist() == [[0, 1, 0]]
    assert seg.postings("missing")[0].size == 0
    assert list(seg.hashes) == sorted(seg.hashes)


def test_empty_rows_and_no_rows():
    same(postings.build([]), postings.build([]))
    seg = postings.build([(1, "", "", "", "")])
    assert seg.n_rows == 1 and seg.n_terms == 0 and list(seg.lengths) == [0]


def test_a_merge_keeps_rows_alive_and_drops_dead_ones():
    rng = random.Random(2)
    rows_a, rows_b = rows(rng, 50), rows(rng, 40, start=10_000)
    a, b = postings.build(rows_a), postings.build(rows_b)
    alive_a, alive_b = np.arange(50) % 3 != 0, np.ones(40, bool)
    merged = postings.merge([(a, alive_a), (b, alive_b)])
    # the same as building the live rows afresh (terms whose rows all died stay, with no postings)
    fresh = postings.build([r for r, keep in zip(rows_a, alive_a) if keep] + rows_b)
    assert np.array_equal(np.asarray(merged.rowids), np.asarray(fresh.rowids))
    assert np.array_equal(np.asarray(merged.lengths), np.asarray(fresh.lengths))
    assert set(fresh.terms()) <= set(merged.terms())
    for term in merged.terms():
        got_rows, got_tf = merged.postings(term)
        want_rows, want_tf = fresh.postings(term)
        assert np.array_equal(got_rows, want_rows) and np.array_equal(got_tf, want_tf), term
    a_only = postings.build(rows(rng, 5))
    assert postings.merge([(a_only, np.ones(5, bool))]) is a_only      # nothing to merge


def test_terms_whose_hashes_collide_are_merged_by_their_bytes():
    a = postings.build([(1, "en", "", "", "apple apple")])
    b = postings.build([(2, "en", "", "", "pear")])
    b.hashes = np.asarray(a.hashes).copy()       # as if "pear" hashed like "apple"
    merged = postings.merge([(a, np.ones(1, bool)), (b, np.ones(1, bool))])
    assert sorted(merged.terms()) == ["apple", "pear"]
    assert merged.postings("apple")[1].tolist() == [[0, 0, 2]] and merged.postings("pear")[1].tolist() == [[0, 0, 1]]
