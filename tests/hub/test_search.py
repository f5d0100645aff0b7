"""The search route (:mod:`chaja.hub.search`) of the real hub: the library's answer,
filters, settings per request, explanations, and bad requests as JSON errors."""
from __future__ import annotations

import json

import pytest

import chaja
from chaja.client import HubError

from hubs import READ_KEY
from raw import call


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
