"""Run the hub: bind the port first (a port in use is a one-line error, not a
traceback), then uvicorn on that socket.

Connections: idle keep-alive connections close after 5 s; a request body must
arrive within ``hub.body_timeout_s`` (:mod:`chaja.hub.limits`); at most 1,000
connections are served at once, more get 503.
"""
from __future__ import annotations

import ipaddress
import socket
import sys

from chaja.config import Config
from chaja.hub import require_server_extra
from chaja.hub.auth import Keys


class ListenError(OSError):
    """The hub cannot listen on the address it was given."""


def bind(host: str, port: int) -> socket.socket:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ListenError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    family, _, _, _, address = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit this: without it a response written in two parts
    # (headers, body) waits for the client's delayed ACK, about 40 ms per request.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind(address)
        sock.listen(512)
    except OSError as exc:
        sock.close()
        why = "the port is in use" if exc.errno in (48, 98) else exc.strerror
        raise ListenError(f"cannot listen on {host}:{port}: {why}") from None
    sock.set_inheritable(True)
    return sock


def _one_blas_thread() -> None:
    """One BLAS thread per caller in the hub process: searches run side by side, and
    OpenBLAS's own thread pool serves one caller at a time (measured on two cores: four
    clients went from 38 to 50 requests/s)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return
    threadpool_limits(1, user_api="blas")


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve(location: str, config: Config, *, host: str | None = None, port: int | None = None,
          quiet: bool = False) -> None:
    require_server_extra()
    import uvicorn

    from chaja.hub.app import create_app
    from chaja.hub.state import Hub

    _one_blas_thread()
    host = host or config.hub.host
    port = config.hub.port if port is None else port
    sock = bind(host, port)
    if not Keys.from_config(config.hub).enabled and not _loopback(host):
        print(f"warning: the hub listens on {host} without API keys: anyone who reaches it can read and write. "
              "Set hub.api_keys (or CHAJA_API_KEYS).", file=sys.stderr)
    hub = Hub(location, config)
    app = create_app(hub)

    actual = sock.getsockname()[1]
    judging = "; judging: /judge" if config.hub.judging else ""
    print(f"chaja hub on http://{host}:{actual}  (docs: /docs{judging}; Ctrl-C to stop)", file=sys.stderr, flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning" if quiet else "info", access_log=not quiet,
                                           timeout_keep_alive=5, limit_concurrency=1000, lifespan="on"))
    server.run(sockets=[sock])
