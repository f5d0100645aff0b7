"""MaxScore pruning gives the best rows of full BM25 scoring, to the last bit."""
import numpy as np
import pytest

from chaja.stores import bm25_maxscore, postings
from chaja.stores.bm25_segments import SegmentedBM25

# a Zipf-like vocabulary: a few words in most rows, many in few (the shape pruning feeds on)
WORDS = [f"w{i}" for i in range(400)]
WEIGHTS = 1.0 / np.arange(1, len(WORDS) + 1)


def _rows(rng, first, count):
    p = WEIGHTS / WEIGHTS.sum()
    out = []
    for rowid in range(first, first + count):
        body = " ".join(rng.choice(WORDS, size=int(rng.integers(3, 40)), p=p))
        title = " ".join(rng.choice(WORDS, size=2, p=p))
        out.append((rowid, "ko" if rowid % 3 else "en", title, "", body))
    return out


@pytest.fixture(scope="module")
def index():
    rng = np.random.default_rng(7)
    bm25 = SegmentedBM25.of(postings.build(_rows(rng, 1, 3000)))
    bm25.add(postings.build(_rows(rng, 3001, 700)))          # a second segment, as after later writes
    bm25.recount()
    bm25.kill(np.arange(5, 3600, 17))                          # rows deleted since (masks in both segments)
    bm25.recount()
    return bm25


def _both(bm25, monkeypatch, tokens, n, **kw):
    monkeypatch.setattr(bm25_maxscore, "PRUNE_FROM", 10**12)
    full = bm25.search(tokens, n, **kw)
    monkeypatch.setattr(bm25_maxscore, "PRUNE_FROM", 0)
    return full, bm25.search(tokens, n, **kw)


@pytest.mark.parametrize("seed", range(30))
def test_pruned_results_equal_full_scoring_bit_for_bit(index, monkeypatch, seed):
    rng = np.random.default_rng(seed)
    tokens = list(dict.fromkeys(rng.choice(WORDS[:120], size=int(rng.integers(2, 9)))))
    n = int(rng.choice([1, 5, 10, 60]))
    kw = {"title_weight": 2.0, "heading_weight": 1.5}
    if seed % 3 == 1:
        kw["lang"] = "en"
    if seed % 4 == 2:
        kw["allow"] = np.arange(1, 3701, 2, dtype=np.int64)
    if seed % 5 == 3:
        kw["field"] = "title"
    full, pruned = _both(index, monkeypatch, tokens, n, **kw)
    assert full and pruned == full          # the same rowids, the same float scores, the same order


def test_a_query_of_common_words_with_one_rare_one_reads_few_postings(index, monkeypatch):
    # the rare word settles the best rows; the common words are looked up for them alone
    read = []
    original = bm25_maxscore._scored

    def scored(bm25, terms, rows_of, *args):
        read.append(sum(r.size for r in rows_of))
        return original(bm25, terms, rows_of, *args)

    monkeypatch.setattr(bm25_maxscore, "_scored", scored)
    tokens = ["w0", "w1", "w2", "w300"]
    full, pruned = _both(index, monkeypatch, tokens, 5, title_weight=2.0, heading_weight=1.5)
    assert pruned == full
    hit_by_common = sum(rows.size for t in index.query_terms(["w0"], False) for _, rows, _ in t.found)
    assert read and read[0] < hit_by_common / 10


def test_zero_and_negative_weights_are_scored_in_full_or_pruned_alike(index, monkeypatch):
    for heading_weight in (0.0, -1.0):
        full, pruned = _both(index, monkeypatch, ["w3", "w40", "w90"], 10,
                             title_weight=2.0, heading_weight=heading_weight)
        assert pruned == full


def test_too_few_rows_for_the_best_n_falls_back_to_every_row(index, monkeypatch):
    full, pruned = _both(index, monkeypatch, ["w398", "w399"], 500, title_weight=2.0, heading_weight=1.5)
    assert pruned == full
