"""chaja's values as the PostgreSQL store writes them: text without NULs, a chunk's row,
a section's key, and a search filter as SQL conditions."""
from __future__ import annotations

import numpy as np

from chaja.documents import ChunkRecord
from chaja.filters import Filters


def clean(value: str | None) -> str | None:
    """PostgreSQL text cannot hold U+0000; the store drops that character."""
    if value is None:
        return None
    return value.replace("\x00", "") if "\x00" in value else value


def section(chunk) -> str:
    """The key that groups a document's chunks into sections in ``chunk_headings``."""
    return clean(chunk.heading_passage() or chunk.id)


def chunk_row(r: ChunkRecord, vec: np.ndarray) -> tuple:
    """A chunk's values in the column order of ``chunks`` (and of ``staged_chunks``)."""
    c = r.chunk
    return (
        clean(c.id), clean(c.doc_id), int(c.ordinal), clean(c.title),
        [clean(h) for h in c.heading_path], clean(c.text), clean(c.lang or ""),
        clean(c.source or ""), clean(c.doc_type or ""), clean(c.date),
        clean(" ".join(r.title_terms)), clean(" ".join(r.heading_terms)),
        clean(" ".join(r.body_terms)), vec, c.location and clean(c.location.encode()),
    )


def filter_sql(where: Filters | None, params: dict, id_column: str | None = None) -> str:
    """`` AND …`` for a search filter: over the chunks table's own columns, or with
    ``id_column`` as a test that the row's chunk id is one of the passing chunks."""
    if not where:
        return ""

    def param(value: object) -> str:
        name = f"filter{len([k for k in params if k.startswith('filter')])}"
        params[name] = value
        return f"%({name})s"
    conds = " AND ".join(where.sql(lambda name: name, param, lambda col, ph: f"strpos({col}, {ph}) = 1"))
    if id_column is None:
        return " AND " + conds
    return f" AND {id_column} IN (SELECT id FROM {{s}}.chunks WHERE {conds})"
