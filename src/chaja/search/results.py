"""What a search returns: fused chunks, grouped into documents, with the reasons
each ranked where it did (per-path ranks, fused score, gate)."""
from __future__ import annotations

from dataclasses import dataclass, field

from chaja.documents import Chunk


@dataclass
class ChunkResult:
    chunk: Chunk
    score: float                       # fused score after weights
    keyword_rank: int | None = None    # 1-based rank in the keyword list (None = absent)
    vector_rank: int | None = None     # 1-based rank in the vector list
    title_rank: int | None = None      # 1-based rank in the title-only list, when on
    keyword_score: float | None = None
    vector_score: float | None = None  # cosine similarity
    heading_rank: int | None = None    # 1-based rank in the heading-vector list
    heading_score: float | None = None # cosine similarity of the query and the chunk's heading
    reserved: bool = False             # placed by a reserved slot, not by fused score
    ranks: dict[str, int] = field(default_factory=dict)     # list name → 1-based rank, every list it is in
    scores: dict[str, float] = field(default_factory=dict)  # list name → the list's raw score
    rerank_score: float | None = None  # the reranker's raw score (search.reranker; None = not reranked)
    rerank_probability: float | None = None  # ... mapped to [0, 1] (chaja.rerank.selection)
    fused_rank: int | None = None      # 1-based rank among the reranked candidates before reranking
    probability: float | None = None   # of being relevant, from the fused score (chaja.search.relevance; calibrated fusion)


@dataclass
class DocumentResult:
    doc_id: str
    rank: int                          # 1-based, order of first appearance among top chunks
    title: str
    score: float                       # fused score of its best chunk
    chunks: list[ChunkResult] = field(default_factory=list)

    @property
    def best(self) -> ChunkResult:
        return self.chunks[0]


@dataclass
class SearchResult:
    query: str
    terms: list[str]                   # analysed query terms
    keyword_used: bool                 # False when the gate removed the keyword list
    chunks: list[ChunkResult]          # fused top-k chunks, best first
    documents: list[DocumentResult]    # chunks grouped into documents, in order
    abstained: bool = False            # True when abstention judged nothing relevant
    reason: str | None = None          # why the search abstained
    signals: dict[str, float] = field(default_factory=dict)  # top_cosine, keyword_coverage
    lists: list[str] = field(default_factory=list)           # the candidate lists that were fused, by name
    parts: list[str] = field(default_factory=list)           # the subquestions searched too (search.multipart)
    reranker: str | None = None        # the reranker's name, when one ordered the candidates
    selected: int | None = None        # documents in the selected prefix (rerank.threshold, min_k, max_k)

    def selected_documents(self) -> list[DocumentResult]:
        """The selected prefix: every document when no reranker chose one."""
        return self.documents if self.selected is None else self.documents[: self.selected]

    def doc_ids(self) -> list[str]:
        return [d.doc_id for d in self.documents]
