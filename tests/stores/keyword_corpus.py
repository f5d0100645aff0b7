"""Random documents over a small bilingual vocabulary, and the queries the keyword-engine
tests ask of them (shared by the SQLite and PostgreSQL keyword tests)."""
from __future__ import annotations

import random

import numpy as np
import pytest

from chaja.analysis import bigram_terms
from chaja.documents import Chunk, ChunkRecord, Document, Section

WORDS = ("자기주식 소각 결정 배당 지급 기준일 주주 공시 이사회 유상증자 신주 발행 보증 기간 모터 필터 세척"
         " warranty period dividend share buyback cancel treasury filter pump motor router password reset"
         " React state hook effect render component 18 2025 v3").split()
QUERIES = ["자기주식 소각 결정", "warranty 보증 기간", "dividend 배당", "React hook", "필터 세척 pump", "2025",
           "없는단어 nothing"]


def make(doc_id: str, rng: random.Random, chunks: int = 2) -> tuple[Document, list[ChunkRecord]]:
    """A document of ``chunks`` chunks: random title, headings and bodies from WORDS, a
    random language, source and date, and the same 4-d vector for every chunk."""
    title = " ".join(rng.choices(WORDS, k=3))
    lang = "ko" if rng.random() < 0.5 else "en"
    source = rng.choice(["filing", "manual", "news"])
    date = rng.choice(["2024-03-01", "2025-06-30", None])
    sections, records = [], []
    for i in range(chunks):
        heading = tuple(rng.choices(WORDS, k=rng.randint(0, 2)))
        body = " ".join(rng.choices(WORDS, k=rng.randint(3, 40)))
        sections.append(Section(heading, body))
        c = Chunk(id=f"{doc_id}#{i}", doc_id=doc_id, ordinal=i, title=title, heading_path=heading, text=body,
                  lang=lang, source=source, date=date)
        vec = np.ones(4, np.float32) / 2
        records.append(ChunkRecord(c, bigram_terms(title), bigram_terms(" ".join(heading)), bigram_terms(body), vec))
    return Document(id=doc_id, title=title, sections=sections, lang=lang, source=source, date=date), records


#: keyword() settings every engine must answer alike
SETTINGS = [{}, {"field": "title"}, {"lang": "ko"}, {"lang": "en"}, {"title_weight": 0.3, "heading_weight": 0.7},
            {"heading_weight": 0.0}]   # a weight of 0: a row hit in that column alone scores 0 and still counts


def assert_same_lists(a, ref, *, settings=SETTINGS, rel: float) -> None:
    """``a`` and ``ref`` give the same keyword lists for every query and setting: the same
    chunks in the same order, scores equal to ``rel``; and ``a`` says which query terms
    each of them holds as ``ref``'s stored terms do."""
    for q in QUERIES:
        terms = list(dict.fromkeys(bigram_terms(q)))
        for kw in settings:
            got, want = a.keyword(terms, 15, **kw), ref.keyword(terms, 15, **kw)
            assert [h.chunk_id for h in got] == [h.chunk_id for h in want], (q, kw)
            assert [h.score for h in got] == pytest.approx([h.score for h in want], rel=rel), (q, kw)
            ids = [h.chunk_id for h in want]
            assert a.matched_terms(terms, ids) == {c: t & set(terms) for c, t in ref.chunk_terms(ids).items()}
