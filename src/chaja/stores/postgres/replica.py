"""A store opened on a streaming replica (hot standby): how far its replay has come, and
what it says when it lacks what the primary has not yet sent or is asked to write."""
from __future__ import annotations


def not_replayed(target: str, what: str) -> str:
    """The error for a replica that holds no ``what`` yet."""
    return (f"{target} is a read-only replica (hot standby) and holds no {what} yet: "
            "open the store on the primary first (chaja index creates it there), then wait for "
            "the replica to replay it")


def read_only(target: str, what: str) -> str:
    """The error for a write made on a replica."""
    return f"{what}: {target} is a read-only replica (hot standby); write to the primary, and search here"


def replica_status(store) -> dict | None:
    """None on a primary. On a streaming replica: ``behind_bytes``, WAL it has received
    and not yet replayed (0: what it shows is all it has been sent); ``last_replay_s``,
    seconds since the primary committed the last transaction it replayed (it grows
    while the primary is idle, so read it beside ``behind_bytes``); ``paused``,
    whether replay is paused (``pg_wal_replay_pause()``)."""
    def read() -> dict | None:
        if not store.conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]:
            return None
        behind, since, paused = store.conn.execute(
            "SELECT coalesce(pg_wal_lsn_diff(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn()), 0),"
            " extract(epoch FROM now() - pg_last_xact_replay_timestamp()), pg_is_wal_replay_paused()"
        ).fetchone()
        return {"behind_bytes": max(int(behind), 0),
                "last_replay_s": None if since is None else round(float(since), 3), "paused": bool(paused)}

    return store._run("cannot read the replica's state", read)
