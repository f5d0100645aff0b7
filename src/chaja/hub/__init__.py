"""The hub: chaja over HTTP, on FastAPI and uvicorn (the ``server`` extra).

    chaja serve --store docs.chaja            # http://127.0.0.1:8750, docs at /docs

Routes (all JSON; OpenAPI at ``/openapi.json``):

    POST   /v1/search               query, k, filters, settings, explain → schema chaja.search/1
    POST   /v1/documents            a batch of documents (ids required, or derive_ids)
    GET    /v1/documents            paged list (after, limit)
    GET    /v1/documents/{id}       one document with its chunks
    DELETE /v1/documents/{id}       remove one document
    POST   /v1/prune                remove every document not in ``keep`` (its own route)
    GET    /v1/stats                what the store holds
    POST   /v1/embeddings           OpenAI's request and response shape
    GET    /v1/models               the served embedding model, as OpenAI's clients list models
    POST   /v1/rerank               Cohere's and Jina's shape, scored by search.reranker
    GET    /healthz, /readyz        alive; ready once the encoders are loaded
    GET    /metrics                 Prometheus text format
    GET    /, /judge, /docs         the search page, the judging page (chaja serve --judging DIR), the API docs

Each resource is a router of its own (:mod:`chaja.hub.search`, :mod:`chaja.hub.documents`,
:mod:`chaja.hub.embeddings`, :mod:`chaja.hub.rerank`, :mod:`chaja.hub.health`,
:mod:`chaja.hub.docs`, :mod:`chaja.hub.web`, :mod:`chaja.hub.judging`), put together
by :func:`chaja.hub.app.create_app`; routes get the hub and the caller's key from
:mod:`chaja.hub.dependencies`, and errors are answered by :mod:`chaja.hub.errors`.

Searches run in parallel on a pool of read connections that share one encoder;
writes go through one writer at a time (:mod:`chaja.hub.state`). Keys, limits and
metrics: :mod:`chaja.hub.auth`, :mod:`chaja.hub.limits`, :mod:`chaja.hub.metrics`.
"""
from __future__ import annotations


def require_server_extra() -> None:
    """Raise ImportError naming the extra when FastAPI or uvicorn is missing."""
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise ImportError(f"the hub needs the server extra ({exc.name} is missing): "
                          "pip install 'chaja[server]'") from None
