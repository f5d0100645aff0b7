"""Errors of the real hub (:mod:`chaja.hub.errors`): a wrong method or path gets JSON,
never an HTML page."""
from __future__ import annotations

import pytest

from hubs import READ_KEY
from raw import call


@pytest.mark.parametrize("method, path, status", [
    ("GET", "/v1/search", 405), ("PUT", "/v1/documents", 405), ("PATCH", "/v1/search", 405),
    ("OPTIONS", "/v1/search", 405), ("DELETE", "/v1/search", 405), ("GET", "/nowhere", 404),
    ("POST", "/search", 404), ("POST", "/", 405),       # GET / is the search page (test_search_page.py)
])
def test_wrong_methods_and_paths_get_json(hub, method, path, status):
    got, out, headers = call(hub.url, method, path, key=READ_KEY)
    assert got == status and headers["content-type"].startswith("application/json") and out["detail"]


def test_head_gets_no_html(hub):
    status, _, headers = call(hub.url, "HEAD", "/v1/search", key=READ_KEY)
    assert status == 405 and "html" not in headers.get("content-type", "")
