"""Which reader reads a file: its content first (the first bytes, and for a zip the
names inside), its extension second, so a PDF named ``.md`` is read as a PDF and
an executable named ``.txt`` is refused by name.

Each format names the module that reads it and the extra that installs the
module's library; the module is imported only when a file of its format is read.
"""
from __future__ import annotations

import importlib
import importlib.util
import zipfile
from dataclasses import dataclass
from pathlib import Path

from chaja.readers.base import MissingExtra, ReadError
from chaja.readers.encoding import has_bom, utf16_without_bom


@dataclass(frozen=True)
class Format:
    name: str                       # "pdf"
    extensions: tuple[str, ...]     # (".pdf",)
    module: str                     # the module whose ``read(ctx)`` reads it
    extra: str = ""                 # the pip extra that installs its library ("" = none needed)
    libraries: tuple[str, ...] = () # the modules that extra brings, checked before reading

    def reader(self):
        """The format's ``read`` function; :class:`MissingExtra` when its library is absent."""
        for lib in self.libraries:
            if importlib.util.find_spec(lib) is None:
                raise MissingExtra(f"{self.name.upper()} files", self.extra, lib)
        return importlib.import_module(self.module).read


FORMATS = {f.name: f for f in (
    Format("markdown", (".md", ".mdx", ".markdown"), "chaja.readers.markdown"),
    Format("text", (".txt", ".text"), "chaja.readers.text"),
    Format("html", (".html", ".htm"), "chaja.readers.html"),
    Format("jsonl", (".jsonl", ".ndjson"), "chaja.readers.jsonl"),
    Format("csv", (".csv", ".tsv"), "chaja.readers.sheets_csv"),
    Format("pdf", (".pdf",), "chaja.readers.pdf", "documents", ("pypdfium2",)),
    Format("image", (".png", ".jpg", ".jpeg", ".tif", ".tiff"), "chaja.readers.image", "ocr", ("PIL",)),
    Format("docx", (".docx",), "chaja.readers.docx", "documents", ("docx",)),
    Format("pptx", (".pptx",), "chaja.readers.pptx", "documents", ("pptx",)),
    Format("xlsx", (".xlsx", ".xlsm"), "chaja.readers.sheets_xlsx", "documents", ("openpyxl",)),
    Format("hwpx", (".hwpx",), "chaja.readers.hwpx"),
    Format("hwp", (".hwp",), "chaja.readers.hwp", "documents", ("olefile",)),
)}
BY_EXTENSION = {ext: f for f in FORMATS.values() for ext in f.extensions}

#: first bytes of files that are not documents, and what to call them
_NOT_DOCUMENTS = (
    (b"\x7fELF", "an executable (ELF)"), (b"MZ", "a Windows executable"),
    (b"\xcf\xfa\xed\xfe", "an executable (Mach-O)"), (b"\xfe\xed\xfa\xcf", "an executable (Mach-O)"),
    (b"\xca\xfe\xba\xbe", "an executable or Java class"), (b"\x00asm", "a WebAssembly module"),
    (b"\x1f\x8b", "a gzip archive"), (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"), (b"Rar!", "a RAR archive"),
    (b"BZh", "a bzip2 archive"), (b"\xfd7zXZ\x00", "an xz archive"), (b"SQLite format 3\x00", "an SQLite database"),
    (b"GIF8", "a GIF image"), (b"OggS", "an Ogg audio file"), (b"ID3", "an MP3 audio file"),
    (b"fLaC", "a FLAC audio file"), (b"\x1aE\xdf\xa3", "a Matroska/WebM video"),
)
_IMAGES = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"II*\x00", b"MM\x00*")     # PNG, JPEG, TIFF
_OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_LEGACY_OFFICE = {".doc": "a Word 97-2003 file (.doc): save it as .docx",
                  ".xls": "an Excel 97-2003 file (.xls): save it as .xlsx",
                  ".ppt": "a PowerPoint 97-2003 file (.ppt): save it as .pptx"}
_ZIP_MEMBERS = (("word/document.xml", "docx"), ("ppt/presentation.xml", "pptx"), ("xl/workbook.xml", "xlsx"),
                ("Contents/section0.xml", "hwpx"))
_TEXTUAL = {"markdown", "text", "html", "jsonl", "csv"}


def _zip_format(path: Path) -> str | None:
    try:
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
            if "mimetype" in names and z.read("mimetype")[:64].strip() == b"application/hwp+zip":
                return "hwpx"
    except (zipfile.BadZipFile, OSError, KeyError):
        return None
    return next((fmt for member, fmt in _ZIP_MEMBERS if member in names), None)


def _binary(head: bytes) -> bool:
    """Control bytes that text does not hold (NUL, or others below the tab) in the first 512."""
    return any(b < 9 or 13 < b < 27 or 27 < b < 32 for b in head[:512])


def sniff(path: Path, head: bytes) -> Format | None:
    """The format a file's content shows, or None where it shows none (plain text, or
    something unknown). Raises :class:`ReadError` for content that is no document."""
    if head.startswith(_OLE):
        suffix = path.suffix.lower()
        if suffix in _LEGACY_OFFICE:
            raise ReadError(f"looks like {_LEGACY_OFFICE[suffix]}, which chaja does not read")
        if suffix in (".docx", ".xlsx", ".xlsm", ".pptx"):    # Office keeps an encrypted file in a compound file
            raise ReadError("is encrypted with a password (an Office file saved with one); save a copy without it")
        return FORMATS["hwp"]          # the HWP reader checks the compound file's signature
    if head.startswith(b"PK\x03\x04"):
        fmt = _zip_format(path)
        if fmt is None:
            raise ReadError("looks like a zip archive that is no Office or HWPX document; unpack it first")
        return FORMATS[fmt]
    if head.startswith(b"HWP Document File V"):     # HWP 3.x: the HWP reader names the version
        return FORMATS["hwp"]
    if b"%PDF-" in head[:1024]:
        return FORMATS["pdf"]
    if head.startswith(_IMAGES):
        return FORMATS["image"]
    for magic, what in _NOT_DOCUMENTS:
        if head.startswith(magic) and _binary(head):
            raise ReadError(f"looks like {what}, not a document")
    return None


def _an(name: str) -> str:
    return ("an " if name[0] in "aeiou" else "a ") + name.upper()


def format_of(path: Path) -> Format | None:
    """The format to read ``path`` as: what its content shows, else its extension's
    (a textual one), else None (a type chaja does not read). A file whose content is
    no document raises :class:`ReadError` naming what it looks like."""
    with open(path, "rb") as f:
        head = f.read(2048)
    fmt = sniff(path, head)
    if fmt is not None:
        return fmt
    by_ext = BY_EXTENSION.get(path.suffix.lower())
    if by_ext is None:
        return None
    if by_ext.name not in _TEXTUAL:
        raise ReadError(f"is named {path.suffix} but is not {_an(by_ext.name)} file "
                        "(its first bytes match no known format)")
    if _binary(head) and not (has_bom(head) or utf16_without_bom(head)):
        raise ReadError("looks like binary data (it holds control bytes that text does not), not text")
    return by_ext
