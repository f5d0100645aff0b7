"""Bytes of a text file → the encoding it was written in, and its text.

:func:`detect` tries, in order: a byte-order mark (UTF-8, UTF-16, UTF-32); UTF-16
without a mark when every other byte of ASCII-range text is NUL; strict UTF-8;
strict CP949 (the Korean Windows code page, a superset of EUC-KR) when the result is
mostly Hangul; UTF-8 again when only a few bytes are broken beside good UTF-8 (they are
replaced, U+FFFD, rather than the text read as another code page); then
charset-normalizer's best guess.
The text reader decodes a whole file with it (:func:`decode`); the CSV reader judges
the first megabyte and streams the rest.
"""
from __future__ import annotations

import codecs
from dataclasses import dataclass

from chaja.language import hangul_share

_BOMS = ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"),
         (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))
#: replaced characters (a count, or a share of the text) up to which text with broken
#: UTF-8 is still read as UTF-8 rather than as whatever code page a detector guesses
BROKEN_UTF8_CHARS = 16
BROKEN_UTF8_SHARE = 0.02
#: codecs that are UTF-8 (the loader reports every other one)
UTF8 = ("utf-8", "utf-8-sig", "ascii")


@dataclass(frozen=True)
class Decoded:
    text: str
    encoding: str            # the Python codec name used ("utf-8", "cp949", ...)
    note: str | None = None  # a sentence for the report when bytes were replaced


def has_bom(head: bytes) -> bool:
    return any(head.startswith(bom) for bom, _ in _BOMS)


def utf16_without_bom(head: bytes) -> str | None:
    """``utf-16-le`` or ``utf-16-be`` when every other byte of the first 4 KB is NUL
    (ASCII-range UTF-16 written without a byte-order mark), else None."""
    head = head[:4096]
    head = head[: len(head) // 2 * 2]
    if len(head) < 4:
        return None
    if head[1::2].count(0) > 0.9 * (len(head) // 2):
        return "utf-16-le"
    if head[0::2].count(0) > 0.9 * (len(head) // 2):
        return "utf-16-be"
    return None


def _decodes(head: bytes, codec: str, whole: bool) -> bool:
    """Whether ``head`` is valid ``codec`` (a character cut at its end is allowed unless
    ``head`` is the whole file)."""
    try:
        codecs.getincrementaldecoder(codec)("strict").decode(head, final=whole)
        return True
    except UnicodeDecodeError:
        return False


def detect(head: bytes, whole: bool = True) -> str:
    """The codec to read a file in that begins with ``head`` (the whole file when
    ``whole``), by the rules in the module's docstring."""
    for bom, codec in _BOMS:
        if head.startswith(bom):
            return codec
    codec = utf16_without_bom(head)             # ASCII-range UTF-16 is valid UTF-8 too: asked first
    if codec is not None and _decodes(head, codec, whole):
        return codec
    if _decodes(head, "utf-8", whole):
        return "utf-8"
    if _decodes(head, "cp949", whole) and hangul_share(head.decode("cp949", errors="ignore")) >= 0.2:
        return "cp949"
    lenient = head.decode("utf-8", errors="replace")
    broken = lenient.count("\ufffd")
    multibyte = any(ord(ch) > 0x7F and ch != "\ufffd" for ch in lenient)
    # UTF-8 with a few bad bytes (it holds good UTF-8 beside them, or too little else to
    # judge by), not a single-byte code page whose every letter past ASCII is "broken"
    if broken <= max(BROKEN_UTF8_CHARS, BROKEN_UTF8_SHARE * len(lenient)) and (multibyte or broken < 4):
        return "utf-8"
    try:
        from charset_normalizer import from_bytes
    except ImportError:       # a core dependency; absent only in a broken install
        return "utf-8"
    best = from_bytes(head[: 1 << 20]).best()
    if best is None:
        return "utf-8"
    try:
        return codecs.lookup(best.encoding).name
    except LookupError:
        return "utf-8"


def decode(data: bytes) -> Decoded:
    """The text of ``data`` and the codec it was read in (:func:`detect`); bytes that
    codec cannot read are replaced, with a note naming the first."""
    codec = detect(data)
    try:
        return Decoded(data.decode(codec), codec)
    except UnicodeDecodeError as exc:
        name = codec.upper().removesuffix("-SIG")
        return Decoded(data.decode(codec, errors="replace"), codec,
                       f"invalid {name} at byte {exc.start}; bad bytes replaced")
