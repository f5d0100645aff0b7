"""The hub as a FastAPI application: one router per resource, put together.

Each resource's routes live in a module of their own (see :mod:`chaja.hub` for the
list): :mod:`~chaja.hub.search`, :mod:`~chaja.hub.documents`,
:mod:`~chaja.hub.embeddings`, :mod:`~chaja.hub.rerank`, :mod:`~chaja.hub.health`,
:mod:`~chaja.hub.docs` and :mod:`~chaja.hub.judging`.
A route is given the running :class:`~chaja.hub.state.Hub` and the caller's key by
the dependencies of :mod:`chaja.hub.dependencies`, which read them from ``app.state``.
Handlers are plain functions, which FastAPI runs in its thread pool: a search borrows
a reader from the hub, a write waits for the writer. Every error is JSON
``{"detail": ...}`` (:mod:`chaja.hub.errors`). In front of the routes: the body limits
(:mod:`chaja.hub.limits`), and outermost the request metrics (:mod:`chaja.hub.metrics`).

A new resource is one more module with an ``APIRouter`` named ``router``, and one more
entry in :data:`ROUTERS`.
"""
from __future__ import annotations

import contextlib

from fastapi import FastAPI

import chaja
from chaja.hub import docs, documents, embeddings, errors, health, judging, rerank, search, web
from chaja.hub.auth import Keys
from chaja.hub.limits import BodyLimits
from chaja.hub.metrics import RequestMetrics
from chaja.hub.responses import SafeJSONResponse
from chaja.hub.state import Hub

#: every router of the hub, included in this order
ROUTERS = (docs.router, web.router, health.router, search.router, documents.router, embeddings.router,
           rerank.router, judging.router)


def create_app(hub: Hub, *, own: bool = True) -> FastAPI:
    """The application over ``hub``; with ``own`` it starts the hub when the server
    starts (encoders in the background) and closes it when the server stops."""
    app = FastAPI(title="chaja hub", version=chaja.__version__, default_response_class=SafeJSONResponse,
                  lifespan=_lifespan(hub, own),
                  description="Hybrid search for Korean and English documents.",
                  openapi_url=None, docs_url=None, redoc_url=None)
    app.state.hub = hub
    app.state.keys = Keys.from_config(hub.config.hub)
    errors.add_handlers(app)
    for router in ROUTERS:
        app.include_router(router)
    cfg = hub.config.hub
    app.add_middleware(BodyLimits, max_bytes=cfg.max_body_bytes, timeout_s=cfg.body_timeout_s)
    app.add_middleware(RequestMetrics, metrics=hub.metrics)    # outermost: refusals by the limits are counted too
    return app


def _lifespan(hub: Hub, own: bool):
    """Start the hub with the server and close it after, where the application owns it."""
    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        if own:
            hub.start()
        try:
            yield
        finally:
            if own:
                hub.close()
    return lifespan
