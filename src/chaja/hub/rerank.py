"""The rerank route: ``POST /v1/rerank``, Cohere's and Jina's request and response shape,
scores from the reranker the hub is configured with (``search.reranker``), so another
chaja (``search.reranker = "http:<hub>/v1"``) or any Cohere-style client can use it.

``{"model"?, "query", "documents": [str], "top_n"?, "return_documents"?}`` →
``{"model", "results": [{"index", "relevance_score", "document"?: {"text"}}]}``, sorted by
score, highest first (equal scores keep the request's order). 503 when no reranker is
configured or the encoders are loading; 413 for more documents than ``hub.max_inputs``."""
from __future__ import annotations

from fastapi import APIRouter, HTTPException

from chaja.hub.dependencies import CurrentHub, read
from chaja.hub.errors import BODY, at_most, declared
from chaja.hub.models import RerankIn, RerankOut
from chaja.rerank import rerank_order
from chaja.rerank.served import RerankServerError

router = APIRouter(tags=["rerank"])


@router.post("/v1/rerank", dependencies=[read], response_model=None,     # the rows are built as they are sent
             responses={200: {"model": RerankOut}} | declared(
                 *BODY, 401, 404, 502, 503, e404="the model is not the hub's reranker",
                 e413="the body is over hub.max_body_bytes, or the documents over hub.max_inputs",
                 e503="no reranker is configured (search.reranker), or the encoders are still loading (or "
                      "failed to); Retry-After says when to try again"),
             summary="Cohere/Jina-compatible rerank with the hub's reranker (search.reranker)")
def rerank(body: RerankIn, hub: CurrentHub) -> dict:
    at_most(len(body.documents), hub.config.hub.max_inputs, "documents", "hub.max_inputs")
    reranker = hub.reranker()
    if reranker is None:
        raise HTTPException(503, "this hub has no reranker: start it with search.reranker set "
                                 "(e5-windows, onnx:<folder>, sentence-transformers:<folder> or http:<base URL>)")
    if body.model is not None and body.model not in {reranker.name, hub.config.search.reranker, "chaja"}:
        raise HTTPException(404, f"model {body.model!r} is not served here; use {reranker.name!r} or leave it out")
    try:
        scores = reranker.score(body.query, body.documents)
    except RerankServerError as exc:
        raise HTTPException(502, f"the hub's reranker failed: {exc}") from None
    results = [{"index": i, "relevance_score": float(scores[i])} for i in rerank_order(scores)[:body.top_n]]
    if body.return_documents:
        for row in results:
            row["document"] = {"text": body.documents[row["index"]]}
    return {"model": reranker.name, "results": results}
