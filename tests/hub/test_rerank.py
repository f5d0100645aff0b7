"""The rerank route of the real hub (:mod:`chaja.hub.rerank`): the shared hub serves the
bundled ``e5-windows`` reranker (``rerank.depth = 0``, so its searches are not reranked),
its scores are the local reranker's (and a hub serving a tiny cross-encoder built in the
test scores as the local onnx backend), and a search on a local store that reranks through
the hub (``search.reranker = "http:<hub>/v1"``) ranks as the same search with
``e5-windows`` in this process."""
from __future__ import annotations

import numpy as np
import pytest

import chaja
from chaja.config import Config
from chaja.rerank import passage_text
from chaja.rerank.served import ServedReranker

from hubs import READ_KEY, start_hub, stop_hub
from raw import call

QUESTIONS = ["보증 기간은 얼마나 되나요?", "how do I reset the router password",
             "자전거 타이어 공기압", "quarterly revenue growth", "세척 방법"]


def local_passages(store, question: str, n: int = 12) -> list[str]:
    with chaja.open(store) as idx:
        return [passage_text(d.best.chunk) for d in idx.search(question, n).documents]


def test_scores_equal_the_local_e5_windows_reranker(hub):
    passages = local_passages(hub.store, QUESTIONS[0])
    status, body, _ = call(hub.url, "POST", "/v1/rerank", {"query": QUESTIONS[0], "documents": passages,
                                                           "return_documents": True}, key=READ_KEY)
    assert status == 200 and body["model"].startswith("e5-windows:300@")
    with chaja.open(hub.store, Config().override(["search.reranker=e5-windows"])) as idx:
        want = idx.reranker("e5-windows").score(QUESTIONS[0], passages)
    got = np.full(len(passages), np.nan)
    for row in body["results"]:
        got[row["index"]] = row["relevance_score"]
        assert row["document"]["text"] == passages[row["index"]]
    assert np.array_equal(got, want)          # the same model, the same batches: equal
    scores = [row["relevance_score"] for row in body["results"]]
    assert scores == sorted(scores, reverse=True) and len(scores) == len(passages)


def test_top_n_and_a_served_reranker_reading_the_hub(hub):
    passages = local_passages(hub.store, QUESTIONS[1], 8)
    status, body, _ = call(hub.url, "POST", "/v1/rerank", {"model": "e5-windows", "query": QUESTIONS[1],
                                                           "documents": passages, "top_n": 3}, key=READ_KEY)
    assert status == 200 and len(body["results"]) == 3 and "document" not in body["results"][0]
    got = ServedReranker(hub.url + "/v1", api_key=READ_KEY).score(QUESTIONS[1], passages)
    assert [r["index"] for r in body["results"]] == list(np.argsort(-got, kind="stable")[:3])


def test_a_search_reranked_through_the_hub_ranks_as_e5_windows_here(hub, monkeypatch):
    monkeypatch.setenv("CHAJA_RERANK_API_KEY", READ_KEY)
    # one request per search (batch_size ≥ depth), so the hub's reranker sees the passages
    # together and batches their windows as the local one does (rerank.batch_size 16 there)
    served = Config().override([f"search.reranker=http:{hub.url}/v1", "rerank.batch_size=64"])
    local = Config().override(["search.reranker=e5-windows"])
    compared = 0
    with chaja.open(hub.store, served) as a, chaja.open(hub.store, local) as b:
        for q in QUESTIONS:
            ra, rb = a.search(q, 10), b.search(q, 10)
            assert ra.reranker.endswith("@http") and rb.reranker.startswith("e5-windows")
            assert [d.doc_id for d in ra.documents] == [d.doc_id for d in rb.documents]
            sa = [d.best.rerank_score for d in ra.documents]
            sb = [d.best.rerank_score for d in rb.documents]
            assert sa == sb and ra.selected == rb.selected
            compared += len(ra.documents)
    assert compared >= 40           # every document of the corpus a question finds, reranked


@pytest.mark.parametrize("body, status", [
    ({"query": "x", "documents": []}, 422), ({"query": "", "documents": ["a"]}, 422),
    ({"query": "x", "documents": [1, 2]}, 422), ({"documents": ["a"]}, 422),
    ({"query": "x", "documents": ["a"], "top_n": 0}, 422), ({"query": "x", "documents": ["a"], "rank": 1}, 422),
    ({"query": "x", "documents": ["a"], "model": "bge-reranker-v2-m3"}, 404),
    ({"query": "x", "documents": ["a"] * 3000}, 413),
])
def test_bad_rerank_requests(hub, body, status):
    assert call(hub.url, "POST", "/v1/rerank", body, key=READ_KEY)[0] == status


def test_a_key_is_needed_where_keys_are_set(hub):
    status, _, headers = call(hub.url, "POST", "/v1/rerank", {"query": "x", "documents": ["a"]})
    assert status == 401 and headers.get("www-authenticate", headers.get("WWW-Authenticate")) == "Bearer"
    assert call(hub.url, "POST", "/v1/rerank", {"query": "x", "documents": ["a"]}, key="wrong")[0] == 401


def test_a_hub_without_a_reranker_says_so(plain_hub):
    status, body, _ = call(plain_hub.url, "POST", "/v1/rerank", {"query": "x", "documents": ["a"]})
    assert status == 503 and "search.reranker" in body["detail"]


def test_a_hub_serving_a_tiny_cross_encoder_scores_as_the_onnx_backend_here(tmp_path):
    """A cross-encoder built in the test (a randomly initialised BERT, exported to ONNX),
    served by a hub: its /v1/rerank scores, and the http reranker's over it, are the
    local ``onnx:`` backend's."""
    pytest.importorskip("torch", reason="building the tiny cross-encoder needs the dev extra (PyTorch)")
    pytest.importorskip("transformers", reason="building the tiny cross-encoder needs the dev extra (transformers)")
    from cross_encoders import TEXTS, build

    from chaja.rerank.cross_encoder import OnnxCrossEncoder

    folder = build(tmp_path / "tiny-ce")
    query, passages = TEXTS[0], TEXTS[1:]
    want = OnnxCrossEncoder(folder).score(query, passages)
    running = start_hub(tmp_path / "ce.chaja", tmp_path / "ce.log", [f"search.reranker=onnx:{folder}"])
    try:
        status, body, _ = call(running.url, "POST", "/v1/rerank", {"query": query, "documents": passages})
        assert status == 200 and len(body["results"]) == len(passages)
        got = np.zeros(len(passages))
        for row in body["results"]:
            got[row["index"]] = row["relevance_score"]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        served = ServedReranker(running.url + "/v1", batch_size=3)
        np.testing.assert_allclose(served.score(query, passages), want, rtol=1e-5, atol=1e-6)
    finally:
        stop_hub(running)
