"""Plain text → a document whose sections follow the text's own headings.

The first line is the title when it is short (at most 100 characters) and more
text follows. A heading is a short line (eight words at most, no sentence end:
"How to descale your machine") standing alone as a paragraph before body text, or
a line that opens with the numbering of Korean official documents ("1.", "가.",
"제1조", "Ⅰ.": :func:`chaja.readers.numbering.numbered_heading_level`) and is not one
of a run of numbered items in sequence (a list). The paragraphs under
one heading form one section, so the chunker packs them together and a title line
stays with the paragraph it names. Each paragraph is marked with its number.
A text file whose lines are tab-separated columns is read as a table, a row a line.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

from chaja.documents import Document, Section
from chaja.readers.base import ReadContext
from chaja.readers.contents import is_contents_line
from chaja.readers.encoding import decode
from chaja.readers.headings import Block, block_sections, numbered_levels
from chaja.readers.numbering import numbered_heading_level

_PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n")
#: longest line that can be a heading, and the marks that end a sentence (no heading ends so)
HEADING_CHARS = 80
_SENTENCE_END = (".", "!", "?", "。", ":", ";", ",", "다", "요")


def read_text(ctx: ReadContext) -> str:
    """The file's text, its encoding kept in ``ctx.encoding`` (bytes replaced: a note)."""
    decoded = decode(ctx.path.read_bytes())
    ctx.encoding = decoded.encoding
    if decoded.note:
        ctx.notes.append(decoded.note)
    return decoded.text.replace("\r\n", "\n").replace("\r", "\n")


def _short_heading(paragraph: str, following: str | None) -> bool:
    """A short line of at most eight words standing alone, with no sentence's end,
    before body text (a paragraph twice as long, or one that ends a sentence), not
    before another line like it."""
    first = paragraph.strip()
    return (0 < len(first) <= HEADING_CHARS and "\n" not in first and following is not None
            and first[0].isalnum() and len(first.split()) <= 8
            and (len(following) >= 2 * len(first) or following.rstrip().endswith(_SENTENCE_END))
            and not first.endswith(_SENTENCE_END) and not first[-1].isdigit()
            and numbered_heading_level(first) is None)      # a numbered line not taken as a heading is a list item


def text_sections(text: str, short_lines: bool = True) -> list[Section]:
    """Plain text → sections by its headings (:func:`chaja.readers.headings.block_sections`),
    each paragraph marked with its number: the numbered headings (a run of numbered
    items in sequence is a list) and, with ``short_lines``, a short line before body text
    at the top level (``short_lines=False``: a record's text, where a short line such as
    a list of hashtags is no heading). Table-of-contents lines are dropped."""
    paragraphs = [p.strip() for p in _PARAGRAPH_BREAK.split(text) if p.strip()]
    blocks = [Block("\n".join(line for line in p.split("\n") if not is_contents_line(line))) for p in paragraphs]
    levels = numbered_levels(blocks)
    if short_lines:
        shown = [i for i, b in enumerate(blocks) if b.text.strip()]
        for i, j in zip(shown, [*shown[1:], None]):
            if levels[i] is None and _short_heading(blocks[i].text, blocks[j].text if j is not None else None):
                levels[i] = 1
    return block_sections(blocks, marked=False, levels=levels)[0]


def is_tab_table(text: str, lines: int = 50) -> bool:
    """Whether text is a table with tab-separated columns: of its first ``lines``
    non-empty lines (at least 5), nine in ten hold the same number of tabs, one or more."""
    head = [line for line in text[:200_000].split("\n")[:lines * 2] if line.strip()][:lines]
    if len(head) < 5:
        return False
    tabs = Counter(line.count("\t") for line in head)
    count, n = tabs.most_common(1)[0]
    return count > 0 and n >= 0.9 * len(head)


def read(ctx: ReadContext) -> Iterator[Document]:
    text = read_text(ctx).strip()
    if is_tab_table(text):              # a code list or an export: read as rows (chaja.readers.sheets_csv)
        from chaja.readers import sheets_csv

        yield from sheets_csv.read(ctx)      # in the encoding found here (ctx.encoding)
        return
    first = text.split("\n", 1)[0].strip() if text else ""
    title, body = ctx.path.stem, text
    if 0 < len(first) <= 100 and text[len(first):].strip():   # a short first line is the title
        title, body = first, text[len(first):]
    yield Document(id=ctx.doc_id, title=title, sections=text_sections(body), path=str(ctx.path))
