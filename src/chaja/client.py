"""A small Python client for the hub (:mod:`chaja.hub`), standard library only.

    >>> from chaja import Client
    >>> hub = Client("http://127.0.0.1:8750", api_key="...")   # or $CHAJA_API_KEY
    >>> hub.add_documents([{"id": "w1", "title": "보증 안내", "text": "보증 기간은 2년입니다."}])
    >>> hub.search("warranty 보증 기간", k=5, filters={"lang": "ko"})["results"][0]["doc_id"]
    'w1'

Every method returns the route's JSON; an error status raises :class:`HubError`
with the status and the hub's ``detail``.
"""
from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Iterator, Mapping

from chaja.documents import Document


class HubError(RuntimeError):
    def __init__(self, status: int, detail: object):
        super().__init__(f"hub answered {status}: {detail}")
        self.status, self.detail = status, detail


def document_record(doc: Document) -> dict:
    """A loaded :class:`Document` as the hub's document JSON, its sections as they are
    (so the hub chunks it exactly as a local ``chaja index`` would)."""
    rec = {"id": doc.id, "title": doc.title,
           "sections": [{"heading": list(s.heading_path), "text": s.text}
                        | ({"marks": [{"offset": at, "unit": loc.unit, "first": loc.first, "last": loc.last,
                                       "part": loc.part} for at, loc in s.marks]} if s.marks else {})
                        for s in doc.sections]}
    return rec | {k: getattr(doc, k) for k in ("lang", "source", "doc_type", "date", "path") if getattr(doc, k)}


class Client:
    def __init__(self, url: str, api_key: str | None = None, *, timeout: float = 120.0):
        self.url = url.rstrip("/")
        self.api_key = api_key if api_key is not None else os.environ.get("CHAJA_API_KEY")
        self.timeout = timeout

    # ---- transport ---------------------------------------------------------
    def request(self, method: str, path: str, body: object | None = None, params: Mapping | None = None,
                raw: bytes | None = None):
        """One request: ``body`` sent as JSON, or ``raw`` bytes as they are."""
        url = self.url + path
        if params:
            url += "?" + urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
        data = raw if raw is not None else None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        req = urllib.request.Request(url, data=data, method=method)
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", "application/octet-stream" if raw is not None else "application/json")
        if self.api_key:
            req.add_header("Authorization", f"Bearer {self.api_key}")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw, kind = resp.read(), resp.headers.get("Content-Type", "")
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            try:
                detail = json.loads(raw).get("detail")
            except (ValueError, AttributeError):
                detail = raw.decode("utf-8", "replace")
            raise HubError(exc.code, detail) from None
        except urllib.error.URLError as exc:
            raise HubError(0, f"cannot reach {self.url}: {exc.reason}") from None
        return json.loads(raw) if kind.startswith("application/json") else raw.decode("utf-8")

    # ---- routes --------------------------------------------------------------
    def add_file(self, path: str | os.PathLike, doc_id: str | None = None) -> dict:
        """Send one file as it is; the hub reads it (PDF, HWP, DOCX, XLSX, ... chosen by its
        content) and indexes it: the counts, the ids, what was skipped and noticed. A file
        the hub cannot read is a :class:`HubError` (422) with the reason."""
        from pathlib import Path

        p = Path(path)
        return self.request("POST", "/v1/files", params={"name": p.name, "id": doc_id}, raw=p.read_bytes())

    def search(self, query: str, k: int | None = None, *, filters: Mapping | None = None,
               settings: Mapping | None = None, explain: bool = False) -> dict:
        body: dict = {"query": query, "explain": explain}
        if k is not None:
            body["k"] = k
        if filters:
            body["filters"] = dict(filters)
        if settings:
            body["settings"] = dict(settings)
        return self.request("POST", "/v1/search", body)

    def add_documents(self, documents: Iterable[Mapping | Document], *, derive_ids: bool = False,
                      batch: int = 200) -> dict:
        """Index documents (dicts in the hub's shape, or loaded Documents), ``batch`` per request;
        returns the summed counts."""
        total = {"added": 0, "changed": 0, "unchanged": 0, "chunks": 0, "ids": []}
        chunk: list[dict] = []

        def flush() -> None:
            if chunk:
                got = self.request("POST", "/v1/documents", {"documents": chunk, "derive_ids": derive_ids})
                for key in ("added", "changed", "unchanged", "chunks"):
                    total[key] += got[key]
                total["ids"] += got["ids"]
                chunk.clear()
        for d in documents:
            chunk.append(document_record(d) if isinstance(d, Document) else dict(d))
            if len(chunk) >= batch:
                flush()
        flush()
        return total

    def get_document(self, doc_id: str) -> dict:
        return self.request("GET", "/v1/documents/" + urllib.parse.quote(doc_id, safe=""))

    def list_documents(self, after: str | None = None, limit: int = 100) -> dict:
        return self.request("GET", "/v1/documents", params={"after": after, "limit": limit})

    def iter_documents(self, page: int = 500) -> Iterator[dict]:
        after = None
        while True:
            got = self.list_documents(after, page)
            yield from got["documents"]
            if not got["next"]:
                return
            after = got["next"]

    def delete(self, doc_id: str) -> bool:
        try:
            self.request("DELETE", "/v1/documents/" + urllib.parse.quote(doc_id, safe=""))
        except HubError as exc:
            if exc.status == 404:
                return False
            raise
        return True

    def prune(self, keep: Iterable[str], *, remove_all: bool = False) -> dict:
        return self.request("POST", "/v1/prune", {"keep": list(keep), "remove_all": remove_all})

    def embed(self, texts: str | list[str], *, kind: str = "query", model: str = "chaja") -> list[list[float]]:
        got = self.request("POST", "/v1/embeddings", {"model": model, "input": texts, "kind": kind})
        return [row["embedding"] for row in sorted(got["data"], key=lambda r: r["index"])]

    def stats(self) -> dict:
        return self.request("GET", "/v1/stats")

    def health(self) -> dict:
        return self.request("GET", "/healthz")

    def wait_ready(self, timeout: float = 60.0) -> dict:
        """Wait until ``/readyz`` says ready (raises HubError when it does not in time)."""
        end = time.monotonic() + timeout
        while True:
            try:
                return self.request("GET", "/readyz")
            except HubError as exc:
                if time.monotonic() > end or (exc.status == 503 and "failed" in str(exc.detail)):
                    raise
                time.sleep(0.2)
