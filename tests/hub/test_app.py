"""Every route of the real hub over loopback HTTP: answers, keys, and every kind of
bad request getting a JSON error, never a 5xx, a traceback or an HTML page."""
from __future__ import annotations

import json
import select

import numpy as np
import pytest

import chaja
from chaja.client import HubError

from hubs import READ_KEY, WRITE_KEY
from raw import call, open_socket, read_response


# ---- health and keys ------------------------------------------------------------

def test_health_routes_need_no_key(hub):
    assert call(hub.url, "GET", "/healthz")[:2] == (200, {"status": "ok"})
    assert call(hub.url, "GET", "/readyz")[:2] == (200, {"status": "ready"})      # no model names without a key
    assert call(hub.url, "GET", "/readyz", key="not-a-key")[:2] == (200, {"status": "ready"})
    status, body, _ = call(hub.url, "GET", "/readyz", key=READ_KEY)
    assert status == 200 and body["status"] == "ready" and "e5" in body["encoder"]


def test_readiness_says_little_without_a_key(tmp_path):
    """A hub that is loading, then failed: the reason only to a caller with a key."""
    from fastapi.testclient import TestClient

    from chaja.config import Config
    from chaja.hub.app import create_app
    from chaja.hub.state import Hub

    cfg = Config()
    cfg.hub.api_keys = [READ_KEY]
    hub = Hub(tmp_path / "loading.chaja", cfg)
    with TestClient(create_app(hub, own=False)) as web:
        got = web.get("/readyz")
        assert got.status_code == 503 and got.headers["retry-after"] == "1"
        assert got.json() == {"status": "loading", "detail": "not ready: the hub is loading its encoders"}
        hub.error = "OSError: no model multilingual-e5-small-q4 in /srv/models"
        for key in (None, "not-a-key"):
            got = web.get("/readyz", headers={"Authorization": f"Bearer {key}"} if key else {})
            assert got.status_code == 503 and got.json() == {"status": "failed", "detail": "not ready: start-up failed"}
        got = web.get("/readyz", headers={"Authorization": f"Bearer {READ_KEY}"})
        assert got.status_code == 503 and got.json()["error"] == hub.error and "e5" in got.json()["detail"]


ROUTES = [("POST", "/v1/search", {"query": "보증"}, False), ("GET", "/v1/documents", None, False),
          ("GET", "/v1/documents/manuals/bicycle", None, False), ("GET", "/v1/stats", None, False),
          ("POST", "/v1/embeddings", {"model": "chaja", "input": "x"}, False), ("GET", "/metrics", None, False),
          ("GET", "/openapi.json", None, False), ("GET", "/docs", None, False),
          ("POST", "/v1/documents", {"documents": []}, True), ("DELETE", "/v1/documents/none", None, True),
          ("POST", "/v1/prune", {"keep": ["x"]}, True), ("POST", "/v1/files?name=a.txt", None, True)]


@pytest.mark.parametrize("method, path, body, writes", ROUTES, ids=[f"{m} {p}" for m, p, _, _ in ROUTES])
def test_every_other_route_refuses_a_missing_or_wrong_key(hub, method, path, body, writes):
    for key in (None, "not-a-key"):
        status, out, headers = call(hub.url, method, path, body, key=key)
        assert status == 401, (key, out)
        assert "Bearer" in headers.get("www-authenticate", "") and "API key" in out["detail"]
    status, out, _ = call(hub.url, method, path, body, key=READ_KEY)
    assert status == 403 if writes else status in (200, 404), out


def test_the_write_key_also_reads(hub):
    assert call(hub.url, "GET", "/v1/stats", key=WRITE_KEY)[0] == 200


# ---- search -----------------------------------------------------------------------

def test_search_matches_the_library_on_the_same_store(hub):
    queries = ["자기주식 소각 결정", "how do I reset the router password", "타이어 공기압"]
    with chaja.open(hub.store) as idx:
        for q in queries:
            local = idx.search(q, top_k=5)
            got = hub.client().search(q, 5)
            assert got["schema"] == "chaja.search/1"
            assert [r["doc_id"] for r in got["results"]] == [d.doc_id for d in local.documents]
            assert got["lists"] == local.lists


def test_search_filters(hub):
    c = hub.client()
    everything = c.search("dividend 배당", 10)["results"]
    assert {r["lang"] for r in everything} == {"ko", "en"}
    only_en = c.search("dividend 배당", 10, filters={"lang": "en"})["results"]
    assert only_en and {r["lang"] for r in only_en} == {"en"}
    prefixed = c.search("dividend 배당", 10, filters={"doc_id_prefix": "filings/"})["results"]
    assert prefixed and all(r["doc_id"].startswith("filings/") for r in prefixed)
    assert c.search("dividend", 10, filters={"source": "nowhere"})["results"] == []
    for bad in ({"colour": "red"}, {"date_from": "May 1"}, {"lang": 3}):
        with pytest.raises(HubError) as err:
            c.search("dividend", 5, filters=bad)
        assert err.value.status == 422


def test_search_settings_per_request(hub):
    c = hub.client()
    assert c.search("타이어 공기압", 5, settings={"mode": "keyword"})["lists"] == ["keyword"]
    assert "keyword" not in c.search("타이어 공기압", 5, settings={"search.mode": "vector"})["lists"]
    assert "keyword" in c.search("타이어 공기압", 5)["lists"]   # the request's setting did not stick
    for bad, status in (({"candidates": 100000}, 400), ({"mode": "psychic"}, 400), ({"gate": "maybe"}, 400), ({"index.analyzer": "kiwi"}, 400)):
        with pytest.raises(HubError) as err:
            c.search("타이어", 5, settings=bad)
        assert err.value.status == status, err.value.detail


def test_explain_says_why(hub):
    got = hub.client().search("타이어 공기압", 3, explain=True)
    assert got["explain"]["filters"] == {} and got["results"]
    assert all("vector #" in r["why"] for r in got["results"])


@pytest.mark.parametrize("body", [
    {"query": "x", "k": True}, {"query": "x", "k": 0}, {"query": "x", "k": "3"}, {"query": "x", "k": 1001},
    {"k": 3}, {"query": 5}, {"query": ""}, {"query": "x" * 4001}, {"query": "x", "prune": True}, [], "query",
])
def test_bad_search_bodies_are_422(hub, body):
    status, out, _ = call(hub.url, "POST", "/v1/search", body, key=READ_KEY)
    assert status == 422 and isinstance(out["detail"], (list, str))


def test_a_blank_query_is_400(hub):
    status, out, _ = call(hub.url, "POST", "/v1/search", {"query": "   "}, key=READ_KEY)
    assert (status, out["detail"]) == (400, "the query is empty")


def test_a_lone_surrogate_gets_a_json_error(hub):
    status, out, _ = call(hub.url, "POST", "/v1/search", raw=b'{"query": "\\ud800 abc"}', key=READ_KEY)
    assert status == 422 and "surrogate" in json.dumps(out)
    status, _, _ = call(hub.url, "POST", "/v1/search", raw=b'{"query": "ok", "filters": {"lang": "\\udfff"}}',
                        key=READ_KEY)
    assert status == 422


@pytest.mark.parametrize("raw", [b"[" * 100_000, b'{"query": ' * 50_000, b"{not json", b"\xff\xfe\x00"])
def test_malformed_json_is_a_client_error(hub, raw):
    status, out, _ = call(hub.url, "POST", "/v1/search", raw=raw, key=READ_KEY)
    assert status in (400, 422) and "detail" in out


def test_curl_style_form_content_type_is_read_as_json(hub):
    status, out, _ = call(hub.url, "POST", "/v1/search", raw=b'{"query": "tire pressure"}', key=READ_KEY,
                          headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 200 and out["results"]


# ---- methods and paths --------------------------------------------------------------

@pytest.mark.parametrize("method, path, status", [
    ("GET", "/v1/search", 405), ("PUT", "/v1/documents", 405), ("PATCH", "/v1/search", 405),
    ("OPTIONS", "/v1/search", 405), ("DELETE", "/v1/search", 405), ("GET", "/nowhere", 404),
    ("POST", "/search", 404), ("GET", "/", 404),
])
def test_wrong_methods_and_paths_get_json(hub, method, path, status):
    got, out, headers = call(hub.url, method, path, key=READ_KEY)
    assert got == status and headers["content-type"].startswith("application/json") and out["detail"]


def test_head_gets_no_html(hub):
    status, _, headers = call(hub.url, "HEAD", "/v1/search", key=READ_KEY)
    assert status == 405 and "html" not in headers.get("content-type", "")


# ---- limits ----------------------------------------------------------------------------

def test_a_body_over_the_limit_is_refused_before_it_is_sent(hub):
    sock = open_socket(hub.url)
    sock.sendall(b"POST /v1/documents HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Authorization: Bearer " + WRITE_KEY.encode() + b"\r\nContent-Length: 5000000\r\n\r\n")
    status, body = read_response(sock)
    sock.close()
    assert status == 413 and b"limit" in body


def test_a_body_that_grows_past_the_limit_is_refused(hub):
    """No Content-Length (chunked): the hub counts the bytes and stops at the limit."""
    sock = open_socket(hub.url)
    sock.sendall(b"POST /v1/documents HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                 b"Authorization: Bearer " + WRITE_KEY.encode() + b"\r\n\r\n")
    part = b"x" * 100_000
    try:
        for _ in range(30):          # 3 MB offered, the limit is 1 MB
            sock.sendall(b"%x\r\n" % len(part) + part + b"\r\n")
            if select.select([sock], [], [], 0.05)[0]:
                break                # the hub has answered
    except (BrokenPipeError, ConnectionResetError):
        pass                         # refused before the client finished: as it should be
    status, body = read_response(sock)
    sock.close()
    assert status == 413 and b"limit" in body


@pytest.mark.parametrize("length", [b"-1", b"abc", b"1e3"])
def test_a_bad_content_length_is_400(hub, length):
    sock = open_socket(hub.url)
    sock.sendall(b"POST /v1/search HTTP/1.1\r\nHost: x\r\nContent-Length: " + length + b"\r\n"
                 b"Authorization: Bearer " + READ_KEY.encode() + b"\r\n\r\n{}")
    status, _ = read_response(sock)
    sock.close()
    assert status == 400


def test_a_stalled_body_times_out_and_blocks_no_one(hub):
    stalled = open_socket(hub.url)
    stalled.sendall(b"POST /v1/search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    b"Authorization: Bearer " + READ_KEY.encode() + b"\r\nContent-Length: 100\r\n\r\n{\"query\"")
    assert hub.client().search("타이어 공기압", 3)["results"]          # served while the other waits
    assert call(hub.url, "GET", "/healthz")[0] == 200
    status, body = read_response(stalled)
    stalled.close()
    assert status == 408 and b"did not arrive" in body     # (the socket gives up after 30 s otherwise)


def test_a_batch_over_the_limit_is_refused(hub):
    docs = [{"id": f"many/{i}", "text": "x"} for i in range(51)]
    status, out, _ = call(hub.url, "POST", "/v1/documents", {"documents": docs}, key=WRITE_KEY)
    assert status == 413 and "limit is 50" in out["detail"]


# ---- documents -------------------------------------------------------------------------

def test_documents_need_ids_unless_derived(hub):
    w = hub.writer
    with pytest.raises(HubError) as err:
        w.add_documents([{"title": "no id", "text": "본문"}])
    assert err.value.status == 422 and "no id" in err.value.detail
    got = w.add_documents([{"title": "파생", "text": "내용에서 id를 얻는 문서"}], derive_ids=True)
    assert got["ids"][0].startswith("sha256-") and got["added"] == 1
    again = w.add_documents([{"title": "파생", "text": "내용에서 id를 얻는 문서"}], derive_ids=True)
    assert again["ids"] == got["ids"] and again["unchanged"] == 1        # same content, same id
    with pytest.raises(HubError) as err:
        w.add_documents([{"id": "twice", "text": "a"}, {"id": "twice", "text": "b"}])
    assert err.value.status == 422
    with pytest.raises(HubError) as err:
        w.add_documents([{"id": "both", "text": "a", "sections": [{"text": "b"}]}])
    assert err.value.status == 422
    assert w.delete(got["ids"][0])


def test_prune_flag_is_gone_from_writes(hub):
    status, _, _ = call(hub.url, "POST", "/v1/documents", {"documents": [], "prune": "false"}, key=WRITE_KEY)
    assert status == 422


def test_get_list_and_delete_documents(hub):
    w = hub.writer
    w.add_documents([{"id": "tmp/a b/1", "title": "임시", "text": "## 절\n\n임시 문서 본문", "format": "markdown",
                      "source": "test", "date": "2026/3/4"}])
    doc = w.get_document("tmp/a b/1")
    assert (doc["title"], doc["source"], doc["date"], doc["chunks"]) == ("임시", "test", "2026-03-04", 1)
    assert doc["chunk_list"][0]["heading"] == ["절"] and "임시 문서" in doc["chunk_list"][0]["text"]
    ids = [d["id"] for d in w.iter_documents(page=3)]
    assert ids == sorted(ids) and "tmp/a b/1" in ids and "manuals/bicycle" in ids
    page = w.list_documents(limit=2)
    assert len(page["documents"]) == 2 and page["next"] == page["documents"][1]["id"]
    with pytest.raises(HubError) as err:
        w.get_document("tmp/none")
    assert err.value.status == 404
    assert w.delete("tmp/a b/1") and not w.delete("tmp/a b/1")


ODD_IDS = ["tmp/ids/a\nb", "tmp/ids/tab\there", "tmp/ids/cr\r", "tmp/ids/bell\x07", "tmp/ids/100%",
           "tmp/ids/%41%2F", "tmp/ids/q?x=1&y=2", "tmp/ids/frag#1", "tmp/ids/with space ", "tmp/ids/a+b",
           "tmp/ids/a/b//c/", "/tmp/ids/lead", "tmp/ids/한국어 문서", "tmp/ids/😀", "tmp/ids/..", "..",
           "tmp/ids/x\n", "tmp/ids/x"]


def test_any_id_the_hub_stores_can_be_read_and_deleted(hub):
    w = hub.writer
    got = w.add_documents([{"id": i, "title": "odd id", "text": f"이상한 문서 번호 {n}"} for n, i in enumerate(ODD_IDS)])
    assert got["ids"] == ODD_IDS and got["added"] == len(ODD_IDS)
    try:
        for i in ODD_IDS:
            assert hub.client().get_document(i)["id"] == i, repr(i)
        assert set(ODD_IDS) <= {d["id"] for d in hub.client().iter_documents()}
        for path in ("/v1/documents/tmp%2Fids%2Fa%0Ab", "/v1/documents/tmp/ids/a%0Ab"):   # as the issue sent it
            status, out, _ = call(hub.url, "GET", path, key=READ_KEY)
            assert (status, out["id"]) == (200, "tmp/ids/a\nb")
        for i in ODD_IDS:           # "x\n" before "x": deleting the one leaves the other
            assert w.delete(i), repr(i)
            with pytest.raises(HubError) as err:
                w.get_document(i)
            assert err.value.status == 404, repr(i)
            assert not w.delete(i), repr(i)
    finally:
        for i in ODD_IDS:
            w.delete(i)


def test_a_documents_server_path_is_shown_only_to_a_caller_who_may_write(hub):
    w = hub.writer
    w.add_documents([{"id": "tmp/pathed", "text": "서버 경로가 있는 문서", "path": "/srv/private/pathed.md"}])
    try:
        reader = hub.client()
        assert "path" not in reader.get_document("tmp/pathed")
        assert all("path" not in d for d in reader.iter_documents())
        assert w.get_document("tmp/pathed")["path"] == "/srv/private/pathed.md"
        assert {d["id"]: d["path"] for d in w.iter_documents()}["tmp/pathed"] == "/srv/private/pathed.md"
    finally:
        w.delete("tmp/pathed")


def test_sections_keep_their_marks_and_bad_marks_are_422(hub):
    w = hub.writer
    text = "첫 쪽의 본문입니다. " * 20 + "\n\n" + "둘째 쪽의 본문입니다. " * 20
    second = text.index("둘째")
    marks = [{"offset": 0, "unit": "page", "first": 1, "last": 1},
             {"offset": second, "unit": "page", "first": 2, "last": 2}]
    w.add_documents([{"id": "tmp/marked", "title": "쪽", "sections": [{"heading": [], "text": text, "marks": marks}]}])
    chunks = w.get_document("tmp/marked")["chunk_list"]
    assert [c["location"]["label"] for c in chunks] == ["p. 1", "p. 2"]
    for bad in ([marks[1], marks[0]], [{**marks[0], "offset": len(text) + 1}],
                [{**marks[0], "first": 3, "last": 2}], [{**marks[0], "unit": "chapter"}]):
        with pytest.raises(HubError) as err:
            w.add_documents([{"id": "tmp/bad", "title": "x", "sections": [{"text": text, "marks": bad}]}])
        assert err.value.status == 422, bad
    assert w.delete("tmp/marked")


def test_prune_is_explicit(hub):
    w = hub.writer
    with pytest.raises(HubError) as err:
        w.prune([])
    assert err.value.status == 422 and "remove_all" in err.value.detail
    w.add_documents([{"id": "tmp/prune-me", "text": "곧 지워질 문서"}])
    keep = [d["id"] for d in w.iter_documents() if d["id"] != "tmp/prune-me"]
    got = w.prune(keep)
    assert got == {"removed": 1, "ids": ["tmp/prune-me"]}
    assert [d["id"] for d in w.iter_documents()] == keep


# ---- embeddings, stats, metrics --------------------------------------------------------------

def test_embeddings_match_the_encoder(hub):
    got = hub.client().embed(["자전거 타이어", "router password"], kind="passage")
    with chaja.open(hub.store) as idx:
        want = idx.encoder.encode_passages(["자전거 타이어", "router password"])
    assert np.allclose(np.array(got), want, atol=1e-5)
    assert np.allclose(np.linalg.norm(np.array(got), axis=1), 1.0, atol=1e-4)


@pytest.mark.parametrize("body, status", [
    ({"model": "gpt-4", "input": "x"}, 404), ({"model": "chaja", "input": []}, 422),
    ({"model": "chaja", "input": [1, 2, 3]}, 422), ({"model": "chaja", "input": "x", "dimensions": 3}, 400),
    ({"model": "chaja", "input": "x", "encoding_format": "hex"}, 422), ({"input": "x"}, 422),
])
def test_bad_embedding_requests(hub, body, status):
    assert call(hub.url, "POST", "/v1/embeddings", body, key=READ_KEY)[0] == status


def test_stats(hub):
    s = hub.client().stats()
    assert s["documents"] >= 9 and s["chunks"] >= s["documents"] and "e5" in s["encoder"]
    assert set(s["by_lang"]) == {"ko", "en"}


def test_metrics_count_requests_and_time_them(hub):
    c = hub.client()
    c.search("타이어", 3)
    call(hub.url, "POST", "/v1/search", {"k": 1}, key=READ_KEY)
    text = c.request("GET", "/metrics")
    found = {m: float(v) for m, v in
             (line.rsplit(" ", 1) for line in text.splitlines() if line and not line.startswith("#"))}
    assert found['chaja_requests_total{route="/v1/search",method="POST",status="200"}'] >= 1
    assert found['chaja_requests_total{route="/v1/search",method="POST",status="422"}'] >= 1
    assert found['chaja_request_seconds_count{route="/v1/search"}'] >= 2
    assert found['chaja_encode_seconds_count{encoder="passage+query"}'] >= 1
    assert found["chaja_store_documents"] >= 9


def test_openapi_lists_every_route(hub):
    spec = hub.client().request("GET", "/openapi.json")
    paths = set(spec["paths"])
    assert {"/v1/search", "/v1/documents", "/v1/documents/{doc_id}", "/v1/prune", "/v1/embeddings", "/v1/files",
            "/v1/stats", "/healthz", "/readyz", "/metrics"} <= paths
    assert "bearer" in json.dumps(spec["components"]["securitySchemes"]).lower()
