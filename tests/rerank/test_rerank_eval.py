"""Reranked runs in the harness: records carry the reranker's scores and prefix,
``report`` reproduces them, ``replay`` redoes any depth and mapping without the model,
``pools`` gives the reranker evaluation's tables and ``calibrate`` fits the mapping."""
from __future__ import annotations

import json

import pytest

from chaja.config import RerankConfig
from chaja.eval.calibrate import examples, fit
from chaja.eval.pools import format_pools, pool_judgments, pool_summary
from chaja.eval.questions import Question
from chaja.eval.replay import ReplayError, replay
from chaja.eval.report import RECORDS, SUMMARY, dumps_summary, read_records, report
from chaja.eval.runner import evaluate
from chaja.eval.random_order import random_hit

QUESTIONS = [
    Question("w1", "how long is the warranty on the espresso machine", "en", "en-en", gold=["manuals/espresso-machine"]),
    Question("w2", "자전거 체인은 어떻게 청소하나요", "ko", "ko-en", gold=["manuals/bicycle"]),
    Question("w3", "자기주식 소각 결정", "ko", "ko-ko", gold=["filings/share-cancellation"]),
    Question("w4", "router firmware update", "en", "en-en", gold=["manuals/router"]),
    Question("w5", "신주 발행 유상증자", "ko", "ko-ko", gold=["filings/rights-issue"]),
    Question("w6", "quarterly revenue from memory chips", "en", "en-ko", gold=["filings/quarterly-report"]),
]


@pytest.fixture(scope="module")
def runs(corpus_index, tmp_path_factory):
    root = tmp_path_factory.mktemp("reranked-runs")
    cfg = corpus_index.config
    old = (cfg.search.reranker, cfg.search.top_k, cfg.rerank.depth)
    try:
        cfg.search.top_k = 8
        plain = evaluate(corpus_index, QUESTIONS, root / "none", depth=8, stream=None)
        cfg.search.reranker, cfg.rerank.depth = "e5-windows", 6
        reranked = evaluate(corpus_index, QUESTIONS, root / "windows", depth=8, stream=None)
    finally:
        cfg.search.reranker, cfg.search.top_k, cfg.rerank.depth = old
    return root, plain, reranked


def test_records_carry_scores_fused_ranks_and_the_prefix(runs):
    root, _, _ = runs
    _, records = read_records(root / "windows")
    for rec in records:
        assert rec["reranker"].startswith("e5-windows") and 3 <= rec["selected"] <= 8
        pool = [d for d in rec["documents"] if "rerank" in d]
        assert len(pool) == min(6, len(rec["documents"]))
        assert [d["rerank"] for d in pool] == sorted((d["rerank"] for d in pool), reverse=True)
        assert sorted(d["fused_rank"] for d in pool) == list(range(1, len(pool) + 1))
        assert all(0 <= d["p"] <= 1 for d in pool)


def test_report_reproduces_a_reranked_run(runs):
    root, _, reranked = runs
    assert dumps_summary(report(root / "windows")) == (root / "windows" / SUMMARY).read_text(encoding="utf-8")
    assert dumps_summary(reranked) == (root / "windows" / SUMMARY).read_text(encoding="utf-8")


def test_replay_at_depth_zero_is_the_run_without_a_reranker(runs, tmp_path):
    root, plain, _ = runs
    summary = replay(root / "windows", tmp_path / "zero", RerankConfig(depth=0))
    _, a = read_records(root / "none")
    _, b = read_records(tmp_path / "zero")
    assert [r["ranked"] for r in a] == [r["ranked"] for r in b]
    assert summary["metrics"] == plain["metrics"]
    assert all("selected" not in r for r in b)
    assert dumps_summary(report(tmp_path / "zero")) == (tmp_path / "zero" / SUMMARY).read_text(encoding="utf-8")


def test_replay_at_the_runs_own_settings_changes_nothing(runs, tmp_path):
    root, reranked_summary, _ = runs
    replay(root / "windows", tmp_path / "same", RerankConfig(depth=6))
    _, a = read_records(root / "windows")
    _, b = read_records(tmp_path / "same")
    assert [(r["ranked"], r["selected"]) for r in a] == [(r["ranked"], r["selected"]) for r in b]


def test_replay_moves_the_prefix_with_the_mapping(runs, tmp_path):
    root, _, _ = runs
    replay(root / "windows", tmp_path / "all", RerankConfig(depth=6, shift=50.0, min_k=1, max_k=6))
    replay(root / "windows", tmp_path / "few", RerankConfig(depth=6, shift=-50.0, min_k=1, max_k=6))
    assert all(r["selected"] == 6 for r in read_records(tmp_path / "all")[1])
    assert all(r["selected"] == 1 for r in read_records(tmp_path / "few")[1])


def test_replay_refuses_what_it_cannot_know(runs, tmp_path):
    root, _, _ = runs
    with pytest.raises(ReplayError, match="without a reranker"):
        replay(root / "none", tmp_path / "x", RerankConfig(depth=3))
    with pytest.raises(ReplayError, match="cannot rerank 7"):
        replay(root / "windows", tmp_path / "y", RerankConfig(depth=7))


def test_pool_tables_and_the_random_reference(runs):
    root, _, _ = runs
    s = pool_summary(root / "windows")
    _, records = read_records(root / "windows")
    answerable = [r for r in records if set(r["gold"]) & set(r["ranked"])]
    assert s["answerable"]["questions"] == len(answerable)
    want = sum(float(bool(set(r["gold"]) & set(r["ranked"][:1]))) for r in answerable) / len(answerable)
    assert s["answerable"]["Hit@1"] == pytest.approx(want)
    ref = sum(random_hit(len(r["ranked"]), 1, 3) for r in answerable) / len(answerable)
    assert s["random"]["Hit@3"] == pytest.approx(ref)
    table = format_pools([pool_summary(root / "none"), s])
    assert "| Hit@1 |" in table and "random order" in table and "Selected-prefix precision" in table


def test_pool_judgments_of_a_single_gold_question():
    rec = {"ranked": ["a", "b", "c"], "gold": ["b", "z"]}
    assert pool_judgments(rec) == {"a": 0, "b": 3, "c": 0}
    graded = {"ranked": ["a", "b"], "judgments": {"b": 2, "a": "abstain", "q": 3}}
    assert pool_judgments(graded) == {"a": "abstain", "b": 2}


def test_calibration_fits_the_runs_own_examples(runs):
    root, _, _ = runs
    scores, labels = examples(root / "windows")
    assert len(scores) == sum(len([d for d in r["documents"] if "rerank" in d]) for r in read_records(root / "windows")[1])
    result = fit(root / "windows")
    assert result["after"]["log_loss"] <= result["before"]["log_loss"] + 1e-9
    assert result["useful"] == sum(labels) > 0


def test_cli_pools_replay_calibrate(runs, tmp_path, capsys):
    from chaja.cli import main
    root, _, _ = runs
    assert main(["eval", "pools", str(root / "none"), str(root / "windows")]) == 0
    assert "Hit@50" in capsys.readouterr().out
    assert main(["eval", "replay", str(root / "windows"), "--out", str(tmp_path / "r"),
                 "--set", "rerank.threshold=0.9"]) == 0
    assert (tmp_path / "r" / RECORDS).exists()
    capsys.readouterr()
    assert json.loads((tmp_path / "r" / RECORDS).read_text().splitlines()[0])["run"]["config"]["rerank"]["threshold"] == 0.9
    assert main(["eval", "calibrate", str(root / "windows"), "--check", str(root / "windows"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"scale", "shift", "before", "after", "check"}


def test_compare_pairs_the_pool_metrics(runs, capsys):
    from chaja.cli import main
    from chaja.eval.pools import pool_question_metrics
    root, _, _ = runs
    per_q = pool_question_metrics(root / "windows")
    assert per_q and all(set(m) >= {"Hit@1", "Hit@50", "nDCG@10"} for m in per_q.values())
    assert all(m["Hit@50"] == 1.0 for m in per_q.values())          # answerable pools: a useful one is in
    assert main(["eval", "compare", str(root / "none"), str(root / "windows"), "--pools", "--json",
                 "--resamples", "200"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["metric"] for r in out["pools"]][:2] == ["Hit@1", "Hit@3"]
