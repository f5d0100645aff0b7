"""The hub's routes (see :mod:`chaja.hub` for the list), as a FastAPI application.

Handlers are plain functions, which FastAPI runs in its thread pool: a search
borrows a reader from :class:`~chaja.hub.state.Hub`, a write waits for the writer.
Every error is JSON ``{"detail": ...}``: 400 for a query or filter the library
refuses, 401/403 for keys, 404, 405, 408, 413, 422 for a body that does not fit
its schema, 503 while the encoders load or when every reader stays busy. Each
route's ``responses`` declare the statuses it may answer and their bodies
(:class:`~chaja.hub.models.Error`, :class:`~chaja.hub.models.Invalid` for 422), so the
OpenAPI document says what the hub sends.

A document id is any text the hub stores: the document routes take the rest of the
path, percent-decoded, newlines included (Starlette's ``path`` convertor, ``.*``,
stops at a newline, and its ``$`` matches before a final one: ``a%0A`` was read as
``a``). A document's ``path`` (where the file was read, on the server) is shown only
to a caller who may write.
"""
from __future__ import annotations

import base64
import dataclasses
import contextlib
import hashlib
import json
import math
import time
from typing import Annotated, Any

import numpy as np
from fastapi import Depends, FastAPI, HTTPException, Query, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import JSONResponse, PlainTextResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.convertors import Convertor, register_url_convertor
from starlette.exceptions import HTTPException as StarletteHTTPException

import chaja
from chaja.search.result_json import result_json, why_line
from chaja.encoders.base import model_of
from chaja.hub import writer
from chaja.hub.auth import Keys
from chaja.hub.limits import BodyLimits
from chaja.hub.models import DocumentsIn, EmbeddingsIn, Error, Invalid, PruneIn, Readiness, SearchIn
from chaja.hub.state import Busy, Hub, NotReady
from chaja.documents import Document, Location, Section
from chaja.loaders import assign_language
from chaja.readers.jsonl import document_from_record
from chaja.stores import StoreBusy, StoreError


class SafeJSONResponse(JSONResponse):
    """JSON that always renders: text that cannot be UTF-8 (a lone surrogate echoed back
    in a validation error) is written with ``\\u`` escapes; a non-finite number as null."""

    def render(self, content: Any) -> bytes:
        try:
            return json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
        except (UnicodeEncodeError, ValueError):
            return json.dumps(_finite(content), ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode()


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


class _AnyText(Convertor):
    """The rest of the path, whatever it holds (newlines too)."""
    regex = "(?s:.*)"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("anytext", _AnyText())

_SAID = {
    400: "a query, filter, setting or value the library refuses; a Content-Length that is no number",
    401: "no key, or one the hub does not know (where keys are set); WWW-Authenticate: Bearer",
    403: "a read key on a write route",
    404: "no such document",
    408: "the body did not arrive within hub.body_timeout_s",
    413: "the body is over hub.max_body_bytes",
    422: "the request does not fit its schema (a list of problems), or is refused for the reason given",
    503: "the encoders are still loading (or failed to), every reader stayed busy, or the writer is restarting; "
         "Retry-After says when to try again",
}
#: the statuses of a route with a body (every POST and DELETE goes through the body limits)
BODY = (400, 408, 413, 422)


def _errors(*codes: int, **said: str) -> dict:
    """``responses`` for a route: each status with its body model and what it means
    (``said``, as ``e404="..."``, overrides the usual words)."""
    return {code: {"model": Invalid if code == 422 else Error, "description": said.get(f"e{code}", _SAID[code])}
            for code in sorted(set(codes))}


def _document(rec, doc_id: str, i: int) -> Document:
    if (rec.text is None) == (rec.sections is None):
        raise HTTPException(422, f"documents[{i}] needs either text or sections (not both)")
    if rec.text is not None:
        doc = document_from_record({**rec.model_dump(exclude_none=True, exclude={"path"}), "id": doc_id}, doc_id)
    else:
        date = document_from_record({"text": "", "date": rec.date}, doc_id).date
        doc = Document(id=doc_id, title=rec.title, sections=[_section(s, i) for s in rec.sections],
                       lang=rec.lang or "", source=rec.source or "", doc_type=rec.doc_type or "", date=date)
    doc.path = rec.path or ""
    return doc


def _section(s, i: int) -> Section:
    """A section of a posted document; marks that are no location, or not sorted inside
    the text (:class:`Section` checks), are a 422."""
    try:
        return Section(tuple(s.heading), s.text,
                       tuple((m.offset, Location(m.unit, m.first, m.last, m.part)) for m in s.marks))
    except ValueError as exc:
        raise HTTPException(422, f"documents[{i}]: {exc}") from None


def _add_file(hub: Hub, name: str, data: bytes, doc_id: str | None) -> dict:
    """Write a posted file where the writer reads it (its reader chosen by its content,
    as ``chaja index`` chooses), index its documents there, and say what came of it;
    422 with the reason when nothing could be read."""
    import tempfile
    from pathlib import PurePath

    base = "".join("_" if ch < " " else ch for ch in PurePath(name.replace("\\", "/")).name)
    if base.strip(". ") == "":
        raise HTTPException(422, f"name {name!r} is no file name")
    suffix = PurePath(base).suffix[:16]
    base = PurePath(base).stem[:80] + suffix       # within any file system's limit on a name
    with tempfile.TemporaryDirectory(prefix="chaja-upload-") as tmp:
        path = f"{tmp}/{base}"
        with open(path, "wb") as f:
            f.write(data)
        got = hub.write(writer.add_file, path, doc_id or PurePath(base).stem, base)
    if not got["ids"]:
        raise HTTPException(422, f"{base}: " + "; ".join(got["skipped"] or got["warnings"] or ["no text"]))
    return got


def _derived_id(title: str, text: str) -> str:
    return "sha256-" + hashlib.sha256(f"{title}\x00{text}".encode("utf-8")).hexdigest()[:24]


def create_app(hub: Hub, *, own: bool = True) -> FastAPI:
    """The application over ``hub``; with ``own`` it starts the hub when the server
    starts (encoders in the background) and closes it when the server stops."""
    cfg = hub.config.hub
    keys = Keys.from_config(cfg)
    bearer = HTTPBearer(auto_error=False, description="an API key from hub.api_keys or hub.write_keys")
    docs_open = cfg.public_docs or not keys.enabled

    def guard(write: bool):
        def check(request: Request, credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> None:
            status = keys.check(request.headers.get("authorization"), write=write)
            if status == 401:
                raise HTTPException(401, "a valid API key is needed: Authorization: Bearer <key>",
                                    headers={"WWW-Authenticate": "Bearer"})
            if status == 403:
                raise HTTPException(403, "this key may read but not write")
        return Depends(check)

    read, write = guard(False), guard(True)

    def may(request: Request, write: bool) -> bool:
        """Whether the caller's key (or a hub without keys) may read, or write."""
        return keys.check(request.headers.get("authorization"), write=write) == 200

    def shown(info, writer: bool) -> dict:
        out = dataclasses.asdict(info)
        if not writer:
            out.pop("path", None)       # where a file lies on the server is for those who may write
        return out

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        if own:
            hub.start()
        try:
            yield
        finally:
            if own:
                hub.close()

    app = FastAPI(title="chaja hub", version=chaja.__version__, default_response_class=SafeJSONResponse,
                  lifespan=lifespan,
                  description="Hybrid search for Korean and English documents.",
                  openapi_url=None, docs_url=None, redoc_url=None)
    app.state.hub = hub
    docs_guard = [] if docs_open else [read]

    @app.get("/openapi.json", include_in_schema=False, dependencies=docs_guard)
    def openapi() -> dict:
        return app.openapi()

    @app.get("/docs", include_in_schema=False, dependencies=docs_guard)
    def docs():
        return get_swagger_ui_html(openapi_url="/openapi.json", title="chaja hub")

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError):
        errors = [{k: v for k, v in e.items() if k != "url"} for e in exc.errors()]
        return SafeJSONResponse(jsonable_encoder({"detail": errors}), status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException):
        return SafeJSONResponse({"detail": exc.detail}, status_code=exc.status_code,
                                headers=getattr(exc, "headers", None))

    @app.exception_handler(ValueError)         # QueryError and FilterError among them
    async def refused(request: Request, exc: ValueError):
        return SafeJSONResponse({"detail": str(exc)}, status_code=400)

    @app.exception_handler(StoreError)
    async def store_failed(request: Request, exc: StoreError):
        return SafeJSONResponse({"detail": str(exc)}, status_code=500)

    @app.exception_handler(StoreBusy)          # another process (chaja optimize) held the write lock
    async def store_busy(request: Request, exc: StoreBusy):
        retry = max(1, math.ceil(getattr(exc, "retry_after_s", 5.0) or 5.0))
        return SafeJSONResponse({"detail": str(exc)}, status_code=503, headers={"Retry-After": str(retry)})

    @app.exception_handler(Exception)
    async def failed(request: Request, exc: Exception):
        return SafeJSONResponse({"detail": f"internal error: {type(exc).__name__}: {exc}"}, status_code=500)

    @app.exception_handler(NotReady)
    async def not_ready(request: Request, exc: NotReady):
        return SafeJSONResponse({"detail": f"not ready: {exc}"}, status_code=503, headers={"Retry-After": "1"})

    @app.exception_handler(Busy)
    async def busy(request: Request, exc: Busy):
        return SafeJSONResponse({"detail": str(exc)}, status_code=503, headers={"Retry-After": "1"})

    # ---- health --------------------------------------------------------------
    @app.get("/healthz", tags=["health"], summary="the process is up")
    async def healthz() -> dict:
        return {"status": "ok"}

    @app.get("/readyz", tags=["health"], summary="ready once the encoders are loaded; the encoder and any "
                                                   "start-up error to a caller with a key",
             responses={200: {"model": Readiness},
                        503: {"model": Readiness, "description": "still loading, or start-up failed"}})
    def readyz(request: Request):
        told = may(request, False)
        if hub.ready.is_set():
            return {"status": "ready", "encoder": hub.encoder.name} if told else {"status": "ready"}
        if hub.error:
            body = {"status": "failed", "detail": "not ready: start-up failed"}
            if told:
                body |= {"detail": f"not ready: start-up failed: {hub.error}", "error": hub.error}
        else:
            body = {"status": "loading", "detail": "not ready: the hub is loading its encoders"}
        return SafeJSONResponse(body, status_code=503, headers={"Retry-After": "1"})

    @app.get("/metrics", tags=["health"], summary="Prometheus metrics", dependencies=[read],
             response_class=PlainTextResponse,        # its errors are JSON all the same
             responses={401: {"description": _SAID[401],
                              "content": {"application/json": {"schema": Error.model_json_schema()}}}})
    def metrics() -> PlainTextResponse:
        return PlainTextResponse(hub.metrics.render(), media_type="text/plain; version=0.0.4")

    # ---- search --------------------------------------------------------------
    allowed = {s.removeprefix("search.") for s in cfg.request_settings}

    @app.post("/v1/search", tags=["search"], dependencies=[read], responses=_errors(*BODY, 401, 503),
              summary="hybrid search; the same result as `chaja search --json` (schema chaja.search/1)")
    def search(body: SearchIn) -> dict:
        settings = {}
        for key, value in body.settings.items():
            name = key.removeprefix("search.")
            if name not in allowed:
                raise HTTPException(400, f"setting {key!r} cannot be set per request; "
                                         f"allowed: {', '.join(sorted(allowed)) or 'none'}")
            settings[name] = value
        filters = body.filters.model_dump(exclude_none=True) if body.filters else None
        with hub.reader() as idx:
            res = idx.search(body.query, body.k, filters=filters, settings=settings)
            top_k = body.k or idx.config.search.top_k
        out = result_json(res, top_k)
        if body.explain:
            out["explain"] = {"filters": filters or {}, "settings": settings, "abstained": res.abstained}
            for row, d in zip(out["results"], res.documents):
                row["why"] = why_line(d, res.keyword_used)
        return out

    # ---- documents -----------------------------------------------------------
    @app.post("/v1/documents", tags=["documents"], dependencies=[write],
              responses=_errors(*BODY, 401, 403, 503, e413="the body is over hub.max_body_bytes, or the batch "
                                                           "over hub.max_batch"),
              summary="index a batch of documents (replacing those with the same id)")
    def add_documents(body: DocumentsIn) -> dict:
        if len(body.documents) > cfg.max_batch:
            raise HTTPException(413, f"{len(body.documents)} documents in one request; the limit is {cfg.max_batch}")
        docs, seen = [], set()
        for i, rec in enumerate(body.documents):
            content = rec.text if rec.text is not None else json.dumps(
                [[s.heading, s.text] for s in rec.sections or []], ensure_ascii=False)
            doc_id = rec.id or (_derived_id(rec.title, content) if body.derive_ids else None)
            if doc_id is None:
                raise HTTPException(422, f"documents[{i}] has no id (send one, or derive_ids: true)")
            if doc_id in seen:
                raise HTTPException(422, f"documents[{i}]: the id {doc_id!r} appears twice in this batch")
            seen.add(doc_id)
            docs.append(assign_language(_document(rec, doc_id, i), hub.config.index.language))
        return hub.write(writer.add, docs) | {"ids": [d.id for d in docs]}

    @app.post("/v1/files", tags=["documents"], dependencies=[write],
              summary="index one file as it is (PDF, HWP, DOCX, XLSX, ...): its bytes as the body",
              responses=_errors(*BODY, 401, 403, 503, e422="the file could not be read (the reason is given), "
                                                           "or the query does not fit its schema"))
    async def add_file(request: Request, name: Annotated[str, Query(min_length=1, max_length=255)],
                       id: Annotated[str | None, Query(min_length=1, max_length=1000)] = None) -> dict:
        from starlette.concurrency import run_in_threadpool

        data = await request.body()
        return await run_in_threadpool(_add_file, hub, name, data, id)

    @app.get("/v1/documents", tags=["documents"], dependencies=[read], responses=_errors(401, 422, 503),
             summary="documents in id order, a page at a time (their path only to a caller who may write)")
    def list_documents(request: Request, after: Annotated[str | None, Query(max_length=1000)] = None,
                       limit: Annotated[int, Query(ge=1, le=1000)] = 100) -> dict:
        with hub.reader() as idx:
            got = idx.store.documents(after=after, limit=limit)
        writer = may(request, True)
        return {"documents": [shown(d, writer) for d in got],
                "next": got[-1].id if len(got) == limit else None}

    @app.get("/v1/documents/{doc_id:anytext}", tags=["documents"], dependencies=[read],
             responses=_errors(401, 404, 422, 503),
             summary="one document with its chunks (its path only to a caller who may write)")
    def get_document(request: Request, doc_id: str) -> dict:
        with hub.reader() as idx:
            got = idx.store.documents(ids=[doc_id])
            if not got:
                raise HTTPException(404, f"no document {doc_id!r}")
            chunks = idx.store.chunks(got[0].chunk_ids)
        out = shown(got[0], may(request, True))
        out["chunk_list"] = [{"id": c.id, "heading": list(c.heading_path), "text": c.text,
                              "location": c.location and c.location.as_dict()}
                             for c in sorted(chunks.values(), key=lambda c: c.ordinal)]
        return out

    @app.delete("/v1/documents/{doc_id:anytext}", tags=["documents"], dependencies=[write],
                summary="delete one document", responses=_errors(*BODY, 401, 403, 404, 503))
    def delete_document(doc_id: str) -> dict:
        if not hub.write(writer.delete, doc_id):
            raise HTTPException(404, f"no document {doc_id!r}")
        return {"deleted": doc_id}

    @app.post("/v1/prune", tags=["documents"], dependencies=[write], responses=_errors(*BODY, 401, 403, 503),
              summary="delete every document whose id is not in keep")
    def prune(body: PruneIn) -> dict:
        if not body.keep and not body.remove_all:
            raise HTTPException(422, "keep is empty: that deletes every document; send remove_all: true to mean it")
        gone = hub.write(writer.prune, body.keep)
        return {"removed": len(gone), "ids": gone}

    @app.get("/v1/stats", tags=["documents"], dependencies=[read], summary="what the store holds",
             responses=_errors(401, 503))
    def stats() -> dict:
        with hub.reader() as idx:
            return idx.summary()

    # ---- embeddings ----------------------------------------------------------
    @app.post("/v1/embeddings", tags=["embeddings"], dependencies=[read],
              responses=_errors(*BODY, 401, 404, 503, e404="the model is not served here",
                                e413="the body is over hub.max_body_bytes, or the inputs over hub.max_inputs"),
              summary="OpenAI-compatible embeddings from the store's model")
    def embeddings(body: EmbeddingsIn) -> dict:
        texts = [body.input] if isinstance(body.input, str) else body.input
        if not texts:
            raise HTTPException(422, "input is empty")
        if len(texts) > cfg.max_inputs:
            raise HTTPException(413, f"{len(texts)} inputs in one request; the limit is {cfg.max_inputs}")
        hub.require_ready()
        enc = hub.encoder
        served = {enc.name, model_of(enc.name), "chaja"}
        if body.model not in served:
            raise HTTPException(404, f"model {body.model!r} is not served here; use {model_of(enc.name)!r}")
        if body.dimensions is not None and body.dimensions != enc.dim:
            raise HTTPException(400, f"this model gives {enc.dim} dimensions, not {body.dimensions}")
        t = time.perf_counter()
        vecs = enc.encode_queries(texts) if body.kind == "query" else enc.encode_passages(texts)
        count = getattr(enc, "token_count", None)
        tokens = sum(count(x, body.kind == "query") if count else len(x.split()) for x in texts)
        data = [{"object": "embedding", "index": i,
                 "embedding": (base64.b64encode(np.asarray(v, dtype="<f4").tobytes()).decode("ascii")
                               if body.encoding_format == "base64" else [float(x) for x in v])}
                for i, v in enumerate(vecs)]
        return {"object": "list", "model": model_of(enc.name), "data": data,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
                "seconds": round(time.perf_counter() - t, 6)}

    # ---- the outer layers: metrics, then limits ----------------------------------
    app.add_middleware(BodyLimits, max_bytes=cfg.max_body_bytes, timeout_s=cfg.body_timeout_s)
    app.add_middleware(_Measured, hub=hub)     # outermost: refusals by the limits are counted too
    return app


class _Measured:
    """Counts every request and times it, by route template (``/v1/documents/{doc_id}``)."""

    def __init__(self, app, hub: Hub):
        self.app, self.hub = app, hub

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
            self.hub.metrics.request(name, scope["method"], status, time.perf_counter() - t)
