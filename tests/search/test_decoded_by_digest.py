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
