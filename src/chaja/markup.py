"""Markdown/MDX and HTML → title, front matter and sections of plain text.

Markdown headings (``#`` … ``######``) outside code fences open sections; MDX
components (``<Intro>``, ``<Sandpack>``, ``<YouTubeIframe … />``), JSX comments
(``{/*anchor*/}``), HTML tags, link targets and emphasis markers are stripped;
the contents of code fences are kept as text, so code stays searchable.

Every pass here is linear (or n log n) in its input, whatever the input: these run
on uploaded text, so a pattern that can backtrack (nested or overlapping
quantifiers, a lazy ``.*?`` whose end is missing, a match retried from each
character of a long run) is written with possessive quantifiers or as a
``str.find`` scan instead (see tests/test_markup_adversarial.py).
"""
from __future__ import annotations

import html
import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from html.parser import HTMLParser

from chaja.documents import Section

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
_WS = re.compile(r"\s")
_SPACES = re.compile(r"\s+")


def _strip_delimited(text: str, start: str, end: str, repl: str = "") -> str:
    """``re.sub(re.escape(start) + ".*?" + re.escape(end), repl, text, flags=re.S)``
    by ``str.find``: an opening with no closing after it ends the scan instead of
    rescanning the rest of the text from every later opening."""
    i = text.find(start)
    if i < 0:
        return text
    out: list[str] = []
    pos = 0
    while i >= 0:
        j = text.find(end, i + len(start))
        if j < 0:
            break   # no closing after this opening, so none after any later one
        out += (text[pos:i], repl)
        pos = j + len(end)
        i = text.find(start, pos)
    out.append(text[pos:])
    return "".join(out)


def _strip_brackets(text: str, start: str, min_label: int, target: str) -> str:
    """``start`` + label + ``]`` + ``target[0]`` … ``target[1]`` → label: an image
    (``"!["``, 0, ``"()"``), a link (``"["``, 1, ``"()"``) or a reference link
    (``"["``, 1, ``"[]"``), as ``re.sub`` did with ``!\\[([^\\]]*)\\]\\([^)]*\\)``,
    ``\\[([^\\]]+)\\]\\([^)]*\\)`` and ``\\[([^\\]]+)\\]\\[[^\\]]*\\]``, but linear: those
    rescanned to the next ``]`` (or to the end) from every ``[``. A try that fails
    after the label fails the same way from each ``[`` up to the same ``]``, so the
    scan goes on past it; a missing ``]`` or closing bracket ends the scan."""
    i = text.find(start)
    if i < 0:
        return text
    out: list[str] = []
    pos = 0
    while i >= 0:
        label = i + len(start)
        k = text.find("]", label)
        if k < 0:
            break
        if k - label < min_label:
            i = text.find(start, i + 1)
            continue
        if not text.startswith(target[0], k + 1):
            i = text.find(start, k + 1)
            continue
        e = text.find(target[1], k + 2)
        if e < 0:
            break
        out += (text[pos:i], text[label:k])
        pos = e + 1
        i = text.find(start, pos)
    out.append(text[pos:])
    return "".join(out)


# A tag: ``<name>``, ``</name>``, ``<name/>`` or ``<name`` + whitespace + attributes + ``>``,
# where the attributes run over any characters but ``<>"'{}``, ``"…"`` and ``'…'`` quotes
# and ``{…}`` expressions without braces inside — what
# ``</?[A-Za-z][\w.:-]*(?:\s+(?:[^<>"'{}]|"[^"]*"|'[^']*'|\{[^{}]*\})*)?\s*/?>`` matched,
# without its overlapping whitespace quantifiers. The attribute scan is a loop, and
# where it stopped is remembered per call, so an unclosed ``<a …`` is read once, not
# once for every ``<`` inside it.
_TAG_NAME = re.compile(r"</?[A-Za-z][\w.:-]*+")
_ATTR_PLAIN = re.compile(r"[^<>\"'{}]*+")
_BRACE = re.compile(r"[{}]")


def _tag_end(text: str, p: int, memo: dict[int, int]) -> int:
    """End of the tag whose name ends at ``p``, or -1 if there is none. ``memo`` maps
    the places an attribute scan went through to where it ended, for this text."""
    if text.startswith(">", p):
        return p + 1
    if text.startswith("/>", p):
        return p + 2
    if not _WS.match(text, p):
        return -1
    seen: list[int] = []
    while True:
        p = _ATTR_PLAIN.match(text, p).end()
        if p in memo:
            end = memo[p]
            break
        seen.append(p)
        c = text[p] if p < len(text) else ""
        if c == ">":
            end = p + 1
            break
        if c in ("\"", "'"):
            q = text.find(c, p + 1)
            if q < 0:
                end = -1
                break
            p = q + 1
        elif c == "{":
            b = _BRACE.search(text, p + 1)
            if b is None or b.group() == "{":
                end = -1
                break
            p = b.end()
        else:   # "<", "}" or the end of the text
            end = -1
            break
    for q in seen:
        memo[q] = end
    return end


def _strip_tags(text: str, repl: str = " ") -> str:
    """Each tag → ``repl``, leftmost first, as ``re.sub`` would."""
    if "<" not in text:
        return text
    out: list[str] = []
    pos = 0
    memo: dict[int, int] = {}
    m = _TAG_NAME.search(text)
    while m:
        end = _tag_end(text, m.end(), memo)
        if end < 0:
            m = _TAG_NAME.search(text, m.start() + 1)
            continue
        out += (text[pos:m.start()], repl)
        pos = end
        m = _TAG_NAME.search(text, pos)
    out.append(text[pos:])
    return "".join(out)


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


_BLANK = re.compile(r"\s*+")
_FENCE_RUN = re.compile(r"`{3,}+|~{3,}+")
_CLOSING_LINE = re.compile(r"\s*+(`{3,}+|~{3,}+)\s*+")
_INLINE_CODE = re.compile(r"`[^`\n]*+`")


def _strip_fenced_blocks(text: str) -> str:
    r"""Each fenced block → ``" "``, exactly as
    ``re.sub(r"^\s*(```+|~~~+).*?^\s*\1\s*$", " ", text, flags=re.S | re.M)`` did: from a
    line start, blank space, then an opening run of n ≥ 3 backticks or tildes; k is
    the largest length ≤ n such that some later line holds just a run of k of that
    character (and blank space), and the block ends at the first such line, taking
    the blank space after it up to its last line end. The regex rescanned the rest of the text once per
    opening and run length (quadratic on many unclosed fences or one long run); here
    the closing lines are indexed first."""
    if "```" not in text and "~~~" not in text:
        return text
    starts = [0]
    lines = text.split("\n")
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    closing: dict[tuple[str, int], list[int]] = {}   # (char, run length) → line numbers
    for j, line in enumerate(lines):
        if m := _CLOSING_LINE.fullmatch(line):
            closing.setdefault((m.group(1)[0], len(m.group(1))), []).append(j)
    lengths = {c: sorted(k for ch, k in closing if ch == c) for c in "`~"}

    def close(c: str, longest: int, after: int) -> tuple[int, int] | None:
        """(line, run length) of the block's closing fence; run lengths with no line
        left after ``after`` are dropped, as later openings come later still."""
        ks = lengths[c]
        i = bisect_right(ks, longest) - 1
        while i >= 0:
            rows = closing[(c, ks[i])]
            r = bisect_right(rows, after)
            if r < len(rows):
                return rows[r], ks[i]
            del ks[i]
            i -= 1
        return None

    out: list[str] = []
    pos = 0
    s = 0   # a line start at or after pos
    n = len(text)
    while s <= n:
        f = _BLANK.match(text, s).end()
        run = _FENCE_RUN.match(text, f)
        found = run and close(run.group()[0], len(run.group()), bisect_right(starts, f) - 1)
        if not found:
            nl = text.find("\n", f)
            if nl < 0:
                break
            s = nl + 1
            continue
        row, k = found
        u = _BLANK.match(text, starts[row]).end() + k   # after the closing run
        v = _BLANK.match(text, u).end()
        end = n if v == n else text.rfind("\n", u, v)
        out += (text[pos:s], " ")
        pos = end
        if end == n:
            break
        s = end if text[end - 1] == "\n" else text.find("\n", end) + 1
        if s == 0:
            break
    out.append(text[pos:])
    return "".join(out)


def prose(body: str) -> str:
    """Markdown without code (fenced blocks and inline code): what language detection reads."""
    return _INLINE_CODE.sub(" ", _strip_fenced_blocks(body))


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


def clean_inline(line: str) -> str:
    """Strip markup from one line of Markdown/MDX prose."""
    line = _strip_delimited(line, "{/*", "*/}")
    line = _strip_brackets(line, "![", 0, "()")
    line = _strip_brackets(line, "[", 1, "()")
    line = _strip_brackets(line, "[", 1, "[]")
    line = _strip_tags(line)
    line = _EMPHASIS.sub("", line)
    line = html.unescape(line)
    return re.sub(r"[ \t]+", " ", line).strip()


def markdown_sections(body: str) -> tuple[str | None, list[Section]]:
    """Sections of a Markdown/MDX body, and the first level-1 heading if any."""
    body = _strip_delimited(_strip_delimited(body, "{/*", "*/}"), "<!--", "-->")
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
