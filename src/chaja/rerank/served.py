"""A reranker served over HTTP (``search.reranker = "http:<base URL>"``): a cross-encoder
such as bge-reranker-v2-m3 or jina-reranker-v2 behind a rerank endpoint, or another
chaja hub. Nothing beyond the standard library is needed.

- **APIs** (``rerank.api``):

  * ``"cohere"`` — Cohere, Jina, vLLM and a chaja hub: ``POST <base>/rerank`` with
    ``{"model"?, "query", "documents": [str], "top_n"}`` → ``{"results": [{"index",
    "relevance_score"}]}`` (the base URL ends in its version, ``http://host:8000/v1``);
  * ``"tei"`` — Hugging Face text-embeddings-inference: ``POST <base>/rerank`` with
    ``{"query", "texts": [str], "raw_scores": true, "truncate": true}`` → ``[{"index",
    "score"}]``; raw scores are the model's logits, as the ``onnx:`` backend gives;
  * ``"auto"`` — a base URL whose last part is a version (``/v1``, ``/v2``) speaks
    ``cohere``; any other is first asked in the ``tei`` shape at ``<base>/rerank`` and,
    when that answers 400, 404, 405 or 422, in the ``cohere`` shape at
    ``<base>/v1/rerank``. The first request decides and the answer is kept.

- **Order**: servers return results sorted by score; each carries its ``index`` and the
  scores are put back in the candidates' order (the stage's stable sort keeps ties).
- **Batches**: ``rerank.batch_size`` passages a request, each with the query.
- **Retries**: a refused connection, a timeout (``rerank.timeout_s``), 429 and 5xx are
  tried again up to ``rerank.retries`` times, waiting ``0.5 · 2^i`` s (at most 8 s, or
  what a ``Retry-After`` header asks, also at most 8 s); any other 4xx fails at once
  with the server's message.
- **Key and model**: the key is read from the environment variable
  ``rerank.api_key_env`` and sent as ``Authorization: Bearer``; ``rerank.model`` is sent
  as ``model`` in the ``cohere`` shape (TEI serves one model and has no such field).
  The reranker's name is ``<rerank.model or host>@http``.
"""
from __future__ import annotations

import json
import os
import re
import time
import urllib.parse
from collections.abc import Callable, Sequence

import numpy as np

from chaja.http_json import Refused, Unreachable, post_json
from chaja.rerank.base import check_scores

#: statuses of a first ``auto`` request in the TEI shape that mean "not this API"
NOT_THIS_API = {400, 404, 405, 422}
APIS = ("auto", "cohere", "tei")


class RerankServerError(RuntimeError):
    """The rerank server cannot be reached, refused a request or answered in another shape."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class ServedReranker:
    def __init__(self, base_url: str, *, api: str = "auto", model: str = "", batch_size: int = 16,
                 api_key: str | None = None, timeout_s: float = 30.0, retries: int = 3,
                 sleep: Callable[[float], None] = time.sleep):
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"reranker http:{base_url}: the base URL must start with http:// or https://")
        if api not in APIS:
            raise ValueError(f"rerank.api: {api!r} is not one of {', '.join(APIS)}")
        self.base = base_url.rstrip("/")
        self.model, self.batch_size, self.api_key = model, max(1, int(batch_size)), api_key
        self.timeout_s, self.retries, self._sleep = float(timeout_s), int(retries), sleep
        versioned = re.search(r"/v\d+$", urllib.parse.urlsplit(self.base).path) is not None
        #: (shape, URL) once known: given, or decided by the first request
        self.api: tuple[str, str] | None = None
        if api == "cohere" or (api == "auto" and versioned):
            self.api = ("cohere", self.base + "/rerank")
        elif api == "tei":
            self.api = ("tei", self.base + "/rerank")
        self.requests = 0
        self.name = f"{model or urllib.parse.urlsplit(self.base).netloc}@http"

    # ---- the reranker interface ---------------------------------------------
    def score(self, query: str, passages: Sequence[str]) -> np.ndarray:
        if not passages:
            return np.zeros(0)
        parts = [self._batch(query, list(passages[i:i + self.batch_size]))
                 for i in range(0, len(passages), self.batch_size)]
        return check_scores(np.concatenate(parts), len(passages), self.name)

    def _batch(self, query: str, passages: list[str]) -> np.ndarray:
        if self.api is not None:
            return self._ask(self.api, query, passages)
        tei = ("tei", self.base + "/rerank")
        try:
            scores = self._ask(tei, query, passages)
        except RerankServerError as exc:
            if exc.status not in NOT_THIS_API:
                raise
            cohere = ("cohere", self.base + "/v1/rerank")
            try:
                scores = self._ask(cohere, query, passages)
            except RerankServerError as again:
                raise RerankServerError(
                    f"{self.base} speaks neither rerank API: {tei[1]} answered: {exc}; {cohere[1]} answered: "
                    f"{again}. Set rerank.api (\"tei\" or \"cohere\") and the base URL the server documents",
                    again.status) from None
            self.api = cohere
            return scores
        self.api = tei
        return scores

    # ---- one request ----------------------------------------------------------
    def _ask(self, api: tuple[str, str], query: str, passages: list[str]) -> np.ndarray:
        shape, url = api
        if shape == "tei":
            body: dict = {"query": query, "texts": passages, "raw_scores": True, "truncate": True}
        else:
            body = {"query": query, "documents": passages, "top_n": len(passages), "return_documents": False}
            if self.model:
                body["model"] = self.model
        reply = self._post(url, body)
        try:
            rows = reply if shape == "tei" else reply["results"]
            key = "score" if shape == "tei" else "relevance_score"
            out = np.full(len(passages), np.nan)
            for row in rows:
                out[int(row["index"])] = float(row[key])
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise RerankServerError(f"{url} did not answer with {shape}-shaped rerank results ({exc!r}); "
                                    "check rerank.api") from None
        if np.isnan(out).any():
            raise RerankServerError(f"{url} left out {int(np.isnan(out).sum())} of {len(passages)} passages")
        return out

    def _post(self, url: str, body: dict):
        try:
            raw = post_json(url, body, api_key=self.api_key, timeout_s=self.timeout_s, retries=self.retries,
                            sleep=self._sleep, counted=self._count, timeout_setting="rerank.timeout_s")
        except Refused as exc:
            key = " (the key comes from rerank.api_key_env)" if exc.status in (401, 403) else ""
            raise RerankServerError(f"{url} refused the request: {exc}{key}", exc.status) from None
        except Unreachable as exc:
            raise RerankServerError(f"rerank server {url}: {exc.last} ({exc.tries} tr{'ies' if exc.tries > 1 else 'y'}"
                                    f", rerank.retries); is it running?") from None
        try:
            return json.loads(raw.decode("utf-8"))
        except ValueError as exc:
            raise RerankServerError(f"{url} did not answer with JSON: {exc}") from None

    def _count(self) -> None:
        self.requests += 1


def from_config(base_url: str, cfg) -> ServedReranker:
    """The reranker ``http:<base_url>`` with a :class:`~chaja.config.RerankConfig`'s settings."""
    return ServedReranker(base_url, api=cfg.api, model=cfg.model, batch_size=cfg.batch_size,
                          api_key=os.environ.get(cfg.api_key_env) or None, timeout_s=cfg.timeout_s,
                          retries=cfg.retries)
