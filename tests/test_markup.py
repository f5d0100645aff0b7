import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chaja import markup
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


def test_inline_code_keeps_its_text_as_written():
    # tags and emphasis inside backticks are the text: component and element names
    assert clean_inline("Use `<script setup>` and `v-if`") == "Use <script setup> and v-if"
    assert clean_inline("[`<Suspense>`](/reference/react/Suspense) wraps") == "<Suspense> wraps"
    assert clean_inline("### Loading with `<Suspense>` {/*x*/}") == "### Loading with <Suspense>"
    assert clean_inline("`**kwargs` and **bold** and <b>tag</b>") == "**kwargs and bold and tag"
    assert clean_inline("amp `&amp;` &amp;") == "amp &amp; &"
    assert clean_inline("stray \ue000 marks \ue0010\ue001") == "stray marks 0"   # never read as a span
    h1, sections = markdown_sections("# `<Profiler>` {/*profiler*/}\n## Using `<form>` Actions\ntext")
    assert h1 == "<Profiler>" and sections[0].heading_path == ("Using <form> Actions",)


def test_a_heading_attribute_block_stays_with_its_heading():
    # a translated page's anchor is the section's name in the original language
    h1, sections = markdown_sections("# 고급 반응형 API {#reactivity-api-advanced}\n## shallowRef() {#shallowref}\ntext")
    assert h1 == "고급 반응형 API {#reactivity-api-advanced}"
    assert sections[0].heading_path == ("shallowRef() {#shallowref}",)


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


# The heading, rule and MDX-statement patterns were rewritten to run in linear time (see
# test_markup_adversarial.py; the stripping passes are checked in test_markup_strip.py);
# on ordinary input they must do what the regexes they replace did. These are those
# regexes, safe to run on short strings.
_OLD_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_OLD_RULE = re.compile(r"^\s*([-*_])(\s*\1){2,}\s*$")
_OLD_MDX_STATEMENT = re.compile(r"^\s*(import|export)\s.+$")


def _groups(m):
    return m and (m.span(), m.groups())


_settings = settings(max_examples=300, deadline=None, derandomize=True, database=None,
                     suppress_health_check=[HealthCheck.too_slow])


@_settings
@given(st.text(alphabet="#ab \t\xa0\r\n", max_size=24))
def test_heading_matches_as_before(s):
    for line in (s, "#" + s, "# " + s):
        assert _groups(markup.HEADING.match(line)) == _groups(_OLD_HEADING.match(line)), repr(line)


@_settings
@given(st.text(alphabet=" \t\n-*_ximportexp", max_size=20))
def test_rules_and_mdx_statements_match_as_before(s):
    assert bool(markup._RULE.match(s)) == bool(_OLD_RULE.match(s))
    assert _groups(markup._MDX_STATEMENT.match(s)) == _groups(_OLD_MDX_STATEMENT.match(s))


def test_examples_of_the_rewritten_passes():
    assert markup.HEADING.match("## Title ##  ").groups() == ("##", "Title")
    assert markup.HEADING.match("# C# and F#").group(2) == "C# and F"   # (a closing # goes)
    assert markup.HEADING.match("# a # #").group(2) == "a #"
    assert markup.HEADING.match("####### seven") is None
    assert clean_inline('<a href="x>y" title=\'q\'>link</a> and <b {...props}>b</b>') == "link and b"
    assert clean_inline("<a {x{y}}>z") == "<a {x{y}}>z"   # nested braces: not a tag
    assert clean_inline("![alt](i.png) [text](u) [ref][r] [no link]") == "alt text ref [no link]"
    assert clean_inline("[a [b](c)") == "a [b"   # the label runs from the first [
    assert markup.prose("x\n````md\n```js\ny\n```\n````\nz `code` w") == "x\n \nz   w"
    assert markup.prose("```\nunclosed\n") == " `\nunclosed\n"   # no closing fence: `` is inline code
