import io
import json
import math

import pytest
import pytrec_eval

from chaja.eval.questions import ABSTAIN, Question
from chaja.eval.report import RECORDS, SUMMARY, dumps_summary, print_summary, question_metrics, report
from chaja.eval.runner import evaluate
from chaja.eval.trec import read_run
from eval_fakes import FakeIndex

TABLE = {
    "alpha": {"chunks": ["A", "B", "A", "C"],                                    # gold A at 1
              "signals": {"top_cosine": 0.8125, "keyword_coverage": 0.5}},
    "beta": {"chunks": ["A", "B", "B", "C"]},                                    # gold C at 3
    "gamma": {"chunks": list("ABCDEFGHIJ") + ["Z"], "keyword_used": False},      # Z is the 11th chunk: miss
    "delta": {"chunks": ["A", "B", "C", "D"]},                                   # golds D, B: best at 2
    "eps": {"chunks": ["A"], "abstained": True},                                 # abstained: miss
    "zeta": {"chunks": ["C", "B", "A"]},                                         # graded
}
QUESTIONS = [
    Question("q1", "alpha", "en", "en-en", gold=["A"]),
    Question("q2", "beta", "ko", "ko-ko", gold=["C"]),
    Question("q3", "gamma", "ko", "ko-en", gold=["Z"]),
    Question("q4", "delta", "en", "en-ko", gold=["D", "B"]),
    Question("q5", "eps", "en", "en-en", gold=["A"]),
    Question("q6", "zeta", "en", "graded", judgments={"A": 3, "B": 0, "C": ABSTAIN, "D": 2}),
]
RANKS = {"q1": 1, "q2": 3, "q3": None, "q4": 2, "q5": None, "q6": 3}


def expected(ids):
    def one(r):
        if r is None:
            return [0.0] * 5
        return [1 / math.log2(r + 1), float(r <= 1), float(r <= 3), float(r <= 5), 1 / r]
    rows = [one(RANKS[q]) for q in ids]
    return dict(zip(["nDCG@10", "R@1", "R@3", "R@5", "MRR"], (sum(c) / len(rows) for c in zip(*rows))))


@pytest.fixture()
def run_dir(tmp_path):
    index = FakeIndex(TABLE)
    err = io.StringIO()
    summary = evaluate(index, QUESTIONS, tmp_path / "run", name="fake", progress_every=4, stream=err)
    return tmp_path / "run", summary, index, err.getvalue()


def test_summary_values(run_dir):
    out, summary, index, _ = run_dir
    assert index.searched == [QUESTIONS[0].text] + [q.text for q in QUESTIONS]   # one untimed warm-up
    assert summary["questions"] == 6 and summary["scored"] == 6
    for m, v in expected(RANKS).items():
        assert summary["metrics"][m] == pytest.approx(v), m
    assert list(summary["by_kind"]) == ["en-en", "en-ko", "graded", "ko-en", "ko-ko"]
    assert summary["by_kind"]["en-en"]["questions"] == 2
    for m, v in expected(["q1", "q5"]).items():
        assert summary["by_kind"]["en-en"]["metrics"][m] == pytest.approx(v)
    for m, v in expected(["q2", "q3"]).items():
        assert summary["by_lang"]["ko"]["metrics"][m] == pytest.approx(v)
    assert summary["keyword_used"] == pytest.approx(5 / 6) and summary["abstained"] == 1
    assert summary["model"] == "fake-encoder" and summary["store"] == "fake-store-0001"
    assert summary["name"] == "fake" and summary["config"]["search"]["rrf_k"] == 20.0
    g = summary["graded"]
    assert g["questions"] == 1 and g["answerable"]["n@1"] == 0        # C (abstained) was first
    assert g["answerable"]["P@3"] == pytest.approx(0.5)               # B, A retained


def test_records(run_dir):
    out, _, _, _ = run_dir
    lines = [json.loads(x) for x in (out / RECORDS).read_text(encoding="utf-8").splitlines()]
    assert lines[0]["run"]["name"] == "fake" and lines[0]["run"]["depth"] == 10
    recs = {r["id"]: r for r in lines[1:]}
    assert recs["q1"]["ranked"] == ["A", "B", "C"]
    assert "Z" not in recs["q3"]["ranked"] and len(recs["q3"]["ranked"]) == 10
    assert {q: r["rank"] for q, r in recs.items()} == RANKS
    first = recs["q2"]["documents"][1]                                  # B: best chunk is chunk 2 (index 1)
    assert first == {"doc_id": "B", "title": "title of B", "lang": "", "score": pytest.approx(1 / 22),
                     "keyword_rank": None, "vector_rank": 3}
    assert recs["q4"]["gold"] == ["D", "B"] and recs["q6"]["judgments"]["C"] == ABSTAIN
    assert recs["q3"]["keyword_used"] is False and recs["q5"]["abstained"] is True
    assert recs["q1"]["signals"] == {"top_cosine": 0.8125, "keyword_coverage": 0.5}
    assert recs["q2"]["signals"] == {}                                  # a search that gives none
    assert all(r["ms"] >= 0 for r in recs.values())


def test_report_reproduces_summary_exactly(run_dir):
    out, summary, _, _ = run_dir
    written = (out / SUMMARY).read_text(encoding="utf-8")
    assert written == dumps_summary(summary)
    assert report(out) == summary
    (out / SUMMARY).unlink()
    report(out, write=True)
    assert (out / SUMMARY).read_text(encoding="utf-8") == written


def test_report_sees_edited_records(run_dir):
    out, summary, _, _ = run_dir
    path = out / RECORDS
    lines = path.read_text(encoding="utf-8").splitlines()
    rec = json.loads(lines[3])                      # q3, a miss
    rec["ranked"][0] = "Z"                          # now gold at rank 1
    lines[3] = json.dumps(rec)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    again = report(out)
    assert again["metrics"]["R@1"] == pytest.approx(summary["metrics"]["R@1"] + 1 / 6)


def test_trec_run_scores_the_same_with_pytrec_eval(run_dir):
    out, summary, _, _ = run_dir
    run = read_run(out / "run.trec")
    assert "q5" not in run                          # abstained: no ranking shown
    assert [d for d, _ in run["q3"]] == list("ABCDEFGHIJ")
    qrels = {q.id: {g: 1 for g in q.gold} for q in QUESTIONS if q.gold}
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank", "ndcg_cut.10"}).evaluate(
        {q: {d: s for d, s in docs} for q, docs in run.items() if q in qrels})
    per_q = question_metrics(out)
    for q in ref:
        assert per_q[q]["MRR"] == pytest.approx(ref[q]["recip_rank"], abs=1e-9)
    assert summary["all_gold"]["nDCG@10"] == pytest.approx(
        (sum(ref[q]["ndcg_cut_10"] for q in ref) + 0.0 + 0.5 / (1 + 1 / math.log2(3))) / 6, abs=1e-9)


def test_progress_and_tables(run_dir):
    _, summary, _, err = run_dir
    progress = [x for x in err.splitlines() if x.startswith("eval fake:")]
    assert [x.split()[2] for x in progress] == ["4/6", "6/6"] and "q/s" in progress[0]
    text = print_summary(summary)
    header = text.splitlines()[0].split()
    assert header == ["Set", "Questions", "nDCG@10", "R@1", "R@3", "R@5", "MRR"]
    assert "ko → en" in text and "en → ko" in text


def test_the_same_language_share_of_the_first_ten_results():
    """Each question's share of its first ten documents in its own language, averaged per
    kind beside nDCG; a search that abstained, found nothing, or was recorded before
    documents carried their language has none."""
    from chaja.eval.report import question_row, same_language_share, summarize

    docs = [{"doc_id": f"d{i}", "lang": "ko" if i < 3 else "en"} for i in range(12)]
    assert same_language_share(docs, "ko") == pytest.approx(0.3)         # 3 of the first 10
    assert same_language_share(docs, "en") == pytest.approx(0.7)
    assert same_language_share(docs[:2], "ko") == 1.0
    assert same_language_share(docs, "ko", abstained=True) is None
    assert same_language_share([], "ko") is None and same_language_share(docs, "") is None
    assert same_language_share([{"doc_id": "old"}], "ko") is None
    records = [{"id": "a", "kind": "ko-ko", "lang": "ko", "gold": ["d0"], "ranked": [d["doc_id"] for d in docs[:10]],
                "documents": docs},
               {"id": "b", "kind": "ko-ko", "lang": "ko", "gold": ["d1"], "ranked": ["d1"],
                "documents": [{"doc_id": "d1", "lang": "ko"}]},
               {"id": "c", "kind": "en-ko", "lang": "en", "gold": ["d0"], "ranked": ["d0"],
                "documents": [{"doc_id": "d0", "lang": "ko"}]}]
    summary = summarize({}, [question_row(r) for r in records])
    assert summary["by_kind"]["ko-ko"]["same_language"] == pytest.approx((0.3 + 1.0) / 2)
    assert summary["by_kind"]["en-ko"]["same_language"] == 0.0
    assert summary["same_language"] == pytest.approx((0.3 + 1.0 + 0.0) / 3)
