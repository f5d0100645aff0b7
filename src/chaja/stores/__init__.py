"""Stores: the embedded SQLite file (default) and PostgreSQL (extra)."""
from __future__ import annotations

from chaja.stores.base import Store, StoreError

__all__ = ["Store", "StoreError", "open_store"]


def open_store(location: str) -> Store:
    """A ``postgresql://`` or ``postgres://`` URL opens PostgreSQL; anything else is a SQLite file."""
    if location.startswith(("postgresql://", "postgres://")):
        from chaja.stores.postgres import PostgresStore

        return PostgresStore(location)
    from chaja.stores.sqlite import SqliteStore

    return SqliteStore(location)
