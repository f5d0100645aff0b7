"""Bytes of a text file → text, with the encoding it was written in.

Tried in order: a byte-order mark (UTF-8, UTF-16, UTF-32); strict UTF-8; UTF-16
without a mark when every other byte of ASCII-range text is NUL; strict CP949 (the
Korean Windows code page, a superset of EUC-KR) when the result is mostly Hangul;
then charset-normalizer's best guess. UTF-8 with a few broken bytes stays UTF-8 with
the bytes replaced (U+FFFD) rather than being read as another code page.
"""
from __future__ import annotations

from dataclasses import dataclass

from chaja.language import hangul_share

_BOMS = ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"),
         (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))
#: replaced characters (a count, or a share of the text) up to which text with broken
#: UTF-8 is still read as UTF-8 rather than as whatever code page a detector guesses
BROKEN_UTF8_CHARS = 16
BROKEN_UTF8_SHARE = 0.02


@dataclass(frozen=True)
class Decoded:
    text: str
    encoding: str            # the Python codec name used ("utf-8", "cp949", ...)
    note: str | None = None  # a sentence for the report when bytes were replaced


def _utf16_without_bom(data: bytes) -> str | None:
    head = data[:4096]
    if len(head) < 4 or len(head) % 2:
        return None
    if head[1::2].count(0) > 0.9 * (len(head) // 2):
        return "utf-16-le"
    if head[0::2].count(0) > 0.9 * (len(head) // 2):
        return "utf-16-be"
    return None


def decode(data: bytes) -> Decoded:
    """The text of ``data`` and the encoding it was read as (see the module's docstring)."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            try:
                return Decoded(data.decode(codec), codec.removesuffix("-sig"))
            except UnicodeDecodeError as exc:
                return Decoded(data.decode(codec, errors="replace"), codec,
                               f"invalid {codec.upper().removesuffix('-SIG')} at byte {exc.start}; bad bytes replaced")
    codec = _utf16_without_bom(data)       # ASCII-range UTF-16 is valid UTF-8 too: asked first
    if codec is not None:
        try:
            return Decoded(data.decode(codec), codec)
        except UnicodeDecodeError:
            pass
    try:
        return Decoded(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError as exc:
        first_bad = exc.start
    try:
        text = data.decode("cp949")
        if hangul_share(text) >= 0.2:
            return Decoded(text, "cp949")
    except UnicodeDecodeError:
        pass
    lenient = data.decode("utf-8", errors="replace")
    broken = lenient.count("\ufffd")
    if broken <= max(BROKEN_UTF8_CHARS, BROKEN_UTF8_SHARE * len(lenient)):
        return Decoded(lenient, "utf-8", f"invalid UTF-8 at byte {first_bad}; bad bytes replaced")
    guess = _charset_normalizer(data)
    if guess is not None:
        return guess
    return Decoded(lenient, "utf-8", f"invalid UTF-8 at byte {first_bad}; bad bytes replaced")


def _charset_normalizer(data: bytes) -> Decoded | None:
    try:
        from charset_normalizer import from_bytes
    except ImportError:       # a core dependency; absent only in a broken install
        return None
    best = from_bytes(data[:1 << 20]).best()
    if best is None:
        return None
    try:
        text = data.decode(best.encoding)
    except (UnicodeDecodeError, LookupError):
        return None
    return Decoded(text, best.encoding)
