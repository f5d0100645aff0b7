"""What routes are given as FastAPI dependencies: the running hub, and the caller's
API key checked (:data:`read`, :data:`write`, :data:`docs_key`) or weighed (:data:`CanRead`,
:data:`CanWrite`).

:func:`~chaja.hub.app.create_app` puts the :class:`~chaja.hub.state.Hub` and its
:class:`~chaja.hub.auth.Keys` in ``app.state``; a route asks for them here:

    @router.get("/v1/things", dependencies=[read])
    def things(hub: CurrentHub, writer: CanWrite) -> dict: ...
"""
from __future__ import annotations

from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from chaja.hub.auth import Keys
from chaja.hub.state import Hub

#: the OpenAPI document's security scheme (the key itself is checked by :class:`Keys`)
bearer = HTTPBearer(auto_error=False, description="an API key from hub.api_keys or hub.write_keys")


async def current_hub(request: Request) -> Hub:
    """The hub this application serves."""
    return request.app.state.hub


def _keys(request: Request) -> Keys:
    return request.app.state.keys


def _may(request: Request, write: bool) -> bool:
    """Whether the caller's key (or a hub without keys) may read, or write."""
    return _keys(request).check(request.headers.get("authorization"), write=write) == 200


def _require(request: Request, write: bool) -> None:
    status = _keys(request).check(request.headers.get("authorization"), write=write)
    if status == 401:
        raise HTTPException(401, "a valid API key is needed: Authorization: Bearer <key>",
                            headers={"WWW-Authenticate": "Bearer"})
    if status == 403:
        raise HTTPException(403, "this key may read but not write")


async def _read_key(request: Request, credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> None:
    _require(request, write=False)


async def _write_key(request: Request, credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> None:
    _require(request, write=True)


async def _docs_key(request: Request) -> None:
    """The OpenAPI document and its page: open with ``hub.public_docs`` or on a hub without
    keys, else a read key's."""
    if not request.app.state.hub.config.hub.public_docs:
        _require(request, write=False)          # which a hub without keys lets anyone pass


async def _can_read(request: Request) -> bool:
    return _may(request, False)


async def _can_write(request: Request) -> bool:
    return _may(request, True)


#: a route's ``dependencies``: a key that may read (any key, where keys are set), one that may write
read, write = Depends(_read_key), Depends(_write_key)
#: the documentation routes' key, where one is needed
docs_key = Depends(_docs_key)
#: a route's parameters: the running hub, and whether the caller may read or write
CurrentHub = Annotated[Hub, Depends(current_hub)]
CanRead = Annotated[bool, Depends(_can_read)]
CanWrite = Annotated[bool, Depends(_can_write)]
