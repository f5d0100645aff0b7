"""Documents → JSON Lines that ``chaja index`` reads back.

One object a line: ``{"id", "title", "text", "lang", "source", "doc_type", "date"}``;
``text`` joins the sections' text with blank lines (the loaders here produce one
section per document, so nothing is lost).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

from chaja.documents import Document


def document_record(doc: Document) -> dict:
    return {"id": doc.id, "title": doc.title, "text": doc.text, "lang": doc.lang,
            "source": doc.source, "doc_type": doc.doc_type, "date": doc.date}


def write_documents(path: str | Path, docs: Iterable[Document]) -> int:
    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        for doc in docs:
            fh.write(json.dumps(document_record(doc), ensure_ascii=False) + "\n")
            n += 1
    return n
