import pytest

from chaja.eval.questions import ABSTAIN, Question
from chaja.eval.trec import (TrecFormatError, order_preserving_scores, qrels_from_questions, questions_from_qrels,
                             read_qrels, read_run, write_qrels, write_run)


def test_qrels_round_trip_and_beir_form(tmp_path):
    qs = [Question("q1", "t", gold=["a", "b"]), Question("q2", "u", judgments={"c": 3, "d": 0, "e": ABSTAIN})]
    qrels = qrels_from_questions(qs)
    assert qrels == {"q1": {"a": 1, "b": 1}, "q2": {"c": 3, "d": 0}}   # abstentions are not exported
    write_qrels(tmp_path / "q.qrels", qrels)
    assert read_qrels(tmp_path / "q.qrels") == qrels
    (tmp_path / "beir.tsv").write_text("query-id\tcorpus-id\tscore\n1\t31715818\t1\n1\t9\t2\n3\t14717500\t1\n")
    assert read_qrels(tmp_path / "beir.tsv") == {"1": {"31715818": 1, "9": 2}, "3": {"14717500": 1}}
    back = questions_from_qrels(qrels, {"q2": "a question"})
    assert [(q.id, q.judgments) for q in back] == [("q2", {"c": 3, "d": 0})]


def test_bad_lines(tmp_path):
    (tmp_path / "bad.qrels").write_text("q1 0 a 1\nq1 0 b x\n")
    with pytest.raises(TrecFormatError, match="bad.qrels:2:"):
        read_qrels(tmp_path / "bad.qrels")
    (tmp_path / "bad.run").write_text("q1 Q0 a 1 0.5 tag\nq1 Q0 b 2\n")
    with pytest.raises(TrecFormatError, match="bad.run:2:"):
        read_run(tmp_path / "bad.run")


def test_run_keeps_order_even_when_scores_do_not(tmp_path):
    assert order_preserving_scores([0.9, 0.5, 0.1]) == [0.9, 0.5, 0.1]
    assert order_preserving_scores([0.5, 0.9, 0.9]) == [3.0, 2.0, 1.0]
    run = {"q1": [("a", 0.2), ("b", 0.7), ("c", 0.1)], "q2": [("x", 3.0), ("y", 1.5)]}
    write_run(tmp_path / "r.trec", run, tag="my run")
    back = read_run(tmp_path / "r.trec")
    assert [d for d, _ in back["q1"]] == ["a", "b", "c"]
    assert back["q2"] == [("x", 3.0), ("y", 1.5)]
    assert (tmp_path / "r.trec").read_text().split("\n")[0].endswith(" my_run")
