"""BEIR-layout benchmarks (SciFact and others) → documents and questions.

Layout: ``corpus.jsonl`` (``{"_id", "title", "text"}`` a line), ``queries.jsonl``
(``{"_id", "text"}``) and ``qrels/<split>.tsv`` (``query-id corpus-id score``
under a header). Each corpus line becomes one :class:`~chaja.documents.Document`
(id = the BEIR ``_id``, title = its title, one section holding the text). Each
query with a positive judgment in the split becomes a single-gold question whose
``gold`` lists every document judged > 0 (scoring takes the best ranked) and
whose grades are kept in ``extra["qrels"]`` (written out as a ``qrels`` field; BEIR
grades are not on the 0–3 usefulness scale of graded pools).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from chaja.documents import Document, Section
from chaja.eval.questions import Question
from chaja.eval.trec import read_qrels
from chaja.language import detect_language


@dataclass
class BeirSet:
    documents: list[Document]
    questions: list[Question]
    judgments: int          # qrels rows with a positive grade used
    unanswerable: int       # queries in the split with no positive judgment


def _jsonl(path: Path):
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if line.strip():
                try:
                    yield lineno, json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None


def load_beir(folder: str | Path, split: str = "test", name: str | None = None,
              doc_type: str = "abstract") -> BeirSet:
    folder = Path(folder)
    name = name or folder.name
    docs: list[Document] = []
    seen: set[str] = set()
    for lineno, rec in _jsonl(folder / "corpus.jsonl"):
        doc_id = str(rec.get("_id", ""))
        if not doc_id or doc_id in seen:
            raise ValueError(f"{folder / 'corpus.jsonl'}:{lineno}: missing or repeated _id {doc_id!r}")
        seen.add(doc_id)
        title, text = str(rec.get("title") or ""), str(rec.get("text") or "")
        docs.append(Document(id=doc_id, title=title, sections=[Section((), text)],
                             lang=detect_language(f"{title} {text}"), source=name, doc_type=doc_type))
    texts = {str(rec["_id"]): str(rec.get("text") or "") for _, rec in _jsonl(folder / "queries.jsonl")}
    qrels = read_qrels(folder / "qrels" / f"{split}.tsv")
    questions, used, unanswerable = [], 0, 0
    for qid, judged in qrels.items():
        gold = [d for d, g in judged.items() if g > 0]
        unknown = [d for d in judged if d not in seen]
        if unknown:
            raise ValueError(f"qrels/{split}.tsv: query {qid} judges unknown document {unknown[0]!r}")
        if qid not in texts:
            raise ValueError(f"qrels/{split}.tsv: query {qid} is not in queries.jsonl")
        if not gold:
            unanswerable += 1
            continue
        used += len(gold)
        text = texts[qid]
        questions.append(Question(id=qid, text=text, lang=detect_language(text), kind=name, gold=gold,
                                  extra={"qrels": dict(judged)}))
    return BeirSet(docs, questions, used, unanswerable)
