"""The hub: chaja over HTTP, standard library only.

    GET  /health                      {"status": "ok", "documents": N, "chunks": N, "encoder": ...}
    POST /search      {"query", "k"?} the CLI's ``--json`` result (schema chaja.search/1)
    POST /documents   {"documents": [{id, title, text, lang?, source?, doc_type?, date?}], "prune"?: false}
                                      index documents (same fields as a JSONL line); returns counts
    DELETE /documents/<id>            delete one document
    POST /embeddings  {"input": str | [str], "kind"?: "query" | "passage"}
                                      OpenAI-style {"data": [{"index", "embedding"}], "model"}

One index is served; requests are handled one at a time against it (the store
and encoder are not shared between threads), which suits one embedded file.
Errors come back as JSON ``{"error": message}`` with status 400, 404 or 500.
"""
from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote

from chaja.index import Index
from chaja.loaders import assign_language, document_from_record
from chaja.search.searcher import QueryError

MAX_BODY = 32 * 1024 * 1024


class HubError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def make_handler(index: Index, lock: threading.Lock, quiet: bool = False):
    from chaja.cli import result_json

    class Handler(BaseHTTPRequestHandler):
        server_version = "chaja-hub"

        def log_message(self, fmt, *args):
            if not quiet:
                sys.stderr.write("hub: " + (fmt % args) + "\n")

        def _send(self, status: int, payload: dict) -> None:
            body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _body(self) -> dict:
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                raise HubError(413, f"request body over {MAX_BODY} bytes")
            raw = self.rfile.read(length) if length else b""
            try:
                data = json.loads(raw.decode("utf-8")) if raw else {}
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise HubError(400, f"body is not JSON: {exc}") from None
            if not isinstance(data, dict):
                raise HubError(400, "body must be a JSON object")
            return data

        def _route(self, method: str) -> None:
            try:
                with lock:
                    status, payload = self._dispatch(method)
            except HubError as exc:
                status, payload = exc.status, {"error": str(exc)}
            except (QueryError, ValueError) as exc:
                status, payload = 400, {"error": str(exc)}
            except Exception as exc:  # noqa: BLE001 - the hub must answer, not die
                status, payload = 500, {"error": f"{type(exc).__name__}: {exc}"}
            self._send(status, payload)

        def _dispatch(self, method: str) -> tuple[int, dict]:
            path = self.path.split("?", 1)[0].rstrip("/")
            if method == "GET" and path in ("", "/health"):
                s = index.store.stats()
                return 200, {"status": "ok", "documents": s.documents, "chunks": s.chunks,
                             "encoder": index.store.get_meta("encoder")}
            if method == "POST" and path == "/search":
                body = self._body()
                k = body.get("k")
                if k is not None and (not isinstance(k, int) or not 1 <= k <= 1000):
                    raise HubError(400, "k must be an integer from 1 to 1000")
                res = index.search(body.get("query", ""), top_k=k)
                return 200, result_json(res, k or index.config.search.top_k)
            if method == "POST" and path == "/documents":
                body = self._body()
                recs = body.get("documents")
                if not isinstance(recs, list):
                    raise HubError(400, "'documents' must be a list")
                docs = []
                for i, rec in enumerate(recs):
                    try:
                        docs.append(document_from_record(rec, f"doc-{i}"))
                    except ValueError as exc:
                        raise HubError(400, f"documents[{i}]: {exc}") from None
                for d in docs:
                    assign_language(d, index.config.index.language)
                r = index.add_documents(docs, prune=bool(body.get("prune")))
                return 200, {"added": r.added, "changed": r.changed, "unchanged": r.unchanged,
                             "removed": r.removed, "chunks": r.chunks}
            if method == "DELETE" and path.startswith("/documents/"):
                doc_id = unquote(path[len("/documents/"):])
                if not index.delete(doc_id):
                    raise HubError(404, f"no document {doc_id!r}")
                return 200, {"deleted": doc_id}
            if method == "POST" and path == "/embeddings":
                body = self._body()
                texts = body.get("input")
                texts = [texts] if isinstance(texts, str) else texts
                if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
                    raise HubError(400, "'input' must be a string or a list of strings")
                kind = body.get("kind", "query")
                if kind not in ("query", "passage"):
                    raise HubError(400, "'kind' must be 'query' or 'passage'")
                enc = index.encoder
                vecs = enc.encode_queries(texts) if kind == "query" else enc.encode_passages(texts)
                return 200, {"object": "list", "model": enc.name,
                             "data": [{"object": "embedding", "index": i, "embedding": v.tolist()}
                                      for i, v in enumerate(vecs)]}
            raise HubError(404, f"no route {method} {path or '/'}")

        def do_GET(self):
            self._route("GET")

        def do_POST(self):
            self._route("POST")

        def do_DELETE(self):
            self._route("DELETE")

    return Handler


def make_server(index: Index, host: str = "127.0.0.1", port: int = 8750, quiet: bool = False) -> ThreadingHTTPServer:
    return ThreadingHTTPServer((host, port), make_handler(index, threading.Lock(), quiet))


def serve(index: Index, host: str = "127.0.0.1", port: int = 8750) -> None:
    httpd = make_server(index, host, port)
    print(f"chaja hub on http://{host}:{httpd.server_address[1]}  (Ctrl-C to stop)", file=sys.stderr)
    try:
        httpd.serve_forever()
    finally:
        httpd.server_close()
