"""int8 codes with one scale and one offset per dimension: each number within half a step
of what it was, scores as the rebuilt floats give them, rows taken and added as codes."""
from __future__ import annotations

import numpy as np
import pytest

from chaja.stores import quantized
from chaja.stores.quantized import BLOCK, LEVELS, ScaledInt8, append, fitting_range, take


def unit_rows(n: int, dim: int, seed: int = 0) -> np.ndarray:
    m = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_each_number_is_within_half_a_step_of_its_dimensions_scale():
    m = unit_rows(3 * BLOCK + 17, 24)
    q = ScaledInt8.quantize(m)
    assert q.codes.dtype == np.int8 and np.abs(q.codes).max() == LEVELS
    assert np.all(np.abs(np.asarray(q) - m) <= q.scales / 2 * (1 + 1e-5))
    assert q.nbytes < m.nbytes / 3.5


@pytest.mark.parametrize("floats_kept", [True, False])
def test_a_score_is_the_rebuilt_rows_score_block_by_block(floats_kept, monkeypatch):
    """Scored on the codes a block at a time (a large matrix), or on the floats a small
    matrix keeps after its first scan: the same scores either way."""
    if not floats_kept:
        monkeypatch.setattr(quantized, "FLOAT_CACHE_ROWS", 0)
    m = unit_rows(2 * BLOCK + 5, 32, seed=1)
    q = ScaledInt8.quantize(m)
    query = unit_rows(1, 32, seed=2)[0]
    assert np.allclose(q @ query, np.asarray(q) @ query, atol=1e-5)
    assert np.abs(q @ query - m @ query).max() < 0.02
    rows = np.array([5, 0, 4000])
    assert np.array_equal(q[rows], np.asarray(q)[rows]) and q[3].shape == (32,)
    assert np.allclose(q.mean(axis=0), np.asarray(q).mean(axis=0))
    assert (q._floats is not None) == floats_kept


def test_only_a_field_searched_exactly_keeps_its_floats(monkeypatch):
    """A matrix as large as a field that gets a graph rescores a few rows on its codes and
    keeps no float copy of itself; one row fewer keeps it after its first scan."""
    monkeypatch.setattr(quantized, "FLOAT_CACHE_ROWS", 50)
    query = unit_rows(1, 16, seed=4)[0]
    big, small = ScaledInt8.quantize(unit_rows(50, 16, seed=5)), ScaledInt8.quantize(unit_rows(49, 16, seed=5))
    for m in (big, small):
        quantized.row_scores(m, query, np.array([3, 7]))
    assert big._floats is None and small._floats is not None


def test_take_and_append_keep_codes_and_wider_rows_widen_the_scales():
    m = unit_rows(300, 16, seed=3)
    q = ScaledInt8.quantize(m)
    part = take(q, np.arange(0, 300, 2))
    assert isinstance(part, ScaledInt8) and np.array_equal(part.codes, q.codes[::2])
    fits = append(q, m[:10] * 0.5)
    assert np.array_equal(fits.scales, q.scales) and np.array_equal(fits.codes[:300], q.codes)
    wide = append(q, 3 * m[:10])
    assert np.all(wide.scales >= q.scales) and wide.shape == (310, 16)
    assert not np.array_equal(wide.offsets, q.offsets)
    both = np.concatenate([m, 3 * m[:10]])
    assert np.all(np.abs(np.asarray(wide) - both) <= wide.scales * (1 + 1e-5))
    assert np.array_equal(append(m, m[:2]), np.concatenate([m, m[:2]]))     # a float matrix stays float


def test_a_column_of_zeros_and_an_empty_matrix():
    m = unit_rows(10, 4)
    m[:, 2] = 0
    assert fitting_range(m)[0][2] < 1e-9 and np.all(ScaledInt8.quantize(m).codes[:, 2] == 0)
    assert ScaledInt8.quantize(np.zeros((0, 4), np.float32)).shape == (0, 4)
    # a row added with another value in that column widens its range instead of losing the value
    row = unit_rows(1, 4, seed=9)
    row[0, 2] = 0.5
    assert abs(append(ScaledInt8.quantize(m), row)[10][2] - 0.5) < 1e-3


def test_a_dimension_off_zero_is_coded_over_its_own_range():
    """Vectors that share a direction (as an encoder's do) take values in a range off zero:
    the codes span that range, not ±max|v|, so the step is smaller than a symmetric one's and
    the error with it; scores add q · o."""
    rng = np.random.default_rng(7)
    m = (0.5 + 0.05 * rng.standard_normal((1000, 16))).astype(np.float32)
    q = ScaledInt8.quantize(m)
    assert np.allclose(q.offsets, (m.max(0) + m.min(0)) / 2, atol=1e-6)
    assert np.all(q.scales < np.abs(m).max(0) / LEVELS / 2)             # symmetric codes' step, halved
    assert q.codes.min() == -LEVELS and q.codes.max() == LEVELS
    assert np.all(np.abs(np.asarray(q) - m) <= q.scales / 2 * (1 + 1e-4))
    query = rng.standard_normal(16).astype(np.float32)
    bound = float(np.abs(query) @ q.scales) / 2 + 1e-5      # each number within half a step
    assert np.abs(q @ query - m @ query).max() <= bound
    assert np.abs(quantized.row_scores(q, query, np.array([4, 2])) - (m @ query)[[4, 2]]).max() <= bound


def test_codes_written_before_offsets_were_kept_read_as_symmetric_codes():
    """A file of codes and scales alone (no offsets) is the symmetric quantizer's: offset 0."""
    m = unit_rows(40, 8, seed=11)
    scales = np.abs(m).max(0) / LEVELS
    old = ScaledInt8(np.rint(m / scales).astype(np.int8), scales)
    assert np.array_equal(old.offsets, np.zeros(8, np.float32))
    assert np.all(np.abs(np.asarray(old) - m) <= scales / 2 * (1 + 1e-5))
    grown = append(old, m[:3])                  # rows that fit keep the old codes as they are
    assert np.array_equal(grown.codes[:40], old.codes) and np.array_equal(grown.offsets, old.offsets)


def test_codes_that_do_not_match_their_scales_are_refused():
    with pytest.raises(ValueError):
        ScaledInt8(np.zeros((3, 4), np.int16), np.ones(4, np.float32))
    with pytest.raises(ValueError):
        ScaledInt8(np.zeros((3, 4), np.int8), np.ones(5, np.float32))


def test_row_scores_score_a_row_the_same_whichever_rows_are_scored_with_it():
    from chaja.stores.quantized import ScaledInt8, row_scores

    rng = np.random.default_rng(5)
    for n in (5000, 40_000):                 # codes kept as floats (small) and scored as codes
        floats = rng.normal(size=(n, 384)).astype(np.float32)
        codes = ScaledInt8.quantize(floats)
        q = rng.normal(size=384).astype(np.float32)
        rows = np.flatnonzero(rng.random(n) < 0.03)
        for matrix in (codes, floats):
            every = row_scores(matrix, q)
            assert np.array_equal(row_scores(matrix, q, rows), every[rows])        # to the last bit
            assert np.allclose(every, np.asarray(matrix) @ q, atol=1e-3)
        assert row_scores(codes, q, rows[:0]).shape == (0,)


def test_a_range_widened_by_rows_added_later_takes_a_margin(monkeypatch):
    """A growing field's extremes creep outward, and every widening rounds the codes held
    once more: widened with a margin, a range is widened (and its codes rounded again)
    less often than one widened just to its newest extreme, and the error stays smaller."""
    rng = np.random.default_rng(12)
    rows = rng.standard_normal((5000, 16)).astype(np.float32)

    def grown(margin: float) -> tuple[int, float]:
        monkeypatch.setattr(quantized, "WIDEN_MARGIN", margin)
        m, widenings = ScaledInt8.quantize(rows[:0]), 0
        for at in range(0, rows.shape[0], 50):
            before = m.scales.copy()
            m = append(m, rows[at:at + 50])
            widenings += int(np.sum(m.scales != before))
        return widenings, float((np.abs(np.asarray(m) - rows) / m.scales).max())

    margin = quantized.WIDEN_MARGIN
    (tight, tight_error), (wide, wide_error) = grown(0.0), grown(margin)
    assert wide < 0.7 * tight and wide_error < tight_error


def test_rows_appended_within_the_range_join_a_tail_and_read_as_one_matrix():
    """A row added to a mapped field of a million rows must not copy the million: rows that
    fit the range are kept as a tail beside the codes held (which stay the same array), and
    every face of the matrix reads the two parts as one: rows by index, slice, index array
    and mask, the float array, products, row scores to the last bit, taken rows, the codes."""
    from chaja.stores.quantized import row_scores

    rng = np.random.default_rng(21)
    floats = rng.uniform(-1, 1, size=(BLOCK * 2 + 300, 24)).astype(np.float32)
    base = ScaledInt8.quantize(floats)
    added = rng.uniform(-0.5, 0.5, size=(BLOCK + 50, 24)).astype(np.float32)    # inside the range
    grown = append(append(base, added[:40]), added[40:])
    one = ScaledInt8(np.concatenate([base.codes, ScaledInt8.quantize(added, base.scales, base.offsets).codes]),
                     base.scales, base.offsets)
    assert len(grown.parts) == 2 and grown.parts[0] is base.parts[0]          # the held codes not copied
    assert len(grown) == len(one) and grown.shape == one.shape and grown.nbytes == one.nbytes
    n = len(one)
    mask = rng.random(n) < 0.1
    picks = np.array([0, len(base) - 1, len(base), n - 1, -1, 7, len(base) + 3])
    for rows in (0, len(base), n - 1, -1, slice(len(base) - 5, len(base) + 5), slice(None, None, 97), picks, mask):
        assert np.array_equal(grown[rows], one[rows]) and np.array_equal(grown.code_rows(rows), one.codes[rows])
    assert np.array_equal(np.asarray(grown), np.asarray(one)) and np.array_equal(grown.codes, one.codes)
    q = rng.normal(size=24).astype(np.float32)
    assert np.array_equal(grown @ q, one @ q)
    assert np.array_equal(row_scores(grown, q), row_scores(one, q))
    assert np.array_equal(row_scores(grown, q, picks[picks >= 0]), row_scores(one, q)[picks[picks >= 0]])
    assert np.array_equal(take(grown, picks).codes, one.codes[picks])
    wide = append(grown, np.full((1, 24), 3.0, np.float32))                   # beyond the range: one part again
    assert len(wide.parts) == 1 and len(wide) == n + 1 and np.all(wide.scales >= base.scales)


def test_rows_read_by_index_are_the_whole_matrix_s_rows_to_the_bit():
    """Rows decoded where they are read (an index array, a mask, one row, across the tail)
    are the rows the whole matrix decodes to: the same products and sums."""
    rng = np.random.default_rng(5)
    m = ScaledInt8.quantize(rng.standard_normal((600, 24)).astype(np.float32) + 0.3)
    m = append(m, rng.standard_normal((50, 24)).astype(np.float32) * 0.5)
    assert len(m.parts) == 2
    whole = np.asarray(m)
    at = rng.integers(0, len(m), 80)
    mask = rng.random(len(m)) < 0.3
    for rows in (at, mask, 620, -1):
        assert np.array_equal(m[rows].view(np.uint32), whole[rows].view(np.uint32))
