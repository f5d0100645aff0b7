"""The stored engine's scoring (chaja.stores.postgres.stored_search.best_rows) on arrays:
BM25 as the segments score it, removed rows and other languages left out, and the same
totals whether rows are summed in a span or, far apart, by sorting."""
from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'chaja[postgres]'")

from chaja.stores.postgres.stored_search import best_rows  # noqa: E402

K1, B = 1.2, 0.75


def piece(rows, tf, lengths, in_lang=None):
    rows = np.asarray(rows, np.int64)
    return (rows, np.asarray(tf, np.uint16).reshape(-1, 3), np.asarray(lengths, np.uint16),
            np.ones(rows.size, bool) if in_lang is None else np.asarray(in_lang, bool))


def bm25(idf, f, length, avgdl):
    return idf * f * (K1 + 1) / (f + K1 * (1 - B + B * length / avgdl))


def test_rows_far_apart_sum_as_rows_close_together_and_removed_rows_are_left_out():
    n_rows, n_tokens = 10, 100
    for far in (7, 5_000_000):                      # a span of 7 rows, then one of five million
        terms = [[piece([3, far], [[0, 0, 2], [1, 0, 1]], [10, 20])],
                 [piece([far], [[0, 1, 0]], [20]), piece([9], [[0, 0, 1]], [5])]]
        rows, scores = best_rows(terms, n_rows=n_rows, n_tokens=n_tokens, title_weight=2.0, heading_weight=1.5,
                                 field="all", lang=None, dead=np.zeros(0, np.int64))
        got = dict(zip(rows.tolist(), scores.tolist()))
        idf2 = math.log((10 - 2 + 0.5) / (2 + 0.5))
        assert got[3] == pytest.approx(bm25(idf2, 2.0, 10, 10.0))
        assert got[far] == pytest.approx(bm25(idf2, 3.0, 20, 10.0) + bm25(idf2, 1.5, 20, 10.0))
        assert got[9] == pytest.approx(bm25(idf2, 1.0, 5, 10.0))
        rows, _ = best_rows(terms, n_rows=n_rows, n_tokens=n_tokens, title_weight=2.0, heading_weight=1.5,
                            field="all", lang=None, dead=np.array([far], np.int64))
        assert sorted(rows.tolist()) == [3, 9]


def test_a_language_leaves_rows_out_after_idf_counts_them_and_titles_alone_count_for_a_title_search():
    terms = [[piece([1, 2, 3], [[1, 0, 1], [0, 0, 3], [0, 1, 0]], [4, 4, 4], in_lang=[True, False, True])]]
    rows, scores = best_rows(terms, n_rows=8, n_tokens=32, title_weight=2.0, heading_weight=1.5, field="all",
                             lang="ko", dead=np.zeros(0, np.int64))
    idf3 = math.log((8 - 3 + 0.5) / (3 + 0.5))
    assert dict(zip(rows.tolist(), scores.tolist())) == pytest.approx({1: bm25(idf3, 3.0, 4, 4.0),
                                                                       3: bm25(idf3, 1.5, 4, 4.0)})
    rows, scores = best_rows(terms, n_rows=8, n_tokens=32, title_weight=2.0, heading_weight=1.5, field="title",
                             lang=None, dead=np.zeros(0, np.int64))
    idf1 = math.log((8 - 1 + 0.5) / (1 + 0.5))
    assert dict(zip(rows.tolist(), scores.tolist())) == pytest.approx({1: bm25(idf1, 2.0, 4, 4.0)})
