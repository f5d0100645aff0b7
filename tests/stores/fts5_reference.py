"""SQLite FTS5 as the keyword tests' reference: its own ``bm25()`` over a store's stored
terms, and the FTS5 layout that stores before schema 7 kept their terms in.

:class:`Fts5Reference` reads the store file afresh at every call (a read-only
attachment, so it sees what any writer has committed), copies each chunk's stored terms
into an in-memory FTS5 table with the ``ascii`` tokenizer, and ranks by FTS5's
``bm25()``: what the postings engine (:mod:`chaja.stores.bm25_segments`) must equal.
"""
from __future__ import annotations

import sqlite3
from pathlib import Path

from chaja.documents import Hit

#: SQL that takes a store back to the layout before schema 7: its terms in an FTS5 table
FTS5_LAYOUT = """
CREATE VIRTUAL TABLE chunks_fts USING fts5(title, heading, body, tokenize = 'ascii');
INSERT INTO chunks_fts (rowid, title, heading, body) SELECT rowid, title, heading, body FROM chunk_terms;
DROP TABLE chunk_terms;
"""


def match(terms: list[str], column: str | None = None) -> str | None:
    """An FTS5 MATCH expression: OR of the terms, each a quoted string (NULs dropped)."""
    cleaned = (t.replace("\x00", "") for t in terms)
    quoted = ['"' + t.replace('"', '""') + '"' for t in dict.fromkeys(cleaned) if t.strip()]
    if not quoted:
        return None
    expr = " OR ".join(quoted)
    return f"{{{column}}} : ({expr})" if column else expr


class Fts5Reference:
    """FTS5's ranking of a store file's chunks (:meth:`keyword`) and their stored terms
    (:meth:`chunk_terms`), as the store's own methods are called."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect("file::memory:", uri=True)      # uri: the file is attached by its URI
        db.execute("ATTACH DATABASE ? AS s", (f"file:{self.path}?mode=ro",))
        db.execute("CREATE VIRTUAL TABLE f USING fts5(title, heading, body, tokenize = 'ascii')")
        db.execute("INSERT INTO f (rowid, title, heading, body) SELECT rowid, title, heading, body FROM s.chunk_terms")
        return db

    def keyword(self, terms: list[str], n: int, *, title_weight: float = 2.0, heading_weight: float = 1.5,
                field: str = "all", lang: str | None = None) -> list[Hit]:
        expr = match(terms, "title" if field == "title" else None)
        if expr is None or n <= 0:
            return []
        sql = ("SELECT c.id, -bm25(f, ?, ?, 1.0) AS s FROM f JOIN s.chunks c ON c.rowid = f.rowid"
               " WHERE f MATCH ?")
        args: list = [title_weight, heading_weight, expr]
        if lang:
            sql += " AND c.lang = ?"
            args.append(lang)
        sql += " ORDER BY s DESC, c.rowid LIMIT ?"
        args.append(int(n))
        db = self._connect()
        try:
            return [Hit(cid, float(s)) for cid, s in db.execute(sql, args)]
        finally:
            db.close()

    def chunk_terms(self, ids: list[str]) -> dict[str, set[str]]:
        db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
        try:
            marks = ",".join("?" * len(ids))
            rows = db.execute(f"SELECT c.id, t.title, t.heading, t.body FROM chunks c JOIN chunk_terms t"
                              f" ON t.rowid = c.rowid WHERE c.id IN ({marks})", ids).fetchall()
        finally:
            db.close()
        return {cid: set(f"{a} {b} {c}".split()) for cid, a, b, c in rows}
