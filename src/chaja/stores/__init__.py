"""Stores: the embedded SQLite file (default) and PostgreSQL (extra)."""
from __future__ import annotations

from chaja.stores.base import Store, StoreError

__all__ = ["Store", "StoreError", "open_store"]


def open_store(location: str) -> Store:
    """A ``postgresql://`` or ``postgres://`` URL opens PostgreSQL (its ``schema`` query
    parameter, which chaja takes off before connecting, names the schema: ``chaja``
    when absent); anything else is a SQLite file."""
    if location.startswith(("postgresql://", "postgres://")):
        from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

        from chaja.stores.postgres import PostgresStore

        parts = urlsplit(location)
        query = parse_qsl(parts.query, keep_blank_values=True)
        schema = [v for k, v in query if k == "schema"]
        rest = urlunsplit(parts._replace(query=urlencode([(k, v) for k, v in query if k != "schema"])))
        return PostgresStore(rest, schema=schema[-1]) if schema else PostgresStore(location)
    from chaja.stores.sqlite import SqliteStore

    return SqliteStore(location)
