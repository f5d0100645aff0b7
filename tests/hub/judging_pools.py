"""A judging pool for the judging tests, made as people make one: two runs (hybrid and
keyword searches of the shared hub, written as ``chaja eval run`` records), then
``chaja judge pool`` over them, its passages read from the hub's store."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from chaja.cli import main
from chaja.eval.judge_pool import read_pool

from hubs import RunningHub

QUESTIONS = [("q-wifi", "wireless password"), ("q-router", "라우터 무선 비밀번호 변경"),
             ("q-cancel", "자기주식 소각 결정")]


def make_pool(hub: RunningHub, folder: Path, k: int = 3) -> Path:
    """``folder/pool.jsonl``: the top ``k`` of both runs over :data:`QUESTIONS`."""
    runs = []
    for mode in ("hybrid", "keyword"):
        out = folder / "runs" / mode
        out.mkdir(parents=True)
        lines = [{"run": {"name": mode}}]
        for qid, text in QUESTIONS:
            got = hub.client().search(text, k, settings={"mode": mode})
            lines.append({"id": qid, "text": text, "ranked": [r["doc_id"] for r in got["results"]]})
        (out / "records.jsonl").write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines),
                                           encoding="utf-8")
        runs.append(str(out))
    pool = folder / "pool.jsonl"
    assert main(["judge", "pool", *runs, "--store", str(hub.store), "--k", str(k), "--out", str(pool)]) == 0
    return pool


def place(pool: Path, folder: Path, name: str) -> list[dict]:
    """The pool copied into a judging folder as ``name``; its items."""
    shutil.copy(pool, folder / f"{name}.jsonl")
    return read_pool(folder / f"{name}.jsonl")
