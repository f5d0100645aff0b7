"""The OpenAPI document (``/openapi.json``) and its interactive page (``/docs``), with no
request leaving the machine: Swagger UI's script and styles are served by the hub from
the ``fastapi-offline`` package (the ``server`` extra) under ``/docs/assets``.

``/openapi.json`` is open with ``hub.public_docs`` or on a hub without keys, else behind a
read key, as every data route. The page and its assets hold no data, and a browser
cannot send a key when it opens a page, so they are open: where a key is needed the page
asks for it once, keeps it in the browser session only (``sessionStorage``), and sends it
as ``Authorization: Bearer <key>`` with every request it makes, ``/openapi.json`` and
the "Try it out" calls alike.
"""
from __future__ import annotations

import html
import json
from pathlib import Path

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse

from chaja.hub.dependencies import docs_key

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


PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="stylesheet" href="{assets}/swagger-ui.css">
<link rel="icon" href="{assets}/favicon.png">
<style>
  #key-form {{ font: 15px/1.5 system-ui, sans-serif; max-width: 36rem; margin: 2rem auto; padding: 1rem 1.25rem;
              border: 1px solid #bbb; border-radius: 6px; }}
  #key-form label {{ display: block; font-weight: 600; margin-bottom: .4rem; }}
  #key-form input {{ width: 100%; box-sizing: border-box; padding: .45rem; font-size: 15px; }}
  #key-form button {{ margin-top: .6rem; padding: .4rem 1rem; font-size: 15px; }}
  #key-form p {{ color: #444; margin: .5rem 0 0; font-size: 14px; }}
</style>
</head>
<body>
<main>
<form id="key-form" hidden>
  <label for="key">API key for this hub</label>
  <input id="key" name="key" type="password" autocomplete="off" required>
  <button type="submit">Use this key</button>
  <p>Kept in this browser tab's session only and sent as <code>Authorization: Bearer</code>.</p>
</form>
<div id="swagger-ui"></div>
</main>
<script src="{assets}/swagger-ui-bundle.js"></script>
<script>
(function () {{
  var needsKey = {needs_key};
  var slot = "chaja-hub-key";
  function start() {{
    window.ui = SwaggerUIBundle({{
      url: {openapi}, dom_id: "#swagger-ui", deepLinking: true,
      requestInterceptor: function (req) {{
        var key = sessionStorage.getItem(slot);
        if (key) {{ req.headers["Authorization"] = "Bearer " + key; }}
        return req;
      }},
      responseInterceptor: function (res) {{
        if (res.status === 401 && res.url.endsWith("/openapi.json")) {{ sessionStorage.removeItem(slot); ask(); }}
        return res;
      }}
    }});
  }}
  function ask() {{
    var form = document.getElementById("key-form");
    form.hidden = false;
    document.getElementById("key").focus();
    form.onsubmit = function (event) {{
      event.preventDefault();
      sessionStorage.setItem(slot, document.getElementById("key").value);
      form.hidden = true;
      start();
    }};
  }}
  if (needsKey && !sessionStorage.getItem(slot)) {{ ask(); }} else {{ start(); }}
}})();
</script>
</body>
</html>
"""


@router.get("/docs")
def docs(request: Request) -> HTMLResponse:
    if assets_dir() is None:
        raise HTTPException(503, "the interactive API docs need the fastapi-offline package: "
                                 "pip install 'chaja[server]'; /openapi.json is served without it")
    hub = request.app.state.hub
    needs_key = request.app.state.keys.enabled and not hub.config.hub.public_docs
    return HTMLResponse(PAGE.format(title=html.escape("chaja hub API"), assets=ASSETS, openapi=json.dumps("/openapi.json"),
                                    needs_key="true" if needs_key else "false"))
