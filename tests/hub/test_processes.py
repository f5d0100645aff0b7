"""The hub beside other processes: a second process writing to its store, clients
searching while an ingest runs, a writer process killed, a port already taken, the
CLI pointed at the hub, a hub over PostgreSQL."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from chaja import cli
from chaja.client import HubError

from hubs import WRITE_KEY, start_hub, stop_hub
from raw import call


def _refreshes(hub) -> int:
    """How many times an idle reader has caught up with a write (the hub's metric)."""
    text = hub.client().request("GET", "/metrics")
    m = re.search(r"^chaja_reader_refresh_seconds_count (\d+)", text, re.M)
    return int(m.group(1)) if m else 0


def _wait_for_refreshes(hub, above: int, timeout: float = 15.0) -> int:
    end = time.monotonic() + timeout
    while (now := _refreshes(hub)) <= above and time.monotonic() < end:
        time.sleep(0.1)
    return now


def test_a_document_written_by_another_process_is_found_by_vector(hub, tmp_path):
    page = tmp_path / "extra"
    page.mkdir()
    (page / "kettle.md").write_text("# Kettle descaling\n\nFill the kettle with equal parts white vinegar and "
                                    "water, boil, leave it for an hour, then rinse twice.\n", encoding="utf-8")
    before = hub.client().search("how do I remove limescale from my kettle", 5)["results"]
    assert "kettle" not in [r["doc_id"] for r in before]
    refreshed = _refreshes(hub)
    done = subprocess.run([sys.executable, "-m", "chaja.cli", "index", str(page), "--store", str(hub.store),
                           "--quiet"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    # idle readers catch up with a write of another process by themselves, before any search
    assert _wait_for_refreshes(hub, refreshed) > refreshed
    after = hub.client().search("how do I remove limescale from my kettle", 5)["results"]
    found = [r for r in after if r["doc_id"] == "kettle"]
    assert found and found[0]["vector_rank"] is not None and found[0]["rank"] <= 2
    assert hub.writer.delete("kettle")


def test_idle_readers_catch_up_after_the_hubs_own_write(hub):
    refreshed = _refreshes(hub)
    hub.writer.add_documents([{"id": "refresh/1", "title": "Refresh probe",
                               "text": "A page written to see the readers catch up."}])
    try:
        assert _wait_for_refreshes(hub, refreshed) > refreshed
        assert hub.client().search("readers catch up probe", 3)["results"][0]["doc_id"] == "refresh/1"
    finally:
        assert hub.writer.delete("refresh/1")


def test_searches_and_health_answer_while_an_ingest_runs(hub):
    docs = [{"id": f"load/{i}", "title": f"부하 문서 {i}",
             "text": f"문서 {i}번의 본문입니다. " * 40 + f"Document number {i} in English. " * 40} for i in range(40)]
    ingest_done = threading.Event()
    errors: list[Exception] = []

    def ingest():
        try:
            hub.writer.add_documents(docs)
        except Exception as exc:   # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            ingest_done.set()

    t = threading.Thread(target=ingest)
    t.start()
    answered_during = 0
    while not ingest_done.is_set():
        assert call(hub.url, "GET", "/healthz")[0] == 200
        assert hub.client().search("타이어 공기압", 3)["results"]
        if not ingest_done.is_set():
            answered_during += 1
    t.join()
    assert not errors
    assert answered_during >= 1                  # requests were answered before the ingest ended
    assert hub.writer.prune([d["id"] for d in hub.writer.iter_documents() if not d["id"].startswith("load/")])


def test_many_clients_search_at_once(hub):
    results: list = []
    lock = threading.Lock()

    def client(n):
        c = hub.client()
        for q in ("타이어 공기압", "router password", "배당 지급일", "자기주식 소각"):
            got = c.search(q, 3)
            with lock:
                results.append((q, got["results"][0]["doc_id"]))

    threads = [threading.Thread(target=client, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 32
    by_query: dict[str, set] = {}
    for q, top in results:
        by_query.setdefault(q, set()).add(top)
    assert all(len(tops) == 1 for tops in by_query.values())   # every client got the same answer


def test_a_port_in_use_is_a_one_line_error(hub):
    port = hub.url.rsplit(":", 1)[1]
    done = subprocess.run([sys.executable, "-m", "chaja.cli", "serve", "--store", str(hub.store), "--port", port],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "port is in use" in done.stderr and "Traceback" not in done.stderr


def test_a_hub_without_keys_is_open_and_ready_only_after_loading(tmp_path):
    running = start_hub(tmp_path / "open.chaja", tmp_path / "open.log", [])
    try:
        assert call(running.url, "GET", "/readyz")[0] == 200    # start_hub waited for it
        c = running.client(None)
        c.add_documents([{"id": "a", "text": "열린 허브의 문서"}])
        assert c.search("열린 허브", 1)["results"][0]["doc_id"] == "a"
        assert call(running.url, "GET", "/openapi.json")[0] == 200
    finally:
        stop_hub(running)


def test_the_cli_talks_to_a_hub(hub, tmp_path, capsys, monkeypatch):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "lamp.md").write_text("# 스탠드 조명\n\n## 전구 교체\n\n전원을 끄고 전구가 식은 뒤 교체합니다.\n", encoding="utf-8")
    monkeypatch.setenv("CHAJA_API_KEY", WRITE_KEY)
    assert cli.main(["index", str(notes), "--hub", hub.url]) == 0
    assert "1 added" in capsys.readouterr().out
    assert cli.main(["search", "전구 교체", "--hub", hub.url, "-k", "2", "--filter", "lang=ko"]) == 0
    out = capsys.readouterr().out
    assert "[lamp]" in out and "§ 전구 교체" in out and "why: " in out
    assert cli.main(["stats", "--hub", hub.url]) == 0
    assert "documents:" in capsys.readouterr().out
    assert cli.main(["delete", "lamp", "--hub", hub.url]) == 0
    assert cli.main(["delete", "lamp", "--hub", hub.url]) == 1
    monkeypatch.setenv("CHAJA_API_KEY", "wrong")
    assert cli.main(["stats", "--hub", hub.url]) == 2
    assert "401" in capsys.readouterr().err


def test_the_client_reports_an_unreachable_hub():
    from chaja.client import Client
    with pytest.raises(HubError) as err:
        Client("http://127.0.0.1:9", timeout=5).health()
    assert err.value.status == 0 and "cannot reach" in str(err.value)


def _writer_processes(hub) -> list[int]:
    """The hub's writer: its child process started by multiprocessing's spawn."""
    out = []
    for pid in subprocess.run(["pgrep", "-P", str(hub.proc.pid)], capture_output=True, text=True).stdout.split():
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        if b"spawn_main" in cmdline:
            out.append(int(pid))
    return out


def test_a_dead_writer_is_replaced_and_nothing_committed_is_lost(hub):
    w = hub.writer
    w.add_documents([{"id": "tmp/before-crash", "text": "작성 프로세스가 죽기 전의 문서"}])
    pids = _writer_processes(hub)
    assert len(pids) == 1
    os.kill(pids[0], signal.SIGKILL)
    time.sleep(0.5)
    statuses = []
    for _ in range(2):
        try:
            w.add_documents([{"id": "tmp/after-crash", "text": "새 작성 프로세스가 쓴 문서"}])
            statuses.append(200)
        except HubError as exc:
            statuses.append(exc.status)
    assert statuses in ([503, 200], [200, 200])       # refused once at most, then written
    assert set(_writer_processes(hub)) - set(pids)
    assert w.get_document("tmp/before-crash")["chunks"] == 1
    assert hub.client().search("새 작성 프로세스", 3)["results"][0]["doc_id"] == "tmp/after-crash"
    assert w.delete("tmp/before-crash") and w.delete("tmp/after-crash")


def test_a_hub_over_postgresql(tmp_path, pg_dsn, pg_schema):
    sep = "&" if "?" in pg_dsn else "?"
    running = start_hub(f"{pg_dsn}{sep}schema={pg_schema}", tmp_path / "pg.log", ["hub.readers=2"])
    try:
        c = running.client(None)
        got = c.add_documents([
            {"id": "pg/ko", "title": "배당 정책", "text": "배당은 연 2회 지급합니다.", "lang": "ko", "source": "dart"},
            {"id": "pg/en", "title": "Dividend policy", "text": "Dividends are paid twice a year.", "lang": "en"}])
        assert got["added"] == 2
        assert c.search("배당 지급", 2)["results"][0]["doc_id"] == "pg/ko"
        only = c.search("dividend 배당", 5, filters={"lang": "en"})["results"]
        assert [r["doc_id"] for r in only] == ["pg/en"]
        assert [d["id"] for d in c.iter_documents()] == ["pg/en", "pg/ko"]
        assert c.delete("pg/en") and c.stats()["documents"] == 1
    finally:
        stop_hub(running)


def test_listening_beyond_loopback_without_keys_is_warned_about(tmp_path):
    running = start_hub(tmp_path / "wide.chaja", tmp_path / "wide.log", ["hub.host=0.0.0.0"])
    try:
        log = running.log.read_text(errors="replace")
        assert "without API keys: anyone who reaches it can read and write" in log
    finally:
        stop_hub(running)


def _process(pid: int) -> tuple[int, str] | None:
    """(parent pid, start time) of a live process, None for one gone or a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()     # after the name, which may hold spaces
    return None if fields[0] in ("Z", "X") else (int(fields[1]), fields[19])


def _children(pid: int) -> dict[int, str]:
    """pid → start time of every live child of ``pid`` (so a reused pid is no match)."""
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (got := _process(int(entry))) and got[0] == pid:
            out[int(entry)] = got[1]
    return out


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_the_writer_and_helpers_die_with_a_killed_hub(tmp_path):
    running = start_hub(tmp_path / "killed.chaja", tmp_path / "killed.log", [])
    left: dict[int, str] = {}
    try:
        c = running.client(None)
        time.sleep(0.5)             # the thread that loaded the encoders has ended; the writer lives on
        c.add_documents([{"id": "a", "text": "첫 작성 프로세스의 문서"}])
        first = _writer_processes(running)
        assert len(first) == 1
        os.kill(first[0], signal.SIGKILL)       # its replacement is started by a request
        time.sleep(0.5)
        for attempt in range(2):
            try:
                c.add_documents([{"id": "b", "text": "둘째 작성 프로세스의 문서"}])
                break
            except HubError as exc:
                assert exc.status == 503 and attempt == 0
        left = _children(running.proc.pid)
        assert len(left) >= 2, left             # the new writer and multiprocessing's resource tracker
        os.kill(running.proc.pid, signal.SIGKILL)
        running.proc.wait(10)
        end = time.monotonic() + 5
        while time.monotonic() < end and any(_process(p) and _process(p)[1] == t for p, t in left.items()):
            time.sleep(0.1)
        alive = {p: Path(f"/proc/{p}/cmdline").read_bytes()[:120] for p, t in left.items()
                 if _process(p) and _process(p)[1] == t}
        assert not alive, alive
    finally:
        if running.proc.poll() is None:
            stop_hub(running)
        for p, t in left.items():               # whatever outlived the hub
            if _process(p) and _process(p)[1] == t:
                os.kill(p, signal.SIGKILL)
