"""chaja behind the retriever interfaces of RAG frameworks.

- :mod:`chaja.integrations.langchain`: ``ChajaRetriever``, a LangChain ``BaseRetriever``
  (the ``langchain`` extra);
- :mod:`chaja.integrations.llama_index`: ``ChajaRetriever``, a LlamaIndex ``BaseRetriever``
  (the ``llama-index`` extra).

Both search an :class:`chaja.Index` in this process or a hub by URL
(:mod:`chaja.integrations.source`) and give each result's chunk text, with chaja's
ranks and scores per list in the metadata.
"""
