"""A LangChain retriever over chaja (the ``langchain`` extra: ``langchain-core``).

    from chaja.integrations.langchain import ChajaRetriever
    retriever = ChajaRetriever(index=chaja.open("docs.chaja"), k=5)      # or hub="http://127.0.0.1:8750"
    docs = retriever.invoke("보증 기간은 얼마나 되나요?", filters={"lang": "ko"})

Each result is a ``langchain_core.documents.Document`` whose ``page_content`` is the
document's best chunk and whose ``metadata`` holds chaja's fields
(:data:`chaja.integrations.source.FIELDS`: ids, title, heading path, rank, fused score,
rank and raw score in every list, and the lists fused). ``filters`` and ``k`` may be set
on the retriever or given to each call; ``settings`` changes ``search.*`` settings.
"""
from __future__ import annotations

from typing import Any

try:
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
    from pydantic import ConfigDict, PrivateAttr
except ImportError as exc:        # pragma: no cover - depends on the environment
    raise ImportError("chaja.integrations.langchain needs the langchain extra: pip install 'chaja[langchain]'") from exc

from chaja.integrations.source import SearchSource, metadata


class ChajaRetriever(BaseRetriever):
    """chaja's hybrid search as a LangChain retriever."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index: Any = None
    hub: str | None = None
    api_key: str | None = None
    k: int = 5
    filters: dict | None = None
    settings: dict | None = None
    _source: SearchSource = PrivateAttr()

    def model_post_init(self, context: Any) -> None:
        self._source = SearchSource(self.index, self.hub, self.api_key)

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun,
                                k: int | None = None, filters: dict | None = None,
                                settings: dict | None = None) -> list[Document]:
        reply = self._source.search(query, k or self.k, filters if filters is not None else self.filters,
                                    settings if settings is not None else self.settings)
        return [Document(page_content=row["text"], metadata=metadata(row, reply), id=row["chunk_id"])
                for row in reply["results"]]
