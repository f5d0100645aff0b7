"""Plain HTTP for the hub tests: requests exactly as written, odd ones included."""
from __future__ import annotations

import http.client
import json
import socket
from urllib.parse import urlparse


def call(url: str, method: str, path: str, body=None, *, key: str | None = None, raw: bytes | None = None,
         headers: dict | None = None, timeout: float = 60.0):
    """(status, parsed JSON or text, headers)."""
    u = urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    h = dict(headers or {})
    if key:
        h["Authorization"] = f"Bearer {key}"
    data = raw if raw is not None else (None if body is None else json.dumps(body, ensure_ascii=False).encode())
    if data is not None:
        h.setdefault("Content-Type", "application/json")
    conn.request(method, path, body=data, headers=h)
    resp = conn.getresponse()
    text = resp.read()
    conn.close()
    kind = resp.getheader("Content-Type", "")
    if not text:
        parsed = None
    elif kind.startswith("application/json"):
        parsed = json.loads(text)
    else:
        parsed = text.decode("utf-8", "replace")
    return resp.status, parsed, dict(resp.getheaders())


def open_socket(url: str, timeout: float = 30.0) -> socket.socket:
    u = urlparse(url)
    return socket.create_connection((u.hostname, u.port), timeout=timeout)


def read_response(sock: socket.socket) -> tuple[int, bytes]:
    """Status and body of one response read off a raw socket (until the server closes)."""
    data = b""
    while True:
        try:
            part = sock.recv(65536)
        except ConnectionResetError:     # the server closed on bytes it would not read
            break
        if not part:
            break
        data += part
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body
