"""Aligned vectors only where a store holds two languages: a store of one language is
indexed without them, and the run that brings a second language gives the chunks written
before theirs, as a run that encoded every chunk would (real e5 and USE encoders)."""
from __future__ import annotations

import sqlite3

import numpy as np

import chaja
from chaja import aligned_fill
from chaja.documents import Document, Section

KOREAN = [Document(id="kettle-ko", title="전기 주전자 설명서", lang="ko", sections=[
              Section(("보증",), "보증 기간은 구입일로부터 2년입니다. 영수증을 보관하세요."),
              Section(("세척",), "물때는 구연산을 넣고 끓인 뒤 헹궈 주세요.")]),
          Document(id="notice-ko", title="사무실 이전 안내", lang="ko", sections=[
              Section((), "다음 달부터 사무실이 3층으로 옮깁니다. 주차 등록을 다시 해 주세요.")])]
ENGLISH = [Document(id="kettle-en", title="Electric kettle manual", lang="en", sections=[
               Section(("Warranty",), "The warranty lasts two years from the date of purchase.")])]


def aligned_rows(path) -> dict[str, int]:
    with sqlite3.connect(path) as db:
        return dict(db.execute("SELECT id, aligned_vector IS NOT NULL FROM chunks"))


def aligned_of(idx, field="aligned") -> dict[str, np.ndarray]:
    mat, ids, _ = idx.store._vectors(field)
    return {cid: np.asarray(mat[i]) for i, cid in enumerate(ids)}


def test_one_language_then_two(tmp_path):
    path = tmp_path / "grow.chaja"
    with chaja.open(path) as idx:
        idx.add_documents(KOREAN)
        assert set(aligned_rows(path).values()) == {0}            # one language: none encoded
        idx.add_documents(ENGLISH)
        assert set(aligned_rows(path).values()) == {1}            # two: every chunk has them now
        grown, grown_names = aligned_of(idx), aligned_of(idx, "aligned_heading")
        assert idx.store.get_meta(aligned_fill.PENDING_KEY) == "0"
        found = idx.search("how long is the warranty", top_k=3, filters={"lang": "ko"})
        assert found.chunks[0].chunk.doc_id == "kettle-ko"        # across languages, by the aligned lists
    with chaja.open(tmp_path / "once.chaja") as once:
        once.add_documents(KOREAN + ENGLISH)
        whole, whole_names = aligned_of(once), aligned_of(once, "aligned_heading")
    assert sorted(grown) == sorted(whole) and sorted(grown_names) == sorted(whole_names)
    for cid in whole:
        assert float(grown[cid] @ whole[cid]) > 0.9999, cid
    for cid in whole_names:
        assert float(grown_names[cid] @ whole_names[cid]) > 0.9999, cid


def test_a_fill_left_unfinished_is_finished_by_the_next_run(tmp_path):
    path = tmp_path / "stopped.chaja"
    with chaja.open(path) as idx:
        idx.add_documents(KOREAN + ENGLISH)
    with sqlite3.connect(path) as db:                # as a run stopped in the middle of its fill leaves it
        db.execute("UPDATE chunks SET aligned_vector = NULL, aligned_heading_vector = NULL"
                   " WHERE doc_id = 'notice-ko'")
        db.execute("INSERT OR REPLACE INTO meta VALUES (?, '1')", (aligned_fill.PENDING_KEY,))
    with chaja.open(path) as idx:
        report = idx.add_documents(KOREAN + ENGLISH)           # nothing new to index
        assert report.unchanged == 3
        assert set(aligned_rows(path).values()) == {1}
        assert idx.store.get_meta(aligned_fill.PENDING_KEY) == "0"
