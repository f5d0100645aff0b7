"""The rerank stage: a second look at the fused top candidates (``search.reranker``).

* :mod:`~chaja.rerank.base` — the interface (score pairs; ties keep candidate order);
* :mod:`~chaja.rerank.cross_encoder` — cross-encoders from a local folder, ONNX
  (``onnx:<folder>``) or sentence-transformers (``sentence-transformers:<folder>``);
* :mod:`~chaja.rerank.windows` — ``e5-windows``, built from the bundled encoder;
* :mod:`~chaja.rerank.served` — a reranker behind an HTTP rerank endpoint (``http:<base URL>``:
  text-embeddings-inference, vLLM, Jina, Cohere, a chaja hub);
* :mod:`~chaja.rerank.selection` — scores mapped to [0, 1] and the selected prefix.
"""
from __future__ import annotations

from chaja.config import RerankConfig, parse_reranker
from chaja.encoders.base import Encoder
from chaja.rerank.base import Reranker, passage_text, rerank_order

__all__ = ["Reranker", "get_reranker", "passage_text", "rerank_order"]


def get_reranker(spec: str, cfg: RerankConfig | None = None, encoder: Encoder | None = None,
                 threads: int = 0) -> Reranker | None:
    """The reranker ``spec`` names (``search.reranker``); None for ``"none"``."""
    cfg = cfg or RerankConfig()
    kind, folder = parse_reranker(spec)
    if kind == "none":
        return None
    if kind == "e5-windows":
        if encoder is None:
            raise ValueError("the e5-windows reranker needs the store's encoder (a store without vectors has none)")
        from chaja.rerank.windows import WindowReranker
        return WindowReranker(encoder, window_chars=cfg.window_chars, batch_size=cfg.batch_size)
    if kind == "http":
        from chaja.rerank.served import from_config
        return from_config(folder, cfg)
    if kind == "onnx":
        from chaja.rerank.cross_encoder import OnnxCrossEncoder
        return OnnxCrossEncoder(folder, max_length=cfg.max_length, batch_size=cfg.batch_size, threads=threads)
    from chaja.rerank.cross_encoder import SentenceTransformersCrossEncoder
    return SentenceTransformersCrossEncoder(folder, max_length=cfg.max_length, batch_size=cfg.batch_size)
