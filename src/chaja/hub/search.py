"""The search route: ``POST /v1/search``, the same result as ``chaja search --json``
(schema chaja.search/1), with filters, the settings ``hub.request_settings`` allows,
and an explanation on request."""
from __future__ import annotations

from fastapi import APIRouter, HTTPException

from chaja.hub.dependencies import CurrentHub, read
from chaja.hub.errors import BODY, declared
from chaja.hub.models import SearchIn
from chaja.search.result_json import result_json, why_line

router = APIRouter(tags=["search"])


def _settings(hub, asked: dict) -> dict:
    """The request's settings, without their ``search.`` prefix; 400 for one it may not set."""
    allowed = {s.removeprefix("search.") for s in hub.config.hub.request_settings}
    settings = {}
    for key, value in asked.items():
        name = key.removeprefix("search.")
        if name not in allowed:
            raise HTTPException(400, f"setting {key!r} cannot be set per request; "
                                     f"allowed: {', '.join(sorted(allowed)) or 'none'}")
        settings[name] = value
    return settings


@router.post("/v1/search", dependencies=[read], responses=declared(*BODY, 401, 503),
             summary="hybrid search; the same result as `chaja search --json` (schema chaja.search/1)")
def search(body: SearchIn, hub: CurrentHub) -> dict:
    settings = _settings(hub, body.settings)
    filters = body.filters.model_dump(exclude_none=True) if body.filters else None
    with hub.reader() as idx:
        res = idx.search(body.query, body.k, filters=filters, settings=settings)
        top_k = body.k or idx.config.search.top_k
    out = result_json(res, top_k)
    if body.explain:
        out["explain"] = {"filters": filters or {}, "settings": settings, "abstained": res.abstained}
        for row, d in zip(out["results"], res.documents):
            row["why"] = why_line(d, res.keyword_used)
    return out
