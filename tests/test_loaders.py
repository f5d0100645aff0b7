from chaja.loaders import LoadReport, load_paths


def test_loads_every_format_with_relative_ids(corpus):
    report = LoadReport()
    docs = {d.id: d for d in load_paths([corpus], report)}
    assert set(docs) == {
        "filings/share-cancellation", "filings/rights-issue", "filings/quarterly-report",
        "manuals/espresso-machine", "manuals/bicycle", "manuals/router", "manuals/notes",
        "news-rates", "news-launch",
    }
    assert report.problems == []
    cancel = docs["filings/share-cancellation"]
    assert (cancel.title, cancel.lang, cancel.source, cancel.doc_type, cancel.date) == (
        "자기주식 소각 결정", "ko", "DART", "filing", "2026-09-01")
    assert docs["manuals/espresso-machine"].lang == "en"
    assert docs["manuals/router"].title == "Router setup guide"
    assert "not indexed" not in docs["manuals/router"].text
    assert docs["manuals/notes"].title == "Office kitchen rules"
    assert "Office kitchen rules" not in docs["manuals/notes"].text
    assert docs["news-launch"].date == "2026-10-02"


def test_single_file_id_is_its_stem(tmp_path):
    f = tmp_path / "learn__rendering-lists.md"
    f.write_text("---\ntitle: Rendering Lists\n---\n\nbody", encoding="utf-8")
    assert [d.id for d in load_paths([f])] == ["learn__rendering-lists"]


def test_bad_input_is_reported_and_loses_nothing_else(tmp_path):
    (tmp_path / "ok.md").write_text("# Fine\n\nbody", encoding="utf-8")
    (tmp_path / "broken.txt").write_bytes(b"broken\n\nbody \xff\xfe here")
    (tmp_path / "docs.jsonl").write_text('{"id": "a", "text": "one"}\nnot json\n{"id": "b"}\n{"id": "c", "text": "three"}\n',
                                         encoding="utf-8")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    report = LoadReport()
    docs = {d.id: d for d in load_paths([tmp_path, tmp_path / "missing"], report)}
    assert set(docs) == {"ok", "broken", "a", "c"}
    assert "\ufffd" in docs["broken"].text
    problems = "\n".join(report.problems)
    assert "invalid UTF-8" in problems
    assert "docs.jsonl:2" in problems and "docs.jsonl:3" in problems and "'text'" in problems
    assert "no such file" in problems
    assert any(s.path.endswith("image.png") and "not a" in s.reason for s in report.skipped)


def test_forced_language(corpus):
    docs = list(load_paths([corpus / "manuals" / "bicycle.md"], language="en"))
    assert docs[0].lang == "en"


def test_language_of_a_code_heavy_korean_page_reads_prose_only(tmp_path):
    code = "\n".join(f"const value{i} = useState(initialValue{i});" for i in range(40))
    page = f"---\ntitle: useState\n---\n\n`useState`는 컴포넌트에 state 변수를 추가하는 Hook입니다.\n\n```js\n{code}\n```\n"
    (tmp_path / "p.md").write_text(page, encoding="utf-8")
    assert next(load_paths([tmp_path / "p.md"])).lang == "ko"


def test_jsonl_text_is_plain_unless_the_record_says_markdown(tmp_path):
    lines = [
        '{"id": "tags", "title": "운영 보고", "text": "# 비용절감 # 운영효율화\\n\\n올해 비용을 줄였다."}',
        '{"id": "md", "title": "Guide", "format": "markdown", "text": "# Setup\\n\\nInstall it.\\n\\n## Use\\n\\nRun it."}',
        '{"id": "bad", "text": "x", "format": "pdf"}',
    ]
    (tmp_path / "recs.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = LoadReport()
    docs = {d.id: d for d in load_paths([tmp_path], report)}
    assert all(s.heading_path == () for s in docs["tags"].sections)       # a hashtag line is text
    assert "# 비용절감 # 운영효율화" in docs["tags"].text
    assert any(s.heading_path for s in docs["md"].sections)                # read as Markdown
    assert "bad" not in docs and "recs.jsonl:3" in "\n".join(report.problems)
    assert "'format'" in "\n".join(report.problems)
