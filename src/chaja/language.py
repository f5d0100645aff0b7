"""Language of a text from its script: the share of Hangul among letters.

lang(text) = "ko" if hangul / (hangul + latin) >= threshold else "en".
"""
from __future__ import annotations

HANGUL_THRESHOLD = 0.2


def is_hangul_syllable(ch: str) -> bool:
    return "\uac00" <= ch <= "\ud7a3"


def is_hangul(ch: str) -> bool:
    """Hangul syllables or jamo (compatibility and conjoining)."""
    o = ord(ch)
    return 0xAC00 <= o <= 0xD7A3 or 0x1100 <= o <= 0x11FF or 0x3130 <= o <= 0x318F


def hangul_share(text: str) -> float:
    hangul = latin = 0
    for ch in text:
        if is_hangul(ch):
            hangul += 1
        elif ch.isascii() and ch.isalpha():
            latin += 1
    total = hangul + latin
    return hangul / total if total else 0.0


def detect_language(text: str, threshold: float = HANGUL_THRESHOLD) -> str:
    """``"ko"`` when Hangul makes up at least ``threshold`` of the letters, else ``"en"``."""
    return "ko" if hangul_share(text) >= threshold else "en"
