"""Snippets: code blocks left out where there is prose, matches marked as merged spans."""
from chaja.snippets import highlights, marked, snippet

PAGE = """useState lets a component remember values.

```js
const [count, setCount] = useState(0);
function handleClick() { setCount(count + 1); }
```

Call it at the top level of your component to declare a state variable."""


def test_code_blocks_are_left_out_when_the_prose_has_the_terms():
    got = snippet(PAGE, ["state", "variable"])
    assert "setCount" not in got and "```" not in got
    assert got.startswith("useState lets a component") and "declare a state variable" in got


def test_code_stays_when_only_the_code_matches_or_there_is_no_prose():
    assert "handleClick" in snippet(PAGE, ["handleclick"])
    only_code = "```python\nimport chaja\nchaja.open('docs.chaja')\n```"
    assert "chaja.open" in snippet(only_code, ["open"])
    unclosed = "Intro text about state.\n```js\nconst x = 1;"
    assert snippet(unclosed, ["state"]) == "Intro text about state."


def test_the_window_starts_before_the_first_match():
    text = "가" * 300 + " 자기주식 소각 " + "나" * 300
    got = snippet(text, ["소각"], width=100)
    assert got.startswith("…") and got.endswith("…") and "소각" in got and len(got) == 102


def test_overlapping_bigrams_mark_one_span():
    text = "이사회는 자기주식 소각을 결정했다"
    spans = highlights(text, ["자기", "기주", "주식", "소각"])
    assert [text[s:e] for s, e in spans] == ["자기주식", "소각"]
    assert marked(text, ["소각"], "[", "]") == "이사회는 자기주식 [소각]을 결정했다"


def test_matching_ignores_case_and_full_width_forms():
    assert [list(s) for s in highlights("Use STATE and ｓｔａｔｅ", ["state"])] == [[4, 9], [14, 19]]
    assert highlights("nothing here", ["state"]) == [] and highlights("", ["x"]) == []
