import argparse
import json
import sys
import xml.etree.ElementTree as ET

import pytest

from chaja.eval.cli import add_eval_commands, route_eval_argv
from chaja.eval.questions import Question, read_questions, write_questions
from chaja.eval.trec import write_run
from eval_fakes import FakeIndex

N = 40


def fake_open(store, config):
    return FakeIndex.from_file(store, config)


def cli(argv, open_index=fake_open):
    ap = argparse.ArgumentParser(prog="chaja")
    sub = ap.add_subparsers(dest="command", required=True)
    add_eval_commands(sub, open_index)
    args = ap.parse_args(argv)
    return args.func(args)


@pytest.fixture()
def setup(tmp_path):
    """Questions q0..q39 (gold D<i>); store A ranks the gold at 1-5 or misses; store B ranks it first."""
    qs = [Question(f"q{i}", f"question {i}", "en" if i % 2 else "ko", "same" if i % 3 else "cross", gold=[f"D{i}"])
          for i in range(N)]
    write_questions(tmp_path / "q.jsonl", qs)
    fill = [f"X{j}" for j in range(10)]
    a = {q.text: {"chunks": (fill[: i % 6] + [q.gold[0]] + fill)[:10] if i % 6 < 5 else fill}
         for i, q in enumerate(qs)}
    b = {q.text: {"chunks": [q.gold[0]] + fill[:9]} for q in qs}
    (tmp_path / "a.json").write_text(json.dumps(a))
    (tmp_path / "b.json").write_text(json.dumps(b))
    return tmp_path


def test_run_report_compare(setup, capsys):
    t = setup
    assert cli(["eval", "run", "--store", str(t / "a.json"), "--questions", str(t / "q.jsonl"),
                "--out", str(t / "A"), "--set", "search.rrf_k=60", "--progress", "0"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["Set", "Questions", "nDCG@10", "R@1", "R@3", "R@5", "MRR"]
    assert out.splitlines()[1].split()[:2] == ["A", str(N)]
    summary = json.loads((t / "A" / "summary.json").read_text())
    assert summary["config"]["search"]["rrf_k"] == 60.0
    assert summary["metrics"]["R@1"] == pytest.approx(7 / 40)        # i % 6 == 0 for 7 of 40
    # plain `eval --store ...` runs too
    assert cli(["eval", "--store", str(t / "b.json"), "--questions", str(t / "q.jsonl"), "--out", str(t / "B"),
                "--name", "always-first", "--progress", "0"]) == 0
    assert json.loads((t / "B" / "summary.json").read_text())["metrics"]["MRR"] == 1.0
    capsys.readouterr()
    assert cli(["eval", "report", str(t / "A")]) == 0
    assert "reproduced exactly" in capsys.readouterr().err
    path = t / "A" / "summary.json"
    path.write_text(path.read_text().replace('"questions": 40', '"questions": 41'))
    assert cli(["eval", "report", str(t / "A")]) == 1
    assert "differs" in capsys.readouterr().err
    assert cli(["eval", "compare", str(t / "A"), str(t / "B")]) == 0
    lines = capsys.readouterr().out.splitlines()
    verdicts = {line.split()[0]: line for line in lines if line.split() and line.split()[0] in ("R@1", "MRR", "R@5")}
    assert verdicts["R@1"].endswith("better") and verdicts["MRR"].endswith("better")
    assert cli(["eval", "compare", str(t / "B"), str(t / "B"), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["metrics"]
    assert {r["verdict"] for r in rows} == {"within noise"}
    assert cli(["eval", "compare", str(t / "A"), str(t / "B"), "--by", "lang", "--json"]) == 0
    by = json.loads(capsys.readouterr().out)["by_lang"]
    langs = {json.loads(line)["lang"] for line in (t / "q.jsonl").read_text().splitlines() if line.strip()}
    assert [r["metric"] for r in by] == sorted(langs) and sum(r["n"] for r in by) == N


def test_eval_without_command_or_with_partial_run_options(setup, capsys):
    assert cli(["eval"]) == 2
    assert cli(["eval", "--store", str(setup / "a.json")]) == 2
    assert "--questions, --out" in capsys.readouterr().err
    assert route_eval_argv(["eval", "--store", "s"]) == ["eval", "run", "--store", "s"]
    assert route_eval_argv(["eval", "report", "d"]) == ["eval", "report", "d"]


def test_figure(setup, capsys, monkeypatch):
    t = setup
    for name in ("a", "b"):
        cli(["eval", "run", "--store", str(t / f"{name}.json"), "--questions", str(t / "q.jsonl"),
             "--out", str(t / name.upper()), "--progress", "0"])
    assert cli(["eval", "figure", str(t / "A"), str(t / "B"), "--out", str(t / "fig"), "--format", "svg"]) == 0
    root = ET.parse(t / "fig.svg").getroot()
    assert root.tag.endswith("svg")
    texts = " ".join(e.text or "" for e in root.iter() if e.tag.endswith("text"))
    assert "A (n=40)" in texts and "B (n=40)" in texts and "nDCG@10" in texts
    assert "warning" not in capsys.readouterr().err
    cli(["eval", "run", "--store", str(t / "a.json"), "--questions", str(t / "q.jsonl"), "--out", str(t / "C"),
         "--limit", "5", "--progress", "0"])
    assert cli(["eval", "figure", str(t / "A"), str(t / "C"), "--out", str(t / "fig2"), "--format", "svg"]) == 0
    assert "different question sets" in capsys.readouterr().err
    pytest.importorskip("matplotlib")
    assert cli(["eval", "figure", str(t / "A"), str(t / "B"), "--out", str(t / "fig")]) == 0
    assert (t / "fig.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    monkeypatch.setitem(sys.modules, "matplotlib", None)           # as if the extra were not installed
    (t / "fig.svg").unlink()
    assert cli(["eval", "figure", str(t / "A"), "--out", str(t / "fig")]) == 1
    assert "chaja[figures]" in capsys.readouterr().err
    assert (t / "fig.svg").exists()


def test_score_a_trec_run(setup, capsys):
    t = setup
    write_run(t / "r.trec", {"q0": [("D0", 2.0), ("X", 1.0)], "q1": [("X", 2.0), ("D1", 1.0)]})
    assert cli(["eval", "score", "--run", str(t / "r.trec"), "--questions", str(t / "q.jsonl"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["metrics"]["MRR"] == pytest.approx((1 + 0.5) / N)


def test_load_and_lint(tmp_path, capsys):
    corpus = tmp_path / "tiny"
    (corpus / "qrels").mkdir(parents=True)
    (corpus / "corpus.jsonl").write_text('{"_id": "d1", "title": "Adding state", "text": "Use state."}\n')
    (corpus / "queries.jsonl").write_text('{"_id": "1", "text": "How do I add state to a component?"}\n')
    (corpus / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\td1\t1\n")
    assert cli(["eval", "load", "beir", str(corpus), "--docs", str(tmp_path / "d.jsonl"),
                "--questions", str(tmp_path / "q.jsonl")]) == 0
    assert json.loads((tmp_path / "d.jsonl").read_text())["title"] == "Adding state"
    assert read_questions(tmp_path / "q.jsonl")[0].gold == ["d1"]
    (tmp_path / "headings.txt").write_text("Adding state to a component\n")
    assert cli(["eval", "lint", "--store-headings", str(tmp_path / "headings.txt"), str(tmp_path / "q.jsonl")]) == 1
    assert "shares 'add stat component'" in capsys.readouterr().out
    (tmp_path / "headings.txt").write_text("Removing state\n")
    assert cli(["eval", "lint", str(tmp_path / "q.jsonl"), "--store-headings", str(tmp_path / "headings.txt")]) == 0


def test_build_canonical_command(react_dir, tmp_path, capsys):
    assert cli(["eval", "build-canonical", "--data", str(react_dir.parent), "--out", str(tmp_path / "c.jsonl"),
                "--paths", str(tmp_path / "paths.txt")]) == 0
    out = capsys.readouterr().out
    qs = read_questions(tmp_path / "c.jsonl")
    assert f"wrote {len(qs)} questions" in out and "ko-en" in out
    assert len((tmp_path / "paths.txt").read_text().splitlines()) == 203


def test_main_cli_routes_eval(setup, capsys):
    main_cli = pytest.importorskip("chaja.cli")
    cli(["eval", "run", "--store", str(setup / "a.json"), "--questions", str(setup / "q.jsonl"),
         "--out", str(setup / "A"), "--progress", "0"])
    assert main_cli.main(["eval", "report", str(setup / "A")]) == 0
