"""Word vectors as int8 codes with a scale a row: unit rows, no drift when reused, and
the products a lexicon takes over them equal to the rebuilt floats'."""
from __future__ import annotations

import numpy as np
import pytest

from chaja.search.word_codes import BLOCK, WordRows, row_codes


def as_kept(mat: np.ndarray) -> np.ndarray:
    """``mat`` as its codes give it back, in float32."""
    return np.asarray(WordRows(*row_codes(mat)))


def unit_rows(n: int, dim: int, seed: int = 0) -> np.ndarray:
    m = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_rows_stay_unit_and_a_reused_row_gets_the_same_codes():
    m = unit_rows(200, 64)
    kept = as_kept(m)
    assert np.allclose(np.linalg.norm(kept, axis=1), 1.0, atol=1e-6)
    assert np.all(np.sum(kept * m, axis=1) > 0.999)
    again = row_codes(kept / np.linalg.norm(kept, axis=1, keepdims=True) * 3.0)   # rescaled, as a rebuild does
    assert np.array_equal(again[0], row_codes(m)[0])
    assert np.allclose(as_kept(kept), kept, atol=1e-7)


def test_word_rows_give_the_rebuilt_floats_and_their_products():
    m = unit_rows(BLOCK + 300, 32, seed=1)
    rows = WordRows(*row_codes(m))
    floats = np.asarray(rows)
    assert np.allclose(floats, as_kept(m)) and rows.shape == m.shape and len(rows) == len(m)
    assert np.array_equal(rows[7], floats[7]) and np.array_equal(rows[[3, 9000 % len(m)]], floats[[3, 9000 % len(m)]])
    q = unit_rows(3, 32, seed=2)
    assert np.allclose(rows @ q.T, floats @ q.T, atol=1e-6)
    assert np.allclose(rows @ q[0], floats @ q[0], atol=1e-6)
    assert np.allclose(rows.gram(), floats.astype(np.float64).T @ floats, atol=1e-6)


def test_codes_that_do_not_fit_their_scales_are_refused():
    with pytest.raises(ValueError):
        WordRows(np.zeros((3, 4), np.int8), np.ones(4, np.float32))


def test_scaled_codes_round_rows_of_any_length_to_half_a_step():
    """``scaled_codes`` keeps each row's length: the rounding of each number is at most half
    its row's step ``max_j |v_j| / 127``; a zero row stays zero."""
    from chaja.search.word_codes import scaled_codes
    m = unit_rows(50, 16, seed=4) * np.linspace(0.01, 3, 50, dtype=np.float32)[:, None]
    m[7] = 0
    codes, scales = scaled_codes(m)
    back = codes.astype(np.float32) * scales[:, None]
    assert codes.dtype == np.int8 and np.abs(codes).max() == 127
    assert np.all(np.abs(back - m) <= scales[:, None] / 2 + 1e-7) and not back[7].any()
