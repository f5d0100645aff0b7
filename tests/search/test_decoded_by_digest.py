"""Values decoded from large texts, kept by a digest of the text."""
from chaja.search.decoded_by_digest import DecodedByDigest


def test_each_text_is_decoded_once_while_it_is_among_the_last_kept():
    calls = []

    def decode(text):
        calls.append(text)
        return None if text == "damaged" else text.upper()

    cache = DecodedByDigest(keep=2)
    assert cache.get("a", decode) == "A" and cache.get("a", decode) == "A"
    assert cache.get("damaged", decode) is None and cache.get("damaged", decode) is None   # None is kept too
    assert calls == ["a", "damaged"]
    cache.get("b", decode)                      # the oldest, "a", makes room
    cache.get("damaged", decode)
    cache.get("a", decode)
    assert calls == ["a", "damaged", "b", "a"]
    cache.clear()
    cache.get("b", decode)
    assert calls[-1] == "b"


def test_a_salt_keeps_what_else_a_value_depends_on_apart():
    """One text decoded for two purposes (the searcher's statistics blended with two prior
    weights) is two values; each is decoded once."""
    calls = []

    def decode(salt):
        return lambda text: calls.append((text, salt)) or f"{text}|{salt}"

    cache = DecodedByDigest(keep=4)
    assert cache.get("a", decode("0.5"), salt="0.5") == "a|0.5"
    assert cache.get("a", decode("2"), salt="2") == "a|2"
    assert cache.get("a", decode("none")) == "a|none"
    assert cache.get("a", decode("again"), salt="0.5") == "a|0.5"
    assert calls == [("a", "0.5"), ("a", "2"), ("a", "none")]
