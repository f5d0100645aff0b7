"""The OpenAPI document (``/openapi.json``) and its Swagger page (``/docs``), open with
``hub.public_docs`` or on a hub without keys, else behind a read key; neither is in the
document itself."""
from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_swagger_ui_html

from chaja.hub.dependencies import docs_key

router = APIRouter(include_in_schema=False, dependencies=[docs_key])


@router.get("/openapi.json")
def openapi(request: Request) -> dict:
    return request.app.openapi()


@router.get("/docs")
def docs():
    return get_swagger_ui_html(openapi_url="/openapi.json", title="chaja hub")
