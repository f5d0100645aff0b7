"""``chaja eval calibrate --fused``: the probability of being relevant, fit from a hybrid
run's fused scores (``search.relevance_scale``, ``search.relevance_shift``)."""
import json
import math
import random

import pytest

from chaja.cli import main
from chaja.eval.calibrate import fit_fused


def write_run(folder, mode="hybrid", n=400, seed=0):
    """A run whose documents are relevant with probability σ(0.3·s + 1.5·(s − s₁) − 3), s₁
    the question's best score: records as the harness writes them, best first."""
    rng = random.Random(seed)
    folder.mkdir(parents=True)
    lines = [{"run": {"name": folder.name, "config": {"search": {"mode": mode, "fusion": "calibrated",
                                                                "relevance_scale": 1.0, "relevance_shift": 0.0}}}}]
    for q in range(n):
        scores = sorted((rng.uniform(0, 20) for _ in range(10)), reverse=True)
        docs = [{"doc_id": f"d{q}-{i}", "score": s,
                 "relevant": rng.random() < 1 / (1 + math.exp(-(0.3 * s + 1.5 * (s - scores[0]) - 3)))}
                for i, s in enumerate(scores)]
        gold = [d["doc_id"] for d in docs if d.pop("relevant")]
        lines.append({"id": f"q{q}", "text": "?", "gold": gold or [], "kind": "x" if gold else "unanswerable",
                      "ranked": [d["doc_id"] for d in docs], "documents": docs, "rank": None})
    (folder / "records.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return folder


def test_the_fused_mapping_is_recovered_from_a_run(tmp_path):
    result = fit_fused(write_run(tmp_path / "dev"), 1.0, 0.0, 0.0)
    assert result["examples"] == 4000
    assert result["scale"] == pytest.approx(0.3, abs=0.1) and result["gap"] == pytest.approx(1.5, abs=0.4)
    assert result["shift"] == pytest.approx(-3.0, abs=1.0)
    assert result["after"]["log_loss"] < result["before"]["log_loss"]


def test_the_cli_fits_and_checks_the_fused_mapping(tmp_path, capsys):
    dev, test = write_run(tmp_path / "dev"), write_run(tmp_path / "test", seed=1)
    assert main(["eval", "calibrate", str(dev), "--fused", "--check", str(test)]) == 0
    out = capsys.readouterr().out
    assert "4000 documents" in out and "check run: log loss" in out
    assert "--set search.relevance_scale=" in out and "--set search.relevance_gap=" in out
    assert "--set search.relevance_shift=" in out
    assert main(["eval", "calibrate", str(write_run(tmp_path / "kw", mode="keyword")), "--fused"]) == 2
    assert "needs a hybrid run with calibrated fusion" in capsys.readouterr().err
