"""The keys routes ask for (:mod:`chaja.hub.dependencies`): every route but the health
ones refuses a missing or wrong key, a read key may not write, a write key also reads."""
from __future__ import annotations

import pytest

from hubs import READ_KEY, WRITE_KEY
from raw import call


ROUTES = [("POST", "/v1/search", {"query": "보증"}, False), ("GET", "/v1/documents", None, False),
          ("GET", "/v1/documents/manuals/bicycle", None, False), ("GET", "/v1/stats", None, False),
          ("POST", "/v1/embeddings", {"model": "chaja", "input": "x"}, False), ("GET", "/metrics", None, False),
          ("GET", "/openapi.json", None, False),
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
