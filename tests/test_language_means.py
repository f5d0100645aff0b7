import numpy as np
import pytest

from chaja.language_means import decode_means, encode_means, language_basis, project_out


def unit(v):
    return v / np.linalg.norm(v)


def test_projecting_the_query_alone_equals_projecting_both():
    rng = np.random.default_rng(1)
    mu = {"en": unit(rng.normal(size=16)), "ko": unit(rng.normal(size=16))}
    b = language_basis(mu)
    assert b.shape == (1, 16)
    d = unit(mu["en"] - mu["ko"])
    assert abs(abs(float(b[0] @ d)) - 1) < 1e-5
    q, v = unit(rng.normal(size=16)), unit(rng.normal(size=16))
    p = np.eye(16) - b.T @ b
    assert float(project_out(q, b) @ v) == pytest.approx(float((p @ q) @ (p @ v)), abs=1e-5)
    assert abs(float(project_out(q, b) @ d)) < 1e-5


def test_basis_for_three_languages_has_two_rows_and_one_language_none():
    rng = np.random.default_rng(2)
    mu = {k: unit(rng.normal(size=8)) for k in ("en", "ko", "ja")}
    assert language_basis(mu).shape == (2, 8)
    assert language_basis({"en": mu["en"]}).size == 0
    q = unit(rng.normal(size=8))
    assert np.array_equal(project_out(q, language_basis({"en": mu["en"]})), q)


def test_means_round_trip_and_small_languages_dropped():
    means = {"en": (100, np.ones(4, np.float32) / 2), "ko": (5, np.zeros(4, np.float32))}
    back = decode_means(encode_means(means))
    assert set(back) == {"en"} and np.allclose(back["en"], 0.5)
    assert decode_means(None) == {}


def test_index_records_language_means(corpus_index):
    from chaja.language_means import META_KEY
    means = decode_means(corpus_index.store.get_meta(META_KEY), min_chunks=1)
    assert set(means) == {"ko", "en"}


def test_cross_language_settings_run_end_to_end(corpus_index):
    from chaja.language_means import META_KEY
    from chaja.config import SearchConfig
    from chaja.search.searcher import Searcher
    cfg = SearchConfig()
    searcher = Searcher(corpus_index.store, corpus_index.encoder, cfg, corpus_index.analyzer)   # not the shared one
    searcher._means = decode_means(corpus_index.store.get_meta(META_KEY), min_chunks=1)
    searcher._basis = language_basis(searcher._means)
    cfg.language_projection = cfg.language_centering = cfg.cross_language_keyword = True
    cfg.cross_language_vector = True
    cfg.fusion = "convex"   # convex and RRF fusion score the extra lists; calibrated fusion takes their candidates
    res = searcher.search("espresso 머신 청소 방법")
    assert res.documents[0].doc_id == "manuals/espresso-machine"
    plain = corpus_index.search("espresso 머신 청소 방법")
    assert plain.documents  # the plain pipeline still answers
