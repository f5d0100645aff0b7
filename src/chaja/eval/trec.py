"""TREC qrels and runs, to exchange judgments and rankings with other tools.

qrels: one judgment a line, ``query-id 0 doc-id grade`` (whitespace separated).
The three-column BEIR form ``query-id doc-id grade`` (optionally under a
``query-id corpus-id score`` header) is read too.

run: one retrieved document a line, ``query-id Q0 doc-id rank score tag``.
Tools that read runs order each query's documents by score, so a run written
here keeps chaja's order in its scores (see :func:`order_preserving_scores`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, Mapping, Sequence

from chaja.eval.questions import ABSTAIN, Question

Qrels = dict[str, dict[str, int]]
Run = dict[str, list[tuple[str, float]]]


class TrecFormatError(ValueError):
    """A qrels or run line that cannot be read; the message starts with ``file:line:``."""


def _lines(path: Path) -> Iterable[tuple[int, list[str]]]:
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            parts = line.split()
            if parts:
                yield lineno, parts


def read_qrels(path: str | Path) -> Qrels:
    path = Path(path)
    qrels: Qrels = {}
    for lineno, parts in _lines(path):
        if len(parts) == 4:
            qid, _, doc, grade = parts
        elif len(parts) == 3:
            qid, doc, grade = parts
            if lineno == 1 and not grade.lstrip("-").isdigit():
                continue  # BEIR header
        else:
            raise TrecFormatError(f"{path}:{lineno}: expected 'query 0 doc grade' (4 columns) "
                                  f"or 'query doc grade' (3), got {len(parts)} columns")
        try:
            qrels.setdefault(qid, {})[doc] = int(grade)
        except ValueError:
            raise TrecFormatError(f"{path}:{lineno}: grade {grade!r} is not an integer") from None
    return qrels


def qrels_from_questions(questions: Iterable[Question]) -> Qrels:
    """Judgments of each question; gold documents get grade 1; abstentions are left out."""
    out: Qrels = {}
    for q in questions:
        if q.judgments is not None:
            out[q.id] = {d: int(g) for d, g in q.judgments.items() if g != ABSTAIN}
        else:
            out[q.id] = {d: 1 for d in q.gold or []}
    return out


def write_qrels(path: str | Path, qrels: Mapping[str, Mapping[str, int]]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for qid, docs in qrels.items():
            for doc, grade in docs.items():
                fh.write(f"{qid} 0 {doc} {int(grade)}\n")


def questions_from_qrels(qrels: Mapping[str, Mapping[str, int]], texts: Mapping[str, str],
                         kind: str = "", lang: str = "") -> list[Question]:
    """Graded questions from qrels and a query-id → text map (queries without text are skipped)."""
    out = []
    for qid, docs in qrels.items():
        text = texts.get(qid)
        if not text:
            continue
        out.append(Question(id=qid, text=text, lang=lang, kind=kind, judgments=dict(docs)))
    return out


def order_preserving_scores(scores: Sequence[float]) -> list[float]:
    """The scores themselves when strictly decreasing; otherwise ``n, n-1, ..., 1``.

    Reserved slots, caps and ties can leave a ranked list whose fused scores are
    not strictly decreasing; TREC tools would then reorder it.
    """
    if all(a > b for a, b in zip(scores, scores[1:])):
        return [float(s) for s in scores]
    n = len(scores)
    return [float(n - i) for i in range(n)]


def write_run(path: str | Path, run: Mapping[str, Sequence[tuple[str, float]]], tag: str = "chaja") -> None:
    """Write ranked ``(doc, score)`` lists; scores are made order-preserving per query."""
    tag = tag.replace(" ", "_") or "chaja"
    with open(path, "w", encoding="utf-8") as fh:
        for qid, ranked in run.items():
            scores = order_preserving_scores([s for _, s in ranked])
            for rank, ((doc, _), score) in enumerate(zip(ranked, scores), 1):
                fh.write(f"{qid} Q0 {doc} {rank} {score!r} {tag}\n")


def read_run(path: str | Path) -> Run:
    """Each query's documents, highest score first; ties keep the rank column's order."""
    path = Path(path)
    rows: dict[str, list[tuple[float, int, int, str]]] = {}
    for lineno, parts in _lines(path):
        if len(parts) != 6:
            raise TrecFormatError(f"{path}:{lineno}: expected 'query Q0 doc rank score tag', got {len(parts)} columns")
        qid, _, doc, rank, score, _tag = parts
        try:
            rows.setdefault(qid, []).append((-float(score), int(rank), lineno, doc))
        except ValueError:
            raise TrecFormatError(f"{path}:{lineno}: rank must be an integer and score a number") from None
    return {qid: [(doc, -neg) for neg, _, _, doc in sorted(items)] for qid, items in rows.items()}
