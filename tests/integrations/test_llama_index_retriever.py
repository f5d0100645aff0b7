"""The LlamaIndex retriever over the fixture store, through LlamaIndex's own calls
(retrieve, a query engine with LlamaIndex's mock LLM), with chaja and LlamaIndex filters."""
from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core", reason="the llama-index extra: pip install 'chaja[llama-index]'")

from llama_index.core.query_engine import RetrieverQueryEngine  # noqa: E402
from llama_index.core.retrievers import BaseRetriever  # noqa: E402
from llama_index.core.schema import MetadataMode, NodeWithScore  # noqa: E402
from llama_index.core.vector_stores.types import (  # noqa: E402
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
)

from chaja.integrations.llama_index import ChajaRetriever, chaja_filters  # noqa: E402


def test_retrieve_gives_nodes_with_chajas_scores(corpus_index):
    retriever = ChajaRetriever(index=corpus_index, k=3)
    assert isinstance(retriever, BaseRetriever)
    nodes = retriever.retrieve("how do I descale the espresso machine")
    want = corpus_index.search("how do I descale the espresso machine", top_k=3)
    assert all(isinstance(n, NodeWithScore) for n in nodes)
    assert [n.node.metadata["doc_id"] for n in nodes] == [d.doc_id for d in want.documents]
    first = nodes[0]
    assert first.node.node_id == want.documents[0].best.chunk.id
    assert first.node.get_content() == want.documents[0].best.chunk.text
    assert first.score == pytest.approx(want.documents[0].score)
    assert "vector" in first.node.metadata["ranks"]
    # what an LLM sees: the title and heading, not the rank bookkeeping
    shown = first.node.get_content(metadata_mode=MetadataMode.LLM)
    assert "list_scores" not in shown and first.node.metadata["title"] in shown


def test_a_query_engine_answers_from_chaja_nodes(corpus_index):
    from llama_index.core.llms import MockLLM

    engine = RetrieverQueryEngine.from_args(ChajaRetriever(index=corpus_index, k=2), llm=MockLLM(max_tokens=8))
    response = engine.query("wireless password")
    assert response.source_nodes[0].node.metadata["doc_id"] == "manuals/router"
    assert len(response.source_nodes) <= 2


def test_llama_index_filters_become_chaja_filters(corpus_index):
    filters = MetadataFilters(filters=[
        MetadataFilter(key="lang", value="ko"),
        MetadataFilter(key="doc_type", value=["filing", "news"], operator=FilterOperator.IN),
        MetadataFilter(key="date", value="2020-01-01", operator=FilterOperator.GTE),
        MetadataFilter(key="doc_id", value="filings/", operator=FilterOperator.TEXT_MATCH),
    ])
    assert chaja_filters(filters) == {"lang": ["ko"], "doc_type": ["filing", "news"], "date_from": "2020-01-01",
                                      "doc_id_prefix": "filings/"}
    nodes = ChajaRetriever(index=corpus_index, k=5, filters=MetadataFilters(filters=[
        MetadataFilter(key="lang", value="ko")])).retrieve("소각 machine")
    assert nodes and {n.node.metadata["lang"] for n in nodes} == {"ko"}
    assert ChajaRetriever(index=corpus_index, k=5, filters={"lang": "en"}).retrieve("소각 machine")[0] \
        .node.metadata["lang"] == "en"


@pytest.mark.parametrize("filters, match", [
    (MetadataFilters(filters=[MetadataFilter(key="lang", value="ko")], condition=FilterCondition.OR), "AND"),
    (MetadataFilters(filters=[MetadataFilter(key="author", value="x")]), "cannot filter on author"),
    (MetadataFilters(filters=[MetadataFilter(key="lang", value="ko", operator=FilterOperator.NE)]), "cannot filter"),
])
def test_filters_chaja_cannot_apply_are_refused(filters, match):
    with pytest.raises(ValueError, match=match):
        chaja_filters(filters)
