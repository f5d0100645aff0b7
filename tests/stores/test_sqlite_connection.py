"""The SQLite store's write transactions (:mod:`chaja.stores.sqlite_connection`): the
write lock waited for, then told; a failed write rolled back and told as it was."""
import numpy as np
import pytest

from chaja.stores.sqlite import SqliteStore
from one_chunk import put


def test_a_write_waits_busy_timeout_s_for_another_writer_then_raises_store_busy(tmp_path):
    """A second connection holds the write lock (as ``chaja optimize`` does for minutes): the
    write waits ``busy_timeout_s``, then says so in a sentence; nothing is written, the store
    stays usable, and the write goes through once the lock is free."""
    import os
    import sqlite3

    from chaja.stores.base import StoreBusy

    path = tmp_path / "s.chaja"
    with SqliteStore(path, busy_timeout_s=0.3) as s:
        put(s, "a", "제목", "본문", np.eye(4, dtype=np.float32)[0])
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        with pytest.raises(StoreBusy) as caught:
            put(s, "b", "제목", "본문", np.eye(4, dtype=np.float32)[1])
        assert str(caught.value).startswith(f"{path}: the store is busy: another connection of this process "
                                            f"(pid {os.getpid()}) is writing it; waited 0.3 s")
        assert not s._db.in_transaction and set(s.fingerprints()) == {"a"}
        other.execute("ROLLBACK")
        other.close()
        put(s, "b", "제목", "본문", np.eye(4, dtype=np.float32)[1])
        assert set(s.fingerprints()) == {"a", "b"} and s.check() == []


def test_a_failed_write_is_not_hidden_by_a_rollback_sqlite_already_made(tmp_path):
    """SQLite rolls a transaction back itself on a full disk, so the store's own ROLLBACK
    then failed ("cannot rollback - no transaction is active") and buried the real error."""
    with SqliteStore(tmp_path / "s.chaja") as s:
        put(s, "a", "제목", "본문", np.eye(4, dtype=np.float32)[0])
        with pytest.raises(ValueError, match="the real cause"), s._writing() as cur:
            cur.execute("DELETE FROM documents")
            cur.execute("ROLLBACK")                # as SQLite does on SQLITE_FULL
            raise ValueError("the real cause")
        assert set(s.fingerprints()) == {"a"} and s.check() == []
        put(s, "b", "제목", "본문", np.eye(4, dtype=np.float32)[1])      # the store writes on
        assert set(s.fingerprints()) == {"a", "b"}
