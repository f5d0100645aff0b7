from collections import Counter, defaultdict
from pathlib import Path

import pytest

from chaja.eval.canonical import KINDS, build_canonical, react_store_paths, read_store
from chaja.eval.headings import file_headings, heading_key, markdown_headings, plain_heading


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture()
def mini_docs(tmp_path):
    """Three pages written for this test: p1 and p3 stored in English, p2 in Korean."""
    root = tmp_path / "react-docs"
    _write(root, "store.tsv", "doc_id\tlang\np1\ten\np2\tko\np3\ten\n")
    _write(root, "heading_pairs.tsv", "doc_id\tlevel\tanchor\ten_heading\tko_heading\n"
           "p1\t2\tparameters\tParameters\t매개변수\n"
           "p1\t2\tu1\tUnique English One\t고유한 제목 하나\n"
           "p1\t2\tuse-thing\t`useThing(x)`\t`useThing(x)`\n"
           "p2\t2\tparameters\tParameters\t매개변수\n"
           "p2\t2\tsw\tShared Words\t두번째 고유 제목\n"
           "p2\t2\tlegacy\tLegacy Thing\tLegacy Thing\n"
           "p3\t2\top\tOther Page\t다른 페이지\n")
    _write(root, "en/p1.md", "---\ntitle: One\n---\n## Parameters {/*parameters*/}\n\ntext\n\n"
           "## Unique English One {/*u1*/}\n\n## `useThing(x)` {/*use-thing*/}\n")
    _write(root, "ko/p1.md", "## 매개변수 {/*parameters*/}\n## 고유한 제목 하나 {/*u1*/}\n## `useThing(x)` {/*use-thing*/}\n")
    _write(root, "en/p2.md", "## Parameters {/*parameters*/}\n## Shared Words {/*sw*/}\n## Legacy Thing\n")
    _write(root, "ko/p2.md", "## 매개변수 {/*parameters*/}\n## 두번째 고유 제목 {/*sw*/}\n## Legacy Thing\n")
    _write(root, "en/p3.md", "## Other Page {/*op*/}\n```md\n## Shared words\n```\n## Legacy thing\n")
    _write(root, "ko/p3.md", "## 다른 페이지 {/*op*/}\n### 두번째 고유 제목\n")
    return root


def test_uniqueness_rule_on_a_small_store(mini_docs):
    questions, rep = build_canonical(mini_docs)
    got = {(q.kind, q.text, q.gold[0]) for q in questions}
    assert got == {
        ("en-en", "Unique English One", "p1"),
        ("en-en", "useThing(x)", "p1"),
        ("en-en", "Other Page", "p3"),
        ("ko-en", "고유한 제목 하나", "p1"),
        ("ko-en", "다른 페이지", "p3"),
        # p2's Korean heading also heads a section of p3's Korean page → not unique in Korean;
        # its English heading is unique: the one in p3 sits in a code fence
        ("en-ko", "Shared Words", "p2"),
        # "Legacy Thing" is unique among Korean headings, but left untranslated it also
        # heads p3's English page: skipped as ko-ko; as en-ko it is untranslated
    }
    assert rep.counts == Counter({"en-en": 3, "ko-en": 2, "en-ko": 1})
    assert rep.not_unique == Counter({"en-en": 1, "ko-en": 1, "ko-ko": 3, "en-ko": 1})
    assert rep.untranslated == Counter({"ko-en": 1, "en-ko": 1})
    assert [q.kind for q in questions] == sorted((q.kind for q in questions), key=KINDS.index)
    assert {q.lang for q in questions if q.kind.startswith("ko")} == {"ko"}
    q = next(q for q in questions if q.text == "Shared Words")
    assert q.id == "en-ko:p2#sw"
    kept, _ = build_canonical(mini_docs, keep_untranslated=True)
    assert ("ko-en", "useThing(x)") in {(q.kind, q.text) for q in kept}
    assert [p.relative_to(mini_docs).as_posix() for p in react_store_paths(mini_docs.parent)] == \
        ["en/p1.md", "ko/p2.md", "en/p3.md"]


def test_heading_text_and_keys():
    assert plain_heading("`<Suspense>` with **bold** and [link](/x) {/*a*/}") == "<Suspense> with bold and link"
    assert plain_heading("Where you _can_ cause side effects") == "Where you can cause side effects"
    assert plain_heading("`UNSAFE_componentWillMount()`") == "UNSAFE_componentWillMount()"
    assert plain_heading("React의 동시성<sup>Concurrency</sup>이란?") == "React의 동시성 Concurrency 이란?"
    assert heading_key(plain_heading("Parameters  {/*x*/}")) == heading_key("PARAMETERS") == "parameters"
    assert heading_key("<input>") == "<input>"
    hs = markdown_headings("---\ntitle: t\n---\n# Top\n~~~\n# not a heading\n~~~\n#### Deep {/*deep*/}\n#nospace\n")
    assert [(h.level, h.text, h.anchor) for h in hs] == [(1, "Top", ""), (4, "Deep", "deep")]


def test_canonical_set_on_react_docs(react_dir, capsys):
    questions, rep = build_canonical(react_dir)
    print("\n".join(rep.lines()))
    store = read_store(react_dir)
    assert Counter(store.values()) == Counter({"en": 103, "ko": 100})
    assert all(rep.counts[k] > 300 for k in KINDS)
    assert rep.total == len(questions) == len({q.id for q in questions})
    assert Counter(q.kind for q in questions) == rep.counts
    # every question names exactly one page: no other page, read in the question's language,
    # has a heading with the same key
    index = {lang: defaultdict(set) for lang in ("en", "ko")}
    for doc in store:
        for lang in ("en", "ko"):
            for h in file_headings(react_dir / lang / f"{doc}.md"):
                index[lang][heading_key(h.text)].add(doc)
    for q in questions:
        qlang, dlang = q.kind.split("-")
        assert q.lang == qlang and store[q.gold[0]] == dlang and len(q.gold) == 1
        assert index[qlang][heading_key(q.text)] == {q.gold[0]}, q
        assert index["en"][heading_key(q.text)] | index["ko"][heading_key(q.text)] == {q.gold[0]}, q
    texts = {heading_key(q.text) for q in questions}
    for repeated in ("parameters", "returns", "caveats", "usage", "매개변수", "반환값"):
        assert repeated not in texts
    # cross-language questions are real translations
    stored_keys = {(q.gold[0], heading_key(q.text)) for q in questions if q.kind in ("en-en", "ko-ko")}
    for q in questions:
        if q.kind in ("ko-en", "en-ko"):
            assert (q.gold[0], heading_key(q.text)) not in stored_keys


def test_store_paths_on_react_docs(react_dir):
    paths = react_store_paths(react_dir.parent)
    assert len(paths) == 203 and all(p.is_file() for p in paths)
    assert Counter(p.parent.name for p in paths) == Counter({"en": 103, "ko": 100})
    assert len({p.stem for p in paths}) == 203
