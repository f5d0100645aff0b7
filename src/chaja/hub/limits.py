"""Request limits, enforced in front of the application (pure ASGI):

- a body longer than ``max_bytes`` is refused with 413: at once when its
  ``Content-Length`` says so, else as soon as the bytes read pass the limit;
- a ``Content-Length`` that is not a decimal number is refused with 400;
- a body that has not fully arrived within ``timeout_s`` gets 408 (a slow or stalled
  client holds only its own connection, never the hub);
- every body is read as JSON, whatever ``Content-Type`` the client sent (so
  ``curl -d`` works).

The body is read here, within those limits, and handed to the application whole.
"""
from __future__ import annotations

import asyncio
import json
import time

_BODY_METHODS = {b"POST", b"PUT", b"PATCH", b"DELETE"}


class _Refused(Exception):
    def __init__(self, status: int, detail: str):
        self.status, self.detail = status, detail


async def send_json(send, status: int, payload: dict, headers: list[tuple[bytes, bytes]] = ()) -> None:
    body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close"), *headers]})
    await send({"type": "http.response.body", "body": body})


class BodyLimits:
    def __init__(self, app, *, max_bytes: int, timeout_s: float):
        self.app, self.max_bytes, self.timeout_s = app, int(max_bytes), float(timeout_s)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"].encode() not in _BODY_METHODS:
            return await self.app(scope, receive, send)
        try:
            body = await self._read(scope, receive)
        except _Refused as exc:
            return await send_json(send, exc.status, {"detail": exc.detail})
        headers = [(k, v) for k, v in scope["headers"] if k not in (b"content-type", b"content-length")]
        headers += [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        scope["headers"] = headers      # in place: the outer layers read what routing adds to scope
        sent = False

        async def replay():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()
        return await self.app(scope, replay, send)

    async def _read(self, scope, receive) -> bytes:
        declared = None
        for key, value in scope["headers"]:
            if key == b"content-length":
                text = value.decode("latin-1").strip()
                if not text.isdigit():
                    raise _Refused(400, f"Content-Length must be a non-negative whole number, not {text!r}")
                declared = int(text)
        if declared is not None and declared > self.max_bytes:
            raise _Refused(413, f"the body is {declared} bytes; the limit is {self.max_bytes}")
        deadline = time.monotonic() + self.timeout_s
        parts, size = [], 0
        while True:
            left = deadline - time.monotonic()
            try:
                message = await asyncio.wait_for(receive(), timeout=max(left, 0.001))
            except asyncio.TimeoutError:
                raise _Refused(408, f"the body did not arrive within {self.timeout_s:g} s") from None
            if message["type"] == "http.disconnect":
                raise _Refused(400, "the client went away before sending the whole body")
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                raise _Refused(413, f"the body is over the limit of {self.max_bytes} bytes")
            parts.append(chunk)
            if not message.get("more_body", False):
                return b"".join(parts)
