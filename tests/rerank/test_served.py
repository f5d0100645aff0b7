"""The reranker behind an HTTP endpoint (:mod:`chaja.rerank.served`), against a rerank
server written here: a real HTTP server on loopback that speaks text-embeddings-inference's
``/rerank`` or the Cohere/Jina ``/v1/rerank`` shape, scores each passage itself, returns
results sorted by score (as real servers do), and misbehaves on request."""
from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from chaja.config import Config
from chaja.rerank import get_reranker, rerank_order
from chaja.rerank.served import RerankServerError, ServedReranker

PASSAGES = ["the cat sat on the mat", "보증 기간은 2년입니다", "a dog and a cat", "nothing here",
            "cat cat cat", "고양이 cat 보증", "mat"]


def server_score(query: str, passage: str) -> float:
    """What the server computes: query words found in the passage, and a little for length."""
    words = query.split()
    return float(sum(passage.split().count(w) for w in words)) + len(passage) / 1000.0


class RerankServer:
    """``api``: "tei" (``POST /rerank``) or "cohere" (``POST /v1/rerank``); ``script``: what to
    answer before serving, one per request: a status (503, 429), "slow", or (status, body)."""

    def __init__(self, api: str, script=(), retry_after: str | None = None, slow_s: float = 1.0,
                 scores=server_score):
        self.api, self.script, self.retry_after, self.slow_s = api, list(script), retry_after, slow_s
        self.scores = scores
        self.requests: list[tuple[str, dict, dict]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append((self.path, body, dict(self.headers)))
                status, payload, headers = outer.answer(self.path, body)
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def answer(self, path: str, body: dict):
        if self.script:
            step = self.script.pop(0)
            if step == "slow":
                time.sleep(self.slow_s)
            elif isinstance(step, tuple):
                return step[0], step[1], {}
            else:
                headers = {"Retry-After": self.retry_after} if self.retry_after and step == 429 else {}
                return step, {"error": f"scripted {step}"}, headers
        if self.api == "tei" and path == "/rerank":
            if "texts" not in body:
                return 422, {"error": "missing field `texts`", "error_type": "Validation"}, {}
            rows = [{"index": i, "score": self.scores(body["query"], t)} for i, t in enumerate(body["texts"])]
            return 200, sorted(rows, key=lambda r: -r["score"]), {}
        if self.api == "cohere" and path == "/v1/rerank":
            if "documents" not in body:
                return 400, {"detail": "documents is required"}, {}
            rows = [{"index": i, "relevance_score": self.scores(body["query"], t)}
                    for i, t in enumerate(body["documents"])]
            rows = sorted(rows, key=lambda r: -r["relevance_score"])[:body.get("top_n") or len(rows)]
            return 200, {"model": body.get("model", "served"), "results": rows}, {}
        return 404, {"detail": "Not Found"}, {}

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def serve():
    running = []

    def start(api: str, **kw) -> RerankServer:
        running.append(RerankServer(api, **kw))
        return running[-1]
    yield start
    for s in running:
        s.close()


def expected(query: str, passages=PASSAGES) -> np.ndarray:
    return np.array([server_score(query, p) for p in passages])


def test_tei_scores_come_back_in_candidate_order_batch_by_batch(serve):
    server = serve("tei")
    r = ServedReranker(server.url, api="tei", batch_size=3)
    got = r.score("cat mat", PASSAGES)
    assert np.array_equal(got, expected("cat mat"))
    assert [p for p, _, _ in server.requests] == ["/rerank"] * 3          # 3 + 3 + 1 passages
    first = server.requests[0][1]
    assert first == {"query": "cat mat", "texts": PASSAGES[:3], "raw_scores": True, "truncate": True}
    assert rerank_order(got)[0] == 4 and r.name == f"{server.url.split('//')[1]}@http"


def test_cohere_shape_with_model_and_key_from_the_environment(serve, monkeypatch):
    server = serve("cohere")
    monkeypatch.setenv("RERANK_KEY_FOR_TESTS", "sekret")
    cfg = Config().override([f"search.reranker=http:{server.url}/v1", "rerank.model=bge-reranker-v2-m3",
                             "rerank.api_key_env=RERANK_KEY_FOR_TESTS", "rerank.batch_size=4"])
    r = get_reranker(cfg.search.reranker, cfg.rerank)
    assert isinstance(r, ServedReranker) and r.name == "bge-reranker-v2-m3@http"
    assert np.array_equal(r.score("보증 cat", PASSAGES), expected("보증 cat"))
    path, body, headers = server.requests[0]
    assert path == "/v1/rerank" and len(server.requests) == 2
    assert body == {"query": "보증 cat", "documents": PASSAGES[:4], "top_n": 4, "return_documents": False,
                    "model": "bge-reranker-v2-m3"}
    assert headers["Authorization"] == "Bearer sekret"


def test_auto_finds_each_api_and_remembers(serve):
    tei = serve("tei")
    r = ServedReranker(tei.url)
    assert np.array_equal(r.score("cat", PASSAGES), expected("cat")) and r.api[0] == "tei"
    cohere = serve("cohere")
    r = ServedReranker(cohere.url)                                     # no /v1: TEI first, then the Cohere shape
    assert np.array_equal(r.score("cat", PASSAGES), expected("cat"))
    assert [p for p, _, _ in cohere.requests] == ["/rerank", "/v1/rerank"]
    assert r.api == ("cohere", cohere.url + "/v1/rerank")
    r.score("dog", PASSAGES)
    assert [p for p, _, _ in cohere.requests][2:] == ["/v1/rerank"]    # remembered
    r = ServedReranker(cohere.url + "/v1/")                            # ends in a version: the Cohere shape at once
    r.score("cat", PASSAGES[:2])
    assert cohere.requests[-1][0] == "/v1/rerank" and len(cohere.requests) == 4


def test_a_server_that_speaks_neither_says_which_setting_to_change(serve):
    server = serve("none")
    with pytest.raises(RerankServerError, match="rerank.api"):
        ServedReranker(server.url).score("cat", PASSAGES)


def test_ties_keep_the_candidates_order(serve):
    server = serve("cohere", scores=lambda q, p: 1.0)
    got = ServedReranker(server.url + "/v1").score("cat", PASSAGES)
    assert rerank_order(got) == list(range(len(PASSAGES)))


def test_503_then_success_is_retried(serve):
    server = serve("tei", script=[503, 502])
    waits: list[float] = []
    r = ServedReranker(server.url, api="tei", retries=2, sleep=waits.append)
    assert np.array_equal(r.score("cat", PASSAGES), expected("cat"))
    assert len(server.requests) == 3 and waits == [0.5, 1.0]


def test_429_waits_as_retry_after_asks(serve):
    server = serve("tei", script=[429], retry_after="1")
    waits: list[float] = []
    r = ServedReranker(server.url, api="tei", retries=1, sleep=waits.append)
    assert np.array_equal(r.score("cat", PASSAGES), expected("cat"))
    assert waits == [1.0] and len(server.requests) == 2


def test_retry_after_is_capped_at_8_s_and_retries_run_out(serve):
    waits: list[float] = []
    server = serve("tei", script=[429, 429, 429], retry_after="120")
    r = ServedReranker(server.url, api="tei", retries=2, sleep=waits.append)
    with pytest.raises(RerankServerError, match=r"HTTP 429.*3 tries, rerank.retries"):
        r.score("cat", PASSAGES)
    assert waits == [8.0, 8.0] and len(server.requests) == 3


def test_a_slow_server_times_out(serve):
    server = serve("tei", script=["slow", "slow"], slow_s=1.5)
    waits: list[float] = []
    r = ServedReranker(server.url, api="tei", timeout_s=0.2, retries=1, sleep=waits.append)
    t = time.monotonic()
    with pytest.raises(RerankServerError, match=r"timed out after 0.2 s \(rerank.timeout_s\)"):
        r.score("cat", PASSAGES)
    assert time.monotonic() - t < 2.0 and len(server.requests) == 2 and waits == [0.5]


def test_a_server_that_is_down_is_refused_after_the_retries():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]                      # nothing listens once closed
    waits: list[float] = []
    r = ServedReranker(f"http://127.0.0.1:{port}", api="tei", retries=1, sleep=waits.append)
    with pytest.raises(RerankServerError, match=r"cannot connect.*2 tries.*is it running"):
        r.score("cat", PASSAGES)
    assert waits == [0.5]


@pytest.mark.parametrize("status, words", [(400, "HTTP 400: scripted 400"), (401, "rerank.api_key_env"),
                                           (413, "HTTP 413")])
def test_other_4xx_fail_at_once_with_the_servers_message(serve, status, words):
    server = serve("tei", script=[status])
    with pytest.raises(RerankServerError, match=words):
        ServedReranker(server.url, api="tei", retries=3).score("cat", PASSAGES)
    assert len(server.requests) == 1


def test_a_reply_in_the_other_shape_is_a_clear_error(serve):
    server = serve("cohere", script=[(200, [{"index": 0, "score": 1.0}]),
                                     (200, {"results": [{"index": 0, "relevance_score": 1.0}]})])
    r = ServedReranker(server.url + "/v1")
    with pytest.raises(RerankServerError, match="did not answer with cohere-shaped rerank results.*check rerank.api"):
        r.score("cat", PASSAGES[:2])
    with pytest.raises(RerankServerError, match="left out 1 of 2 passages"):
        r.score("cat", PASSAGES[:2])


def test_the_setting_is_checked():
    with pytest.raises(ValueError, match="must start with http:// or https://"):
        Config().override(["search.reranker=http:127.0.0.1:8080"])
    with pytest.raises(ValueError, match="rerank.api"):
        Config().override(["rerank.api=openai"])
    assert Config().override(["search.reranker=http:https://rerank.example/v1"]).search.reranker \
        == "http:https://rerank.example/v1"
    assert get_reranker("http:http://127.0.0.1:1", Config().rerank).api is None     # auto, nothing asked yet
