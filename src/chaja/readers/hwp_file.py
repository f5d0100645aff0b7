"""An HWP 5 file opened: the compound file checked, its streams decrypted and inflated
into records, and what DocInfo and the summary information say about the document.

Format facts from Hancom's "한글 문서 파일 형식 5.0" (revision 1.3), by its section names:

* 파일 구조: an OLE2 compound file with the streams ``FileHeader``, ``DocInfo``,
  ``BodyText/Section0``… (``ViewText/Section0``… in a 배포용 document) and
  ``\\x05HwpSummaryInformation`` (an OLE property set; PIDSI_TITLE = 2).
* 파일 인식 정보 (FileHeader): the 32-byte signature ``HWP Document File``, a DWORD
  version ``0xMMnnPPrr`` and a DWORD of flags: bit 0 compressed, bit 1 password,
  bit 2 배포용, bit 4 DRM, bit 8 certificate encryption. A compressed stream is raw
  deflate (zlib ``wbits=-15``).
* An HWP 3 file (Hangul 97 and older) is no compound file; it opens with
  ``HWP Document File V3.00``.
* 문단 모양 (HWPTAG_PARA_SHAPE 25 in DocInfo, 표 43/44): attribute bits 23-24 are the
  paragraph head type (1 = 개요, an outline heading) and bits 25-27 its level (0-6).
* 배포용 문서 데이터 (HWPTAG_DISTRIBUTE_DOC_DATA 28): 256 bytes whose first four seed
  the MS Visual C ``rand()``; each ``rand() & 0xFF`` XORs the next ``(rand() & 0xF) + 1``
  bytes from byte 4 on, and the AES-128 key is the 16 bytes at ``4 + (seed & 0xF)``.
  The rest of the stream is AES-128-ECB ciphertext of the (compressed) records.
"""
from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field

from chaja.readers.base import ReadError
from chaja.readers.hwp_records import TAG_DISTRIBUTE_DOC_DATA, TAG_PARA_SHAPE, iter_records

#: the most bytes a file's streams may inflate to, all together: more is refused as a zip bomb
MAX_STREAM_BYTES = 200 * 1024 * 1024

SIGNATURE = b"HWP Document File"
F_COMPRESSED, F_PASSWORD, F_DISTRIBUTION, F_DRM, F_CERT_ENCRYPTED = 1, 2, 4, 16, 256


# -- a stream's bytes → records --------------------------------------------------


def inflate(data: bytes, where: str, limit: int | None = None) -> bytes:
    """Raw deflate → bytes, at most ``limit`` (:data:`MAX_STREAM_BYTES`) of them."""
    limit = MAX_STREAM_BYTES if limit is None else limit
    unzip = zlib.decompressobj(-15)
    try:
        out = unzip.decompress(data, limit + 1)
    except zlib.error as e:
        raise ReadError(f"is damaged: {where} does not decompress ({e})") from None
    if len(out) > limit:
        raise ReadError(f"expands {where} past {limit / 2**20:g} MB when decompressed (a zip bomb?); not read")
    if not unzip.eof:
        raise ReadError(f"is damaged: {where} ends before its compressed data does (truncated?)")
    return out


def _ms_rand(seed: int) -> Iterator[int]:
    """MS Visual C ``rand()`` after ``srand(seed)``."""
    while True:
        seed = (seed * 214013 + 2531011) & 0xFFFFFFFF
        yield (seed >> 16) & 0x7FFF


def distribution_key(doc_data: bytes) -> bytes:
    """The AES-128 key hidden in a HWPTAG_DISTRIBUTE_DOC_DATA record's 256 bytes."""
    if len(doc_data) < 256:
        raise ReadError("is damaged: its 배포용 (distribution) key record is short")
    seed = int.from_bytes(doc_data[:4], "little")
    rand = _ms_rand(seed)
    data = bytearray(doc_data[:256])
    key = left = 0
    for i in range(256):
        if left == 0:
            key, left = next(rand) & 0xFF, (next(rand) & 0xF) + 1
        if i >= 4:
            data[i] ^= key
        left -= 1
    at = 4 + (seed & 0xF)
    return bytes(data[at:at + 16])


def decrypt_view_text(raw: bytes, where: str) -> bytes:
    """A ViewText stream → its (still compressed) records: the key record, then AES-128-ECB."""
    first = next(iter_records(raw[:260], where), None) if len(raw) >= 260 else None
    if first is None or first.tag != TAG_DISTRIBUTE_DOC_DATA or len(first.data) != 256:
        raise ReadError(f"is damaged: {where} of this 배포용 (distribution) document has no key record")
    body = raw[260:]
    body = body[:len(body) - len(body) % 16]
    try:
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    except ImportError:
        from chaja.readers.base import MissingExtra
        raise MissingExtra("배포용 (distribution) HWP files", "documents", "cryptography") from None
    decryptor = Cipher(algorithms.AES(distribution_key(first.data)), modes.ECB()).decryptor()
    return decryptor.update(body) + decryptor.finalize()


class _Streams:
    """An open file's streams as records' bytes: ViewText decrypted, compressed streams
    inflated, all of them together within :data:`MAX_STREAM_BYTES`."""

    def __init__(self, ole, flags: int):
        self.ole = ole
        self.flags = flags
        self.budget = MAX_STREAM_BYTES

    def read(self, name: list[str]) -> bytes:
        where = "/".join(name)
        try:
            data = self.ole.openstream(name).read()
        except Exception as e:
            raise ReadError(f"is damaged: its {where} stream cannot be read ({e})") from None
        if name[0] == "ViewText":
            data = decrypt_view_text(data, where)
        if self.flags & F_COMPRESSED:
            data = inflate(data, where, self.budget)
            self.budget -= len(data)
        return data


# -- the compound file -----------------------------------------------------------


@dataclass
class HwpFile:
    """The parts of an open HWP 5 file that the reader uses."""

    version: str
    flags: int
    title: str
    outline_of_shape: dict[int, int]
    sections: list[bytes]          # each body section's decompressed records
    notes: list[str] = field(default_factory=list)     # what was damaged but read around


def _version(raw: int) -> str:
    return ".".join(str(raw >> s & 0xFF) for s in (24, 16, 8, 0))


def _section_number(name: list[str]) -> int:
    digits = name[-1][len("Section"):]
    return int(digits) if digits.isdigit() else 1 << 30


def open_hwp(path) -> HwpFile:
    """Open and check an HWP 5 file; raise :class:`ReadError` for what cannot be read."""
    import olefile  # noqa: F401  (a missing library is told before anything about the file)

    _refuse_older_hwp(path)
    ole = _open_compound_file(path)
    with ole:
        version, flags = _file_header(ole)
        streams = _Streams(ole, flags)
        names = _section_names(ole, flags)
        notes: list[str] = []
        outline = _doc_info_outline(streams, notes)
        sections = [streams.read(name) for name in names]
        title = _summary_title(ole)
    return HwpFile(version, flags, title, outline, sections, notes)


def _refuse_older_hwp(path) -> None:
    """Name an HWP 3 file (Hangul 97 and older) for what it is."""
    with open(path, "rb") as f:
        head = f.read(64)
    if head.startswith(b"HWP Document File V"):
        version = head[len(b"HWP Document File V"):].split(b" ")[0].decode("latin-1", "replace")
        raise ReadError(f"is an HWP {version} document (Hangul 97 or older), which chaja does not read; "
                        "save it as HWP 5 (.hwp) or HWPX in Hangul")


def _open_compound_file(path):
    """The file as an open ``olefile.OleFileIO``."""
    import olefile

    if not olefile.isOleFile(str(path)):
        raise ReadError("is not an HWP file: it is no OLE compound file")
    try:
        return olefile.OleFileIO(str(path))
    except Exception as e:             # olefile raises OSError and others on damaged files
        raise ReadError(f"is damaged: its compound file cannot be opened ({e})") from None


def _file_header(ole) -> tuple[str, int]:
    """The version and flags of FileHeader (파일 인식 정보), for an HWP 5 file that is
    neither password-protected nor DRM-protected."""
    try:
        header = ole.openstream("FileHeader").read() if ole.exists("FileHeader") else b""
    except Exception as e:
        raise ReadError(f"is damaged: its FileHeader cannot be read ({e})") from None
    if not header.startswith(SIGNATURE) or len(header) < 40:
        raise ReadError("is an OLE compound file but not an HWP document")
    raw_version, flags = struct.unpack_from("<II", header, 32)
    version = _version(raw_version)
    if raw_version >> 24 != 5:
        raise ReadError(f"is an HWP {version} document; chaja reads HWP 5.x")
    if flags & F_PASSWORD:
        raise ReadError("is protected with a password; save it without one to read it")
    if flags & (F_DRM | F_CERT_ENCRYPTED):
        raise ReadError("is DRM-protected or encrypted with a certificate; chaja cannot read it")
    return version, flags


def _section_names(ole, flags: int) -> list[list[str]]:
    """The body's section streams in order: ViewText's in a 배포용 document, else BodyText's."""
    body = "ViewText" if flags & F_DISTRIBUTION and ole.exists("ViewText") else "BodyText"
    names = sorted((e for e in ole.listdir() if len(e) == 2 and e[0] == body and e[1].startswith("Section")),
                   key=_section_number)
    if not names:
        raise ReadError(f"is damaged: it has no {body}/Section streams")
    return names


def _doc_info_outline(streams: _Streams, notes: list[str]) -> dict[int, int]:
    """DocInfo's outline paragraph shapes; a damaged DocInfo is noted and read around
    (the body can be read without the paragraph shapes), but not a zip bomb."""
    try:
        return outline_shapes(streams.read(["DocInfo"])) if streams.ole.exists("DocInfo") else {}
    except ReadError as e:
        if "zip bomb" in str(e):
            raise
        notes.append(f"{e}; its outline headings are not known")
        return {}


def outline_shapes(doc_info: bytes) -> dict[int, int]:
    """Paragraph shape id → outline level (1-7) for DocInfo's 개요 paragraph shapes."""
    out: dict[int, int] = {}
    shape = 0
    for rec in iter_records(doc_info, "DocInfo"):
        if rec.tag != TAG_PARA_SHAPE:
            continue
        if len(rec.data) >= 4:
            attr = int.from_bytes(rec.data[:4], "little")
            if (attr >> 23) & 0x3 == 1:
                out[shape] = ((attr >> 25) & 0x7) + 1
        shape += 1
    return out


def _summary_title(ole) -> str:
    """PIDSI_TITLE from the ``\\x05HwpSummaryInformation`` property set (a VT_LPWSTR), or ""."""
    name = "\x05HwpSummaryInformation"
    if not ole.exists(name):
        return ""
    try:
        data = ole.openstream(name).read(1 << 20)
        return property_string(data, 2)
    except (struct.error, ValueError, OSError):
        return ""


def property_string(data: bytes, pid: int) -> str:
    """One string property of an OLE property set stream (its first section)."""
    (count,) = struct.unpack_from("<I", data, 24)
    if count < 1:
        return ""
    (section,) = struct.unpack_from("<I", data, 44)
    (props,) = struct.unpack_from("<I", data, section + 4)
    for i in range(min(props, 4096)):
        prop_id, offset = struct.unpack_from("<II", data, section + 8 + 8 * i)
        if prop_id != pid:
            continue
        at = section + offset
        (vtype,) = struct.unpack_from("<H", data, at)
        (chars,) = struct.unpack_from("<I", data, at + 4)
        if vtype == 0x1F:                   # VT_LPWSTR: a count of UTF-16 units, NUL included
            raw = data[at + 8:at + 8 + 2 * chars]
            return raw.decode("utf-16-le", "ignore").split("\x00", 1)[0].strip()
        if vtype == 0x1E:                   # VT_LPSTR, in the file's code page (Korean: cp949)
            raw = data[at + 8:at + 8 + chars]
            return raw.split(b"\x00", 1)[0].decode("cp949", "ignore").strip()
        return ""
    return ""
