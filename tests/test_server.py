"""The hub over real HTTP on the loopback interface."""
import json
import threading
import urllib.error
import urllib.request

import pytest

import chaja
from chaja.server import make_server


@pytest.fixture(scope="module")
def hub(tmp_path_factory, encoder):
    idx = chaja.open(tmp_path_factory.mktemp("hub") / "s.chaja", encoder=encoder)
    httpd = make_server(idx, port=0, quiet=True)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    idx.close()


def call(base, method, path, body=None):
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    req = urllib.request.Request(base + path, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_index_search_delete_round_trip(hub):
    docs = [{"id": "k1", "title": "자기주식 소각 결정", "text": "이사회가 자기주식 소각을 의결했습니다.", "source": "DART"},
            {"id": "e1", "title": "Router setup", "text": "Choose a new wireless password under Security."}]
    status, out = call(hub, "POST", "/documents", {"documents": docs})
    assert status == 200 and out["added"] == 2
    status, out = call(hub, "POST", "/search", {"query": "소각 결정", "k": 5})
    assert status == 200 and out["results"][0]["doc_id"] == "k1"
    status, out = call(hub, "GET", "/health")
    assert out["documents"] == 2 and out["status"] == "ok"
    assert call(hub, "DELETE", "/documents/e1")[0] == 200
    assert call(hub, "DELETE", "/documents/e1")[0] == 404


def test_embeddings_are_normalised(hub):
    status, out = call(hub, "POST", "/embeddings", {"input": ["안녕하세요", "hello"], "kind": "passage"})
    assert status == 200 and len(out["data"]) == 2
    v = out["data"][0]["embedding"]
    assert len(v) == 384 and abs(sum(x * x for x in v) - 1) < 1e-4


@pytest.mark.parametrize("path, body, status", [
    ("/search", {"query": ""}, 400),
    ("/search", {"query": "x", "k": 0}, 400),
    ("/search", b"not json", 400),
    ("/documents", {"documents": [{"id": "x"}]}, 400),
    ("/embeddings", {"input": 3}, 400),
    ("/nowhere", {}, 404),
])
def test_bad_requests_get_json_errors(hub, path, body, status):
    code, out = call(hub, "POST", path, body)
    assert code == status and out["error"]
