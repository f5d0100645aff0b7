"""The OpenAI-compatible routes: ``POST /v1/embeddings`` in OpenAI's request and response
shape, vectors from the store's own model (so another chaja, or any OpenAI client, can
use it), and ``GET /v1/models`` (and ``/v1/models/{id}``), which name that model so a
client can discover it. Their errors come in OpenAI's shape too (:mod:`chaja.hub.errors`)."""
from __future__ import annotations

import base64
import time

import numpy as np
from fastapi import APIRouter, HTTPException

from chaja.encoders.base import model_of
from chaja.hub.dependencies import CurrentHub, read
from chaja.hub.errors import BODY, at_most, declared
from chaja.hub.models import EmbeddingsIn

router = APIRouter(tags=["embeddings"])


@router.post("/v1/embeddings", dependencies=[read],
             responses=declared(*BODY, 401, 404, 503, e404="the model is not served here",
                                e413="the body is over hub.max_body_bytes, or the inputs over hub.max_inputs"),
             summary="OpenAI-compatible embeddings from the store's model")
def embeddings(body: EmbeddingsIn, hub: CurrentHub) -> dict:
    texts = [body.input] if isinstance(body.input, str) else body.input
    if not texts:
        raise HTTPException(422, "input is empty")
    at_most(len(texts), hub.config.hub.max_inputs, "inputs", "hub.max_inputs")
    hub.require_ready()
    enc = hub.encoder
    served = {enc.name, model_of(enc.name), "chaja"}
    if body.model not in served:
        raise HTTPException(404, f"model {body.model!r} is not served here; use {model_of(enc.name)!r}")
    if body.dimensions is not None and body.dimensions != enc.dim:
        raise HTTPException(400, f"this model gives {enc.dim} dimensions, not {body.dimensions}")
    t = time.perf_counter()
    vecs = enc.encode_queries(texts) if body.kind == "query" else enc.encode_passages(texts)
    count = getattr(enc, "token_count", None)
    tokens = sum(count(x, body.kind == "query") if count else len(x.split()) for x in texts)
    data = [{"object": "embedding", "index": i,
             "embedding": (base64.b64encode(np.asarray(v, dtype="<f4").tobytes()).decode("ascii")
                           if body.encoding_format == "base64" else [float(x) for x in v])}
            for i, v in enumerate(vecs)]
    return {"object": "list", "model": model_of(enc.name), "data": data,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            "seconds": round(time.perf_counter() - t, 6)}


def _model(hub) -> dict:
    hub.require_ready()
    return {"id": model_of(hub.encoder.name), "object": "model", "created": 0, "owned_by": "chaja",
            "dimensions": hub.encoder.dim}


@router.get("/v1/models", dependencies=[read], responses=declared(401, 503),
            summary="the embedding model served here, as OpenAI's clients list models")
def models(hub: CurrentHub) -> dict:
    return {"object": "list", "data": [_model(hub)]}


@router.get("/v1/models/{model_id:path}", dependencies=[read], responses=declared(401, 404, 503,
                                                                                  e404="the model is not served here"),
            summary="one served model, by its id")
def model(model_id: str, hub: CurrentHub) -> dict:
    served = _model(hub)
    if model_id not in {served["id"], hub.encoder.name, "chaja"}:
        raise HTTPException(404, f"model {model_id!r} is not served here; use {served['id']!r}")
    return served
