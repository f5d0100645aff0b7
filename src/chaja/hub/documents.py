"""The document routes: index a batch (``POST /v1/documents``) or a file as it is
(``POST /v1/files``), list, get and delete documents, prune, and what the store holds
(``/v1/stats``).

A document id is any text the hub stores: the routes take the rest of the path,
percent-decoded, newlines included (Starlette's ``path`` convertor, ``.*``, stops at a
newline, and its ``$`` matches before a final one: ``a%0A`` was read as ``a``). A
document's ``path`` (where the file was read, on the server) is shown only to a caller
who may write.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import tempfile
from pathlib import PurePath
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Request
from starlette.concurrency import run_in_threadpool
from starlette.convertors import Convertor, register_url_convertor

from chaja.documents import Document, Location, Section
from chaja.hub import writer
from chaja.hub.dependencies import CanWrite, CurrentHub, read, write
from chaja.hub.errors import BODY, at_most, declared
from chaja.hub.models import DocumentsIn, PruneIn
from chaja.hub.state import Hub
from chaja.loaders import assign_language
from chaja.readers.jsonl import document_from_record


class _AnyText(Convertor):
    """The rest of the path, whatever it holds (newlines too)."""
    regex = "(?s:.*)"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("anytext", _AnyText())

router = APIRouter(tags=["documents"])


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


def _derived_id(title: str, text: str) -> str:
    return "sha256-" + hashlib.sha256(f"{title}\x00{text}".encode("utf-8")).hexdigest()[:24]


def _shown(info, may_write: bool) -> dict:
    out = dataclasses.asdict(info)
    if not may_write:
        out.pop("path", None)       # where a file lies on the server is for those who may write
    return out


@router.post("/v1/documents", dependencies=[write],
             responses=declared(*BODY, 401, 403, 503, e413="the body is over hub.max_body_bytes, or the batch "
                                                           "over hub.max_batch"),
             summary="index a batch of documents (replacing those with the same id)")
def add_documents(body: DocumentsIn, hub: CurrentHub) -> dict:
    at_most(len(body.documents), hub.config.hub.max_batch, "documents", "hub.max_batch")
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


def _add_file(hub: Hub, name: str, data: bytes, doc_id: str | None) -> dict:
    """Write a posted file where the writer reads it (its reader chosen by its content,
    as ``chaja index`` chooses), index its documents there, and say what came of it;
    422 with the reason when nothing could be read."""
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


@router.post("/v1/files", dependencies=[write],
             summary="index one file as it is (PDF, HWP, DOCX, XLSX, ...): its bytes as the body",
             responses=declared(*BODY, 401, 403, 503, e422="the file could not be read (the reason is given), "
                                                          "or the query does not fit its schema"))
async def add_file(request: Request, hub: CurrentHub, name: Annotated[str, Query(min_length=1, max_length=255)],
                   id: Annotated[str | None, Query(min_length=1, max_length=1000)] = None) -> dict:
    data = await request.body()
    return await run_in_threadpool(_add_file, hub, name, data, id)


@router.get("/v1/documents", dependencies=[read], responses=declared(401, 422, 503),
            summary="documents in id order, a page at a time (their path only to a caller who may write)")
def list_documents(hub: CurrentHub, may_write: CanWrite, after: Annotated[str | None, Query(max_length=1000)] = None,
                   limit: Annotated[int, Query(ge=1, le=1000)] = 100) -> dict:
    with hub.reader() as idx:
        got = idx.store.documents(after=after, limit=limit)
    return {"documents": [_shown(d, may_write) for d in got],
            "next": got[-1].id if len(got) == limit else None}


@router.get("/v1/documents/{doc_id:anytext}", dependencies=[read], responses=declared(401, 404, 422, 503),
            summary="one document with its chunks (its path only to a caller who may write)")
def get_document(doc_id: str, hub: CurrentHub, may_write: CanWrite) -> dict:
    with hub.reader() as idx:
        got = idx.store.documents(ids=[doc_id])
        if not got:
            raise HTTPException(404, f"no document {doc_id!r}")
        chunks = idx.store.chunks(got[0].chunk_ids)
    out = _shown(got[0], may_write)
    out["chunk_list"] = [{"id": c.id, "heading": list(c.heading_path), "text": c.text,
                          "location": c.location and c.location.as_dict()}
                         for c in sorted(chunks.values(), key=lambda c: c.ordinal)]
    return out


@router.delete("/v1/documents/{doc_id:anytext}", dependencies=[write],
               summary="delete one document", responses=declared(*BODY, 401, 403, 404, 503))
def delete_document(doc_id: str, hub: CurrentHub) -> dict:
    if not hub.write(writer.delete, doc_id):
        raise HTTPException(404, f"no document {doc_id!r}")
    return {"deleted": doc_id}


@router.post("/v1/prune", dependencies=[write], responses=declared(*BODY, 401, 403, 503),
             summary="delete every document whose id is not in keep")
def prune(body: PruneIn, hub: CurrentHub) -> dict:
    if not body.keep and not body.remove_all:
        raise HTTPException(422, "keep is empty: that deletes every document; send remove_all: true to mean it")
    gone = hub.write(writer.prune, body.keep)
    return {"removed": len(gone), "ids": gone}


@router.get("/v1/stats", dependencies=[read], summary="what the store holds", responses=declared(401, 503))
def stats(hub: CurrentHub) -> dict:
    with hub.reader() as idx:
        return idx.summary()
