import numpy as np
import pytest

from chaja.search import background


def unit_rows(n, d, seed=0):
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((n, d)) + rng.standard_normal(d)          # a shared direction, like real embeddings
    return (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)


def test_moments_equal_the_cosines_mean_and_std():
    mat = unit_rows(500, 24)
    stats = background.fit(mat)
    for seed in range(5):
        q = unit_rows(1, 24, seed=100 + seed)[0]
        mu, sigma = background.moments(stats, q)
        cos = mat @ q
        assert mu == pytest.approx(float(cos.mean()), abs=1e-5)
        assert sigma == pytest.approx(float(cos.std()), rel=1e-3)


def test_the_float32_fit_gives_float64_moments():
    """The covariance is taken in float32; over a store-sized sample σ_q stays within 1e-5
    (relative) of the float64 computation."""
    mat = unit_rows(50_000, 384, seed=3)
    stats = background.fit(mat)
    wide = mat.astype(np.float64)
    mean = wide.mean(axis=0)
    cov = (wide - mean).T @ (wide - mean) / len(wide)
    for seed in range(5):
        q = unit_rows(1, 384, seed=200 + seed)[0].astype(np.float64)
        mu, sigma = background.moments(stats, q)
        assert mu == pytest.approx(float(mean @ q), abs=1e-6)
        assert sigma == pytest.approx(float(q @ cov @ q) ** 0.5, rel=1e-5)


def test_statistics_survive_the_store_round_trip():
    stats = {"chunk": background.fit(unit_rows(100, 16)), "heading": None}
    back = background.decode(background.encode(stats))
    assert set(back) == {"chunk"}
    q = unit_rows(1, 16, seed=7)[0]
    assert background.moments(back["chunk"], q) == pytest.approx(background.moments(stats["chunk"], q), abs=1e-6)
    assert background.decode(None) == {} and background.decode("") == {}
    packed = background.encode(stats, binary=True)          # a store that keeps bytes (chaja.meta_arrays)
    assert isinstance(packed, bytes) and len(packed) < 0.8 * len(background.encode(stats))
    same = background.decode(packed)
    assert set(same) == {"chunk"} and same["chunk"]["n"] == 100 and not same["chunk"]["cov"].flags.writeable
    np.testing.assert_array_equal(same["chunk"]["cov"], back["chunk"]["cov"])
    np.testing.assert_array_equal(same["chunk"]["mean"], back["chunk"]["mean"])


def test_too_few_vectors_give_no_background():
    assert background.fit(unit_rows(background.MIN_VECTORS - 1, 8)) is None
    assert background.fit(np.zeros((0, 0), np.float32)) is None


def test_decoded_statistics_keep_no_copy_of_their_text():
    """A hub decodes each statistics it sees recorded; what it keeps is the arrays, not the
    4 MB text they came from (a cache keyed by the text kept one copy of each)."""
    import gc
    import tracemalloc

    rng = np.random.default_rng(3)
    stats = {"chunk": background.fit(rng.standard_normal((2000, 600)).astype(np.float32))}
    arrays = stats["chunk"]["cov"].nbytes + stats["chunk"]["mean"].nbytes
    tracemalloc.start()
    try:
        text = background.encode(stats)                            # as a store's meta gives it
        got = background.decode(text)
        assert background.decode(text) is got                      # decoded once
        del text
        gc.collect()
        kept, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert arrays <= kept < arrays + 256 * 1024, (kept, arrays)    # the text was 1.9 MB
