"""Health routes: ``/healthz`` (the process is up), ``/readyz`` (the encoders are loaded)
and ``/metrics`` (Prometheus text, :mod:`chaja.hub.metrics`)."""
from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import PlainTextResponse

from chaja.hub.dependencies import CanRead, CurrentHub, read
from chaja.hub.errors import SAID
from chaja.hub.models import Error, Readiness
from chaja.hub.responses import SafeJSONResponse

router = APIRouter(tags=["health"])


@router.get("/healthz", summary="the process is up")
async def healthz() -> dict:
    return {"status": "ok"}


@router.get("/readyz", summary="ready once the encoders are loaded; the encoder and any start-up error to a "
                                "caller with a key",
            responses={200: {"model": Readiness},
                       503: {"model": Readiness, "description": "still loading, or start-up failed"}})
def readyz(hub: CurrentHub, told: CanRead):
    if hub.ready.is_set():
        return {"status": "ready", "encoder": hub.encoder.name} if told else {"status": "ready"}
    if hub.error:
        body = {"status": "failed", "detail": "not ready: start-up failed"}
        if told:
            body |= {"detail": f"not ready: start-up failed: {hub.error}", "error": hub.error}
    else:
        body = {"status": "loading", "detail": "not ready: the hub is loading its encoders"}
    return SafeJSONResponse(body, status_code=503, headers={"Retry-After": "1"})


@router.get("/metrics", summary="Prometheus metrics", dependencies=[read],
            response_class=PlainTextResponse,        # its errors are JSON all the same
            responses={401: {"description": SAID[401],
                             "content": {"application/json": {"schema": Error.model_json_schema()}}}})
def metrics(hub: CurrentHub) -> PlainTextResponse:
    return PlainTextResponse(hub.metrics.render(), media_type="text/plain; version=0.0.4")
