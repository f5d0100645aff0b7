"""The image reader and the OCR it shares with the PDF reader: Tesseract run as a
program on images the tests draw with Pillow in Korean and English (NanumGothic),
PNG, JPEG turned by its EXIF tag, transparent PNG and multi-page TIFF; and what it
says when OCR is off or not installed."""
from __future__ import annotations

from pathlib import Path

import pytest

from chaja.documents import Location
from chaja.readers import image as image_reader
from chaja.readers.base import ReadContext, ReadError
from chaja.readers.registry import format_of
from tests.readers.shared_files import NANUM, needs_ocr, words

PIL = pytest.importorskip("PIL", reason="the image reader needs Pillow (the 'ocr' extra)")
from PIL import Image, ImageDraw, ImageFont  # noqa: E402

KOREAN = "전기요금 단가는 킬로와트시당 120원이다."
ENGLISH = "The meter is read on the first day of each month."

@pytest.fixture(scope="module")
def font():
    if not NANUM.is_file():
        pytest.skip(f"{NANUM} is absent: install Debian's fonts-nanum (apt-get install -y fonts-nanum)")
    return ImageFont.truetype(str(NANUM), 44)


def drawn(font, lines: list[str], mode: str = "L", background=255) -> Image.Image:
    """A page-like picture of ``lines``, dark on ``background``."""
    picture = Image.new(mode, (1800, 120 + 90 * len(lines)), background)
    draw = ImageDraw.Draw(picture)
    for i, line in enumerate(lines):
        draw.text((70, 60 + 90 * i), line, font=font, fill=0 if mode == "L" else (0, 0, 0, 255))
    return picture


def read(path: Path, **kw):
    ctx = ReadContext(path, path.stem, **kw)
    docs = list(image_reader.read(ctx))
    assert len(docs) == 1
    return docs[0], ctx


def korean_read(text: str) -> int:
    return len({"전기요금", "단가는", "킬로와트시당", "120원이다"} & words(text))


def english_read(text: str) -> int:
    return len({"meter", "read", "first", "day", "each", "month"} & words(text))


@needs_ocr
def test_png_in_korean_and_english(tmp_path, font):
    path = tmp_path / "요금 안내.png"
    drawn(font, [KOREAN, "요금은 매달 말일에 청구된다.", ENGLISH]).save(path)
    assert format_of(path).name == "image"
    doc, ctx = read(path)
    assert ctx.notes == []
    assert doc.title == "요금 안내" and doc.id == "요금 안내" and doc.path == str(path)
    [section] = doc.sections
    assert section.heading_path == () and section.marks == ((0, Location("page", 1, 1)),)
    assert korean_read(section.text) >= 2, section.text
    assert english_read(section.text) >= 5, section.text
    assert len({"요금은", "매달", "말일에", "청구된다"} & words(section.text)) >= 3, section.text


@needs_ocr
def test_ocr_image_returns_clean_text(font):
    text = image_reader.ocr_image(drawn(font, [KOREAN, ENGLISH]))
    assert korean_read(text) >= 2 and english_read(text) >= 5, text
    assert "\x0c" not in text and text == text.strip()


@needs_ocr
def test_jpeg_turned_by_its_exif_tag_is_read_upright(tmp_path, font):
    upright = drawn(font, [KOREAN, ENGLISH]).convert("RGB")
    exif = Image.Exif()
    exif[0x0112] = 6                       # "rotate 90° clockwise to view"
    path = tmp_path / "photo.jpg"
    upright.rotate(90, expand=True).save(path, quality=95, exif=exif)
    doc, _ = read(path)
    assert english_read(doc.text) >= 5, doc.text


@needs_ocr
def test_transparent_png_is_flattened_on_white(tmp_path, font):
    path = tmp_path / "clear.png"
    drawn(font, [ENGLISH, KOREAN], mode="RGBA", background=(0, 0, 0, 0)).save(path)
    doc, _ = read(path)
    assert english_read(doc.text) >= 5 and korean_read(doc.text) >= 2, doc.text


@needs_ocr
def test_multipage_tiff_marks_each_frame_as_a_page(tmp_path, font):
    path = tmp_path / "scan.tif"
    first = drawn(font, [KOREAN])
    second = drawn(font, [ENGLISH])
    first.save(path, save_all=True, append_images=[second], compression="tiff_lzw")
    told = []
    doc, _ = read(path, progress=lambda done, total: told.append((done, total)))
    assert told == [(1, 2), (2, 2)]
    [section] = doc.sections
    assert [loc for _, loc in section.marks] == [Location("page", 1, 1), Location("page", 2, 2)]
    second_at = section.marks[1][0]
    assert korean_read(section.text[:second_at]) >= 2 and english_read(section.text[:second_at]) == 0
    assert english_read(section.text[second_at:]) >= 5


@needs_ocr
def test_blank_image_gives_a_note_and_no_text(tmp_path):
    path = tmp_path / "blank.png"
    Image.new("L", (800, 600), 255).save(path)
    doc, ctx = read(path)
    assert doc.sections == [] and ctx.notes == ["OCR found no text in the image"]


def test_ocr_turned_off_refuses_images(tmp_path):
    path = tmp_path / "a.png"
    Image.new("L", (10, 10), 255).save(path)
    with pytest.raises(ReadError, match="can only be read by OCR, which is turned off"):
        read(path, ocr="never")


@needs_ocr                           # without OCR every image is refused before it is opened
def test_broken_image_is_refused(tmp_path):
    path = tmp_path / "broken.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00not really a picture" * 10)
    with pytest.raises(ReadError, match="is not an image Pillow can read"):
        read(path)


def test_without_tesseract_says_what_to_install(tmp_path, no_tesseract):
    assert image_reader.ocr_problem()
    path = tmp_path / "a.png"
    Image.new("L", (10, 10), 255).save(path)
    with pytest.raises(ReadError) as caught:
        read(path)
    message = str(caught.value)
    for needed in ("tesseract-ocr", "tesseract-ocr-kor", "pip install 'chaja[ocr]'"):
        assert needed in message
    with pytest.raises(ReadError, match="OCR is not available"):
        image_reader.ocr_image(Image.new("L", (10, 10), 255))
