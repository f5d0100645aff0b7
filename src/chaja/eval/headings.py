"""Section headings of Markdown/MDX pages, as plain text and as comparison keys.

A heading is a line ``#``–``######`` followed by text, outside front matter and
code fences. Its plain text drops the MDX anchor (``{/*anchor*/}``), code-span
backticks (keeping the code), link targets, emphasis markers and HTML tags.
Two headings are "the same" when the keys of their plain texts match
(:func:`heading_key`: NFKC-normalised, case-folded, runs of whitespace collapsed).
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from chaja.markup import HEADING, fenced, split_front_matter

_ANCHOR = re.compile(r"\s*\{/\*(.*?)\*/\}\s*$")
_CODE = re.compile(r"(`+)(.+?)\1")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_EMPH = re.compile(r"(\*\*|\*|__|(?<!\w)_|_(?!\w))")


@dataclass(frozen=True)
class Heading:
    level: int
    text: str          # plain text
    anchor: str = ""


def _plain_prose(part: str) -> str:
    part = _LINK.sub(r"\1", part)
    part = _TAG.sub(" ", part)
    return _EMPH.sub("", part)


def plain_heading(raw: str) -> str:
    """Heading markup → the text a reader sees."""
    raw = _ANCHOR.sub("", raw)
    out, pos = [], 0
    for m in _CODE.finditer(raw):
        out.append(_plain_prose(raw[pos:m.start()]))
        out.append(m.group(2).strip())
        pos = m.end()
    out.append(_plain_prose(raw[pos:]))
    return re.sub(r"\s+", " ", "".join(out)).strip()


def heading_key(plain: str) -> str:
    """Comparison key of a heading's plain text (apply :func:`plain_heading` to raw markup first)."""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", plain).casefold()).strip()


def markdown_headings(text: str) -> list[Heading]:
    headings: list[Heading] = []
    for line, place in fenced(split_front_matter(text)[1].split("\n")):
        m = HEADING.match(line) if place == "text" else None
        if m:
            anchor = _ANCHOR.search(m.group(2))
            plain = plain_heading(m.group(2))
            if plain:
                headings.append(Heading(len(m.group(1)), plain, anchor.group(1) if anchor else ""))
    return headings


def file_headings(path: str | Path) -> list[Heading]:
    return markdown_headings(Path(path).read_text(encoding="utf-8"))
