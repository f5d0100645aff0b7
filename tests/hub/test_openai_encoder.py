"""encoder.name = "openai:<base URL>": against a chaja hub on loopback (the real model
behind a real server), and against a small OpenAI-style server written here that fails
on purpose (retries, timeouts, refusals, a server that is down)."""
from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

import chaja
from chaja.config import Config, EncoderConfig
from chaja.encoders import get_encoder
from chaja.encoders.openai_compatible import EmbeddingServerError, OpenAICompatibleEncoder

from hubs import CORPUS, READ_KEY

TEXTS = ["보증 기간은 얼마나 되나요?", "How long is the warranty?", "자기주식 소각 결정", "descale the espresso machine"]


def hub_encoder(hub, monkeypatch, **extra) -> OpenAICompatibleEncoder:
    monkeypatch.setenv("CHAJA_TEST_EMBED_KEY", READ_KEY)
    cfg = EncoderConfig(name=f"openai:{hub.url}/v1", model="chaja", api_key_env="CHAJA_TEST_EMBED_KEY",
                        request_kind=True, batch_size=3, **extra)
    return get_encoder(cfg)


def test_vectors_from_a_hub_equal_the_local_encoder(hub, monkeypatch):
    enc = hub_encoder(hub, monkeypatch)
    with chaja.open(hub.store) as idx:
        local = idx.encoder
        assert enc.dim == local.dim == 384
        assert enc.name.split("@")[0] == local.name.split("@")[0]      # the same model: a store accepts it
        before = enc.requests
        got_q, got_p = enc.encode_queries(TEXTS), enc.encode_passages(TEXTS)
        assert enc.requests - before == 4                                 # 4 texts, 3 a request, twice
        np.testing.assert_allclose(got_q, local.encode_queries(TEXTS), atol=2e-5)
        np.testing.assert_allclose(got_p, local.encode_passages(TEXTS), atol=2e-5)


def test_a_store_indexed_through_a_hub_searches_like_a_local_one(hub, monkeypatch, tmp_path):
    monkeypatch.setenv("CHAJA_TEST_EMBED_KEY", READ_KEY)
    remote = Config().override([f"encoder.name=openai:{hub.url}/v1", "encoder.model=chaja",
                                "encoder.api_key_env=CHAJA_TEST_EMBED_KEY", "encoder.request_kind=true"])
    with chaja.open(tmp_path / "remote.chaja", remote) as idx:
        idx.add([CORPUS])
        remote_docs = [d.doc_id for d in idx.search("보증 기간은 얼마나 되나요?", top_k=5).documents]
    # the same store, searched with the local encoder: the store takes it as the same model
    with chaja.open(tmp_path / "remote.chaja") as idx:
        local_docs = [d.doc_id for d in idx.search("보증 기간은 얼마나 되나요?", top_k=5).documents]
    assert remote_docs == local_docs and remote_docs


def test_a_wrong_key_and_a_wrong_model_are_refused_with_the_servers_message(hub, monkeypatch):
    monkeypatch.setenv("CHAJA_TEST_EMBED_KEY", "not-the-key")
    with pytest.raises(EmbeddingServerError, match="HTTP 401"):
        get_encoder(EncoderConfig(name=f"openai:{hub.url}/v1", model="chaja", api_key_env="CHAJA_TEST_EMBED_KEY"))
    monkeypatch.setenv("CHAJA_TEST_EMBED_KEY", READ_KEY)
    with pytest.raises(EmbeddingServerError, match="HTTP 404.*not served here"):
        get_encoder(EncoderConfig(name=f"openai:{hub.url}/v1", model="text-embedding-3-small",
                                  api_key_env="CHAJA_TEST_EMBED_KEY"))


# ---- a plain OpenAI-style server that misbehaves on request ---------------------------
class Fake:
    """Answers /v1/embeddings with a fixed 8-d vector per text (its hash), after the
    failures queued in ``fail`` (a status code, or "slow" to sleep past the timeout)."""

    def __init__(self):
        self.fail: list = []
        self.seen: list[dict] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.seen.append({"body": body, "auth": self.headers.get("Authorization")})
                what = fake.fail.pop(0) if fake.fail else None
                if what == "slow":
                    time.sleep(0.6)
                if isinstance(what, int):
                    self.send_response(what)
                    self.send_header("Content-Type", "application/json")
                    if what == 429:
                        self.send_header("Retry-After", "0")
                    self.end_headers()
                    self.wfile.write(json.dumps({"error": {"message": f"failing with {what}"}}).encode())
                    return
                data = [{"object": "embedding", "index": i, "embedding": vector_of(t)}
                        for i, t in reversed(list(enumerate(body["input"])))]   # out of order on purpose
                out = json.dumps({"object": "list", "model": "fake-embedder-8", "data": data}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def vector_of(text: str) -> list[float]:
    rng = np.random.default_rng(sum(text.encode("utf-8")) + len(text))
    return [float(x) * 3 for x in rng.standard_normal(8)]


@pytest.fixture
def fake():
    f = Fake()
    yield f
    f.server.shutdown()


def plain(fake, **kw) -> OpenAICompatibleEncoder:
    waits: list[float] = []
    enc = OpenAICompatibleEncoder(fake.url, kw.pop("model", "fake-embedder-8"), sleep=waits.append, **kw)
    enc.waits = waits
    return enc


def test_batches_prefixes_order_and_identity(fake):
    enc = plain(fake, batch_size=2, query_prefix="query: ", passage_prefix="passage: ", api_key="k-123")
    assert enc.dim == 8 and enc.name == "fake-embedder-8@openai"
    got = enc.encode_passages(["a", "bb", "ccc"])
    bodies = [s["body"] for s in fake.seen[1:]]
    assert [b["input"] for b in bodies] == [["passage: a", "passage: bb"], ["passage: ccc"]]
    assert all("kind" not in b for b in bodies)              # a plain server gets the standard body only
    assert {s["auth"] for s in fake.seen} == {"Bearer k-123"}
    want = np.asarray([vector_of(f"passage: {t}") for t in ["a", "bb", "ccc"]], np.float32)
    np.testing.assert_allclose(got, want / np.linalg.norm(want, axis=1, keepdims=True), rtol=1e-6)
    assert enc.encode_queries(["a"]).shape == (1, 8) and fake.seen[-1]["body"]["input"] == ["query: a"]


def test_transient_failures_are_retried_with_backoff(fake):
    enc = plain(fake, retries=3)
    fake.fail = [503, 429, 500]
    assert enc.encode_queries(["x"]).shape == (1, 8)
    assert enc.waits == [0.5, 0.0, 2.0]                       # 0.5·2^i, Retry-After: 0 honoured


def test_a_client_error_is_not_retried(fake):
    enc = plain(fake, retries=3)
    fake.fail = [400]
    n = len(fake.seen)
    with pytest.raises(EmbeddingServerError, match="HTTP 400: failing with 400"):
        enc.encode_queries(["x"])
    assert len(fake.seen) == n + 1 and not enc.waits


def test_retries_run_out_with_a_clear_error(fake):
    enc = plain(fake, retries=2)
    fake.fail = [502, 502, 502]
    with pytest.raises(EmbeddingServerError, match=r"HTTP 502.*3 tries"):
        enc.encode_passages(["x"])


def test_a_slow_server_times_out_and_is_retried(fake):
    enc = plain(fake, retries=1, timeout_s=0.2)
    fake.fail = ["slow"]
    assert enc.encode_queries(["x"]).shape == (1, 8) and enc.waits == [0.5]
    fake.fail = ["slow", "slow"]
    with pytest.raises(EmbeddingServerError, match="timed out after 0.2 s"):
        enc.encode_queries(["x"])


def test_a_server_that_is_down_is_reported_when_the_encoder_is_built():
    with socket.socket() as s:          # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(EmbeddingServerError, match=r"cannot connect.*is it running"):
        OpenAICompatibleEncoder(f"http://127.0.0.1:{port}/v1", "m", retries=1, sleep=lambda s: None)


@pytest.mark.parametrize("kw, match", [
    ({"base_url": "127.0.0.1:8750/v1", "model": "m"}, "must start with http"),
    ({"base_url": "http://127.0.0.1:1/v1", "model": ""}, "needs encoder.model"),
])
def test_bad_settings_are_named(kw, match):
    with pytest.raises(ValueError, match=match):
        OpenAICompatibleEncoder(**kw)


def test_a_store_indexed_through_a_server_refuses_another_model(fake, tmp_path):
    from chaja.documents import Document, Section
    from chaja.stores import StoreError

    enc = plain(fake)
    with chaja.Index.open(tmp_path / "fake.chaja", encoder=enc) as idx:
        idx.add_documents([Document(id="d", title="Warranty", lang="en",
                                    sections=[Section((), "The warranty lasts two years.")])])
        assert idx.store.get_meta("encoder") == "fake-embedder-8@openai"
        assert idx.search("warranty", top_k=1).documents[0].doc_id == "d"
    with chaja.open(tmp_path / "fake.chaja") as idx:             # the bundled e5 model
        with pytest.raises(StoreError, match="indexed with fake-embedder-8@openai"):
            idx.search("warranty", top_k=1)
