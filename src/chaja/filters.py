"""Search filters: which chunks a search may return, by their stored fields.

    Filters(lang=("ko",), source=("manual",), doc_type=(), date_from="2024-01-01",
            date_to="2024-12-31", doc_id_prefix="filings/")

Every condition that is set must hold (AND); a list of values means any of them
(OR). Dates compare on the first ten characters of the chunk's ISO date, both ends
inclusive; a chunk without a date fails any date condition. Filters apply inside
each candidate list (keyword, vector, heading, aligned), before the top ``n`` is
cut, so a narrow filter still fills the list with matching chunks.

The same filters come from a mapping (the hub's JSON, ``Index.search(filters=...)``)
or from ``key=value`` strings (``chaja search --filter lang=ko --filter source=a,b``).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields

from chaja.documents import Chunk

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_LISTS = ("lang", "source", "doc_type")
MAX_VALUES = 100


class FilterError(ValueError):
    """A filter is malformed (unknown key, wrong type, bad date)."""


@dataclass(frozen=True)
class Filters:
    lang: tuple[str, ...] = ()
    source: tuple[str, ...] = ()
    doc_type: tuple[str, ...] = ()
    date_from: str | None = None
    date_to: str | None = None
    doc_id_prefix: str | None = None

    KEYS = ("lang", "source", "doc_type", "date_from", "date_to", "doc_id_prefix")

    def __post_init__(self) -> None:
        # Filters(lang="ko") means the one value, not its letters (an IN ('k', 'o') that matches nothing)
        for key in _LISTS:
            value = getattr(self, key)
            if isinstance(value, str):
                object.__setattr__(self, key, (value,))
            elif not isinstance(value, tuple):
                object.__setattr__(self, key, tuple(value))

    def __bool__(self) -> bool:
        return any(getattr(self, f.name) for f in fields(self))

    # ---- construction ----------------------------------------------------
    @classmethod
    def from_mapping(cls, data: Mapping | None) -> "Filters":
        if data is None:
            return cls()
        if isinstance(data, Filters):
            return data
        if not isinstance(data, Mapping):
            raise FilterError("filters must be an object of field → value")
        unknown = sorted(set(data) - set(cls.KEYS))
        if unknown:
            raise FilterError(f"unknown filter {unknown[0]!r}; filters are {', '.join(cls.KEYS)}")
        values: dict = {}
        for key in _LISTS:
            raw = data.get(key)
            if raw is None:
                continue
            items = [raw] if isinstance(raw, str) else raw
            if not isinstance(items, (list, tuple)) or not all(isinstance(v, str) for v in items):
                raise FilterError(f"filter {key!r} must be a string or a list of strings")
            if len(items) > MAX_VALUES:
                raise FilterError(f"filter {key!r} has {len(items)} values; the limit is {MAX_VALUES}")
            values[key] = tuple(dict.fromkeys(_text(key, v) for v in items))
        for key in ("date_from", "date_to"):
            raw = data.get(key)
            if raw is None:
                continue
            if not isinstance(raw, str) or not _DATE.match(raw):
                raise FilterError(f"filter {key!r} must be an ISO date YYYY-MM-DD, got {raw!r}")
            values[key] = raw
        prefix = data.get("doc_id_prefix")
        if prefix is not None:
            if not isinstance(prefix, str) or not prefix:
                raise FilterError("filter 'doc_id_prefix' must be a non-empty string")
            values["doc_id_prefix"] = _text("doc_id_prefix", prefix)
        out = cls(**values)
        if out.date_from and out.date_to and out.date_from > out.date_to:
            raise FilterError(f"date_from {out.date_from} is after date_to {out.date_to}")
        return out

    @classmethod
    def parse(cls, expressions: Iterable[str]) -> "Filters":
        """From ``key=value`` strings; list fields take comma-separated values."""
        data: dict = {}
        for expr in expressions:
            key, eq, value = expr.partition("=")
            key = key.strip()
            if not eq or not key:
                raise FilterError(f"--filter expects key=value, got {expr!r}")
            if key in _LISTS:
                data[key] = [v.strip() for v in value.split(",") if v.strip()]
            else:
                data[key] = value.strip()
        return cls.from_mapping(data)

    def to_dict(self) -> dict:
        return {f.name: (list(v) if isinstance(v, tuple) else v)
                for f in fields(self) if (v := getattr(self, f.name))}

    # ---- use -------------------------------------------------------------
    def matches(self, chunk: Chunk) -> bool:
        """Whether ``chunk`` passes (the same test as :meth:`sql`, in Python)."""
        day = (chunk.date or "")[:10]
        return ((not self.lang or (chunk.lang or "") in self.lang)
                and (not self.source or (chunk.source or "") in self.source)
                and (not self.doc_type or (chunk.doc_type or "") in self.doc_type)
                and (not self.date_from or (bool(day) and day >= self.date_from))
                and (not self.date_to or (bool(day) and day <= self.date_to))
                and (not self.doc_id_prefix or chunk.doc_id.startswith(self.doc_id_prefix)))

    def sql(self, column: Callable[[str], str], param: Callable[[object], str],
            prefix_test: Callable[[str, str], str]) -> list[str]:
        """SQL conditions (to AND together) over a chunks table. ``column(name)`` names
        a column, ``param(value)`` binds a value and returns its placeholder,
        ``prefix_test(column, placeholder)`` tests that a column starts with a value."""
        out = []
        for key in _LISTS:
            values = getattr(self, key)
            if values:
                out.append(f"coalesce({column(key)}, '') IN ({', '.join(param(v) for v in values)})")
        if self.date_from:
            out.append(f"substr({column('date')}, 1, 10) >= {param(self.date_from)}")
        if self.date_to:
            out.append(f"substr({column('date')}, 1, 10) <= {param(self.date_to)}")
        if self.doc_id_prefix:
            out.append(prefix_test(column("doc_id"), param(self.doc_id_prefix)))
        return out


def _text(key: str, value: str) -> str:
    if "\x00" in value or len(value) > 1000:
        raise FilterError(f"filter {key!r}: values must be under 1000 characters, without NUL")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise FilterError(f"filter {key!r}: not valid Unicode text (a lone surrogate)") from None
    return value

