"""The application (:mod:`chaja.hub.app`): every router is included, and the OpenAPI
document lists each route with the bearer scheme."""
from __future__ import annotations

import json


def test_openapi_lists_every_route(hub):
    spec = hub.client().request("GET", "/openapi.json")
    paths = set(spec["paths"])
    assert {"/v1/search", "/v1/documents", "/v1/documents/{doc_id}", "/v1/prune", "/v1/embeddings", "/v1/files", "/v1/rerank",
            "/v1/stats", "/healthz", "/readyz", "/metrics"} <= paths
    assert "bearer" in json.dumps(spec["components"]["securitySchemes"]).lower()
