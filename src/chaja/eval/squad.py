"""SQuAD-format JSON (KorQuAD 1.0) → paragraph documents and single-gold questions.

Each question's gold document is the paragraph that answers it. A paragraph that
occurs more than once within its article (same context text) is one document:
the first occurrence is kept and the questions of the repeats point at it
(KorQuAD 1.0 dev: 964 paragraph entries, 961 distinct paragraphs).

Document id ``<article title>#<n>`` with ``n`` the 0-based position of the kept
paragraph in the article; title = the article title with ``_`` read as a space.
Questions get ``kind`` = ``name`` (default: the folder holding the file).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from chaja.documents import Document, Section
from chaja.eval.questions import Question
from chaja.language import detect_language


@dataclass
class SquadSet:
    documents: list[Document]
    questions: list[Question]
    paragraph_entries: int      # paragraphs as listed in the file
    merged: int                 # entries folded into an earlier identical paragraph
    articles: int


def load_squad(path: str | Path, name: str | None = None, doc_type: str = "paragraph") -> SquadSet:
    path = Path(path)
    name = name or path.parent.name or path.stem
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise ValueError(f"{path}: not SQuAD format (expected an object with a 'data' list)")
    docs: list[Document] = []
    questions: list[Question] = []
    seen_q: set[str] = set()
    entries = merged = 0
    for a_no, article in enumerate(data["data"]):
        raw_title = str(article.get("title") or f"article-{a_no}")
        title = raw_title.replace("_", " ")
        kept: dict[str, str] = {}  # context -> doc id
        for p_no, para in enumerate(article.get("paragraphs", [])):
            entries += 1
            context = para["context"]
            doc_id = kept.get(context)
            if doc_id is None:
                doc_id = f"{raw_title}#{p_no}"
                kept[context] = doc_id
                docs.append(Document(id=doc_id, title=title, sections=[Section((), context)],
                                     lang=detect_language(context), source=name, doc_type=doc_type))
            else:
                merged += 1
            for qa in para.get("qas", []):
                qid = str(qa["id"])
                if qid in seen_q:
                    raise ValueError(f"{path}: question id {qid!r} appears twice")
                seen_q.add(qid)
                text = qa["question"]
                questions.append(Question(id=qid, text=text, lang=detect_language(text), kind=name, gold=[doc_id]))
    return SquadSet(docs, questions, entries, merged, len(data["data"]))
