"""A JSON request to a model server, tried again while the failure may pass.

What the HTTP backends (``encoder.name = openai:<url>``, ``search.reranker =
http:<url>``) share: the body posted as UTF-8 JSON, the key as ``Authorization:
Bearer``, and retries: a refused connection, a timeout, 408/409/425/429 and 5xx are
tried again up to ``retries`` times, waiting ``0.5 · 2^i`` s (at most 8 s, or what a
``Retry-After`` header in seconds asks, also at most 8 s); any other status is the
caller's mistake and fails at once with the server's message. Standard library only.
"""
from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable

RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
MAX_WAIT_S = 8.0


class Refused(Exception):
    """The server answered with a status not worth trying again."""

    def __init__(self, status: int, detail: str):
        super().__init__(f"HTTP {status}: {detail}")
        self.status, self.detail = status, detail


class Unreachable(Exception):
    """Every try failed: ``last`` says how the last one did (a status, a timeout, no connection)."""

    def __init__(self, last: str, tries: int):
        super().__init__(f"{last} ({tries} tr{'ies' if tries > 1 else 'y'})")
        self.last, self.tries = last, tries


def server_message(exc: urllib.error.HTTPError) -> str:
    """The server's error text: OpenAI's ``{"error": {"message"}}``, a hub's ``detail``, or the body."""
    try:
        raw = exc.read().decode("utf-8", "replace")
    except OSError:
        return exc.reason or ""
    try:
        body = json.loads(raw)
    except ValueError:
        return raw.strip()[:300]
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        for key in ("detail", "message", "error"):
            if body.get(key):
                return str(body[key])
    return raw.strip()[:300]


def retry_after(exc: urllib.error.HTTPError, wait: float) -> float:
    """The wait a ``Retry-After`` header in seconds asks for, at most :data:`MAX_WAIT_S`; else ``wait``."""
    after = exc.headers.get("Retry-After") if exc.headers else None
    if after and after.strip().replace(".", "", 1).isdigit():
        return min(float(after), MAX_WAIT_S)
    return wait


def post_json(url: str, body: dict, *, api_key: str | None = None, timeout_s: float = 30.0, retries: int = 3,
              sleep: Callable[[float], None] = time.sleep, counted: Callable[[], None] | None = None,
              timeout_setting: str = "") -> bytes:
    """The reply's bytes to ``body`` posted to ``url``, after the retries above;
    :class:`Refused` or :class:`Unreachable` when there is none. ``counted`` is told of
    each request made; ``timeout_setting`` names the setting a timeout message points to."""
    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    last = ""
    for attempt in range(retries + 1):
        wait = min(0.5 * 2 ** attempt, MAX_WAIT_S)
        try:
            if counted is not None:
                counted()
            req = urllib.request.Request(url, data=data, headers=headers, method="POST")
            with urllib.request.urlopen(req, timeout=timeout_s) as resp:
                return resp.read()
        except urllib.error.HTTPError as exc:
            detail = server_message(exc)
            if exc.code not in RETRY_STATUS:
                raise Refused(exc.code, detail) from None
            last = f"HTTP {exc.code}: {detail}"
            wait = retry_after(exc, wait)
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            reason = getattr(exc, "reason", exc)
            timed_out = isinstance(reason, TimeoutError) or "timed out" in str(reason)
            last = (f"timed out after {timeout_s:g} s" + (f" ({timeout_setting})" if timeout_setting else "")
                    if timed_out else f"cannot connect ({reason})")
        if attempt < retries:
            sleep(wait)
    raise Unreachable(last, retries + 1)
