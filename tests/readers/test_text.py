"""Plain text: the title line, headings of the text's own making, paragraph marks."""
from __future__ import annotations

from chaja.chunking import chunk_document
from chaja.documents import Location
from chaja.loaders import load_paths

MANUAL = """Espresso machine manual

How to descale your machine

Fill the tank with one litre of water and the descaling solution.

Run the descaling programme; it takes about twenty minutes.

Cleaning the milk frother

Wipe the steam wand after every use.
"""

NOTICE = """전기요금 조정 안내

1. 목적
이 안내는 2025년 전기요금 조정 내용을 알리기 위한 것이다.

2. 조정 내용

가. 주택용 요금
주택용 전기요금 단가는 킬로와트시당 120원이다.

나. 일반용 요금
일반용 요금은 동결한다.

제3조(시행일)
이 요금은 2025년 1월 1일부터 적용한다.
"""


def test_a_title_line_stays_with_the_paragraphs_it_names(tmp_path):
    (tmp_path / "manual.txt").write_text(MANUAL, encoding="utf-8")
    doc = next(load_paths([tmp_path / "manual.txt"]))
    assert doc.title == "Espresso machine manual"
    chunks = chunk_document(doc)
    descale = [c for c in chunks if c.heading_path == ("How to descale your machine",)]
    assert len(descale) == 1                    # the heading and both its paragraphs: one chunk
    assert "Fill the tank" in descale[0].text and "twenty minutes" in descale[0].text
    assert "descale" in descale[0].passage_text().split("\n")[0]
    assert all(len(c.text) > 30 for c in chunks)
    assert descale[0].location == Location("paragraph", 2, 3)


def test_korean_numbered_headings_become_a_heading_path(tmp_path):
    (tmp_path / "notice.txt").write_text(NOTICE, encoding="utf-8")
    doc = next(load_paths([tmp_path / "notice.txt"]))
    paths = {s.heading_path: s.text for s in doc.sections}
    assert paths[("1. 목적",)].startswith("이 안내는 2025년")
    assert paths[("2. 조정 내용", "가. 주택용 요금")] == "주택용 전기요금 단가는 킬로와트시당 120원이다."
    assert paths[("2. 조정 내용", "나. 일반용 요금")] == "일반용 요금은 동결한다."
    assert paths[("제3조(시행일)",)] == "이 요금은 2025년 1월 1일부터 적용한다."


def test_a_korean_paragraph_on_an_english_page_is_korean(tmp_path):
    english = ("The air purifier runs quietly at night and the filter lasts about a year "
               "in an ordinary flat. Replace it when the red light comes on. ") * 20
    korean = ("필터 교체 표시등이 빨간색으로 켜지면 필터를 새것으로 바꾸어 주세요. "
              "필터는 일반 가정에서 약 1년 동안 사용할 수 있습니다. ") * 8
    (tmp_path / "purifier.md").write_text(f"# Air purifier\n\n## Filters\n\n{english}\n\n## 한국어 안내\n\n{korean}\n",
                                          encoding="utf-8")
    doc = next(load_paths([tmp_path / "purifier.md"]))
    assert doc.lang == "en"
    langs = {c.heading_path[-1]: c.lang for c in chunk_document(doc)}
    assert langs == {"Filters": "en", "한국어 안내": "ko"}


def test_a_language_given_is_kept_for_every_chunk(tmp_path):
    korean = "필터 교체 표시등이 켜지면 필터를 새것으로 바꾸어 주세요. " * 8
    (tmp_path / "p.md").write_text(f"---\nlang: en\n---\n# Purifier\n\n{'English text here. ' * 20}\n\n## 안내\n\n{korean}",
                                   encoding="utf-8")
    doc = next(load_paths([tmp_path / "p.md"]))
    assert {c.lang for c in chunk_document(doc)} == {"en"}


def test_lines_alike_are_paragraphs_not_headings(tmp_path):
    log = "\n\n".join(f"pump filter drain {n} power bulb warranty" for n in range(6))
    (tmp_path / "log.txt").write_text("Service log\n\n" + log, encoding="utf-8")
    doc = next(load_paths([tmp_path / "log.txt"]))
    assert [s.heading_path for s in doc.sections] == [()]
    assert doc.sections[0].text.count("pump filter drain") == 6


def test_a_numbered_list_is_text_not_a_pile_of_headings(tmp_path):
    (tmp_path / "n.txt").write_text("창구 안내\n\n준비물\n\n1. 신분증\n\n2. 통장 사본\n\n3. 도장\n\n"
                                    "위 서류를 모두 가지고 창구로 오시면 바로 처리해 드립니다.", encoding="utf-8")
    doc = next(load_paths([tmp_path / "n.txt"]))
    assert all(item in doc.text for item in ("1. 신분증", "2. 통장 사본", "3. 도장"))


def test_a_heading_with_nothing_under_it_stays_as_text():
    from chaja.readers.headings import Block, block_sections

    sections, _ = block_sections([Block("개요", outline=1), Block("배경", outline=1), Block("본문")], marked=True)
    assert [(s.heading_path, s.text) for s in sections] == [((), "개요"), (("배경",), "본문")]
    alone, _ = block_sections([Block("Ⅰ. 개요"), Block("Ⅱ. 배경")], marked=False)
    assert "Ⅰ. 개요" in "".join(s.text for s in alone) and "Ⅱ. 배경" in "".join(s.text for s in alone)
