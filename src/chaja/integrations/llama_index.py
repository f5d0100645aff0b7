"""A LlamaIndex retriever over chaja (the ``llama-index`` extra: ``llama-index-core``).

    from chaja.integrations.llama_index import ChajaRetriever
    retriever = ChajaRetriever(index=chaja.open("docs.chaja"), k=5)      # or hub="http://127.0.0.1:8750"
    nodes = retriever.retrieve("How long is the warranty?")
    engine = RetrieverQueryEngine.from_args(retriever, llm=...)

Each result is a ``NodeWithScore``: a ``TextNode`` (id = chunk id, text = the document's
best chunk, ``metadata`` = chaja's fields, :data:`chaja.integrations.source.FIELDS`) with
chaja's fused score. Filters are chaja's (``{"lang": "ko", "date_from": "2025-01-01"}``)
or LlamaIndex ``MetadataFilters`` over ``lang``, ``source``, ``doc_type`` (== or in),
``date`` (>=, >, <=, <) and ``doc_id`` (text_match: a prefix), joined by AND.
"""
from __future__ import annotations

from typing import Any

try:
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
    from llama_index.core.vector_stores.types import FilterCondition, FilterOperator, MetadataFilters
except ImportError as exc:        # pragma: no cover - depends on the environment
    raise ImportError("chaja.integrations.llama_index needs the llama-index extra: "
                      "pip install 'chaja[llama-index]'") from exc

from chaja.integrations.source import SearchSource, metadata

#: metadata a node keeps out of the text an LLM or an embedding model sees
NOT_FOR_MODELS = ["chunk_id", "rank", "score", "keyword_rank", "vector_rank", "heading_rank", "ranks",
                  "list_scores", "rerank_score", "rerank_probability", "in_selected", "lists", "keyword_used"]


def chaja_filters(filters: MetadataFilters | dict | None) -> dict | None:
    """LlamaIndex ``MetadataFilters`` as chaja filters (a chaja mapping passes as it is)."""
    if filters is None or isinstance(filters, dict):
        return filters
    if filters.condition not in (None, FilterCondition.AND):
        raise ValueError("chaja filters are joined by AND; OR is not supported")
    out: dict = {}
    for f in filters.filters:
        if isinstance(f, MetadataFilters):
            raise ValueError("nested MetadataFilters are not supported")
        op, key, value = f.operator, f.key, f.value
        if key in ("lang", "source", "doc_type") and op in (FilterOperator.EQ, FilterOperator.IN):
            out[key] = list(value) if isinstance(value, (list, tuple)) else [value]
        elif key == "date" and op in (FilterOperator.GTE, FilterOperator.GT):
            out["date_from"] = str(value)
        elif key == "date" and op in (FilterOperator.LTE, FilterOperator.LT):
            out["date_to"] = str(value)
        elif key == "doc_id" and op == FilterOperator.TEXT_MATCH:
            out["doc_id_prefix"] = str(value)
        else:
            raise ValueError(f"cannot filter on {key} {op.value} {value!r}: chaja filters lang, source, doc_type "
                             "(== or in), date (>=, <=) and doc_id (text_match, a prefix)")
    return out


class ChajaRetriever(BaseRetriever):
    """chaja's hybrid search as a LlamaIndex retriever."""

    def __init__(self, index: Any = None, hub: str | None = None, api_key: str | None = None, k: int = 5,
                 filters: MetadataFilters | dict | None = None, settings: dict | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self._source = SearchSource(index, hub, api_key)
        self.k, self.filters, self.settings = k, chaja_filters(filters), settings

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        reply = self._source.search(query_bundle.query_str, self.k, self.filters, self.settings)
        out = []
        for row in reply["results"]:
            node = TextNode(id_=row["chunk_id"], text=row["text"], metadata=metadata(row, reply),
                            excluded_llm_metadata_keys=NOT_FOR_MODELS, excluded_embed_metadata_keys=NOT_FOR_MODELS)
            out.append(NodeWithScore(node=node, score=float(row["score"])))
        return out
