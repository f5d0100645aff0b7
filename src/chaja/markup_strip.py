"""Markup stripped by linear scans: JSX comments and other delimited spans, images and
links (their labels kept), HTML and JSX tags, and fenced code blocks, each exactly as
the ``re.sub`` it replaces did (see tests/test_markup_strip.py) but linear in its
input, whatever the input: the regular expressions rescanned the rest of the text
from every opening (quadratic on many unclosed ones), and these run on uploaded text.
"""
from __future__ import annotations

import re
from bisect import bisect_right

_WS = re.compile(r"\s")


def strip_delimited(text: str, start: str, end: str, repl: str = "") -> str:
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


def strip_brackets(text: str, start: str, min_label: int, target: str) -> str:
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


def strip_tags(text: str, repl: str = " ") -> str:
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


_BLANK = re.compile(r"\s*+")
_FENCE_RUN = re.compile(r"`{3,}+|~{3,}+")
_CLOSING_LINE = re.compile(r"\s*+(`{3,}+|~{3,}+)\s*+")


def strip_fenced_blocks(text: str) -> str:
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
    lines = text.split("\n")
    starts = _line_starts(lines)
    closing = _ClosingLines(lines)
    out: list[str] = []
    pos = 0
    s = 0   # a line start at or after pos
    n = len(text)
    while s <= n:
        f = _BLANK.match(text, s).end()
        run = _FENCE_RUN.match(text, f)
        found = run and closing.first(run.group()[0], len(run.group()), bisect_right(starts, f) - 1)
        if not found:
            nl = text.find("\n", f)
            if nl < 0:
                break
            s = nl + 1
            continue
        row, k = found
        end = _block_end(text, starts[row], k)
        out += (text[pos:s], " ")
        pos = end
        if end == n:
            break
        s = end if text[end - 1] == "\n" else text.find("\n", end) + 1
        if s == 0:
            break
    out.append(text[pos:])
    return "".join(out)


def _line_starts(lines: list[str]) -> list[int]:
    """Where each of the text's lines starts."""
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    return starts


class _ClosingLines:
    """The lines that can close a fenced block (a run of k ≥ 3 backticks or tildes and
    blank space, nothing else), by the run's character and length."""

    def __init__(self, lines: list[str]) -> None:
        self.rows: dict[tuple[str, int], list[int]] = {}   # (char, run length) → line numbers
        for j, line in enumerate(lines):
            if m := _CLOSING_LINE.fullmatch(line):
                self.rows.setdefault((m.group(1)[0], len(m.group(1))), []).append(j)
        self.lengths = {c: sorted(k for ch, k in self.rows if ch == c) for c in "`~"}

    def first(self, c: str, longest: int, after: int) -> tuple[int, int] | None:
        """(line, run length) of the closing fence of a block opened by a run of
        ``longest`` ``c`` on line ``after``; run lengths with no line left after
        ``after`` are dropped, as later openings come later still."""
        ks = self.lengths[c]
        i = bisect_right(ks, longest) - 1
        while i >= 0:
            rows = self.rows[(c, ks[i])]
            r = bisect_right(rows, after)
            if r < len(rows):
                return rows[r], ks[i]
            del ks[i]
            i -= 1
        return None


def _block_end(text: str, closing_line: int, k: int) -> int:
    """Where a fenced block ends whose closing run of length ``k`` is on the line that
    starts at ``closing_line``: after the blank space that follows the run, up to its
    last line end (the end of the text, if only blank space is left)."""
    u = _BLANK.match(text, closing_line).end() + k   # after the closing run
    v = _BLANK.match(text, u).end()
    return len(text) if v == len(text) else text.rfind("\n", u, v)
