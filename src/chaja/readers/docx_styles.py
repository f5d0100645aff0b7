"""What a Word paragraph's style and list make of it: its heading level (``Heading 1``–``9``,
``Title``, localized names such as ``제목 1``, or an outline level, through the chain of
styles each is based on) and its list label (``1.``, ``가)``, ``iv.``, ``-``), counted
as Word counts a list: per abstract list, deeper levels restarting under a shallower one.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_HEADING_NAME = re.compile(
    r"(?:heading|제목|titre|überschrift|título|titolo|kop|rubrik|otsikko|заголовок|見出し|标题|標題)\s*([1-9])", re.I)
_TITLE_NAME = re.compile(r"title|제목|titre|titel|título|titolo|заголовок|表題|标题", re.I)


def val(el, path: str) -> str | None:
    """The ``w:val`` of the element at ``path`` under ``el``, or None."""
    found = el.find(path) if el is not None else None
    return None if found is None else found.get(W + "val")


def as_int(value: str | None, default: int | None) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


# -- styles ----------------------------------------------------------------------------

@dataclass
class Style:
    name: str
    based_on: str | None
    outline: int | None          # 0-based outline level from the style's paragraph properties
    num: tuple[str, int] | None  # (numId, ilvl) of a list style


def read_styles(root) -> tuple[dict[str, Style], str | None]:
    """The paragraph styles of the styles part by id, and the default style's id."""
    styles, default = {}, None
    for s in (root.iter(W + "style") if root is not None else ()):
        if s.get(W + "type") != "paragraph":
            continue
        sid = s.get(W + "styleId")
        ppr = s.find(W + "pPr")
        num_id = val(ppr, f"{W}numPr/{W}numId")
        styles[sid] = Style(val(s, W + "name") or sid, val(s, W + "basedOn"),
                            as_int(val(ppr, W + "outlineLvl"), None),
                            (num_id, as_int(val(ppr, f"{W}numPr/{W}ilvl"), 0)) if num_id else None)
        if s.get(W + "default") in ("1", "true"):
            default = sid
    return styles, default


def _chain(styles: dict[str, Style], sid: str | None) -> Iterator[Style]:
    """A style, then the style it is based on, and so on (a loop in the chain ends it)."""
    seen = set()
    while sid in styles and sid not in seen:
        seen.add(sid)
        yield styles[sid]
        sid = styles[sid].based_on


def heading_level(styles: dict[str, Style], sid: str | None) -> int | None:
    """0 for a title style, 1–9 for a heading style (by name, else outline level, else
    its base style's), None for body text."""
    for style in _chain(styles, sid):
        name = style.name.strip()
        if m := _HEADING_NAME.fullmatch(name):
            return int(m.group(1))
        if _TITLE_NAME.fullmatch(name):
            return 0
        if style.outline is not None:
            return style.outline + 1 if 0 <= style.outline < 9 else None
    return None


def style_list(styles: dict[str, Style], sid: str | None) -> tuple[str, int] | None:
    """The list a paragraph style puts its paragraphs in, if any."""
    return next((style.num for style in _chain(styles, sid) if style.num), None)


# -- list numbering --------------------------------------------------------------------

_GANADA = "가나다라마바사아자차카타파하"
_CHOSUNG = "ㄱㄴㄷㄹㅁㅂㅅㅇㅈㅊㅋㅌㅍㅎ"
_ROMAN = ((1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"), (50, "l"), (40, "xl"),
          (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i"))


def roman(n: int) -> str:
    """``n`` in lower-case roman numerals."""
    out = ""
    for value, letters in _ROMAN:
        while n >= value:
            out, n = out + letters, n - value
    return out


def _count(n: int, fmt: str) -> str:
    """``n`` as a list level of format ``fmt`` shows it."""
    if fmt in ("lowerLetter", "upperLetter"):
        letter = chr(ord("a") + (n - 1) % 26) * ((n - 1) // 26 + 1)
        return letter.upper() if fmt == "upperLetter" else letter
    if fmt in ("lowerRoman", "upperRoman"):
        return roman(n).upper() if fmt == "upperRoman" else roman(n)
    if fmt == "ganada":
        return _GANADA[(n - 1) % len(_GANADA)]
    if fmt == "chosung":
        return _CHOSUNG[(n - 1) % len(_CHOSUNG)]
    if fmt == "decimalEnclosedCircle" and 1 <= n <= 20:
        return chr(0x2460 + n - 1)
    if fmt == "decimalZero":
        return f"{n:02d}"
    return str(n)


@dataclass
class Numbering:
    """List numbers as Word counts them: per abstract list, deeper levels restarting."""

    # abstractNumId → ilvl → (numFmt, lvlText, start)
    levels: dict[str, dict[int, tuple[str, str, int]]] = field(default_factory=dict)
    # numId → (abstractNumId, ilvl → startOverride)
    nums: dict[str, tuple[str, dict[int, int]]] = field(default_factory=dict)
    counters: dict[str, dict[int, int]] = field(default_factory=dict)
    started: set = field(default_factory=set)

    @classmethod
    def parse(cls, root) -> "Numbering":
        out = cls()
        if root is None:
            return out
        for a in root.iter(W + "abstractNum"):
            out.levels[a.get(W + "abstractNumId")] = {
                as_int(lvl.get(W + "ilvl"), 0): (val(lvl, W + "numFmt") or "decimal", val(lvl, W + "lvlText") or "",
                                                 as_int(val(lvl, W + "start"), 1))
                for lvl in a.iter(W + "lvl")}
        for num in root.iter(W + "num"):
            overrides = {as_int(o.get(W + "ilvl"), 0): as_int(val(o, W + "startOverride"), 1)
                         for o in num.iter(W + "lvlOverride") if val(o, W + "startOverride")}
            out.nums[num.get(W + "numId")] = (val(num, W + "abstractNumId"), overrides)
        return out

    def label(self, num_id: str, ilvl: int) -> str:
        """The next label of list ``num_id`` at level ``ilvl``: ``1.``, ``가)``, ``-``, or ``""``."""
        abstract, overrides = self.nums.get(num_id, (None, {}))
        levels = self.levels.get(abstract)
        if not levels or ilvl not in levels:
            return ""
        counts = self.counters.setdefault(abstract, {})
        if num_id not in self.started:            # a list that restarts its numbering
            self.started.add(num_id)
            for lvl, start in overrides.items():
                counts[lvl] = start - 1
        fmt, text, start = levels[ilvl]
        counts[ilvl] = counts.get(ilvl, start - 1) + 1
        for deeper in [k for k in counts if k > ilvl]:
            del counts[deeper]
        if fmt == "bullet":
            return "-"
        if fmt == "none":
            return ""

        def number(m: re.Match) -> str:
            k = int(m.group(1)) - 1
            lvl_fmt, _, lvl_start = levels.get(k, ("decimal", "", 1))
            return _count(counts.get(k, lvl_start), lvl_fmt)
        return re.sub(r"%([1-9])", number, text).strip()
