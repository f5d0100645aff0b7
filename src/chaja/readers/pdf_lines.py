"""A PDF's page lines → text: running headers, footers and page numbers dropped,
tables of contents dropped, lines joined into paragraphs (a word broken at a line-end
hyphen joined again where the document spells it whole)."""
from __future__ import annotations

import math
import re
from collections import Counter

from chaja.readers.contents import is_contents_line
from chaja.readers.pdf_layout import Line


# ------------------------------------------------------------------ running headers, page numbers

_PAGE_NUMBER = re.compile(
    # a roman numeral only as one is written (iv, xii), so "Civil" or "DC" is no page number
    r"[-–—\s]*(?:\d{1,5}|(?=[ivxlc])(?:x{0,3}|xl|l)(?:ix|iv|v?i{0,3}))[-–—\s]*"
    r"|(?:page|p\.|pg\.?)\s*\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?"
    r"|\d{1,4}\s*(?:/|of)\s*\d{1,4}"
    r"|[-–—\s]*\d{1,4}\s*(?:쪽|페이지|면)[-–—\s]*"
    r"|[-–—\s]*\d{1,4}\s*/\s*\d{1,4}\s*(?:쪽|페이지)?[-–—\s]*",
    re.IGNORECASE)


def is_page_number(text: str) -> bool:
    """Whether a line is only a page number: ``3``, ``- 3 -``, ``iv``, ``Page 3 of 10``,
    ``3 / 27``, ``3쪽``."""
    return bool(_PAGE_NUMBER.fullmatch(text.strip()))


def _repeat_key(text: str) -> str:
    """What a running header keeps from page to page: its text without digits or
    spaces; "" for a line without letters (a date, a number), which is never one."""
    key = re.sub(r"[\d\s]+", "", text.lower())
    return key if any(ch.isalpha() for ch in key) else ""


def drop_running_lines(pages: list[list[Line]]) -> int:
    """Remove, in place, the page-edge lines that are page numbers or repeat (modulo
    digits) at the edges of many pages: on at least two pages and three in ten of the
    pages with text. Returns how many lines went."""
    with_text = sum(1 for lines in pages if lines)
    seen: Counter[str] = Counter()
    for lines in pages:
        seen.update({key for line in lines if line.edge and (key := _repeat_key(line.text))})
    need = max(2, math.ceil(0.3 * with_text))
    running = {key for key, n in seen.items() if n >= need}
    dropped = 0
    for lines in pages:
        keep = [line for line in lines
                if not (line.edge and (is_page_number(line.text) or _repeat_key(line.text) in running))]
        dropped += len(lines) - len(keep)
        lines[:] = keep
    return dropped


def drop_contents_lines(pages: list[list[Line]]) -> int:
    """Remove, in place, the lines of a table of contents (:mod:`chaja.readers.contents`);
    how many went."""
    dropped = 0
    for lines in pages:
        keep = [line for line in lines if not is_contents_line(line.text)]
        dropped += len(lines) - len(keep)
        lines[:] = keep
    return dropped


# ------------------------------------------------------------------ lines → page text

_WORD = re.compile(r"[^\W\d_]+")


def join_lines(lines: list[Line], words: set[str]) -> str:
    """A page's lines as text: paragraphs apart by a blank line, lines by a newline.
    A word broken at a hyphen at a line end is joined again: without the hyphen where
    the document spells the joined word whole elsewhere (``investi-`` ``gation``),
    else keeping it (``non-normal``, ``Soekarno-Hatta``, ``FAA–2020``): a hyphen
    at a line end may be the word's own, and only the text can tell."""
    out: list[str] = []
    for line in lines:
        text = line.text
        prev = out[-1] if out else ""
        if (not line.para and prev[-1:] in "-‐–" and len(prev) > 1 and prev[-2].isalnum()
                and text[:1].isalnum()):
            left, right = _WORD.findall(prev[:-1]), _WORD.findall(text)
            whole = (left[-1] + right[0]).lower() if left and right and prev[-1] != "–" else ""
            out[-1] = (prev[:-1] if whole in words and prev[-2].islower() and text[:1].islower()
                       else prev) + text
            continue
        if out:
            out.append("\n\n" if line.para else "\n")
        out.append(text)
    return "".join(out)


def document_words(pages: list[list[Line]]) -> set[str]:
    """Every word of the document, lowercased: what tells a hyphenated word from a compound."""
    return {w.lower() for lines in pages for line in lines for w in _WORD.findall(line.text)}
