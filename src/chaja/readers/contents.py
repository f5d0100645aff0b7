"""Lines of a table of contents: a title, a run of leader dots, a page number
(``Ⅰ. 사업 개요 ········ 3``, ``Introduction ..... 12``). They name every section
of a document, so a question about any section matches them better than the
section itself; readers drop them. Scanned from the end, without a regular
expression, so a long line costs one pass."""
from __future__ import annotations

from chaja.readers.numbering import numbered_heading_level

#: characters a leader is drawn with (full stop, middle dots, ellipses, hyphenation point, bullets)
LEADERS = frozenset(".·‥…ㆍ・․‧∙•⋯")
#: fewest leader characters in the run before the page number
MIN_LEADERS = 4


def is_contents_line(line: str) -> bool:
    """Whether ``line`` is a table-of-contents entry: text, then at least four leader
    characters (spaces between them allowed), then a page number (digits or a short
    roman numeral, maybe in dashes) at the end; one leader will do after a numbered
    heading (a PDF may draw the dots as one glyph)."""
    text = line.rstrip()
    end = len(text)
    while end and text[end - 1] in " -–":
        end -= 1
    start = end
    while start and (text[start - 1].isdigit() or text[start - 1] in "ivxlcIVXLC"):
        start -= 1
    if start == end or end - start > 6:
        return False
    i, leaders = start, 0
    while i and (text[i - 1] in LEADERS or text[i - 1] in " -–"):
        leaders += text[i - 1] in LEADERS
        i -= 1
    if leaders >= MIN_LEADERS:
        return any(ch.isalpha() for ch in text[:i])
    if leaders >= 1:    # a leader drawn as one glyph: only after a numbered heading ("Ⅰ. 사업 개요 · 3")
        return numbered_heading_level(text[:i]) is not None
    return False
