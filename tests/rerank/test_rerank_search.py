"""The rerank stage inside a real search: the fixture corpus in a real SQLite store,
the real encoder, and real rerankers (the tiny ONNX cross-encoder, e5-windows)."""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from chaja.config import RerankConfig
from chaja.rerank import passage_text
from chaja.rerank.windows import WindowReranker
from chaja.search.result_json import result_json
from chaja.search.searcher import Searcher

QUERY = "보증 기간은 얼마나 되나요?"


class SameScore:
    """A reranker that cannot tell candidates apart."""
    name = "same"

    def score(self, query, passages):
        return np.zeros(len(passages))


def searcher_with(corpus_index, reranker, spec="test", **rerank):
    base = corpus_index.searcher()
    cfg = dataclasses.replace(base.cfg, reranker=spec)
    return Searcher(base.store, base.encoder, cfg, base.analyzer, base.aligned,
                    rerank=RerankConfig(**rerank), rerankers=lambda s: reranker)


@pytest.fixture(scope="module")
def tiny_onnx(tmp_path_factory):
    pytest.importorskip("torch", reason="the tiny cross-encoder is built with the dev extra (PyTorch)")
    from cross_encoders import build
    from chaja.rerank.cross_encoder import OnnxCrossEncoder
    return OnnxCrossEncoder(build(tmp_path_factory.mktemp("tiny-search")))


def test_the_pool_is_ordered_by_the_rerankers_score(corpus_index, tiny_onnx):
    res = searcher_with(corpus_index, tiny_onnx, depth=8).search(QUERY, top_k=12)
    plain = corpus_index.search(QUERY, top_k=12)
    pool = res.documents[:8]
    assert res.reranker == tiny_onnx.name
    scores = [d.best.rerank_score for d in pool]
    assert scores == sorted(scores, reverse=True)
    assert sorted(d.best.fused_rank for d in pool) == list(range(1, 9))
    assert {d.doc_id for d in pool} == set(plain.doc_ids()[:8])       # the same candidates, reordered
    assert res.doc_ids()[8:] == plain.doc_ids()[8:]                   # below the depth: the fused order
    assert all(d.best.rerank_score is None for d in res.documents[8:])
    for d in pool:                                                    # the score is the model's for that pair
        want = tiny_onnx.score(QUERY, [passage_text(d.best.chunk)])[0]
        assert d.best.rerank_score == pytest.approx(want, rel=1e-5, abs=1e-6)


def test_ties_keep_the_fused_order(corpus_index):
    res = searcher_with(corpus_index, SameScore(), depth=10).search(QUERY, top_k=10)
    assert res.doc_ids() == corpus_index.search(QUERY, top_k=10).doc_ids()
    assert [d.best.fused_rank for d in res.documents] == list(range(1, len(res.documents) + 1))


@pytest.mark.parametrize("shift, threshold, want", [(10.0, 0.5, 5), (-10.0, 0.5, 3), (0.0, 0.5, 5), (0.0, 0.51, 3)])
def test_the_selected_prefix_follows_the_mapped_scores(corpus_index, shift, threshold, want):
    # every score 0 maps to sigmoid(shift): all pass or none, and the prefix is max_k or min_k
    res = searcher_with(corpus_index, SameScore(), depth=10, shift=shift, threshold=threshold,
                        min_k=3, max_k=5).search(QUERY, top_k=10)
    assert res.selected == want
    assert len(res.selected_documents()) == want
    out = result_json(res, 10)
    assert out["selected"] == want and out["reranker"] == "same"
    assert [r["in_selected"] for r in out["results"]] == [i < want for i in range(len(out["results"]))]
    assert out["results"][0]["rerank_probability"] == pytest.approx(1 / (1 + np.exp(-shift)))
    json.dumps(out)


def test_no_reranker_no_prefix(corpus_index):
    res = corpus_index.search(QUERY)
    assert res.reranker is None and res.selected is None and res.selected_documents() == res.documents
    assert all(c.rerank_score is None for c in res.chunks)


def test_windows_reranker_scores_a_passage_by_its_best_window(encoder):
    r = WindowReranker(encoder, window_chars=60)
    passage = ("Espresso machine manual > Warranty\n"
               "The grinder has twelve settings for coarse and fine beans.\n\n"
               "The warranty lasts two years from the date of purchase.")
    windows = r.windows(passage)
    assert len(windows) == 2 and all(w.startswith("Espresso machine manual > Warranty\n") for w in windows)
    q = encoder.encode_queries(["how long is the warranty"])[0]
    want = max(float(encoder.encode_passages([w])[0] @ q) for w in windows)
    assert r.score("how long is the warranty", [passage])[0] == pytest.approx(want, abs=1e-5)


def test_windows_reranker_in_a_search(corpus_index):
    old = corpus_index.config.search.reranker
    corpus_index.config.search.reranker = "e5-windows"
    try:
        res = corpus_index.search("how long is the warranty?", top_k=5)
    finally:
        corpus_index.config.search.reranker = old
    assert res.reranker.startswith("e5-windows")
    assert all(d.best.rerank_score is not None for d in res.documents)
    assert 3 <= res.selected <= 5


def test_a_multipart_question_reranked_keeps_a_prefix(corpus_index):
    base = searcher_with(corpus_index, SameScore(), depth=5, shift=10.0, min_k=2, max_k=4)
    s = base.with_config(dataclasses.replace(base.cfg, multipart=True))
    res = s.search("자전거 체인 청소 방법과 에스프레소 머신 석회 제거 방법", top_k=8)
    assert res.parts and res.reranker == "same" and res.selected == 4
