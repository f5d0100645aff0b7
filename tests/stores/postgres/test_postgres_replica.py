"""chaja writing to a PostgreSQL primary and searching a streaming replica: both servers
started here on loopback (the primary by initdb, the replica by pg_basebackup -R), the
fixture corpus indexed on the primary with the real encoders, searched on the replica;
what a reader sees while the replica lags (replay paused), and how chaja reports it."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

import chaja
from chaja.cli import main
from chaja.documents import Document, Section
from chaja.stores import StoreError

pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'chaja[postgres]'")
pgserver = pytest.importorskip("pgserver", reason="pgserver (in the dev extra) brings the PostgreSQL binaries")

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "corpus"
QUERY = "how do I descale the espresso machine"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Servers:
    """A primary and its streaming replica in one temporary folder."""

    def __init__(self):
        from pgserver._commands import POSTGRES_BIN_PATH

        self.bin = Path(POSTGRES_BIN_PATH)
        self.root = Path(tempfile.mkdtemp(prefix="chaja-pg-replica-"))
        self.user = None
        if os.geteuid() == 0:                        # PostgreSQL refuses to run as root
            from pgserver.utils import ensure_prefix_permissions, ensure_user_exists

            self.user = ensure_user_exists("pgserver").pw_name
            ensure_prefix_permissions(self.root)
            shutil.chown(self.root, self.user)
        self.ports = {"primary": free_port(), "replica": free_port()}
        self.sockets = self.root / "sockets"
        self.run("mkdir", "-p", str(self.sockets), binary=False)

    def run(self, name: str, *args: str, binary: bool = True, timeout: float = 120) -> str:
        exe = str(self.bin / name) if binary else name
        done = subprocess.run([exe, *args], capture_output=True, text=True, user=self.user, timeout=timeout,
                              cwd=self.root)
        if done.returncode:
            raise RuntimeError(f"{name} {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
        return done.stdout

    def settings(self, which: str, lines: list[str]) -> None:
        conf = self.root / which / "postgresql.conf"
        self.run("sh", "-c", f"cat >> {conf} <<'EOF'\n" + "\n".join(lines) + "\nEOF\n", binary=False)

    def start(self, which: str) -> None:
        self.run("pg_ctl", "-D", str(self.root / which), "-l", str(self.root / f"{which}.log"), "-w", "-t", "60",
                 "start")

    def url(self, which: str, schema: str = "chaja_replica") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.ports[which]}/postgres?schema={schema}"

    def stop(self) -> None:
        for which in ("replica", "primary"):
            if (self.root / which / "postmaster.pid").exists():
                try:
                    self.run("pg_ctl", "-D", str(self.root / which), "-m", "fast", "-w", "stop")
                except RuntimeError:
                    pass
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="module")
def servers():
    s = Servers()
    try:
        s.run("initdb", "-D", str(s.root / "primary"), "-U", "postgres", "--auth=trust", "--encoding=utf8")
        common = ["listen_addresses = '127.0.0.1'", f"unix_socket_directories = '{s.sockets}'"]
        s.settings("primary", [*common, f"port = {s.ports['primary']}", "wal_level = replica",
                               "max_wal_senders = 4", "wal_keep_size = '256MB'"])
        s.start("primary")
        s.run("pg_basebackup", "-h", "127.0.0.1", "-p", str(s.ports["primary"]), "-U", "postgres",
              "-D", str(s.root / "replica"), "-R", "-X", "stream", "-c", "fast")
        s.settings("replica", [f"port = {s.ports['replica']}", "hot_standby = on"])
        s.start("replica")
        yield s
    finally:
        s.stop()


def wait_until(check, timeout: float = 30.0):
    end = time.monotonic() + timeout
    while True:
        got = check()
        if got or time.monotonic() > end:
            return got
        time.sleep(0.1)


def replayed(idx) -> bool:
    status = idx.store.replica_status()
    return status is not None and status["behind_bytes"] == 0


@pytest.fixture(scope="module")
def stores(servers, encoder):
    primary = chaja.open(servers.url("primary"), encoder=encoder)
    primary.add([CORPUS])
    # the replica has the schema once it has replayed the primary's writes
    replica = wait_until(lambda: _try_open(servers.url("replica"), encoder))
    assert replica is not None, (servers.root / "replica.log").read_text()
    yield primary, replica
    replica.close()
    primary.close()


def _try_open(url, encoder):
    try:
        idx = chaja.open(url, encoder=encoder)
    except StoreError:
        return None
    if idx.store.stats().documents == 9:
        return idx
    idx.close()
    return None


def test_the_replica_answers_as_the_primary_does(stores):
    primary, replica = stores
    assert primary.store.replica_status() is None and replica.store.replica_status() is not None
    for q in (QUERY, "자기주식 소각 결정", "warranty 보증"):
        want = primary.search(q, top_k=5)
        got = replica.search(q, top_k=5)
        assert [(d.doc_id, round(d.score, 6)) for d in got.documents] == \
            [(d.doc_id, round(d.score, 6)) for d in want.documents]
        assert got.lists == want.lists


def test_writes_on_the_replica_are_refused_with_a_clear_error(stores):
    _, replica = stores
    doc = Document(id="on-replica", title="x", lang="en", sections=[Section((), "written to the wrong server")])
    with pytest.raises(StoreError, match="read-only replica.*write to the primary"):
        replica.add_documents([doc])
    with pytest.raises(StoreError, match="read-only replica"):
        replica.delete("manuals/router")
    assert replica.store.stats().documents == 9


def test_while_replay_is_paused_the_replica_shows_the_last_state_and_says_so(stores, servers):
    import psycopg

    primary, replica = stores
    conninfo = servers.url("replica").split("?")[0]
    with psycopg.connect(conninfo, autocommit=True) as admin:
        admin.execute("SELECT pg_wal_replay_pause()")
        try:
            assert wait_until(lambda: replica.store.replica_status()["paused"])
            new = Document(id="manuals/kettle", title="Kettle descaling guide", lang="en",
                           sections=[Section((), "Descale the kettle with citric acid every month; "
                                                 "boil, wait an hour, rinse twice.")])
            primary.add_documents([new])
            assert "manuals/kettle" in [d.doc_id for d in primary.search("descale the kettle", top_k=3).documents]
            status = wait_until(lambda: (s := replica.store.replica_status())["behind_bytes"] > 0 and s)
            assert status and status["paused"] and status["behind_bytes"] > 0
            # a reader sees the last replayed state, whole: the old documents, not the new one
            assert replica.store.stats().documents == 9
            assert "manuals/kettle" not in [d.doc_id for d in replica.search("descale the kettle", top_k=5).documents]
        finally:
            admin.execute("SELECT pg_wal_replay_resume()")
    assert wait_until(lambda: replayed(replica))
    assert replica.store.stats().documents == 10
    assert "manuals/kettle" in [d.doc_id for d in replica.search("descale the kettle", top_k=3).documents]
    primary.delete("manuals/kettle")
    assert wait_until(lambda: replayed(replica) and replica.store.stats().documents == 9)


def test_stats_report_the_replica(stores, servers, capsys):
    assert main(["stats", "--store", servers.url("replica")]) == 0
    out = capsys.readouterr().out
    assert "documents: 9" in out and "replica: read-only;" in out and "bytes of WAL received" in out
    assert main(["stats", "--store", servers.url("primary"), "--json"]) == 0
    import json

    assert json.loads(capsys.readouterr().out)["replica"] is None


def test_a_replica_without_the_schema_says_what_to_do(servers, encoder):
    with pytest.raises(StoreError, match="read-only replica.*holds no.*open the store on the primary first"):
        chaja.open(servers.url("replica", schema="never_created"), encoder=encoder)
