"""What the reader tests share: the real office documents in ../shared/data/documents,
read from there (never copied into the repository; a test that needs one skips with a
message where it is absent), and checks of a read document."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from chaja.documents import Location, locate

DOCUMENTS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "documents"
#: the Korean font the tests draw PDFs and pictures with (Debian's fonts-nanum)
NANUM = Path("/usr/share/fonts/truetype/nanum/NanumGothic.ttf")


def needs_ocr(test):
    """Skip ``test`` where Tesseract with Korean and English (or Pillow) is missing, saying what to install."""
    from chaja.readers.image import ocr_problem

    return pytest.mark.skipif(bool(ocr_problem()), reason="OCR needs Tesseract with Korean: apt-get install -y "
                              "tesseract-ocr tesseract-ocr-kor tesseract-ocr-eng, and Pillow")(test)


def words(text: str) -> set[str]:
    """The words of ``text``, lowercased (what an OCR test counts)."""
    return set(re.findall(r"\w+", text.lower()))


def shared_file(name: str) -> Path:
    path = DOCUMENTS / name
    if not path.is_file():
        pytest.skip(f"{path} is absent (the shared data sets are not beside this checkout)")
    return path


def read_error(reader, path: Path) -> str:
    """The :class:`ReadError` message ``reader`` (a reader module) refuses ``path`` with,
    checked to be a sentence without the path."""
    from chaja.readers.base import ReadContext, ReadError

    with pytest.raises(ReadError) as caught:
        list(reader.read(ReadContext(path, "x")))
    message = str(caught.value)
    assert message[0].islower() and len(message.split()) >= 4, f"not a sentence: {message!r}"
    return message


def where(doc, phrase: str) -> tuple[tuple[str, ...], Location]:
    """The heading path and location of the one place ``phrase`` occurs in ``doc``."""
    found = [(s, s.text.index(phrase)) for s in doc.sections if phrase in s.text]
    assert found, f"{phrase!r} not in the document"
    assert len(found) == 1 and found[0][0].text.count(phrase) == 1, f"{phrase!r} occurs more than once"
    section, at = found[0]
    return section.heading_path, locate(section.marks, at, at + len(phrase))


def assert_clean(doc) -> None:
    """No control, replacement or private-use characters, and paragraph numbers that run
    in reading order, each once."""
    text = doc.text + "".join(h for s in doc.sections for h in s.heading_path) + doc.title
    bad = {c for c in text if (c < " " and c not in "\n\t") or c == "\ufffd" or "\ue000" <= c <= "\uf8ff"}
    assert not bad, f"control, replacement or private-use characters: {sorted(map(hex, map(ord, bad)))}"
    numbers = [loc.first for s in doc.sections for _, loc in s.marks]
    assert numbers == sorted(set(numbers)), "paragraph numbers run in reading order, each once"
