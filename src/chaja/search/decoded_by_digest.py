"""Values decoded from large texts of a store's meta, kept by a digest of the text.

A searcher decodes the translation lexicon (35 MB of text at 100,000 chunks) and the
background statistics (4.4 MB) once, and every searcher over the same store shares what
was decoded. Keyed by the text itself, a cache keeps each text alive beside what it
decoded to; keyed by a 16-byte BLAKE2b digest of it, only the decoded value stays.
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class DecodedByDigest(Generic[T]):
    """The values of the last ``keep`` texts decoded, the oldest dropped first."""

    def __init__(self, keep: int):
        self.keep = keep
        self._values: dict[bytes, T] = {}

    def get(self, text: str | bytes, decode: Callable[[str | bytes], T], salt: str = "") -> T:
        """``decode(text)``, computed once while the text (or bytes) is among the last ``keep``;
        ``salt`` names what else the value depends on (values of one text under two salts are two)."""
        raw = text.encode("utf-8") if isinstance(text, str) else text
        key = hashlib.blake2b(raw, digest_size=16, person=_person(salt)).digest()
        if key not in self._values:
            if len(self._values) >= self.keep:
                self._values.pop(next(iter(self._values)))
            self._values[key] = decode(text)
        return self._values[key]

    def clear(self) -> None:
        self._values.clear()


def _person(salt: str) -> bytes:
    """BLAKE2b's personalisation string (16 bytes at most) from any salt."""
    return hashlib.blake2b(salt.encode("utf-8"), digest_size=16).digest() if salt else b""
