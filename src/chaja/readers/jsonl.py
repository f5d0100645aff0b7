"""JSON Lines → one document a line: ``id, title, text, lang, source, doc_type, date``.
``text`` is plain text (sections by its headings: :func:`chaja.readers.text.text_sections`),
read as Markdown only when the record says ``"format": "markdown"``, so a hashtag line
such as ``# 비용절감`` stays text. A line that is not a good record is named by its
number and skipped; the rest of the file is read."""
from __future__ import annotations

import json
from collections.abc import Iterator

from chaja.documents import Document
from chaja.markup import markdown_sections
from chaja.readers.base import ReadContext
from chaja.readers.fields import iso_date, language_code
from chaja.readers.text import read_text, text_sections

MARKUP_FORMATS = {"text": False, "plain": False, "markdown": True, "md": True}   # 'format' → Markdown?


def document_from_record(rec: dict, default_id: str, problems: list[str] | None = None) -> Document:
    """One JSON object → Document. A field of the wrong type is an error; a date or
    language that cannot be read is dropped with a note in ``problems``."""
    if not isinstance(rec, dict):
        raise ValueError("a line must be a JSON object")
    text = rec.get("text")
    if not isinstance(text, str):
        raise ValueError("missing string field 'text'")
    doc_id = rec.get("id")
    if doc_id is not None and (isinstance(doc_id, bool) or not isinstance(doc_id, (str, int))):
        raise ValueError(f"'id' must be a string or a whole number, not {type(doc_id).__name__}")
    for key in ("title", "lang", "source", "doc_type", "date", "format"):
        value = rec.get(key)
        if value is not None and not isinstance(value, str):
            raise ValueError(f"{key!r} must be a string, not {type(value).__name__}")
    fmt = str(rec.get("format") or "text").lower()
    if fmt not in MARKUP_FORMATS:
        raise ValueError(f"'format' must be one of {', '.join(sorted(MARKUP_FORMATS))}, not {fmt!r}")
    sections = markdown_sections(text)[1] if MARKUP_FORMATS[fmt] else text_sections(text, short_lines=False)
    date = iso_date(rec.get("date"))
    if rec.get("date") and date is None and problems is not None:
        problems.append(f"'date' {rec['date']!r} is not a date (YYYY-MM-DD); stored without one")
    return Document(
        id=str(doc_id or default_id), title=rec.get("title") or "", sections=sections,
        lang=language_code((rec.get("lang") or "").strip(), problems, ""), source=rec.get("source") or "",
        doc_type=rec.get("doc_type") or "", date=date,
    )


def read(ctx: ReadContext) -> Iterator[Document]:
    for lineno, line in enumerate(read_text(ctx).split("\n"), 1):
        if not line.strip():
            continue
        notes: list[str] = []
        try:
            doc = document_from_record(json.loads(line), f"{ctx.doc_id}#{lineno}", notes)
        except (json.JSONDecodeError, ValueError) as exc:
            ctx.notes.append(f":{lineno}: {exc}")
            ctx.partial = True
            continue
        except RecursionError:
            ctx.notes.append(f":{lineno}: JSON nested too deeply; line skipped")
            ctx.partial = True
            continue
        ctx.notes.extend(f":{lineno}: {n}" for n in notes)
        doc.path = f"{ctx.path}:{lineno}"
        yield doc
