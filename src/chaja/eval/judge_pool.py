"""Judging pools: the top k of several runs, deduplicated, in a file people and programs grade.

A pool item is one (question, document) pair that some run ranked in its top ``k``.
It keeps which runs found it and at what rank (``found_by``), and what a judge needs:
the question, the document's title, and a passage with its heading path, the
document's chunk that shares the most analysed terms with the question (read from
whichever of the given stores holds the document). Its ``pair_id`` is stable, the
first 12 hex digits of SHA-256 over ``question id NUL document id``, so grades made on
one pool file apply to any later pool of the same pairs.

:func:`write_pool` writes JSON Lines (the pool itself) and, for people, CSV with an
empty ``grade`` column to fill with 0–3 or ``abstain``.
"""
from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

from chaja.analysis import bigram_terms
from chaja.eval.jsonl import read_jsonl
from chaja.eval.report import read_records

CSV_COLUMNS = ("pair_id", "question_id", "question", "doc_id", "title", "heading", "passage", "found_by", "grade")


def pair_id(question_id: str, doc_id: str) -> str:
    return hashlib.sha256(f"{question_id}\x00{doc_id}".encode()).hexdigest()[:12]


def _best_passage(stores: list, doc_id: str, question: str) -> tuple[str, str, str] | None:
    """(title, heading path, text) of the document's chunk closest to the question."""
    wanted = set(bigram_terms(question.lower()))
    for store in stores:
        info = store.documents(ids=[doc_id])
        if not info:
            continue
        chunks = store.chunks(info[0].chunk_ids)
        if not chunks:
            continue
        best = max(chunks.values(), key=lambda c: (len(wanted & set(bigram_terms(c.text.lower()))), -c.ordinal))
        return best.title, " > ".join(best.heading_path), best.text
    return None


def build_pool(run_dirs: list[str | Path], k: int = 10, stores: list | None = None) -> list[dict]:
    """The deduplicated top-``k`` pairs of every run, in question order, then by best rank."""
    if k < 1:
        raise ValueError("k must be at least 1")
    items: dict[str, dict] = {}
    order: list[str] = []
    runs = [read_records(d) for d in run_dirs]
    names = [meta.get("name") or Path(d).name for d, (meta, _) in zip(run_dirs, runs)]
    if len(set(names)) < len(names):
        raise ValueError(f"two runs are named alike ({', '.join(names)}); name runs apart (chaja eval run --name)")
    for name, (_, records) in zip(names, runs):
        for rec in records:
            if rec["id"] not in order:
                order.append(rec["id"])
            ranked = [] if rec.get("abstained") else rec["ranked"][:k]
            for rank, doc in enumerate(ranked, 1):
                pid = pair_id(rec["id"], doc)
                item = items.setdefault(pid, {"pair_id": pid, "question_id": rec["id"], "question": rec.get("text", ""),
                                              "doc_id": doc, "found_by": {}})
                item["found_by"][name] = rank
    for item in items.values():
        found = _best_passage(stores or [], item["doc_id"], item["question"])
        title, heading, passage = found if found else ("", "", "")
        item.update(title=title, heading=heading, passage=passage, in_store=found is not None)
    position = {q: i for i, q in enumerate(order)}
    return sorted(items.values(), key=lambda it: (position[it["question_id"]], min(it["found_by"].values()),
                                                  it["doc_id"]))


def write_pool(items: list[dict], jsonl: Path, csv_path: Path | None = None) -> None:
    jsonl.parent.mkdir(parents=True, exist_ok=True)
    with open(jsonl, "w", encoding="utf-8") as fh:
        for it in items:
            fh.write(json.dumps(it, ensure_ascii=False) + "\n")
    if csv_path is not None:
        with open(csv_path, "w", encoding="utf-8", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=CSV_COLUMNS, extrasaction="ignore")
            w.writeheader()
            for it in items:
                w.writerow({**it, "found_by": " ".join(f"{n}#{r}" for n, r in it["found_by"].items()), "grade": ""})


def read_pool(path: str | Path) -> list[dict]:
    items = []
    for lineno, item in read_jsonl(path):
        if not isinstance(item, dict) or not {"pair_id", "question_id", "doc_id"} <= set(item):
            raise ValueError(f"{path}:{lineno}: a pool item needs pair_id, question_id and doc_id")
        items.append(item)
    return items
