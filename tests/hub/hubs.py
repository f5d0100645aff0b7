"""Starting and stopping a real hub for the tests: ``chaja serve`` in a subprocess on
a free loopback port, over a real store, with the real encoders."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from chaja.client import Client

READ_KEY, WRITE_KEY = "read-key-for-tests", "write-key-for-tests"
CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "corpus"


@dataclass
class RunningHub:
    url: str
    store: Path
    proc: subprocess.Popen
    log: Path

    def client(self, key: str | None = READ_KEY) -> Client:
        return Client(self.url, api_key=key or "")

    @property
    def writer(self) -> Client:
        return self.client(WRITE_KEY)


def start_hub(store: Path | str, log: Path, settings: list[str], timeout: float = 120.0) -> RunningHub:
    args = [sys.executable, "-m", "chaja.cli", "serve", "--store", str(store), "--port", "0", "--quiet"]
    for s in settings:
        args += ["--set", s]
    env = {k: v for k, v in os.environ.items() if k not in ("CHAJA_API_KEYS", "CHAJA_WRITE_KEYS")}
    fh = log.open("wb")
    proc = subprocess.Popen(args, stdout=fh, stderr=subprocess.STDOUT, env=env)
    end = time.monotonic() + timeout
    url = None
    while url is None:
        m = re.search(r"chaja hub on (http://\S+)", log.read_text(errors="replace"))
        if m:
            url = m.group(1)
        elif proc.poll() is not None or time.monotonic() > end:
            proc.kill()
            raise RuntimeError(f"the hub did not start:\n{log.read_text(errors='replace')}")
        else:
            time.sleep(0.1)
    hub = RunningHub(url, store, proc, log)
    hub.client(WRITE_KEY).wait_ready(timeout)
    return hub


def stop_hub(hub: RunningHub) -> None:
    hub.proc.terminate()
    try:
        hub.proc.wait(20)
    except subprocess.TimeoutExpired:
        hub.proc.kill()
