import json

import pytest

from chaja.eval.beir import load_beir
from chaja.eval.export import document_record, write_documents
from chaja.eval.questions import read_questions, write_questions
from chaja.eval.squad import load_squad


def _squad(tmp_path):
    data = {"version": "t", "data": [
        {"title": "가나_다", "paragraphs": [
            {"context": "첫 문단입니다.", "qas": [{"id": "1", "question": "첫 질문?", "answers": []}]},
            {"context": "둘째 문단입니다.", "qas": [{"id": "2", "question": "둘째 질문?", "answers": []}]},
            {"context": "첫 문단입니다.", "qas": [{"id": "3", "question": "반복 질문?", "answers": []}]},
        ]},
        {"title": "라마", "paragraphs": [
            {"context": "첫 문단입니다.", "qas": [{"id": "4", "question": "다른 글?", "answers": []}]},
        ]},
    ]}
    path = tmp_path / "mini" / "squad.json"
    path.parent.mkdir()
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_squad_merges_repeats_within_an_article(tmp_path):
    s = load_squad(_squad(tmp_path))
    assert [d.id for d in s.documents] == ["가나_다#0", "가나_다#1", "라마#0"]
    assert s.documents[0].title == "가나 다" and s.documents[0].lang == "ko"
    assert s.documents[0].source == "mini" and s.documents[0].doc_type == "paragraph"
    assert {q.id: q.gold for q in s.questions} == {
        "1": ["가나_다#0"], "2": ["가나_다#1"], "3": ["가나_다#0"], "4": ["라마#0"]}
    assert (s.paragraph_entries, s.merged, s.articles) == (4, 1, 2)


def test_korquad(korquad_file):
    s = load_squad(korquad_file)
    assert (s.paragraph_entries, len(s.documents), s.merged, s.articles) == (964, 961, 3, 140)
    assert len(s.questions) == 5774 and len({q.id for q in s.questions}) == 5774
    text = {d.id: d.text for d in s.documents}
    assert len(text) == 961
    raw = json.loads(korquad_file.read_text(encoding="utf-8"))
    gold = {q.id: q.gold[0] for q in s.questions}
    for article in raw["data"]:          # every question points at a document holding its paragraph
        for para in article["paragraphs"]:
            for qa in para["qas"]:
                assert text[gold[qa["id"]]] == para["context"]
                assert gold[qa["id"]].startswith(article["title"] + "#")


def _beir(tmp_path):
    root = tmp_path / "tiny"
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text(
        '{"_id": "d1", "title": "Cells", "text": "Cells divide."}\n'
        '{"_id": "d2", "title": "", "text": "Proteins fold."}\n'
        '{"_id": "d3", "title": "Genes", "text": "Genes express."}\n', encoding="utf-8")
    (root / "queries.jsonl").write_text(
        '{"_id": "1", "text": "do cells divide"}\n{"_id": "2", "text": "protein folding"}\n'
        '{"_id": "3", "text": "nothing relevant"}\n', encoding="utf-8")
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\td1\t1\n2\td2\t1\n2\td3\t2\n3\td1\t0\n")
    return root


def test_beir_layout(tmp_path):
    b = load_beir(_beir(tmp_path))
    assert [d.id for d in b.documents] == ["d1", "d2", "d3"]
    assert b.documents[0].title == "Cells" and b.documents[0].text == "Cells divide."
    assert b.documents[0].source == "tiny" and b.documents[0].lang == "en"
    assert {q.id: q.gold for q in b.questions} == {"1": ["d1"], "2": ["d2", "d3"]}
    assert b.questions[1].extra["qrels"] == {"d2": 1, "d3": 2}
    assert (b.judgments, b.unanswerable) == (3, 1)
    write_questions(tmp_path / "q.jsonl", b.questions)              # the question file reads back
    assert [q.to_dict() for q in read_questions(tmp_path / "q.jsonl")] == [q.to_dict() for q in b.questions]
    (tmp_path / "tiny" / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\tnope\t1\n")
    with pytest.raises(ValueError, match="unknown document 'nope'"):
        load_beir(tmp_path / "tiny")


def test_scifact(scifact_dir):
    b = load_beir(scifact_dir)
    assert len(b.documents) == 5183 and len(b.questions) == 300 and b.judgments == 339
    ids = {d.id for d in b.documents}
    assert all(g in ids for q in b.questions for g in q.gold)
    assert sum(len(q.gold) > 1 for q in b.questions) > 0
    assert b.questions[0].kind == "scifact"


def test_document_export(tmp_path):
    s = load_squad(_squad(tmp_path))
    path = tmp_path / "docs.jsonl"
    assert write_documents(path, s.documents) == 3
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert rows[0] == {"id": "가나_다#0", "title": "가나 다", "text": "첫 문단입니다.", "lang": "ko",
                       "source": "mini", "doc_type": "paragraph", "date": None}
    assert rows == [document_record(d) for d in s.documents]
