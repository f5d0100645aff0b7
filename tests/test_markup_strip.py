"""The linear stripping passes (chaja.markup_strip) do on ordinary input what the
regexes they replace did."""
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chaja import markup_strip

# The regexes the passes replace, safe to run on short strings (the passes run in linear
# time on any input: test_markup_adversarial.py).
_OLD_TAG = re.compile(r"</?[A-Za-z][\w.:-]*(?:\s+(?:[^<>\"'{}]|\"[^\"]*\"|'[^']*'|\{[^{}]*\})*)?\s*/?>")
_OLD_SUBS = [   # (pattern, replacement, the new function)
    (re.compile(r"\{/\*.*?\*/\}", re.S), "", lambda s: markup_strip.strip_delimited(s, "{/*", "*/}")),
    (re.compile(r"<!--.*?-->", re.S), "", lambda s: markup_strip.strip_delimited(s, "<!--", "-->")),
    (re.compile(r"!\[([^\]]*)\]\([^)]*\)"), r"\1", lambda s: markup_strip.strip_brackets(s, "![", 0, "()")),
    (re.compile(r"\[([^\]]+)\]\([^)]*\)"), r"\1", lambda s: markup_strip.strip_brackets(s, "[", 1, "()")),
    (re.compile(r"\[([^\]]+)\]\[[^\]]*\]"), r"\1", lambda s: markup_strip.strip_brackets(s, "[", 1, "[]")),
    (_OLD_TAG, " ", markup_strip.strip_tags),
    (re.compile(r"^\s*(```+|~~~+).*?^\s*\1\s*$", re.S | re.M), " ", markup_strip.strip_fenced_blocks),
]


_settings = settings(max_examples=300, deadline=None, derandomize=True, database=None,
                     suppress_health_check=[HealthCheck.too_slow])


@_settings
@given(st.text(alphabet="<>/ab \"'{}=.:-\n![]()*`~{/*}!-", max_size=30))
def test_substitutions_match_as_before(s):
    for old, repl, new in _OLD_SUBS:
        assert new(s) == old.sub(repl, s), (old.pattern, s)


@_settings
@given(st.lists(st.sampled_from(
    ["```", "````", "~~~", "~~~~", "``````", "  ```", "```js", "``` ", "", " ", "\t", "a", "`x`", "~~~ "]),
    max_size=12))
def test_fenced_blocks_close_as_before(lines):
    s = "\n".join(lines)
    old, repl, new = _OLD_SUBS[-1]
    assert new(s) == old.sub(repl, s), s
