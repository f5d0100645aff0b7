"""Run a question set through search and write what happened, question by question.

:func:`evaluate` asks ``index.search(text)`` for each question and writes into
``out_dir``:

``records.jsonl``
    First line ``{"run": {"name", "model", "store", "config", "depth", "questions", "started", "chaja",
    "warmup"}}``;
    then one object per question::

        {"id", "text", "kind", "lang", "gold" | "judgments",
         "ranked": [doc ids of the top ten chunks, in order of first appearance],
         "documents": [{"doc_id", "title", "lang", "score", "keyword_rank", "vector_rank"}, ...],
         "rank": gold rank or null, "keyword_used": bool, "abstained": bool,
         "signals": {"top_cosine", "keyword_coverage"}, "ms": search time}

    A reranked search (``search.reranker``) adds ``"reranker"`` (its name) and
    ``"selected"`` (documents in its selected prefix), and each reranked document its
    ``"rerank"`` (raw score), ``"p"`` (mapped) and ``"fused_rank"`` (its rank before
    reranking), so :mod:`chaja.eval.replay` can redo the prefix without the model.

    ``score`` is the fused score of the document's best chunk; ``keyword_rank``
    and ``vector_rank`` are that chunk's 1-based ranks in the keyword and vector
    lists (null = absent). A search that abstained counts as a miss.
    ``signals`` are the search's abstention signals (empty when the search gives
    none), so abstention thresholds can be chosen from the records alone
    (:mod:`chaja.eval.abstention`). A question with ``"gold": []`` (kind
    ``unanswerable``) is recorded with ``rank`` null and enters no metric.
``run.trec``
    The document ranking as a TREC run (query id = question id, tag = run name);
    a question whose search abstained has no lines.
``summary.json``
    Means over questions (see :func:`chaja.eval.report.summarize`); computed
    here from the live ranks, and reproduced byte for byte by
    :func:`chaja.eval.report.report` from ``records.jsonl`` alone.

The index must offer ``search(text) -> SearchResult``, ``config`` (with
``to_dict()``), ``encoder_name`` and ``fingerprint()``.
"""
from __future__ import annotations

import datetime as _dt
import json
import sys
import time
from pathlib import Path
from typing import Any, Iterable, Sequence, TextIO

from chaja import __version__
from chaja.eval import graded as graded_mod
from chaja.eval.questions import Question
from chaja.eval.report import RECORDS, RUN_TREC, SUMMARY, dumps_summary, same_language_share, summarize
from chaja.eval.single import CHUNK_DEPTH, all_gold_scores, gold_rank, single_scores
from chaja.eval.trec import write_run


def result_documents(result: Any, depth: int = CHUNK_DEPTH) -> list[dict]:
    """The documents of the top ``depth`` chunks, each with its best chunk's scores and ranks."""
    chunks = list(getattr(result, "chunks", None) or [])
    out: list[dict] = []
    if chunks:
        seen: set[str] = set()
        for c in chunks[:depth]:
            doc_id = c.chunk.doc_id
            if doc_id in seen:
                continue
            seen.add(doc_id)
            doc = {"doc_id": doc_id, "title": c.chunk.title, "lang": c.chunk.lang or "", "score": float(c.score),
                   "keyword_rank": c.keyword_rank, "vector_rank": c.vector_rank}
            if getattr(c, "probability", None) is not None:
                doc["probability"] = c.probability
            if getattr(c, "rerank_score", None) is not None:
                doc.update(rerank=c.rerank_score, p=c.rerank_probability, fused_rank=c.fused_rank)
            out.append(doc)
        return out
    for d in getattr(result, "documents", None) or []:  # no chunk list: take the grouping as given
        best = d.chunks[0] if d.chunks else None
        out.append({"doc_id": d.doc_id, "title": d.title, "lang": (best.chunk.lang or "") if best else "",
                    "score": float(d.score),
                    "keyword_rank": best.keyword_rank if best else None,
                    "vector_rank": best.vector_rank if best else None})
    return out[:depth]


def _index_meta(index: Any, name: str, n: int, depth: int) -> dict:
    config = getattr(index, "config", None)
    fingerprint = getattr(index, "fingerprint", None)
    return {
        "name": name,
        "model": getattr(index, "encoder_name", None),
        "store": fingerprint() if callable(fingerprint) else fingerprint,
        "config": config.to_dict() if hasattr(config, "to_dict") else config,
        "depth": depth,
        "questions": n,
        "started": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "chaja": __version__,
    }


def _row(q: Question, rec: dict) -> dict:
    """Per-question scores from the live search (ranks taken as the search gave them)."""
    ranked = [] if rec["abstained"] else rec["ranked"]
    gold = q.gold if q.gold is not None else q.useful()
    row = {"id": q.id, "kind": q.kind, "lang": q.lang, "keyword_used": rec["keyword_used"],
           "abstained": rec["abstained"], "ms": rec["ms"], "scores": None, "all_gold": None,
           "graded": None, "judgments": q.judgments,
           "same_language": same_language_share(rec["documents"], q.lang, rec["abstained"])}
    if gold:
        row["scores"] = single_scores(rec["rank"])
        row["all_gold"] = all_gold_scores(ranked, gold)
    if q.judgments is not None:
        row["graded"] = graded_mod.question_scores(ranked, q.judgments, selected=rec.get("selected"))
    return row


def question_fields(q: Question, with_text: bool = False) -> dict[str, Any]:
    """What a record keeps of its question: id, (text), kind, lang and its judgments."""
    rec: dict[str, Any] = {"id": q.id, "text": q.text} if with_text else {"id": q.id}
    rec.update({"kind": q.kind, "lang": q.lang})
    if q.gold is not None:
        rec["gold"] = q.gold
    if q.judgments is not None:
        rec["judgments"] = q.judgments
    if "selected" in q.extra:
        rec["selected"] = q.extra["selected"]
    return rec


class Progress:
    def __init__(self, total: int, every: int, stream: TextIO | None, name: str):
        self.total, self.every, self.stream, self.name = total, every, stream, name
        self.start = time.perf_counter()

    def update(self, done: int) -> None:
        if self.stream is None or self.every <= 0:
            return
        if done % self.every == 0 or done == self.total:
            elapsed = time.perf_counter() - self.start
            rate = done / elapsed if elapsed > 0 else float("inf")
            left = (self.total - done) / rate if rate > 0 else 0.0
            print(f"eval {self.name}: {done}/{self.total} questions, {rate:.1f} q/s, "
                  f"{elapsed:.0f}s elapsed, ~{left:.0f}s left", file=self.stream, flush=True)


def evaluate(index: Any, questions: Sequence[Question], out_dir: str | Path, name: str | None = None,
             depth: int = CHUNK_DEPTH, progress_every: int = 100, stream: TextIO | None = sys.stderr,
             warmup: bool = True) -> dict:
    """Search every question, write records, run and summary; return the summary.

    With ``warmup`` one untimed search of the first question runs first, so that
    loading the model does not land in the first question's time.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    name = name or out.name
    meta = _index_meta(index, name, len(questions), depth)
    meta["warmup"] = bool(warmup and questions)
    if meta["warmup"]:
        index.search(questions[0].text)
    rows: list[dict] = []
    run: dict[str, list[tuple[str, float]]] = {}
    progress = Progress(len(questions), progress_every, stream, name)
    with open(out / RECORDS, "w", encoding="utf-8") as fh:
        fh.write(json.dumps({"run": meta}, ensure_ascii=False) + "\n")
        for i, q in enumerate(questions, 1):
            t0 = time.perf_counter()
            result = index.search(q.text)
            ms = (time.perf_counter() - t0) * 1000.0
            docs = result_documents(result, depth)
            ranked = [d["doc_id"] for d in docs]
            abstained = bool(getattr(result, "abstained", False))
            gold = q.gold if q.gold is not None else q.useful()
            rec: dict[str, Any] = question_fields(q, with_text=True)
            rec.update({
                "ranked": ranked, "documents": docs,
                "rank": None if abstained or not gold else gold_rank(ranked, gold),
                "keyword_used": bool(getattr(result, "keyword_used", False)),
                "abstained": abstained,
                "signals": {k: float(v) for k, v in (getattr(result, "signals", None) or {}).items()},
                "ms": round(ms, 3),
            })
            if getattr(result, "parts", None):
                rec["parts"] = list(result.parts)       # the subquestions searched too (search.multipart)
            if getattr(result, "reranker", None):
                rec["reranker"] = result.reranker       # the selected prefix replaces the question's own
                rec["selected"] = result.selected
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
            rows.append(_row(q, rec))
            run[q.id] = [] if abstained else [(d["doc_id"], d["score"]) for d in docs]
            progress.update(i)
    write_run(out / RUN_TREC, run, tag=name)
    summary = summarize(meta, rows)
    (out / SUMMARY).write_text(dumps_summary(summary), encoding="utf-8")
    return summary


def load_summaries(dirs: Iterable[str | Path]) -> list[tuple[str, dict]]:
    out = []
    for d in dirs:
        s = json.loads((Path(d) / SUMMARY).read_text(encoding="utf-8"))
        out.append((s.get("name") or Path(d).name, s))
    return out
