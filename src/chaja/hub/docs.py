"""The OpenAPI document (``/openapi.json``) and its interactive page (``/docs``), with no
request leaving the machine: Swagger UI's script and styles are served by the hub from
the ``fastapi-offline`` package (the ``server`` extra) under ``/docs/assets``.

``/openapi.json`` is open with ``hub.public_docs`` or on a hub without keys, else behind a
read key, as every data route. The page and its assets hold no data, and a browser
cannot send a key when it opens a page, so they are open: where a key is needed the page
asks for it once, keeps it in the browser session only (``sessionStorage``), and sends it
as ``Authorization: Bearer <key>`` with every request it makes, ``/openapi.json`` and
the "Try it out" calls alike (``pages/api-docs.html`` and ``pages/hub-key.js``, which the
search page shares: :mod:`chaja.hub.web`).
"""
from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse

from chaja.hub.dependencies import docs_key
from chaja.hub.web import page

router = APIRouter(include_in_schema=False)
ASSETS = "/docs/assets"
#: the assets the page loads, and their media types
SERVED = {"swagger-ui-bundle.js": "text/javascript", "swagger-ui.css": "text/css", "favicon.png": "image/png"}


def assets_dir() -> Path | None:
    """Swagger UI's files (a version that reads OpenAPI 3.1, as FastAPI writes it), from the
    ``fastapi-offline`` package (None when it is missing)."""
    try:
        import fastapi_offline
    except ImportError:
        return None
    return Path(fastapi_offline.__file__).with_name("static")


@router.get("/openapi.json", dependencies=[docs_key])
def openapi(request: Request) -> dict:
    return request.app.openapi()


@router.get(ASSETS + "/{name}")
def asset(name: str):
    folder = assets_dir()
    if name not in SERVED or folder is None or not (folder / name).is_file():
        raise HTTPException(404, f"no such asset: {name}")
    return FileResponse(folder / name, media_type=SERVED[name], headers={"Cache-Control": "max-age=86400"})


@router.get("/docs")
def docs() -> HTMLResponse:
    if assets_dir() is None:
        raise HTTPException(503, "the interactive API docs need the fastapi-offline package: "
                                 "pip install 'chaja[server]'; /openapi.json is served without it")
    return HTMLResponse(page("api-docs.html"), headers={"Cache-Control": "no-cache"})
