"""Several reads against one view of a store.

Every read of a store first asks how far the keyword change log has come (one indexed
read in SQLite, one round trip in PostgreSQL), so that a long-lived process sees what any
other process has committed. A search makes a few dozen reads (lists, rescoring, term
checks, chunks), and at 100,000 chunks those mark reads were about 5% of its time.
Inside ``store.reading()`` the mark is read once, when the block begins; the reads in
the block see the store as of then. Writes belong outside the block: a write made inside
it is seen by this store's own reads only after the block ends.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


class OneViewReads:
    """``reading()`` for a store whose keyword index (``_keywords``) has ``refresh()`` and
    a ``pinned`` count that makes ``refresh`` keep the view it has."""

    def _catch_up(self) -> None:
        """Bring every cached view up to what the store has committed."""
        self._keywords.refresh()

    @contextmanager
    def reading(self) -> Iterator["OneViewReads"]:
        self._catch_up()
        self._keywords.pinned += 1
        try:
            yield self
        finally:
            self._keywords.pinned -= 1
