"""Embeddings from any OpenAI-compatible server (another chaja hub included).

``encoder.name = "openai:<base URL>"`` posts ``{"model": encoder.model, "input": [...]}``
to ``<base URL>/embeddings``, as OpenAI's embeddings API defines it, which vLLM, Text
Embeddings Inference, Ollama, LiteLLM and a chaja hub (``/v1/embeddings``) all serve.
Nothing beyond the standard library is needed.

- **Batches**: ``encoder.batch_size`` texts a request; rows come back in ``index`` order.
- **Retries** (:mod:`chaja.http_json`): a refused connection, a timeout, 429 and 5xx
  are tried again up to ``encoder.retries`` times, waiting ``0.5 · 2^i`` s (at most 8 s,
  or what a ``Retry-After`` header asks); any other 4xx is the caller's mistake and
  fails at once with the server's message.
- **Prefixes**: ``encoder.query_prefix`` / ``passage_prefix`` are put before each text
  (multilingual-e5 behind a plain server wants ``"query: "`` and ``"passage: "``);
  ``encoder.request_kind`` instead sends ``kind`` with each request, which a chaja hub
  reads to apply its own model's prefixes.
- **Identity**: the first request (made when the encoder is built, so a server that is
  down is reported at once) learns the dimension and the model name the server
  reports. The encoder's name is ``<served model>@openai``; the model part is what a
  store compares, so a store indexed by the same model locally (a chaja hub reports
  ``multilingual-e5-small``) accepts vectors from the server, and any other model is refused.
- **Key**: read from the environment variable ``encoder.api_key_env`` (not from a
  config file), sent as ``Authorization: Bearer``.
"""
from __future__ import annotations

import json
import os
import time
from collections.abc import Callable

import numpy as np

from chaja.encoders.base import l2_normalize
from chaja.http_json import Refused, Unreachable, post_json


class EmbeddingServerError(RuntimeError):
    """The embeddings server cannot be reached or refused a request."""


class OpenAICompatibleEncoder:
    def __init__(self, base_url: str, model: str, *, batch_size: int = 16, api_key: str | None = None,
                 query_prefix: str = "", passage_prefix: str = "", request_kind: bool = False,
                 timeout_s: float = 30.0, retries: int = 3, sleep: Callable[[float], None] = time.sleep):
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"encoder openai:{base_url}: the base URL must start with http:// or https://")
        if not model:
            raise ValueError(f"encoder openai:{base_url} needs encoder.model, the model name the server serves "
                             "(\"chaja\" for a chaja hub)")
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model, self.batch_size, self.api_key = model, batch_size, api_key
        self.query_prefix, self.passage_prefix, self.request_kind = query_prefix, passage_prefix, request_kind
        self.timeout_s, self.retries, self._sleep = timeout_s, retries, sleep
        self.requests = 0
        probe, served = self._post(["dimension probe"], "query")
        self.dim = int(probe.shape[1])
        self.name = f"{served or model}@openai"

    # ---- one request ----------------------------------------------------------
    def _post(self, texts: list[str], kind: str) -> tuple[np.ndarray, str]:
        body: dict = {"model": self.model, "input": texts, "encoding_format": "float"}
        if self.request_kind:
            body["kind"] = kind
        try:
            raw = post_json(self.url, body, api_key=self.api_key, timeout_s=self.timeout_s, retries=self.retries,
                            sleep=self._sleep, counted=self._count)
        except Refused as exc:
            raise EmbeddingServerError(f"{self.url} refused the request: {exc}") from None
        except Unreachable as exc:
            raise EmbeddingServerError(f"embeddings server {self.url}: {exc}; is it running?") from None
        try:
            return self._read(json.loads(raw.decode("utf-8")), len(texts))
        except (ValueError, KeyError, TypeError) as exc:       # a reply that is not an embeddings list
            raise EmbeddingServerError(f"{self.url} did not answer with embeddings: {exc}") from None

    def _count(self) -> None:
        self.requests += 1

    @staticmethod
    def _read(reply: dict, n: int) -> tuple[np.ndarray, str]:
        rows = sorted(reply["data"], key=lambda d: d["index"])
        if len(rows) != n:
            raise ValueError(f"{len(rows)} embeddings for {n} inputs")
        vecs = np.asarray([r["embedding"] for r in rows], dtype=np.float32)
        if vecs.ndim != 2 or not np.isfinite(vecs).all():
            raise ValueError("embeddings are not one finite vector per input")
        return vecs, str(reply.get("model") or "")

    # ---- the encoder interface -----------------------------------------------
    def _encode(self, texts: list[str], prefix: str, kind: str) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = []
        for i in range(0, len(texts), self.batch_size):
            vecs, _ = self._post([prefix + (t if t.strip() else "-") for t in texts[i:i + self.batch_size]], kind)
            if vecs.shape[1] != self.dim:
                raise EmbeddingServerError(f"{self.url} changed dimension: {vecs.shape[1]}, was {self.dim}")
            parts.append(vecs)
        return l2_normalize(np.concatenate(parts))

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts, self.query_prefix, "query")

    def encode_passages(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts, self.passage_prefix, "passage")


def from_config(base_url: str, cfg) -> OpenAICompatibleEncoder:
    """The encoder ``openai:<base_url>`` with an :class:`~chaja.config.EncoderConfig`'s settings."""
    return OpenAICompatibleEncoder(
        base_url, cfg.model, batch_size=cfg.batch_size, api_key=os.environ.get(cfg.api_key_env) or None,
        query_prefix=cfg.query_prefix, passage_prefix=cfg.passage_prefix, request_kind=cfg.request_kind,
        timeout_s=cfg.timeout_s, retries=cfg.retries)
