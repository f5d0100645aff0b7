import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from chaja.config import Config
from chaja.eval.abstention import (Point, abstention_report, analyse, choose, curve, format_report, point,
                                   signals_from_records, thresholds)
from chaja.eval.cli import main
from chaja.eval.questions import QuestionFileError, parse_questions, read_questions
from chaja.eval.report import report
from chaja.eval.runner import evaluate
from chaja.index import Index

REPO = Path(__file__).resolve().parents[2]


def rec(qid, cos, cov, gold=None, hit=False, **extra):
    """A question record as the runner writes it (only the fields abstention reads)."""
    r = {"id": qid, "text": qid, "ranked": ["X", "G"] if hit else ["X", "Y"],
         "signals": {"top_cosine": cos, "keyword_coverage": cov}, "abstained": False}
    if gold is None:
        r.update(kind="unanswerable", gold=[])
    else:
        r["gold"] = gold
    r.update(extra)
    return r


# answerable: a1-a3 found (a3 with full keyword coverage), a4 missed; u1-u4 unanswerable
RECORDS = [
    rec("a1", 0.90, 0.0, ["G"], hit=True),
    rec("a2", 0.80, 0.0, ["G"], hit=True),
    rec("a3", 0.70, 1.0, ["G"], hit=True),
    rec("a4", 0.60, 0.0, ["G"]),
    rec("u1", 0.65, 0.0),
    rec("u2", 0.75, 0.5),
    rec("u3", 0.85, 1.0),
    rec("u4", 0.55, 0.0),
]


def rows():
    return signals_from_records(RECORDS)[0]


def test_thresholds_split_between_neighbouring_cosines():
    ts = thresholds(rows())
    cos = sorted(r.top_cosine for r in rows())
    assert ts[0] == 0.0 and ts[-1] == 1.0 and len(ts) == len(cos) + 1
    for lo, hi, t in zip(cos, cos[1:], ts[1:-1]):
        assert lo < t < hi
        assert len(str(t)) <= 4                                   # 0.55, 0.65, ... not 0.5750000000000001


def test_curve_values_by_hand():
    c = curve(rows(), 1.0)
    got = [(p.kept, p.kept_share, p.rejected, p.abstained_answerable, p.abstained_unanswerable) for p in c]
    # kept = found and not abstained / 4 answerable; share = / 3 found; rejected = / 4 unanswerable
    assert got == [
        (3 / 4, 1.0, 0.0, 0, 0),          # off
        (3 / 4, 1.0, 1 / 4, 0, 1),        # u4 (0.55)
        (3 / 4, 1.0, 1 / 4, 1, 1),        # + a4 (0.60, a miss: costs nothing)
        (3 / 4, 1.0, 2 / 4, 1, 2),        # + u1 (0.65)
        (3 / 4, 1.0, 2 / 4, 1, 2),        # a3 (0.70) has full coverage: kept
        (3 / 4, 1.0, 3 / 4, 1, 3),        # + u2 (0.75, coverage 0.5 < 1)
        (2 / 4, 2 / 3, 3 / 4, 2, 3),      # + a2 (0.80): a correct answer lost
        (2 / 4, 2 / 3, 3 / 4, 2, 3),      # u3 (0.85) has full coverage
        (1 / 4, 1 / 3, 3 / 4, 3, 3),      # + a1 (0.90)
    ]
    assert [p.youden for p in c] == pytest.approx([0, .25, .25, .5, .5, .75, 0.75 + 2 / 3 - 1, 0.75 + 2 / 3 - 1,
                                                   0.75 + 1 / 3 - 1])


def test_coverage_bound_changes_who_abstains():
    at = 0.775                                                    # between u2 (0.75) and a2 (0.80)
    p = point(rows(), at, 0.5)                                    # u2's coverage 0.5 is not < 0.5
    assert (p.rejected, p.kept_share, p.abstained) == (0.5, 1.0, 3)
    p = point(rows(), 0.725, 1.5)                                 # c > 1: the cosine alone decides
    assert (p.rejected, p.kept_share, p.abstained_answerable) == (0.5, 2 / 3, 2)
    assert point(rows(), -1.0, 1.5).abstained == 0                # τ <= 0 never abstains, as search


def test_rules():
    c = curve(rows(), 1.0)
    best = choose(c, "youden")
    assert 0.75 < best.tau < 0.80 and best.youden == pytest.approx(0.75)
    assert choose(c[:3], "youden").abstained == 1                 # a tie goes to fewer abstentions
    assert choose(c, "keep", 0.95).tau == best.tau                # largest τ keeping every correct answer
    loose = choose(c, "keep", 0.6)
    assert 0.85 < loose.tau < 0.90 and loose.kept_share == pytest.approx(2 / 3)
    both = curve(rows(), 0.5) + c
    assert choose(both, "youden").coverage == 1.0
    with pytest.raises(ValueError, match="rule"):
        choose(c, "median")
    only_answerable = [r for r in rows() if r.answerable]
    with pytest.raises(ValueError, match="unanswerable"):
        choose(curve(only_answerable, 1.0), "youden")
    assert choose(curve(only_answerable, 1.0), "keep").rejected is None


def test_analyse_counts_and_notes():
    extra = [
        rec("a5", 0.95, 0.0, ["G"], hit=True, abstained=True),    # the run abstained: a miss, with a note
        {"id": "g1", "text": "g", "ranked": [], "judgments": {"X": 1}, "signals": {"top_cosine": 0.5}},
        {"id": "a6", "text": "a6", "ranked": ["G"], "gold": ["G"]},   # no signals: left out
    ]
    result = analyse(RECORDS + extra, [1.0, 0.5])
    assert (result["answerable"], result["unanswerable"], result["hits"]) == (5, 4, 3)
    assert result["recall_at_10"] == pytest.approx(3 / 5)
    assert result["chosen"]["coverage"] == 1.0 and result["chosen"]["youden"] == pytest.approx(0.75)
    assert result["setting"][1] == "search.abstain_coverage=1.0"
    notes = " ".join(result["notes"])
    assert "abstained on 1" in notes and "no recorded signals" in notes and "1 graded" in notes
    assert set(result["curves"]) == {"1.0", "0.5"}
    with pytest.raises(ValueError, match="no abstention signals"):
        analyse([extra[2]], [1.0])


def test_report_table_replays_the_grid():
    result = analyse(RECORDS, [1.0])
    text = format_report(result, step=0.1)
    lines = [x for x in text.splitlines()[3:] if x.strip() and x.strip()[0].isdigit()]
    taus = [float(x.split()[0]) for x in lines]
    assert taus == sorted(taus) and 0.0 in taus and 0.8 in taus
    row = next(x for x in lines if float(x.split()[0]) == 0.8)    # τ = 0.8: a2 (0.80) is not below it
    assert row.split()[1:5] == ["75.0%", "100.0%", "75.0%", "+0.750"]
    assert "← chosen" in text and "search.abstain_below=" in text


# ---- question files -------------------------------------------------------------------

def test_unanswerable_questions_in_files():
    qs = parse_questions(['{"id": "u", "text": "Vue computed", "kind": "unanswerable", "gold": []}'])
    assert qs[0].unanswerable and qs[0].gold == []
    with pytest.raises(QuestionFileError, match="unanswerable"):
        parse_questions(['{"id": "x", "text": "t", "gold": []}'])
    with pytest.raises(QuestionFileError, match="needs"):
        parse_questions(['{"id": "x", "text": "t", "kind": "unanswerable", "gold": ["d"]}'])


def test_react_unanswerable_set():
    from chaja.language import detect_language
    qs = read_questions(REPO / "benchmarks" / "questions" / "react-unanswerable.jsonl")
    assert len(qs) == 40 and all(q.unanswerable and q.gold == [] for q in qs)
    assert len({q.text for q in qs}) == 40
    assert sorted(q.lang for q in qs) == ["en"] * 20 + ["ko"] * 20
    assert all(detect_language(q.text) == q.lang for q in qs)


# ---- a real index ------------------------------------------------------------------------

def test_replayed_abstention_matches_live_search(corpus_index, query_memo, corpus_questions, tmp_path):
    index = Index(corpus_index.store, Config(), encoder=query_memo)
    summary = evaluate(index, corpus_questions, tmp_path / "run", progress_every=0, stream=None)
    assert summary["questions"] == 12 and summary["scored"] == 8 and summary["abstained"] == 0
    assert report(tmp_path / "run") == summary                    # signals do not disturb the summary
    lines = (tmp_path / "run" / "records.jsonl").read_text(encoding="utf-8").splitlines()[1:]
    records = [json.loads(x) for x in lines]
    for r in records:
        assert set(r["signals"]) >= {"top_cosine", "keyword_coverage"}
        assert 0 < r["signals"]["top_cosine"] <= 1.0001 and 0 <= r["signals"]["keyword_coverage"] <= 1

    result = abstention_report(tmp_path / "run")
    assert (tmp_path / "run" / "abstention.json").exists()
    ET.parse(tmp_path / "run" / "abstention.svg")
    gold = {q.id: q.gold for q in corpus_questions}
    for p in map(lambda d: Point(**d), result["curves"]["1.0"]):
        cfg = Config()
        cfg.search.abstain_below, cfg.search.abstain_coverage = p.tau, p.coverage
        live = Index(corpus_index.store, cfg, encoder=query_memo)
        abst_a = abst_u = kept = 0
        for q in corpus_questions:
            res = live.search(q.text)
            if q.unanswerable:
                abst_u += res.abstained
            else:
                abst_a += res.abstained
                kept += (not res.abstained) and any(d in gold[q.id] for d in res.doc_ids()[:10])
        assert (abst_a, abst_u) == (p.abstained_answerable, p.abstained_unanswerable), p.tau
        assert kept / 8 == pytest.approx(p.kept), p.tau


def test_abstention_command(corpus_index, query_memo, corpus_questions, tmp_path, capsys):
    index = Index(corpus_index.store, Config(), encoder=query_memo)
    evaluate(index, corpus_questions, tmp_path / "run", progress_every=0, stream=None)
    assert main(["eval", "abstention", str(tmp_path / "run"), "--coverage", "0.5,1.0", "--rule", "keep"]) == 0
    out = capsys.readouterr().out
    assert "chosen (keep)" in out and "8 answerable questions" in out
    saved = json.loads((tmp_path / "run" / "abstention.json").read_text(encoding="utf-8"))
    assert saved["coverages"] == [0.5, 1.0] and saved["rule"] == "keep"
    assert main(["eval", "abstention", str(tmp_path / "run"), "--coverage", "x"]) == 2
