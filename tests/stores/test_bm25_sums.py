"""Sums in the per-row arrays a segment lends (chaja.stores.bm25_sums) equal bincount's,
to the last bit, and the arrays come back cleared."""
import numpy as np
import pytest

from chaja.stores import bm25_maxscore
from test_bm25_maxscore import WORDS, index  # noqa: F401  (the fixture: two segments, rows deleted)


@pytest.mark.parametrize("seed", range(10))
def test_sums_in_a_lent_array_equal_bincounts_bit_for_bit(index, monkeypatch, seed):
    from chaja.stores import bm25_segments

    rng = np.random.default_rng(100 + seed)
    tokens = list(dict.fromkeys(rng.choice(WORDS, size=int(rng.integers(1, 7)))))
    kw = {"title_weight": 2.0, "heading_weight": 1.5 if seed % 2 else 0.0, "lang": "ko" if seed % 3 == 0 else None}
    monkeypatch.setattr(bm25_maxscore, "PRUNE_FROM", 10**12)
    got = {}
    for sparse in (0, 10**9):              # never, and always, the lent array
        monkeypatch.setattr(bm25_segments, "SPARSE", sparse)
        got[sparse] = index.search(tokens, 3700, **kw)
        got[sparse, "again"] = index.search(tokens, 3700, **kw)   # the array came back cleared
    assert got[0] and got[0] == got[10**9] == got[10**9, "again"]
