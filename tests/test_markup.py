from chaja.markup import clean_inline, fenced, html_sections, markdown_sections, split_front_matter


def test_front_matter():
    meta, body = split_front_matter('---\ntitle: "리스트 렌더링"\ndate: 2020/12/21\n---\nbody')
    assert meta == {"title": "리스트 렌더링", "date": "2020/12/21"}
    assert body == "body"
    assert split_front_matter("no front matter") == ({}, "no front matter")


def test_mdx_components_comments_and_links_are_stripped():
    assert clean_inline("<Intro>") == ""
    assert clean_inline('<YouTubeIframe src="https://x" />') == ""
    assert clean_inline("Use **[useState](/reference/useState)** now") == "Use useState now"
    assert clean_inline("Heading {/*anchor-id*/}") == "Heading"


def test_sections_follow_heading_levels_and_keep_code():
    body = "\n".join([
        "# Page title", "intro", "## A", "text a", "```js", "# not a heading", "const x = 1;", "```",
        "### A1", "text a1", "## B", "text b",
    ])
    h1, sections = markdown_sections(body)
    assert h1 == "Page title"
    paths = [s.heading_path for s in sections]
    assert paths == [(), ("A",), ("A", "A1"), ("B",)]
    assert "const x = 1;" in sections[1].text and "# not a heading" in sections[1].text


def test_html_sections_drop_scripts():
    title, sections = html_sections("<title>T</title><h1>Top</h1><p>x</p><script>bad()</script><h2>Sub</h2><p>y</p>")
    assert title == "T"
    assert [(s.heading_path, s.text) for s in sections] == [(("Top",), "x"), (("Top", "Sub"), "y")]


def test_fenced_closes_on_the_same_marker_at_least_as_long():
    lines = ["a", "````md", "```js", "# code", "```", "~~~", "````", "b", "~~~", "x", "```", "~~~"]
    assert [p for _, p in fenced(lines)] == [
        "text", "fence", "code", "code", "code", "code", "fence", "text", "fence", "code", "code", "fence"]
