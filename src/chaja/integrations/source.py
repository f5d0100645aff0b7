"""What a framework retriever searches: an :class:`chaja.Index` here, or a hub by URL.

Either way a search gives the rows of ``chaja search --json`` (schema ``chaja.search/1``,
``docs/search.md``), so both frameworks' adapters read one shape. :func:`metadata` is
what each result carries beside its text.
"""
from __future__ import annotations

from collections.abc import Mapping

#: result fields copied into a framework document's metadata as they are
FIELDS = ("doc_id", "chunk_id", "title", "heading", "location", "rank", "score", "lang", "source", "doc_type", "date",
          "keyword_rank", "vector_rank", "heading_rank", "ranks", "list_scores",
          "rerank_score", "rerank_probability", "in_selected")


class SearchSource:
    """``search(query, k, filters, settings) -> dict`` over an Index or a hub."""

    def __init__(self, index=None, hub: str | None = None, api_key: str | None = None, timeout: float = 120.0):
        if (index is None) == (hub is None):
            raise ValueError("give a chaja Index or a hub URL (hub=...), not both and not neither")
        self.index = index
        self.client = None
        if hub is not None:
            from chaja.client import Client

            self.client = Client(hub, api_key=api_key, timeout=timeout)

    def search(self, query: str, k: int, filters: Mapping | None = None, settings: Mapping | None = None) -> dict:
        if self.client is not None:
            return self.client.search(query, k, filters=filters, settings=settings)
        from chaja.search.result_json import result_json

        return result_json(self.index.search(query, top_k=k, filters=filters, settings=settings), k)


def metadata(row: dict, reply: dict) -> dict:
    """A result's metadata: its fields, where in its file it came from (``location``, its
    label as ``cite`` and, for a PDF page, ``page``), and which lists the search fused."""
    meta = {key: row.get(key) for key in FIELDS if key in row}
    location = row.get("location")
    if location:
        meta["cite"] = location["label"]
        if location["unit"] == "page":    # 1-based, as printed ("page_label" as LlamaIndex's PDF reader)
            meta["page"], meta["page_label"] = location["first"], str(location["first"])
    meta["lists"] = list(reply.get("lists") or [])
    meta["keyword_used"] = bool(reply.get("keyword_used"))
    return meta
