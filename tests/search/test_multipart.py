"""Multipart questions (chaja.search.multipart): the deterministic split, the fusion of
the original's and the parts' rankings, and the setting through the whole search."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chaja.documents import Chunk
from chaja.search.multipart import FUSION_K, fuse, split_question
from chaja.search.results import ChunkResult, DocumentResult, SearchResult


@pytest.mark.parametrize("text, parts", [
    # several question marks
    ("useMemo는 언제 쓰나요? useCallback 의존성 배열은 어떻게 정하나요?",
     ["useMemo는 언제 쓰나요?", "useCallback 의존성 배열은 어떻게 정하나요?"]),
    ("How do I add a ref to a DOM node? Also how can I focus an input on mount?",
     ["How do I add a ref to a DOM node?", "how can I focus an input on mount?"]),
    # enumerations
    ("1) 상태를 리셋하는 방법 2) 컴포넌트 키를 바꾸면 생기는 일", ["상태를 리셋하는 방법", "컴포넌트 키를 바꾸면 생기는 일"]),
    ("(1) lazy loading a component (2) showing a fallback while it loads",
     ["lazy loading a component", "showing a fallback while it loads"]),
    ("첫째 서버 렌더링 설정 둘째 하이드레이션 오류 해결", ["서버 렌더링 설정", "하이드레이션 오류 해결"]),
    # conjunctions, Korean and English
    ("ref로 DOM 노드에 접근하는 방법 그리고 포커스 이동시키는 법", ["ref로 DOM 노드에 접근하는 방법", "포커스 이동시키는 법"]),
    ("서버 컴포넌트 데이터 가져오기 및 스트리밍 렌더링 설정", ["서버 컴포넌트 데이터 가져오기", "스트리밍 렌더링 설정"]),
    ("컨텍스트 값 전달하기와 리렌더링 줄이는 방법", ["컨텍스트 값 전달하기", "리렌더링 줄이는 방법"]),
    ("폼 입력값 검증하고 제출 후 초기화하는 법", ["폼 입력값 검증", "제출 후 초기화하는 법"]),
    ("How do I memoize an expensive calculation and when should I wrap a function in useCallback?",
     ["How do I memoize an expensive calculation", "when should I wrap a function in useCallback?"]),
    ("reset state with a key as well as keep state when a component moves",
     ["reset state with a key", "keep state when a component moves"]),
])
def test_split_finds_the_two_parts(text, parts):
    assert split_question(text) == parts


@pytest.mark.parametrize("text", [
    "React 18 자동 배칭 설명",                      # one question
    "useState and useEffect",                     # a part of one content word is not a question
    "useState와 useReducer의 차이",                 # a comparison asks about both at once
    "difference between useMemo and useCallback",
    "compare server components and client components",
    "useMemo vs useCallback performance and memory",
    "What does useRef return?",                   # one question mark, at the end
    "",
])
def test_split_leaves_one_question_whole(text):
    assert split_question(text) == []


@given(st.text(max_size=200))
@settings(max_examples=200, deadline=None)
def test_split_is_deterministic_and_yields_two_nonempty_parts_or_none(text):
    got = split_question(text)
    assert got == split_question(text)
    assert got == [] or (len(got) == 2 and all(p.strip() for p in got))


def _result(query: str, doc_ids: list[str]) -> SearchResult:
    docs = []
    for rank, doc_id in enumerate(doc_ids, 1):
        c = ChunkResult(Chunk(id=f"{doc_id}#0", doc_id=doc_id, ordinal=0, title=doc_id, heading_path=(), text=""),
                        score=1.0 / rank)
        docs.append(DocumentResult(doc_id=doc_id, rank=rank, title=doc_id, score=c.score, chunks=[c]))
    return SearchResult(query=query, terms=[], keyword_used=True, chunks=[d.best for d in docs], documents=docs,
                        lists=["vector"])


def test_fusion_is_reciprocal_rank_over_the_three_rankings():
    whole = _result("a and b", ["x", "a1", "b1", "y"])
    part_a = _result("a", ["a1", "a2", "x"])
    part_b = _result("b", ["b1", "b2", "y"])
    got = fuse(whole, [part_a, part_b], ["a", "b"], top_k=4)
    expected = {d: sum(1 / (FUSION_K + r.doc_ids().index(d) + 1) for r in (whole, part_a, part_b) if d in r.doc_ids())
                for d in ["x", "a1", "b1", "y", "a2", "b2"]}
    best = {d: min(r.doc_ids().index(d) + 1 for r in (whole, part_a, part_b) if d in r.doc_ids()) for d in expected}
    order = sorted(expected, key=lambda d: (-expected[d], best[d], d))[:4]     # ties: best rank, then id
    assert got.doc_ids() == order
    assert [d.rank for d in got.documents] == [1, 2, 3, 4]
    assert got.documents[0].score == pytest.approx(expected[order[0]])
    assert got.parts == ["a", "b"] and got.query == "a and b"
    assert [c.chunk.doc_id for c in got.chunks] == got.doc_ids()          # no duplicates, in document order


def test_multipart_through_the_whole_search(corpus_index):
    question = "How do I descale the espresso machine and where do I change the wireless password?"
    whole = corpus_index.search(question, 5)
    assert whole.parts == []                                            # off by default
    res = corpus_index.search(question, 5, settings={"multipart": True})
    assert res.parts == ["How do I descale the espresso machine", "where do I change the wireless password?"]
    assert {"manuals/espresso-machine", "manuals/router"} <= set(res.doc_ids()[:3])
    assert len(res.doc_ids()) == len(set(res.doc_ids())) <= 5
    one = corpus_index.search("타이어 공기압", 5, settings={"multipart": True})
    assert one.parts == [] and one.doc_ids() == corpus_index.search("타이어 공기압", 5).doc_ids()


def test_the_cli_shows_the_split(corpus_index, capsys):
    from chaja import cli

    question = "How do I descale the espresso machine and where do I change the wireless password?"
    args = ["search", question, "--store", str(corpus_index.store.path), "--set", "search.multipart=true"]
    assert cli.main(args + ["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["parts"] == ["How do I descale the espresso machine", "where do I change the wireless password?"]
    assert cli.main(args) == 0
    assert "also searched as two parts: How do I descale the espresso machine | where do I" in capsys.readouterr().out
