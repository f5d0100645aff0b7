"""Multipart questions: a deterministic split into at most two subquestions, and the
fusion of the original's and the parts' rankings (the reranker evaluation's
multipart handling: the original plus two deterministic subquestions).

Split, first rule that applies:

1. **Several questions**: text after a question mark that holds a content word
   (``useMemo는 언제 써요? 그리고 useCallback은?``) — the cut is after the first mark.
2. **Enumerations**: ``1) … 2) …``, ``1. … 2. …``, ``(1) … (2) …``, ``첫째 … 둘째 …``,
   ``first … second …`` — the cut is before the second item.
3. **Conjunctions**: Korean 그리고 / 및 / 또는 / 하고 / 와·과 (as separate words, or
   하고 ending a word), English ``and`` / ``as well as`` / ``or`` / ``also`` — the first
   one with at least two content words on each side.

No split when either part would hold fewer than two content words (``useState and
useEffect`` stays one question), or when the question compares (차이, 비교, 다른 점,
vs, difference, compare): "the difference between A and B" is one
question about both. Content words are the query analysis's
(:func:`chaja.search.query.content_words`), so particles and question endings do not count.

Fusion: each of the original and the parts is searched in full; documents are fused
by reciprocal rank, ``Σ_q 1 / (K + rank_q(d))`` with K = 60 (Cormack, Clarke and
Büttcher 2009), the original and each part weighing alike, so a page that answers one
part well enters beside the pages that answer the whole.
"""
from __future__ import annotations

import re

from chaja.search.query import content_words
from chaja.search.results import DocumentResult, SearchResult

#: RRF's constant for fusing the original's and the parts' document rankings
FUSION_K = 60
MIN_CONTENT_WORDS = 2

_COMPARISON = re.compile(
    r"차이|비교|다른\s*점|다른가|다른지|다릅니까|구별|\bvs\.?\b|\bversus\b|\bdifferen|\bcompar",
    re.IGNORECASE)
_ENUMERATION = [
    re.compile(r"(?:^|\s)\(?1[.)]\s+(?P<first>.+?)\s+\(?2[.)]\s+(?P<second>.+)$", re.S),
    re.compile(r"(?:^|\s)첫째[,.]?\s+(?P<first>.+?)\s+둘째[,.]?\s+(?P<second>.+)$", re.S),
    re.compile(r"(?:^|\s)first(?:ly)?[,:]?\s+(?P<first>.+?)[,;]?\s+second(?:ly)?[,:]?\s+(?P<second>.+)$",
               re.S | re.IGNORECASE),
]
# a conjunction as its own word (Korean and English), or 하고 ending a Korean word
_CONJUNCTIONS = re.compile(
    r"\s(?:그리고|및|또는|또|as\s+well\s+as|and\s+also|and|or|also)\s"
    r"|(?<=[가-힣])(?:하고|와|과)\s",
    re.IGNORECASE)


_LEADING = re.compile(r"^(?:그리고|그럼|또한|또|및|and\s+also|and|also|plus|or)[,\s]+", re.IGNORECASE)


def _both(first: str, second: str) -> list[str]:
    first, second = first.strip(" ,;:-"), _LEADING.sub("", second.strip(" ,;:-"))
    if len(content_words(first)) >= MIN_CONTENT_WORDS and len(content_words(second)) >= MIN_CONTENT_WORDS:
        return [first, second]
    return []


def split_question(text: str) -> list[str]:
    """The two subquestions of a multipart question, or [] when it is one question."""
    text = " ".join(text.split())
    marks = [m.end() for m in re.finditer(r"[?？]", text)]
    if marks and marks[0] < len(text):
        got = _both(text[:marks[0]], text[marks[0]:])
        if got:
            return got
    for pattern in _ENUMERATION:
        m = pattern.search(text)
        if m:
            got = _both(m.group("first"), m.group("second"))
            if got:
                return got
    if _COMPARISON.search(text):
        return []
    for m in _CONJUNCTIONS.finditer(text):
        got = _both(text[:m.start()], text[m.end():])
        if got:
            return got
    return []


def fuse(original: SearchResult, parts: list[SearchResult], names: list[str], top_k: int) -> SearchResult:
    """One result from the original's and the parts' document rankings (RRF, module
    docstring; ties go to the better best rank, then the document id): each document
    keeps its chunks from the search that ranked it best."""
    scores: dict[str, float] = {}
    best: dict[str, tuple[int, DocumentResult]] = {}
    for res in [original, *parts]:
        for d in res.documents:
            scores[d.doc_id] = scores.get(d.doc_id, 0.0) + 1.0 / (FUSION_K + d.rank)
            if d.doc_id not in best or d.rank < best[d.doc_id][0]:
                best[d.doc_id] = (d.rank, d)
    order = sorted(scores, key=lambda doc_id: (-scores[doc_id], best[doc_id][0], doc_id))[:top_k]
    documents = [DocumentResult(doc_id=doc_id, rank=i, title=best[doc_id][1].title, score=scores[doc_id],
                                chunks=best[doc_id][1].chunks) for i, doc_id in enumerate(order, 1)]
    lists = list(dict.fromkeys(name for res in [original, *parts] for name in res.lists))
    return SearchResult(query=original.query, terms=original.terms,
                        keyword_used=original.keyword_used or any(p.keyword_used for p in parts),
                        chunks=[c for d in documents for c in d.chunks], documents=documents,
                        abstained=original.abstained, reason=original.reason, signals=dict(original.signals), lists=lists, parts=names)
