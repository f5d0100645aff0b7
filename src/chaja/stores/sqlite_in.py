"""``WHERE x IN (…)`` over any number of values: SQLite caps the parameters of one
statement, so the values go in batches of 500 and the rows come back together."""
from __future__ import annotations

import sqlite3
from collections.abc import Sequence

BATCH = 500


def select_in(db: sqlite3.Connection | sqlite3.Cursor, sql: str, values: Sequence) -> list[tuple]:
    """Rows of ``sql`` (which holds one ``{marks}`` where the placeholders go) for all ``values``."""
    values = list(values)
    rows: list[tuple] = []
    for i in range(0, len(values), BATCH):
        part = values[i:i + BATCH]
        rows += db.execute(sql.format(marks=",".join("?" * len(part))), part).fetchall()
    return rows
