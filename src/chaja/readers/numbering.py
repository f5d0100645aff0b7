"""Which line is a numbered heading of a Korean official document, and at what level.

Korean government reports and notices number their headings in a fixed order (the
행정업무운영 편람's item numbering: ``1.`` → ``가.`` → ``1)`` → ``가)`` → ``(1)`` →
``(가)``, with ``Ⅰ.`` above them in reports and ``□`` for a report's top items;
statutes use ``제1장`` and ``제1조``). :func:`numbered_heading_level` tells such a
heading line from body text (:mod:`chaja.readers.headings` builds sections by it).
"""
from __future__ import annotations

import re

#: longest line taken for a numbered heading; longer lines are body text
MAX_HEADING_CHARS = 60
_MAX_WORDS = 10

ROMAN = "ⅠⅡⅢⅣⅤⅥⅦⅧⅨⅩⅪⅫ"
ORDER = "가나다라마바사아자차카타파하"       # the Hangul item letters, in order
# (numbering, level) in the order tried; the heading's words follow the numbering
_NUMBERINGS = (
    (re.compile(r"제\s*\d{1,3}\s*[편장]"), 1),
    (re.compile(rf"[{ROMAN}]\s*[.．]?"), 1),
    (re.compile(r"(?:IX|IV|V?I{1,3}|VI{0,3}|X)\s*[.．]"), 1),
    (re.compile(r"제\s*\d{1,3}\s*[절조](?:\s*의\s*\d+)?"), 2),
    (re.compile(r"[□■]"), 2),
    (re.compile(r"\d{1,2}\s*[.．]"), 2),
    (re.compile(rf"[{ORDER}]\s*[.．]"), 3),
    (re.compile(r"\d{1,2}\s*\)"), 4),
    (re.compile(rf"[{ORDER}]\s*\)"), 5),
    (re.compile(r"[(（]\d{1,2}[)）]"), 6),
    (re.compile(rf"[(（][{ORDER}][)）]"), 7),
)
# how a sentence ends: a heading names a topic, body text says something about it
SENTENCE_END = re.compile(r"(?:다|[.。!?])\s*$")
LETTER = re.compile(r"[^\W\d_]")
_DATE_PART = re.compile(r"\d{1,4}\s*[.．]")     # "3. 5. 공고", "1. 2024. 공고": a date, no heading


def numbered_heading_level(line: str) -> int | None:
    """The heading level of ``line`` when it opens with Korean official-document
    numbering and is short enough to be a heading: ``Ⅰ.`` and ``제1장`` 1; ``1.``,
    ``□``, ``제1조`` 2; ``가.`` 3; ``1)`` 4; ``가)`` 5; ``(1)`` 6; ``(가)`` 7.
    None for body text: a line over 60 characters or 10 words, a sentence (ending in
    ``다`` or ``.``), a bare number, or a number such as ``1.5%`` or ``2024. 3. 5.``."""
    line = line.strip()
    if not line or len(line) > MAX_HEADING_CHARS or len(line.split()) > _MAX_WORDS:
        return None
    if SENTENCE_END.search(line):
        return None
    for numbering, level in _NUMBERINGS:
        found = numbering.match(line)
        if found is None:
            continue
        rest = line[found.end():]
        words = rest.lstrip()
        if (not words or not LETTER.search(words) or _DATE_PART.match(words)
                or (rest[:1].isdigit() and not found.group().startswith("제"))   # "1.5%", "1)2"
                or (level == 2 and line[0] in "□■" and ("□" in words or "■" in words))):  # "□ 예 □ 아니오"
            return None
        return level
    return None
