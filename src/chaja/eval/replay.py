"""A reranked run's records replayed under other rerank settings, without the model.

A reranked search records, for each document it reranked, the reranker's raw score
(``rerank``) and the document's rank before reranking (``fused_rank``); documents
below ``rerank.depth`` keep their fused order after the pool. That is enough to
rebuild the ranking any smaller depth, any score mapping and any selected-prefix
rule would have given (the reranker evaluation's "every figure recomputable from
saved scores"):

* depth d: the documents with ``fused_rank`` ≤ d in the reranker's order (ties by
  fused rank), then every other document in fused order (d = 0: the ranking
  without a reranker);
* mapped score and selected prefix: :mod:`chaja.rerank.selection` with the given
  ``scale``, ``shift``, ``threshold``, ``min_k`` and ``max_k``.

:func:`replay` writes a new run folder (records, run, summary) that
:func:`chaja.eval.report.report` reproduces like any other; its config says the
replayed rerank settings, and its records carry no timings (none were measured).
"""
from __future__ import annotations

import json
from pathlib import Path

from chaja.config import RerankConfig
from chaja.eval.report import (RECORDS, RUN_TREC, SUMMARY, dumps_summary, question_row, read_records,
                               record_gold, summarize)
from chaja.eval.single import gold_rank
from chaja.eval.trec import write_run
from chaja.rerank.base import rerank_order
from chaja.rerank.selection import mapped, prefix_length


class ReplayError(ValueError):
    pass


def fused_order(documents: list[dict]) -> list[dict]:
    """The recorded documents in the order fusion gave them (reranked ones by fused rank)."""
    pool = sorted((d for d in documents if d.get("fused_rank") is not None), key=lambda d: d["fused_rank"])
    rest = [d for d in documents if d.get("fused_rank") is None]
    return pool + rest


def reorder(documents: list[dict], depth: int) -> list[dict]:
    """The ranking a reranker of ``depth`` gives over the recorded documents."""
    fused = fused_order(documents)
    pool = [d for d in fused if d.get("fused_rank") is not None and d["fused_rank"] <= depth]
    pool = [pool[i] for i in rerank_order([float(d["rerank"]) for d in pool])]   # ties keep fused order
    chosen = {id(d) for d in pool}
    return pool + [d for d in fused if id(d) not in chosen]


def replay_record(rec: dict, cfg: RerankConfig) -> dict:
    docs = rec.get("documents") or []
    if docs and not any(d.get("fused_rank") is not None for d in docs) and not rec.get("abstained"):
        raise ReplayError(f"question {rec.get('id')}: its documents carry no reranker scores (not a reranked run)")
    out = dict(rec)
    out["ms"] = None                     # timings are not replayed
    ranked_docs = reorder(docs, cfg.depth)
    new_docs = []
    for d in ranked_docs:
        d = dict(d)
        if d.get("fused_rank") is not None and d["fused_rank"] <= cfg.depth:
            d["p"] = mapped(d["rerank"], cfg.scale, cfg.shift)
        else:
            d.pop("p", None)
        new_docs.append(d)
    out["documents"] = new_docs
    out["ranked"] = [d["doc_id"] for d in new_docs]
    gold = record_gold(rec)
    out["rank"] = None if rec.get("abstained") or not gold else gold_rank(out["ranked"], gold)
    if cfg.depth > 0:
        out["selected"] = prefix_length([d.get("p", 0.0) for d in new_docs], cfg)
    else:
        out.pop("selected", None)
        out.pop("reranker", None)
    return out


def replay(run_dir: str | Path, out_dir: str | Path, cfg: RerankConfig, name: str | None = None) -> dict:
    """Write the replayed run to ``out_dir``; return its summary."""
    meta, records = read_records(run_dir)
    reranker = (meta.get("config") or {}).get("search", {}).get("reranker", "none")
    if reranker == "none":
        raise ReplayError(f"{run_dir} was run without a reranker (search.reranker = none): nothing to replay")
    recorded_depth = (meta.get("config") or {}).get("rerank", {}).get("depth")
    if recorded_depth is not None and cfg.depth > recorded_depth:
        raise ReplayError(f"the run reranked {recorded_depth} candidates; a replay cannot rerank {cfg.depth}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    new_meta = json.loads(json.dumps(meta))
    new_meta["name"] = name or out.name
    config = new_meta.setdefault("config", {}) or {}
    config.setdefault("rerank", {}).update({k: getattr(cfg, k) for k in ("depth", "scale", "shift", "threshold",
                                                                         "min_k", "max_k")})
    if cfg.depth == 0:
        config.setdefault("search", {})["reranker"] = "none"
    new_meta["replayed_from"] = {"run": meta.get("name"), "rerank": {k: getattr(cfg, k) for k in (
        "depth", "scale", "shift", "threshold", "min_k", "max_k")}}
    replayed = [replay_record(r, cfg) for r in records]
    with open(out / RECORDS, "w", encoding="utf-8") as fh:
        fh.write(json.dumps({"run": new_meta}, ensure_ascii=False) + "\n")
        for r in replayed:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    write_run(out / RUN_TREC, {r["id"]: [] if r.get("abstained") else
                               [(d["doc_id"], -i) for i, d in enumerate(r["documents"])] for r in replayed},
              tag=new_meta["name"])
    summary = summarize(new_meta, [question_row(r) for r in replayed])
    (out / SUMMARY).write_text(dumps_summary(summary), encoding="utf-8")
    return summary
