"""What the base run shows about the store (the sources, types, dates and heading-list
ranks of what it retrieved), and so which settings can act on it."""
from __future__ import annotations

from typing import Any

from chaja.config import Config
from chaja.eval.sweep.settings import Setting


class _Watched:
    """Passes searches through and notes the source, type and date of every retrieved
    chunk, and whether any came with a heading-list rank."""

    def __init__(self, index: Any):
        self._index = index
        self.dates: dict[str, list[str]] = {}   # doc_type → dates seen
        self.sources: set[str] = set()
        self.headings = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._index, name)

    def search(self, text: str, *args: Any, **kwargs: Any) -> Any:
        result = self._index.search(text, *args, **kwargs)
        for c in getattr(result, "chunks", None) or []:
            self.sources.add(c.chunk.source)
            self.headings = self.headings or getattr(c, "heading_rank", None) is not None
            if c.chunk.date:
                self.dates.setdefault(c.chunk.doc_type, []).append(c.chunk.date[:10])
        return result


def applicability(setting: Setting, stats: Any, watched: _Watched, base: Config) -> str | None:
    """None when the setting can act on this store, else the reason to skip it."""
    if setting.needs == "languages":
        langs = [k for k, v in (stats.by_lang or {}).items() if k and v]
        if len(langs) < 2:
            return f"the store holds one language ({', '.join(langs) or 'none recorded'}); nothing to align"
    if setting.needs == "sources":
        sources = [k for k, v in (stats.by_source or {}).items() if v]
        for value in setting.values:
            if isinstance(value, dict) and value:
                weights = {float(value.get(s, 1.0)) for s in sources}
                if len(weights) > 1:
                    return None
        shown = ", ".join(repr(s) for s in sources) or "none"
        return f"the store's sources ({shown}) all get the same weight, so weights cannot reorder results"
    if setting.needs == "dates":
        types = {k for k, v in (stats.by_doc_type or {}).items() if v}
        keys = set().union(*[set(v) for v in setting.values if isinstance(v, dict)])
        if not types & keys:
            shown = ", ".join(repr(t) for t in sorted(types)) or "none"
            return f"no stored document type has a half-life (store types: {shown})"
        if not any(watched.dates.get(t) for t in keys):
            return "no chunk of a type with a half-life carried a date among the base run's results"
    if setting.needs == "headings" and not watched.headings:
        return "the store keeps no heading vectors (no result of the base run came from the heading list)"
    return None
