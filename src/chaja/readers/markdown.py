"""Markdown/MDX → a document: front matter (``title``, ``lang``, ``source``,
``doc_type``/``type``, ``date``, ``description``), then sections by heading
(:func:`chaja.markup.markdown_sections`)."""
from __future__ import annotations

from collections.abc import Iterator

from chaja.documents import Document, Section
from chaja.language import detect_language
from chaja.markup import markdown_sections, prose, split_front_matter
from chaja.readers.base import ReadContext
from chaja.readers.fields import iso_date, language_code
from chaja.readers.text import read_text


def read(ctx: ReadContext) -> Iterator[Document]:
    meta, body = split_front_matter(read_text(ctx))
    h1, sections = markdown_sections(body)
    description = meta.get("description", "").strip()
    if description:
        sections.insert(0, Section((), description))
    title = meta.get("title") or h1 or ctx.path.stem
    lang = language_code(meta.get("lang", "").strip(), ctx.notes, "")
    yield Document(
        id=ctx.doc_id, title=title, sections=sections,
        lang=lang or detect_language(title + "\n" + prose(body)), lang_detected=not lang,
        source=meta.get("source", ""), doc_type=meta.get("doc_type") or meta.get("type", ""),
        date=iso_date(meta.get("date")), path=str(ctx.path),
    )
