"""API keys: bearer tokens from ``hub.api_keys`` / ``hub.write_keys`` and the
environment (``CHAJA_API_KEYS``, ``CHAJA_WRITE_KEYS``, comma-separated).

- no keys anywhere: every route is open (the hub warns when it listens beyond loopback);
- read keys set: every route but ``/healthz`` and ``/readyz`` needs one of them (or a write key);
- write keys set: write routes need one of those; a read key there gets 403.

Keys are compared in constant time (:func:`hmac.compare_digest`).
"""
from __future__ import annotations

import hmac
import os
from collections.abc import Mapping

from chaja.config import HubConfig


def _split(text: str | None) -> list[str]:
    return [k.strip() for k in (text or "").split(",") if k.strip()]


def _holds(keys: list[str], token: str) -> bool:
    found = False
    for key in keys:   # no early exit: the time does not tell which key matched
        found |= hmac.compare_digest(key.encode("utf-8"), token.encode("utf-8"))
    return found


class Keys:
    def __init__(self, read: list[str], write: list[str]):
        self.read, self.write = list(read), list(write)

    @classmethod
    def from_config(cls, cfg: HubConfig, env: Mapping[str, str] = os.environ) -> "Keys":
        return cls(cfg.api_keys + _split(env.get("CHAJA_API_KEYS")),
                   cfg.write_keys + _split(env.get("CHAJA_WRITE_KEYS")))

    @property
    def enabled(self) -> bool:
        return bool(self.read or self.write)

    def check(self, authorization: str | None, *, write: bool) -> int:
        """200 when the ``Authorization`` header may use the route, else 401 (no or an
        unknown key) or 403 (a read key on a write route)."""
        needed = self.write if write and self.write else None
        if needed is None and not self.read:
            return 200           # this kind of route is open
        scheme, _, token = (authorization or "").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            return 401
        if needed is not None:
            if _holds(needed, token):
                return 200
            return 403 if _holds(self.read, token) else 401
        return 200 if _holds(self.read + self.write, token) else 401
