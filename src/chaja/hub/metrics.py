"""Prometheus metrics in the text exposition format (version 0.0.4), kept in process.

    chaja_requests_total{route, method, status}     counter
    chaja_request_seconds{route}                    histogram
    chaja_encode_seconds{encoder}                   histogram (query and passage encoding)
    chaja_reader_refresh_seconds                    histogram (an idle reader catching up with a write)
    chaja_store_documents, chaja_store_chunks       gauges, read when scraped

Histograms use fixed buckets (seconds) and export ``_bucket``, ``_sum`` and ``_count``.
Requests are counted by :class:`RequestMetrics`, the hub's outermost middleware.
"""
from __future__ import annotations

import bisect
import threading
import time
from collections.abc import Callable

BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


def _labels(names: tuple[str, ...], values: tuple[str, ...], extra: str = "") -> str:
    parts = [f'{n}="{_escape(v)}"' for n, v in zip(names, values)]
    if extra:
        parts.append(extra)
    return "{" + ",".join(parts) + "}" if parts else ""


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


class Counter:
    def __init__(self, name: str, help_: str, labels: tuple[str, ...]):
        self.name, self.help, self.labels = name, help_, labels
        self.values: dict[tuple[str, ...], float] = {}

    def inc(self, *values: str, by: float = 1.0) -> None:
        self.values[values] = self.values.get(values, 0.0) + by

    def render(self) -> list[str]:
        out = [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} counter"]
        out += [f"{self.name}{_labels(self.labels, k)} {v:g}" for k, v in sorted(self.values.items())]
        return out


class Histogram:
    def __init__(self, name: str, help_: str, labels: tuple[str, ...], buckets=BUCKETS):
        self.name, self.help, self.labels, self.buckets = name, help_, labels, tuple(buckets)
        self.values: dict[tuple[str, ...], list] = {}   # labels → [bucket counts, sum, count]

    def observe(self, seconds: float, *values: str) -> None:
        got = self.values.setdefault(values, [[0] * len(self.buckets), 0.0, 0])
        i = bisect.bisect_left(self.buckets, seconds)
        if i < len(self.buckets):
            got[0][i] += 1
        got[1] += seconds
        got[2] += 1

    def render(self) -> list[str]:
        out = [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} histogram"]
        for key, (counts, total, n) in sorted(self.values.items()):
            running = 0
            for bound, c in zip(self.buckets, counts):
                running += c
                le = 'le="%g"' % bound
                out.append(f"{self.name}_bucket{_labels(self.labels, key, le)} {running}")
            inf = 'le="+Inf"'
            out.append(f"{self.name}_bucket{_labels(self.labels, key, inf)} {n}")
            out.append(f"{self.name}_sum{_labels(self.labels, key)} {total:.6f}")
            out.append(f"{self.name}_count{_labels(self.labels, key)} {n}")
        return out


class Metrics:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests = Counter("chaja_requests_total", "HTTP requests by route, method and status",
                                ("route", "method", "status"))
        self.latency = Histogram("chaja_request_seconds", "HTTP request latency by route", ("route",))
        self.encode = Histogram("chaja_encode_seconds", "time spent encoding text, per encoder call",
                                ("encoder",))
        self.refresh = Histogram("chaja_reader_refresh_seconds",
                                 "time an idle reader spent catching up with the store's writes", ())
        self.gauges: dict[str, tuple[str, Callable[[], float]]] = {}
        self.started = time.time()

    def request(self, route: str, method: str, status: int, seconds: float) -> None:
        with self._lock:
            self.requests.inc(route, method, str(status))
            self.latency.observe(seconds, route)

    def encoded(self, encoder: str, seconds: float) -> None:
        with self._lock:
            self.encode.observe(seconds, encoder)

    def refreshed(self, seconds: float) -> None:
        with self._lock:
            self.refresh.observe(seconds)

    def gauge(self, name: str, help_: str, read: Callable[[], float]) -> None:
        self.gauges[name] = (help_, read)

    def render(self) -> str:
        with self._lock:
            lines = (self.requests.render() + self.latency.render() + self.encode.render()
                     + self.refresh.render())
        for name, (help_, read) in sorted(self.gauges.items()):
            try:
                value = float(read())
            except Exception:   # noqa: BLE001 - a scrape must not fail because a store is busy
                continue
            lines += [f"# HELP {name} {help_}", f"# TYPE {name} gauge", f"{name} {value:g}"]
        lines += ["# HELP chaja_uptime_seconds seconds since the hub started", "# TYPE chaja_uptime_seconds gauge",
                  f"chaja_uptime_seconds {time.time() - self.started:.3f}"]
        return "\n".join(lines) + "\n"


class TimedEncoder:
    """An encoder that reports each call's time to :class:`Metrics` (and is otherwise the same)."""

    def __init__(self, inner, metrics: Metrics, label: str):
        self._inner, self._metrics, self._label = inner, metrics, label
        self.name, self.dim = inner.name, inner.dim

    def _timed(self, fn, texts):
        t = time.perf_counter()
        try:
            return fn(texts)
        finally:
            self._metrics.encoded(self._label, time.perf_counter() - t)

    def encode_queries(self, texts):
        return self._timed(self._inner.encode_queries, texts)

    def encode_passages(self, texts):
        return self._timed(self._inner.encode_passages, texts)

    def __getattr__(self, name):
        return getattr(self._inner, name)


class RequestMetrics:
    """ASGI middleware that counts every request into :class:`Metrics` and times it, by
    route template (``/v1/documents/{doc_id:anytext}``)."""

    def __init__(self, app, metrics: Metrics):
        self.app, self.metrics = app, metrics

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        status = 500
        t = time.perf_counter()

        async def sending(message):
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)
        try:
            await self.app(scope, receive, sending)
        finally:
            route = scope.get("route")
            name = getattr(route, "path", None) or "unmatched"
            self.metrics.request(name, scope["method"], status, time.perf_counter() - t)
