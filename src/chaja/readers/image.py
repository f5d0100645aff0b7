"""Images (.png, .jpg, .tif), read by OCR with the Tesseract command-line program; the
same OCR reads the PDF pages that have no text layer (:mod:`chaja.readers.pdf`).

Tesseract runs as a subprocess (``tesseract stdin out -l kor+eng txt tsv``, the
image piped in as PNG), so chaja needs no Python binding for it, only Debian's
``tesseract-ocr`` with its Korean and English data and Pillow (the ``ocr`` extra) to
decode images and encode PNG. Each frame of a multi-frame TIFF is a page:
``Location("page", n, n)``.
"""
from __future__ import annotations

import functools
import importlib.util
import io
import os
import re
import shutil
import subprocess
import tempfile
import unicodedata
from pathlib import Path

from chaja.documents import Document, Location
from chaja.readers.base import ReadContext, ReadError, located_section

#: what to install for OCR, said wherever OCR is missing
OCR_INSTALL = "install Debian's tesseract-ocr, tesseract-ocr-kor and pip install 'chaja[ocr]'"
LANGUAGES = "kor+eng"
#: seconds one image may take; a page at 300 dpi takes a few
OCR_TIMEOUT = 180
_BLANK_RUNS = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")


@functools.lru_cache(maxsize=1)
def ocr_problem() -> str:
    """Why OCR cannot run here ("" when it can): the ``tesseract`` program, its Korean
    and English data (``tesseract --list-langs``) and Pillow must all be present.
    Asked once per process: the answer does not change while it runs."""
    if importlib.util.find_spec("PIL") is None:
        return f"Pillow is not installed ({OCR_INSTALL})"
    program = shutil.which("tesseract")
    if program is None:
        return f"the tesseract program is not installed ({OCR_INSTALL})"
    try:
        done = subprocess.run([program, "--list-langs"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"tesseract --list-langs failed ({exc})"
    langs = {line.strip() for line in (done.stdout + "\n" + done.stderr).splitlines()}
    missing = [code for code in LANGUAGES.split("+") if code not in langs]
    if missing:
        return f"tesseract has no {' or '.join(missing)} language data ({OCR_INSTALL})"
    return ""


def _clean(text: str) -> str:
    """OCR output as chaja keeps text: NFC, no form feeds or control characters, no
    trailing blanks, at most one blank line in a row."""
    text = unicodedata.normalize("NFC", text.replace("\x0c", "\n"))
    text = "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch) not in ("Cc", "Cf", "Co", "Cs"))
    text = "\n".join(line.rstrip() for line in text.splitlines())
    return _BLANK_RUNS.sub("\n\n", text).strip()


def _for_ocr(image):
    """``image`` as Tesseract reads it: 8-bit grey or RGB, transparency flattened on
    white; with the resolution the file gives (or None)."""
    from PIL import Image

    dpi = image.info.get("dpi")
    dpi = float(dpi[0]) if isinstance(dpi, tuple) and dpi and dpi[0] else None
    if image.mode in ("I;16", "I;16B", "I;16L", "I", "F"):      # 16-bit and float scans
        image = image.convert("I").point(lambda v: v / 256).convert("L")
    elif image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        flat = Image.new("RGB", rgba.size, "white")
        flat.paste(rgba, mask=rgba.getchannel("A"))
        image = flat
    elif image.mode not in ("1", "L", "RGB"):
        image = image.convert("RGB")
    return image, dpi


def _tesseract(png: bytes, languages: str, dpi: float | None, psm: int, timeout: float) -> tuple[str, str]:
    """Tesseract's text and word table (TSV) for a PNG, in page segmentation mode ``psm``."""
    command = [shutil.which("tesseract") or "tesseract", "stdin", "out", "-l", languages, "--psm", str(psm)]
    if dpi and 70 <= dpi <= 2400:
        command += ["--dpi", str(round(dpi))]
    # one thread: Tesseract's OpenMP threads slow it down more often than not, and
    # chaja may be running other work beside it
    env = {**os.environ, "OMP_THREAD_LIMIT": os.environ.get("OMP_THREAD_LIMIT", "1")}
    with tempfile.TemporaryDirectory(prefix="chaja-ocr-") as folder:
        try:
            done = subprocess.run([*command, "txt", "tsv"], input=png, capture_output=True, timeout=timeout,
                                  env=env, cwd=folder)
        except subprocess.TimeoutExpired:
            raise ReadError(f"OCR took longer than {timeout:g} s and was stopped") from None
        except OSError as exc:
            raise ReadError(f"could not run tesseract ({exc})") from None
        if done.returncode != 0:
            last = (done.stderr.decode("utf-8", "replace").strip().splitlines() or ["no message"])[-1]
            raise ReadError(f"tesseract failed ({last})")
        out = Path(folder)
        return ((out / "out.txt").read_text("utf-8", "replace"),
                (out / "out.tsv").read_text("utf-8", "replace") if (out / "out.tsv").exists() else "")


def _unread_ink(image, tsv: str) -> bool:
    """Whether the image has lines of ink no word Tesseract read covers: text its page
    layout analysis took for something else (it does so with some Korean fonts)."""
    from PIL import Image, ImageDraw

    ink = image.convert("L").point(lambda v: 0 if v < 128 else 255)
    draw = ImageDraw.Draw(ink)
    for row in tsv.splitlines()[1:]:
        cells = row.split("\t")
        if len(cells) >= 12 and cells[0] == "5" and cells[11].strip():
            left, top, width, height = (int(c) for c in cells[6:10])
            draw.rectangle((left - 4, top - 4, left + width + 4, top + height + 4), fill=255)
    rows = ink.resize((1, ink.height), Image.BOX).tobytes()     # each row's mean brightness
    inked = sum(1 for v in rows if v < 0.99 * 255)
    return inked >= max(20, 0.01 * ink.height)


def _letters(text: str) -> int:
    return sum(1 for ch in text if ch.isalpha())


def ocr_image(image, languages: str = LANGUAGES, dpi: float | None = None,
              timeout: float = OCR_TIMEOUT) -> str:
    """The text Tesseract reads in a Pillow ``image`` (NFC, blank lines between its
    paragraphs). ``dpi`` tells it the resolution (a rendered PDF page's) instead of
    letting it guess. Tesseract first analyses the page's layout (columns, blocks:
    ``--psm 3``); where that leaves lines of ink unread, it reads the page again as
    one column (``--psm 4``) and that reading is kept if it finds clearly more.
    Raises :class:`ReadError` when OCR is unavailable, fails or runs past ``timeout``
    seconds."""
    problem = ocr_problem()
    if problem:
        raise ReadError(f"OCR is not available: {problem}")
    image, own_dpi = _for_ocr(image)
    dpi = dpi or own_dpi
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    png = buffer.getvalue()
    text, tsv = _tesseract(png, languages, dpi, 3, timeout)
    if _unread_ink(image, tsv):
        again, _ = _tesseract(png, languages, dpi, 4, timeout)
        if _letters(again) >= max(1.1 * _letters(text), _letters(text) + 5):
            text = again
    return _clean(text)


def _frames(image):
    """Each frame of ``image`` (one for most files, several in a multi-page TIFF), the
    first turned upright by its EXIF orientation (a phone photo)."""
    from PIL import ImageOps

    count = getattr(image, "n_frames", 1)
    for n in range(count):
        image.seek(n)
        frame = image.copy()
        yield n + 1, count, (ImageOps.exif_transpose(frame) if n == 0 else frame)


def read(ctx: ReadContext):
    """One document of the text OCR reads in the image, a section marked page by page
    (a TIFF's frames); no sections and a note when OCR finds no text."""
    if ctx.ocr == "never":
        raise ReadError("is an image: its text can only be read by OCR, which is turned off")
    problem = ocr_problem()
    if problem:
        raise ReadError(f"is an image, and reading its text needs OCR: {problem}")
    from PIL import Image

    pieces: list[tuple[Location, str]] = []
    try:
        with Image.open(ctx.path) as image:
            for n, count, frame in _frames(image):
                pieces.append((Location("page", n, n), ocr_image(frame)))
                ctx.tell(n, count)
    except Image.DecompressionBombError as exc:
        raise ReadError(f"is too large an image to read ({exc})") from None
    except (OSError, SyntaxError, ValueError) as exc:      # Pillow's errors for broken files
        raise ReadError(f"is not an image Pillow can read ({exc})") from None
    section = located_section((), pieces)
    if section is None:
        ctx.notes.append("OCR found no text in the image")
    yield Document(ctx.doc_id, ctx.path.stem, [section] if section else [], path=str(ctx.path))
