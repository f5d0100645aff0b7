"""Adversarial input for chaja.markup: every pass must stay linear-ish in its input.

The clean-up patterns once backtracked catastrophically (``# a`` + 5,000 spaces + ``b``
ran for minutes, ``<a`` + 3,000 spaces for a minute, 100 KB of ``[`` or ``{/*`` for
over a minute each). Each case here runs in a forked child with a time limit, so a
regression fails the test instead of hanging it; the fixed code takes milliseconds,
and the limit is generous for a loaded CI machine.

``html_sections`` is only given input without unclosed ``<`` constructs: the
standard library's ``HTMLParser`` itself is quadratic on those before Python
3.11.13 / 3.12.11 / 3.13.4 (CPython gh-135462, CVE-2025-6069).
"""
from __future__ import annotations

import multiprocessing
import time

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from chaja import markup
from chaja.documents import Section

LIMIT_S = 2.0   # per case, all entry points together
_CTX = multiprocessing.get_context(
    "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")


def _md_entry_points(text: str) -> None:
    markup.split_front_matter(text)
    markup.split_front_matter("---\n" + text + "\n---\nbody")
    markup.markdown_sections(text)
    markup.clean_inline(text)
    markup.prose(text)
    markup.HEADING.match(text)
    markup.HEADING.match("# " + text)
    for line in text.split("\n")[:50]:   # single lines, as markdown_sections sees them
        markup.clean_inline(line)


def _html_entry_points(text: str) -> None:
    markup.html_sections(text)


_ENTRY_POINTS = {"md": _md_entry_points, "html": _html_entry_points}


def _child(conn, kind: str, text: str) -> None:
    try:
        _ENTRY_POINTS[kind](text)
        conn.send(None)
    except BaseException as e:   # noqa: BLE001 - reported to the parent
        conn.send(f"{type(e).__name__}: {e}")


def run_bounded(text: str, kind: str = "md", limit: float = LIMIT_S) -> float:
    """Run the entry points on ``text`` in a child process; fail if it takes over ``limit``."""
    recv, send = _CTX.Pipe(duplex=False)
    proc = _CTX.Process(target=_child, args=(send, kind, text), daemon=True)
    start = time.monotonic()
    proc.start()
    send.close()
    try:
        if not recv.poll(limit):
            pytest.fail(f"{kind} entry points did not finish within {limit} s on "
                        f"{len(text):,} chars starting {text[:60]!r}")
        try:
            error = recv.recv()
        except EOFError:
            error = f"child died (exit code {proc.exitcode})"
        assert error is None, error
        return time.monotonic() - start
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()
        recv.close()


def _times(unit: str, size: int) -> str:
    return unit * (size // len(unit))


K = 1_000
ADVERSARIAL = {
    # the cases
    "heading, spaces, no end": "# a" + " " * 5 * K + "b",
    "tag, spaces": "<a" + " " * 3 * K,
    "tag, 100 KB of spaces": "<a" + " " * 100 * K,
    "100 KB of [": "[" * 100 * K,
    "150 KB of {/*": _times("{/*", 150 * K),
    # headings
    "heading, spaces and #s": "# a" + _times(" #", 50 * K) + "b",
    "heading of #s": "# " + "#" * 50 * K + " x",
    "heading, tabs, then #s": "###### " + "\t" * 30 * K + "#" * 30 * K + "\t" * 30 * K + "x",
    "100 KB of #": "#" * 100 * K,
    "lines of # a + spaces": _times("# a" + " " * 200 + "b\n", 100 * K),
    # comments
    "100 KB of <!--": _times("<!--", 100 * K),
    "<!-- and -- runs": "<!--" + _times("-- >", 100 * K),
    "{/* and */ runs": _times("{/*/", 100 * K),
    # links and images
    "100 KB of ![": _times("![", 100 * K),
    "100 KB of ](": _times("](", 100 * K),
    "[ then ](": "[" * 50 * K + "](" * 25 * K,
    "[x]( unclosed": _times("[x](", 100 * K),
    "[x][ unclosed": _times("[x][", 100 * K),
    "![x]( unclosed": _times("![x](", 100 * K),
    "[x] not followed": _times("[x] ", 100 * K),
    # tags
    "100 KB of <a": _times("<a", 100 * K),
    "<a and quotes": _times('<a "', 100 * K),
    "<a and single quotes": _times("<a '", 100 * K),
    "alternating <a and \"": _times('<a"', 100 * K),
    "<a with mixed quotes": _times("<a '\"<a \"'", 100 * K),
    "<a and braces": _times("<a {", 100 * K),
    "<a b=\" unclosed, spaces": '<a b="' + " " * 100 * K,
    "<a then attribute soup": "<a " + _times('x="y" ', 100 * K),
    "</ then spaces": _times("</a ", 100 * K),
    "<a/ runs": _times("<a/", 100 * K),
    "unclosed { in tag": "<a " + _times("{x ", 100 * K),
    # emphasis, rules, code
    "100 KB of *": "*" * 100 * K + "x",
    "100 KB of _": "_" * 100 * K + "x",
    "* space runs": _times("* ", 100 * K) + "x",
    "- space runs": _times(" -", 100 * K) + "x",
    "100 KB of spaces": " " * 100 * K + "x",
    "100 KB of backticks": "`" * 100 * K,
    "50 KB of backticks, a line, backticks": "`" * 50 * K + "\nx\n" + "`" * 3,
    "unclosed fences": _times("```a\n", 100 * K),
    "fences of growing length": "\n".join("`" * n for n in range(3, 450)),
    "blank lines then a fence": "\n" * 100 * K + "```",
    "~~~ fences, unclosed": _times("~~~~ x\n", 100 * K),
    "inline backticks, no close": _times("`a\n", 100 * K),
    "import lines": _times("import " + " " * 100 + "\n", 100 * K),
    # front matter
    "front matter of spaces": "---\na" + " " * 100 * K + "b\n---\n",
    "front matter never closed": "---\n" + _times("k: v\n", 100 * K),
    # everything
    "markup soup": _times('<a "[![`{/*<!--*_# ~~~\n', 100 * K),
}


@pytest.mark.parametrize("text", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_adversarial_markdown_finishes_quickly(text):
    assert 3_000 <= len(text) <= 160_000
    run_bounded(text)


HTML = {
    "&nbsp; run": "<p>x" + "\xa0" * 100 * K + "x</p>",
    "ideographic spaces and a break": "<p>x" + "\u3000" * 50 * K + "\n" + "\u3000" * 50 * K + "y</p>",
    "many paragraphs": _times("<p>x</p>\n", 100 * K),
    "many headings": _times("<h2>a</h2><p>b</p>", 100 * K),
    "deep nesting": "<div>" * 10 * K + "x" + "</div>" * 10 * K,
}


@pytest.mark.parametrize("text", HTML.values(), ids=HTML.keys())
def test_adversarial_html_finishes_quickly(text):
    run_bounded(text, kind="html")


# Generated: a short unit of markup characters repeated to 10–60 KB, between a prefix
# and a suffix, e.g. `<a "` × 20,000 or `](#` × 15,000.
_MARKUP = "<>\"'{}[]()!*_#`~/-=&; \t\na"
_unit = st.text(alphabet=_MARKUP, min_size=1, max_size=6)


@settings(max_examples=30, deadline=None, derandomize=True, database=None,
          phases=[Phase.explicit, Phase.generate],   # no shrinking: a failing try costs LIMIT_S
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(prefix=st.sampled_from(["", "# ", "<a ", "[", "![", "```\n", "---\n", "{/*", "<!--"]),
       unit=_unit, size=st.integers(10 * K, 60 * K), suffix=st.text(alphabet=_MARKUP, max_size=4))
def test_generated_repetitions_finish_quickly(prefix, unit, size, suffix):
    run_bounded(prefix + _times(unit, size) + suffix)


@settings(max_examples=15, deadline=None, derandomize=True, database=None,
          phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(units=st.lists(_unit, min_size=2, max_size=4), size=st.integers(10 * K, 60 * K))
def test_generated_interleavings_finish_quickly(units, size):
    # runs of one unit after another: `<a` + spaces, then quotes, then `[`, …
    run_bounded("".join(_times(u, size // len(units)) for u in units))


def test_time_grows_about_linearly():
    """``<a`` + N spaces once grew 0.03 / 0.37 / 4.9 s at N = 200 / 400 / 800; now the
    800 KB case is bounded like the 100 KB one (a loose check: no timing ratios)."""
    run_bounded("<a" + " " * 800 * K + "\n# a" + " " * 800 * K + "b", limit=4 * LIMIT_S)


def test_results_on_adversarial_input_are_sensible():
    # the fixed code still does its job on these (no pathological "fallback" output)
    assert markup.clean_inline("<a" + " " * 3000) == "<a"
    assert markup.clean_inline("<a" + " " * 3000 + ">b") == "b"
    assert markup.HEADING.match("# a" + " " * 5000 + "b").group(2) == "a" + " " * 5000 + "b"
    assert markup.HEADING.match("# a" + " " * 5000 + "#" * 9 + " ").group(2) == "a"
    assert markup.markdown_sections("{/*" * 1000) == (None, [Section((), "{/" * 1000)])
    assert markup.clean_inline("[" * 1000 + "x](y)") == "[" * 999 + "x"
    assert markup.prose("```\n" * 1001) == " \n" * 500 + " `\n"   # 500 blocks, then inline code
