"""Statements run beside the store under test, on a connection of their own, and the
way back from each migration, to test the upgrade from older versions."""
from __future__ import annotations


def sql(dsn, query, *args):
    """Run one statement on a separate connection; rows if it returns any."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        cur = conn.execute(query, args)
        return cur.fetchall() if cur.description is not None else []


#: How to take a store back from each migration, to test the upgrade from older versions.
UNDO = {
    10: ['DROP TABLE {s}.keyword_postings', 'DROP TABLE {s}.keyword_parts', 'DROP TABLE {s}.keyword_removed',
         "DELETE FROM {s}.meta WHERE key = 'keyword_postings'"],
    9: ['ALTER TABLE {s}.chunks DROP COLUMN location', 'ALTER TABLE {s}.staged_chunks DROP COLUMN location'],
    8: ['DROP TABLE {s}.keyword_log', "DELETE FROM {s}.meta WHERE key = 'store_id'"],
    7: ['DROP TABLE {s}.staged_chunks'],
    6: ['DROP TABLE {s}.chunk_aligned'],
    5: ['DROP TABLE {s}.fts_stats'],
    4: ['ALTER TABLE {s}.chunks ALTER COLUMN embedding SET STORAGE EXTERNAL'],
    3: ['ALTER TABLE {s}.chunk_fts DROP COLUMN n_tokens', 'DROP FUNCTION {s}.tsvector_tokens(tsvector)'],
    2: ['DROP TABLE {s}.chunk_headings'],
}


def back_to_version(dsn, schema, version):
    """Undo every migration after ``version`` (newest first), as if an older chaja wrote the store."""
    from chaja.stores.postgres import SCHEMA_VERSION

    assert set(UNDO) == set(range(2, SCHEMA_VERSION + 1)), "add the new migration's undo to UNDO"
    for v in sorted(UNDO, reverse=True):
        if v > version:
            for stmt in UNDO[v]:
                sql(dsn, stmt.format(s=f'"{schema}"'))
    sql(dsn, f'DELETE FROM "{schema}".schema_version WHERE version > %s', version)
