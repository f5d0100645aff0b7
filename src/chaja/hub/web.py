"""The search page at ``/``: a query box, k and the filters, and each result with its
title, heading path, highlighted snippet, citation, language and why it ranked where
it did (each list's rank, the fused score, its probability of being relevant, whether
the gate kept the keyword list); a document view marks the matching passage.

One static file (``pages/search.html``: HTML, CSS and a small script, no build step)
that calls the same ``POST /v1/search`` and ``GET /v1/documents/{id}`` clients use. The
page holds no data, so it is open; where the API needs a key the page asks for one,
keeps it for the browser tab's session only and sends it as a bearer token. The URL
carries the query and filters (``/?q=보증+기간&lang=ko``), so a search can be shared;
``/`` focuses the query box, the arrow keys move through the results and Enter opens
one; the interface follows the browser's language (Korean or English).
"""
from __future__ import annotations

import functools
from importlib import resources

from fastapi import APIRouter, HTTPException
from fastapi.responses import HTMLResponse, Response

router = APIRouter(include_in_schema=False)


#: the files under ``pages/`` a browser may fetch as they are, and their media types
SHARED = {"hub-key.js": "text/javascript"}


@functools.lru_cache(maxsize=8)
def page(name: str) -> str:
    """A file of ``pages/`` (read once)."""
    return resources.files("chaja.hub").joinpath("pages", name).read_text(encoding="utf-8")


@router.get("/")
def search_page() -> HTMLResponse:
    return HTMLResponse(page("search.html"), headers={"Cache-Control": "no-cache"})


@router.get("/pages/{name}")
def shared(name: str) -> Response:
    """A script both pages load (the API key's handling, ``pages/hub-key.js``)."""
    if name not in SHARED:
        raise HTTPException(404, f"no such file: {name}")
    return Response(page(name), media_type=SHARED[name], headers={"Cache-Control": "no-cache"})
