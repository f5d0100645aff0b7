"""Stores: the embedded SQLite file (default) and PostgreSQL (extra)."""
from __future__ import annotations

from chaja.stores.base import Store, StoreBusy, StoreError

__all__ = ["Store", "StoreBusy", "StoreError", "open_store"]

#: query parameters of a PostgreSQL URL that are chaja's, not libpq's
_POSTGRES_OPTIONS = ("schema", "keyword_engine", "keyword_cache")


def open_store(location: str) -> Store:
    """A ``postgresql://`` or ``postgres://`` URL opens PostgreSQL; anything else is a
    SQLite file. chaja takes its own query parameters off the URL before connecting:
    ``schema`` (``chaja`` when absent), ``keyword_engine`` (``postings``, ``stored`` or ``sql``)
    and ``keyword_cache`` (a folder, or ``none``), see :class:`PostgresStore`."""
    if location.startswith(("postgresql://", "postgres://")):
        from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

        from chaja.stores.postgres import PostgresStore

        parts = urlsplit(location)
        query = parse_qsl(parts.query, keep_blank_values=True)
        ours = {k: v for k, v in query if k in _POSTGRES_OPTIONS}
        if not ours:
            return PostgresStore(location)
        rest = urlunsplit(parts._replace(query=urlencode([(k, v) for k, v in query if k not in _POSTGRES_OPTIONS])))
        if "keyword_cache" in ours and ours["keyword_cache"].lower() == "none":
            ours["keyword_cache"] = None
        return PostgresStore(rest, **ours)
    from chaja.stores.sqlite import SqliteStore

    return SqliteStore(location)
