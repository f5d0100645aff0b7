"""Markdown/MDX and HTML → title, front matter and sections of plain text.

Markdown headings (``#`` … ``######``) outside code fences open sections; MDX
components (``<Intro>``, ``<Sandpack>``, ``<YouTubeIframe … />``), JSX comments
(``{/*anchor*/}``), HTML tags, link targets and emphasis markers are stripped, inline
code spans keeping their text as written; a heading's attribute block (``## 옵션 {#options}``)
stays, since in a translated page it is the section's name in the original language;
the contents of code fences are kept as text, so code stays searchable.

Every pass here is linear (or n log n) in its input, whatever the input: these run
on uploaded text, so a pattern that can backtrack (nested or overlapping
quantifiers, a lazy ``.*?`` whose end is missing, a match retried from each
character of a long run) is written with possessive quantifiers or as a
``str.find`` scan instead (:mod:`chaja.markup_strip`; see
tests/test_markup_adversarial.py).
"""
from __future__ import annotations

import html
import re
from collections.abc import Iterable, Iterator
from html.parser import HTMLParser

from chaja.documents import Section
from chaja.markup_strip import strip_brackets, strip_delimited, strip_fenced_blocks, strip_tags

FENCE = re.compile(r"^\s*(```+|~~~+)")   # a code fence opening or closing
# Level marks, then the text with any closing ``#``s and the spaces around them dropped.
# Same matches as ``^(#{1,6})\s+(.*?)\s*#*\s*$`` but linear: that form retried the
# trailing ``\s*#*\s*`` from every character of the text, each try rescanning a run of
# spaces (cubic on ``# a`` + spaces + ``b``). Here the text is taken run by run
# (possessively), and a run of spaces or ``#``s is checked once, where it begins, for
# being the closing part; the check reads at most three runs.
_HEADING_END = r"(?>\s*#*\s*)$"
HEADING = re.compile(
    rf"^(#{{1,6}})\s++((?:[^\s#]++|(?!{_HEADING_END})(?:[^\S\n]++|#++))*+){_HEADING_END}")
# (possessive, so a line that fails is not retried: linear already, now plainly so)
_MDX_STATEMENT = re.compile(r"^\s*+(import|export)\s.+$")
_RULE = re.compile(r"^\s*+([-*_])(?:\s*+\1)(?:\s*+\1)++\s*+$")
_SPACES = re.compile(r"\s+")
_EMPHASIS = re.compile(r"(\*\*|__|\*|`+)")


def split_front_matter(text: str) -> tuple[dict[str, str], str]:
    """``---`` delimited front matter → (flat key/value map, body). Values are unquoted strings."""
    if not text.startswith("---"):
        return {}, text
    lines = text.split("\n")
    if lines[0].strip() != "---":
        return {}, text
    for end in range(1, len(lines)):
        if lines[end].strip() in ("---", "..."):
            meta = {}
            for line in lines[1:end]:
                m = re.match(r"^([A-Za-z_][\w-]*)\s*:\s*(.*)$", line)
                if m:
                    value = m.group(2).strip()
                    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                        value = value[1:-1]
                    meta[m.group(1).lower()] = value
            return meta, "\n".join(lines[end + 1 :])
    return {}, text


_INLINE_CODE = re.compile(r"`[^`\n]*+`")


def prose(body: str) -> str:
    """Markdown without code (fenced blocks and inline code): what language detection reads."""
    return _INLINE_CODE.sub(" ", strip_fenced_blocks(body))


def fenced(lines: Iterable[str]) -> Iterator[tuple[str, str]]:
    """Each line with its place: ``"code"`` inside a fenced block, ``"fence"`` for an
    opening or closing marker, ``"text"`` otherwise. A fence closes on a marker of
    the same character at least as long as the one that opened it (CommonMark)."""
    fence: str | None = None
    for line in lines:
        m = FENCE.match(line)
        if fence is None:
            if m:
                fence = m.group(1)
            yield line, "fence" if m else "text"
        elif m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
            fence = None
            yield line, "fence"
        else:
            yield line, "code"


#: an inline code span stands in for its text while the markup around it is stripped
_SPAN_OPEN, _SPAN_CLOSE = "\ue000", "\ue001"
_SPAN_MARK = re.compile(f"{_SPAN_OPEN}(\\d++){_SPAN_CLOSE}")


def clean_inline(line: str) -> str:
    """Strip markup from one line of Markdown/MDX prose. An inline code span keeps its
    text as written (``<Suspense>``, ``<script setup>``, ``**kwargs``): it is set aside
    while tags, links and emphasis are stripped around it, then put back without its
    backticks."""
    line = strip_delimited(line, "{/*", "*/}")
    spans: list[str] = []

    def set_aside(m: re.Match) -> str:
        spans.append(m.group()[1:-1])
        return f"{_SPAN_OPEN}{len(spans) - 1}{_SPAN_CLOSE}"

    line = _INLINE_CODE.sub(set_aside, line.replace(_SPAN_OPEN, " ").replace(_SPAN_CLOSE, " "))
    line = strip_brackets(line, "![", 0, "()")
    line = strip_brackets(line, "[", 1, "()")
    line = strip_brackets(line, "[", 1, "[]")
    line = strip_tags(line)
    line = _EMPHASIS.sub("", line)
    line = html.unescape(line)
    if spans:
        line = _SPAN_MARK.sub(lambda m: spans[int(m.group(1))], line)
    return re.sub(r"[ \t]+", " ", line).strip()


def markdown_sections(body: str) -> tuple[str | None, list[Section]]:
    """Sections of a Markdown/MDX body, and the first level-1 heading if any."""
    body = strip_delimited(strip_delimited(body, "{/*", "*/}"), "<!--", "-->")
    sections: list[Section] = []
    path: list[tuple[int, str]] = []
    buf: list[str] = []
    h1: str | None = None

    def flush() -> None:
        text = "\n".join(buf).strip()
        text = re.sub(r"\n{3,}", "\n\n", text)
        if text:
            sections.append(Section(tuple(h for _, h in path), text))
        buf.clear()

    for raw, place in fenced(body.split("\n")):
        if place == "code":
            buf.append(raw.rstrip())
        if place != "text":
            continue
        h = HEADING.match(raw)
        if h:
            flush()
            level, title = len(h.group(1)), clean_inline(h.group(2))
            if level == 1 and h1 is None and not sections and not path:
                h1 = title  # the page's own title, not a section of it
                continue
            while path and path[-1][0] >= level:
                path.pop()
            if title:
                path.append((level, title))
            continue
        if _MDX_STATEMENT.match(raw) or _RULE.match(raw):
            continue
        buf.append(clean_inline(raw))
    flush()
    return h1, sections


class _HtmlSections(HTMLParser):
    _SKIP = {"script", "style", "noscript", "template", "svg", "nav", "footer", "aside"}   # code and page furniture
    _BLOCK = {"p", "div", "li", "tr", "br", "pre", "section", "article", "table", "ul", "ol", "blockquote"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title = ""
        self.sections: list[Section] = []
        self._path: list[tuple[int, str]] = []
        self._buf: list[str] = []
        self._skip = 0
        self._in_title = False
        self._heading: tuple[int, list[str]] | None = None

    def _flush(self) -> None:
        text = re.sub(r"[ \t]+", " ", "".join(self._buf))
        # each run of whitespace holding a line break → one line break; the same as
        # ``re.sub(r"\s*\n\s*", "\n", text)``, which rescanned a run without one
        # from each of its characters (quadratic on a long run of ``&nbsp;``)
        text = _SPACES.sub(lambda m: "\n" if "\n" in m.group() else m.group(), text).strip()
        if text:
            self.sections.append(Section(tuple(h for _, h in self._path), text))
        self._buf.clear()

    def handle_starttag(self, tag, attrs):
        if tag in self._SKIP:
            self._skip += 1
        elif tag == "title":
            self._in_title = True
        elif re.fullmatch(r"h[1-6]", tag):
            self._flush()
            self._heading = (int(tag[1]), [])
        elif tag in self._BLOCK:
            self._buf.append("\n")

    def handle_endtag(self, tag):
        if tag in self._SKIP:
            self._skip = max(0, self._skip - 1)
        elif tag == "title":
            self._in_title = False
        elif self._heading and tag == f"h{self._heading[0]}":
            level, parts = self._heading
            text = re.sub(r"\s+", " ", "".join(parts)).strip()
            self._heading = None
            while self._path and self._path[-1][0] >= level:
                self._path.pop()
            if text:
                self._path.append((level, text))
                if level == 1 and not self.title:
                    self.title = text
        elif tag in self._BLOCK:
            self._buf.append("\n")

    def handle_data(self, data):
        if self._skip:
            return
        if self._in_title:
            self.title += data.strip()
        elif self._heading is not None:
            self._heading[1].append(data)
        else:
            self._buf.append(data)


def html_sections(text: str) -> tuple[str, list[Section]]:
    """(title, sections) of an HTML page: ``<title>`` or the first ``<h1>``; h1–h6 open sections."""
    p = _HtmlSections()
    p.feed(text)
    p.close()
    p._flush()
    return p.title, p.sections
