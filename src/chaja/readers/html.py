"""HTML → a document: its ``<title>`` (or first heading) and sections by heading
(:func:`chaja.markup.html_sections`)."""
from __future__ import annotations

from collections.abc import Iterator

from chaja.documents import Document
from chaja.markup import html_sections
from chaja.readers.base import ReadContext
from chaja.readers.text import read_text


def read(ctx: ReadContext) -> Iterator[Document]:
    title, sections = html_sections(read_text(ctx))
    yield Document(id=ctx.doc_id, title=title or ctx.path.stem, sections=sections, path=str(ctx.path))
