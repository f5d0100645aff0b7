"""The connection to a store file: opening it (read-only where it cannot be written),
its write transactions, and SQLite's errors told as one sentence each
(:mod:`chaja.stores.sqlite_errors`)."""
from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from chaja.stores import sqlite_errors, sqlite_schema
from chaja.stores.base import StoreError
from chaja.stores.sqlite_schema import SCHEMA_VERSION
from chaja.stores.text_packing import TextPacking


class SqliteConnection:
    """Opening, transactions and meta of :class:`~chaja.stores.sqlite.SqliteStore`, which
    sets ``path``, ``busy_timeout_s`` and ``_db`` (None until open) before :meth:`_open`,
    and ``_lock`` after it."""

    def _open(self) -> str | None:
        """Open the file (making its folder for a new one, read-only where it cannot be
        written) and check its schema; the store's ``store_id``."""
        if self.path.exists() and self.path.is_dir():
            raise StoreError(f"{self.path} is a directory, not a store file")
        #: why this store cannot be written (it was opened read-only), or None
        self.read_only: str | None = sqlite_errors.read_only_reason(self.path) if self.path.exists() else None
        if self.read_only is None and not self.path.exists():
            sqlite_errors.make_folder(self.path)
        self._connect()
        try:
            return self._opened()
        except BaseException:
            self._close_quietly()
            raise

    def _connect(self) -> None:
        """Connect to the file: for writing (WAL, the schema made) or, where ``read_only``
        says why it cannot be written, read-only; a full disk opens it read-only too."""
        try:
            if self.read_only:
                self._db = sqlite_errors.connect_read_only(self.path, self.busy_timeout_s)
                self._db.execute("PRAGMA foreign_keys=ON")
                self._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            else:
                self._db = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False,
                                           timeout=self.busy_timeout_s)
                if self._db.execute("PRAGMA page_count").fetchone()[0] == 0:
                    # a new file gives pages back as compaction moves vectors out of the
                    # rows (sqlite_space.reclaim)
                    self._db.execute("PRAGMA auto_vacuum=INCREMENTAL")
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA foreign_keys=ON")
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.executescript(sqlite_schema.SCHEMA)
        except sqlite3.DatabaseError as exc:
            self._close_quietly()
            said = sqlite_errors.explain(exc, self.path, self.busy_timeout_s, opening=True)
            if said is None:
                raise StoreError(f"{self.path} is not a chaja store ({exc})") from None
            if not (sqlite_errors.disk_full(exc, self.path) and self.path.exists() and not self.read_only):
                raise said from exc
            try:            # a full disk: SQLite cannot make its -shm file, but the store can be searched
                self._db = sqlite_errors.connect_read_only(self.path, self.busy_timeout_s, shm=False)
            except (sqlite3.Error, StoreError):
                raise said from exc
            self.read_only = f"the disk is full ({exc})"
        except StoreError:
            self._close_quietly()
            raise

    def _opened(self) -> str | None:
        """Check the schema of the file just opened (a new one is given it, an older one
        brought up to date) and give it a ``store_id``; the store's id."""
        with self._sentences():
            version = self.get_meta("schema_version")
            if version is None:
                self.set_meta("schema_version", str(SCHEMA_VERSION))
            elif int(version) > SCHEMA_VERSION:
                raise StoreError(f"{self.path} was written by a newer chaja (schema {version})")
            elif int(version) < SCHEMA_VERSION:
                if self.read_only:
                    raise StoreError(f"{self.path} was written by an older chaja (schema {version}) and cannot "
                                     f"be brought up to date here: {self.read_only}; open it once where it can "
                                     "be written")
                sqlite_schema.migrate(self._db, self.busy_timeout_s, self.path)
            store_id = self.get_meta("store_id")
            if store_id is None and not self.read_only:
                self._db.execute("INSERT OR IGNORE INTO meta VALUES ('store_id', ?)", (uuid.uuid4().hex,))
                store_id = self.get_meta("store_id")
        return store_id

    def _close_quietly(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    @contextmanager
    def _sentences(self) -> Iterator[None]:
        """SQLite's errors a person can act on (busy, disk full, read-only, I/O), and the
        operating system's of those kinds from the files written beside the store, raised as
        one sentence each (:func:`chaja.stores.sqlite_errors.explain`), the error kept as the
        cause; any other error as it is."""
        try:
            yield
        except (sqlite3.Error, OSError) as exc:
            said = sqlite_errors.explain(exc, self.path, self.busy_timeout_s)
            if said is None:
                raise
            raise said from exc

    def _writable(self) -> None:
        """Refuse a write to a store opened read-only, before SQLite is asked."""
        if self.read_only:
            raise StoreError(f"cannot write {self.path}: {self.read_only}; it was opened read-only, for "
                             "searching. Nothing was written")

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Cursor]:
        """One write transaction under this object's lock (:meth:`_transaction`)."""
        with self._lock:
            self._writable()
            with self._transaction() as cur:
                yield cur

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Cursor]:
        """One write transaction, for a caller that holds this object's lock: committed when
        the block ends, rolled back (and the error raised) when it fails. It waits for another
        process's write lock up to ``busy_timeout_s``."""
        with self._sentences():
            sqlite_errors.begin_immediate(self._db, self.busy_timeout_s, self.path)
        cur = self._db.cursor()
        try:
            with self._sentences():
                yield cur
                cur.execute("COMMIT")
        except BaseException as exc:
            sqlite_errors.rollback(self._db, exc)
            raise
        finally:
            self.write_transactions += 1      # what this connection's reads keep is read again

    @property
    def text_packing(self) -> TextPacking:
        """The packing of this connection's chunk text and terms (:mod:`chaja.stores.text_packing`)."""
        packing = getattr(self, "_text_packing", None)
        if packing is None or packing.db is not self._db:
            packing = self._text_packing = TextPacking(self._db)
        return packing

    #: a ``bytes`` meta value is kept as a BLOB and read back as bytes (:mod:`chaja.meta_arrays`)
    binary_meta = True

    def get_meta(self, key: str) -> str | bytes | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str | bytes) -> None:
        self._writable()
        with self._sentences():
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def checkpoint(self) -> None:
        """Move the write-ahead log's pages into the store file and empty the log, so the
        files' sizes are the store's (an index run reports them). A checkpoint waits for
        every writer and reader: briefly, not ``busy_timeout_s`` (another process's long
        write only leaves the -wal longer); a store opened read-only is left alone."""
        if self._db is None or self.read_only:
            return
        try:
            self._db.execute(f"PRAGMA busy_timeout = {int(min(self.busy_timeout_s, 0.5) * 1000)}")
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error:
            pass
        finally:            # (a checkpoint that failed leaves the store's own wait for later writes)
            self._db.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000)}")

    def close(self) -> None:
        if self._db is not None:
            self.checkpoint()
            self._db.close()
            self._db = None
