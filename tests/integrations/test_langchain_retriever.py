"""The LangChain retriever over the fixture store, through LangChain's own calls
(invoke, batch, a runnable chain), with filters and per-list metadata."""
from __future__ import annotations

import pytest

pytest.importorskip("langchain_core", reason="the langchain extra: pip install 'chaja[langchain]'")

from langchain_core.documents import Document  # noqa: E402
from langchain_core.retrievers import BaseRetriever  # noqa: E402
from langchain_core.runnables import RunnableLambda  # noqa: E402

from chaja.integrations.langchain import ChajaRetriever  # noqa: E402


def test_invoke_gives_langchain_documents_with_chajas_ranks(corpus_index):
    retriever = ChajaRetriever(index=corpus_index, k=3)
    assert isinstance(retriever, BaseRetriever)
    docs = retriever.invoke("자기주식 소각 결정")
    want = corpus_index.search("자기주식 소각 결정", top_k=3)
    assert all(isinstance(d, Document) for d in docs)
    assert [d.metadata["doc_id"] for d in docs] == [d.doc_id for d in want.documents]
    first = docs[0]
    assert first.metadata["doc_id"] == "filings/share-cancellation"
    assert first.page_content == want.documents[0].best.chunk.text
    assert first.id == first.metadata["chunk_id"] == want.documents[0].best.chunk.id
    assert first.metadata["rank"] == 1 and first.metadata["ranks"]["keyword"] >= 1
    assert set(first.metadata["ranks"]) <= set(first.metadata["lists"])
    assert first.metadata["keyword_used"] is True


def test_filters_and_k_on_the_retriever_or_per_call(corpus_index):
    english = ChajaRetriever(index=corpus_index, k=4, filters={"lang": "en"})
    assert {d.metadata["lang"] for d in english.invoke("소각 machine")} == {"en"}
    retriever = ChajaRetriever(index=corpus_index, k=4)
    korean = retriever.invoke("소각 machine", filters={"lang": "ko"}, k=2)
    assert len(korean) <= 2 and {d.metadata["lang"] for d in korean} == {"ko"}
    assert retriever.invoke("espresso", filters={"doc_id_prefix": "manuals/"}, k=2)[0].metadata["doc_id"] \
        .startswith("manuals/")


def test_batch_and_a_chain(corpus_index):
    retriever = ChajaRetriever(index=corpus_index, k=2)
    got = retriever.batch(["how do I descale the espresso machine", "wireless password"])
    assert [g[0].metadata["doc_id"] for g in got] == ["manuals/espresso-machine", "manuals/router"]
    chain = retriever | RunnableLambda(lambda docs: "\n\n".join(d.page_content for d in docs))
    context = chain.invoke("wireless password")
    assert isinstance(context, str) and context.startswith(got[1][0].page_content)


def test_an_index_or_a_hub_but_not_both(corpus_index):
    with pytest.raises(ValueError, match="not both"):
        ChajaRetriever()
    with pytest.raises(ValueError, match="not both"):
        ChajaRetriever(index=corpus_index, hub="http://127.0.0.1:1")
