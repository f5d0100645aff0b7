"""The hub's errors, declared and answered: every error is JSON ``{"detail": ...}``, and on
the OpenAI-compatible routes also ``{"error": {"message", "type", "code"}}`` as OpenAI's
clients read it.

400 for a query or filter the library refuses, 401/403 for keys, 404, 405, 408, 413,
422 for a body that does not fit its schema, 503 while the encoders load or when every
reader stays busy. Each route's ``responses`` (:func:`declared`) name the statuses it
may answer and their bodies (:class:`~chaja.hub.models.Error`,
:class:`~chaja.hub.models.Invalid` for 422), so the OpenAPI document says what the hub
sends; :func:`add_handlers` makes every exception such an answer.
"""
from __future__ import annotations

import json
import math

from fastapi import FastAPI, HTTPException, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from chaja.hub.models import Error, Invalid
from chaja.hub.responses import SafeJSONResponse
from chaja.hub.state import Busy, NotReady
from chaja.stores import StoreBusy, StoreError

SAID = {
    400: "a query, filter, setting or value the library refuses; a Content-Length that is no number",
    401: "no key, or one the hub does not know (where keys are set); WWW-Authenticate: Bearer",
    403: "a read key on a write route",
    404: "no such document",
    408: "the body did not arrive within hub.body_timeout_s",
    413: "the body is over hub.max_body_bytes",
    422: "the request does not fit its schema (a list of problems), or is refused for the reason given",
    502: "a server the hub relies on (a reranker at search.reranker = http:<URL>) failed or refused",
    503: "the encoders are still loading (or failed to), every reader stayed busy, or the writer is restarting; "
         "Retry-After says when to try again",
}
#: the statuses of a route with a body (every POST and DELETE goes through the body limits)
BODY = (400, 408, 413, 422)


def declared(*codes: int, **said: str) -> dict:
    """``responses`` for a route: each status with its body model and what it means
    (``said``, as ``e404="..."``, overrides the usual words)."""
    return {code: {"model": Invalid if code == 422 else Error, "description": said.get(f"e{code}", SAID[code])}
            for code in sorted(set(codes))}


def at_most(count: int, limit: int, what: str, setting: str) -> None:
    """413 when a request holds more than ``limit`` ``what`` (the limit ``setting`` sets)."""
    if count > limit:
        raise HTTPException(413, f"{count} {what} in one request; the limit is {limit} ({setting})")


async def invalid(request: Request, exc: RequestValidationError):
    errors = [{k: v for k, v in e.items() if k != "url"} for e in exc.errors()]
    return SafeJSONResponse(jsonable_encoder({"detail": errors}), status_code=422)


async def http_error(request: Request, exc: StarletteHTTPException):
    return SafeJSONResponse({"detail": exc.detail}, status_code=exc.status_code,
                            headers=getattr(exc, "headers", None))


async def refused(request: Request, exc: ValueError):
    return SafeJSONResponse({"detail": str(exc)}, status_code=400)


async def store_failed(request: Request, exc: StoreError):
    return SafeJSONResponse({"detail": str(exc)}, status_code=500)


async def store_busy(request: Request, exc: StoreBusy):
    retry = max(1, math.ceil(getattr(exc, "retry_after_s", 5.0) or 5.0))
    return SafeJSONResponse({"detail": str(exc)}, status_code=503, headers={"Retry-After": str(retry)})


async def failed(request: Request, exc: Exception):
    return SafeJSONResponse({"detail": f"internal error: {type(exc).__name__}: {exc}"}, status_code=500)


async def not_ready(request: Request, exc: NotReady):
    return SafeJSONResponse({"detail": f"not ready: {exc}"}, status_code=503, headers={"Retry-After": "1"})


async def busy(request: Request, exc: Busy):
    return SafeJSONResponse({"detail": str(exc)}, status_code=503, headers={"Retry-After": "1"})


#: each exception and its answer (the handler of the nearest class in the exception's MRO answers)
HANDLERS = {
    RequestValidationError: invalid,
    StarletteHTTPException: http_error,
    ValueError: refused,                # QueryError and FilterError among them
    StoreError: store_failed,
    StoreBusy: store_busy,              # another process (chaja optimize) held the write lock
    Exception: failed,
    NotReady: not_ready,
    Busy: busy,
}


#: the routes OpenAI's clients call: their errors also come in OpenAI's shape
OPENAI_ROUTES = ("/v1/embeddings", "/v1/models")
#: OpenAI's error type for each status (others: ``invalid_request_error`` below 500, ``server_error`` above)
OPENAI_TYPES = {401: "authentication_error", 403: "permission_error", 404: "not_found_error",
                429: "rate_limit_error", 503: "service_unavailable"}


def openai_error(status: int, detail: object) -> dict:
    """``{"message", "type", "code"}`` as OpenAI's clients read an error (``body["error"]``)."""
    message = detail if isinstance(detail, str) else json.dumps(detail, ensure_ascii=False)
    kind = OPENAI_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    code = "model_not_found" if status == 404 and "model" in message else \
        "invalid_api_key" if status == 401 else None
    return {"message": message, "type": kind, "code": code}


def _openai_shaped(handler):
    """``handler``, its answer on the OpenAI routes carrying ``error`` beside ``detail``."""
    async def answer(request: Request, exc: Exception):
        response = await handler(request, exc)
        if not request.url.path.startswith(OPENAI_ROUTES):
            return response
        body = json.loads(response.body)
        body["error"] = openai_error(response.status_code, body.get("detail"))
        kept = {k: v for k, v in response.headers.items() if k.lower() in ("retry-after", "www-authenticate")}
        return SafeJSONResponse(body, status_code=response.status_code, headers=kept or None)
    return answer


def add_handlers(app: FastAPI) -> None:
    """Answer every exception a route raises with JSON (:data:`HANDLERS`); on the OpenAI
    routes the answer also holds ``{"error": {"message", "type", "code"}}``."""
    for exc, handler in HANDLERS.items():
        app.add_exception_handler(exc, _openai_shaped(handler))
