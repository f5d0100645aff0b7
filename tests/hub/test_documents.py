"""The document routes of the real hub (:mod:`chaja.hub.documents`): batches and their
limit, ids of any text, paths shown only to writers, marks, prune, stats."""
from __future__ import annotations

import pytest

from chaja.client import HubError

from hubs import READ_KEY, WRITE_KEY
from raw import call


def test_a_batch_over_the_limit_is_refused(hub):
    docs = [{"id": f"many/{i}", "text": "x"} for i in range(51)]
    status, out, _ = call(hub.url, "POST", "/v1/documents", {"documents": docs}, key=WRITE_KEY)
    assert status == 413 and "limit is 50" in out["detail"]


def test_documents_need_ids_unless_derived(hub):
    w = hub.writer
    with pytest.raises(HubError) as err:
        w.add_documents([{"title": "no id", "text": "본문"}])
    assert err.value.status == 422 and "no id" in err.value.detail
    got = w.add_documents([{"title": "파생", "text": "내용에서 id를 얻는 문서"}], derive_ids=True)
    assert got["ids"][0].startswith("sha256-") and got["added"] == 1
    again = w.add_documents([{"title": "파생", "text": "내용에서 id를 얻는 문서"}], derive_ids=True)
    assert again["ids"] == got["ids"] and again["unchanged"] == 1        # same content, same id
    with pytest.raises(HubError) as err:
        w.add_documents([{"id": "twice", "text": "a"}, {"id": "twice", "text": "b"}])
    assert err.value.status == 422
    with pytest.raises(HubError) as err:
        w.add_documents([{"id": "both", "text": "a", "sections": [{"text": "b"}]}])
    assert err.value.status == 422
    assert w.delete(got["ids"][0])


def test_prune_flag_is_gone_from_writes(hub):
    status, _, _ = call(hub.url, "POST", "/v1/documents", {"documents": [], "prune": "false"}, key=WRITE_KEY)
    assert status == 422


def test_get_list_and_delete_documents(hub):
    w = hub.writer
    w.add_documents([{"id": "tmp/a b/1", "title": "임시", "text": "## 절\n\n임시 문서 본문", "format": "markdown",
                      "source": "test", "date": "2026/3/4"}])
    doc = w.get_document("tmp/a b/1")
    assert (doc["title"], doc["source"], doc["date"], doc["chunks"]) == ("임시", "test", "2026-03-04", 1)
    assert doc["chunk_list"][0]["heading"] == ["절"] and "임시 문서" in doc["chunk_list"][0]["text"]
    ids = [d["id"] for d in w.iter_documents(page=3)]
    assert ids == sorted(ids) and "tmp/a b/1" in ids and "manuals/bicycle" in ids
    page = w.list_documents(limit=2)
    assert len(page["documents"]) == 2 and page["next"] == page["documents"][1]["id"]
    with pytest.raises(HubError) as err:
        w.get_document("tmp/none")
    assert err.value.status == 404
    assert w.delete("tmp/a b/1") and not w.delete("tmp/a b/1")


ODD_IDS = ["tmp/ids/a\nb", "tmp/ids/tab\there", "tmp/ids/cr\r", "tmp/ids/bell\x07", "tmp/ids/100%",
           "tmp/ids/%41%2F", "tmp/ids/q?x=1&y=2", "tmp/ids/frag#1", "tmp/ids/with space ", "tmp/ids/a+b",
           "tmp/ids/a/b//c/", "/tmp/ids/lead", "tmp/ids/한국어 문서", "tmp/ids/😀", "tmp/ids/..", "..",
           "tmp/ids/x\n", "tmp/ids/x"]


def test_any_id_the_hub_stores_can_be_read_and_deleted(hub):
    w = hub.writer
    got = w.add_documents([{"id": i, "title": "odd id", "text": f"이상한 문서 번호 {n}"} for n, i in enumerate(ODD_IDS)])
    assert got["ids"] == ODD_IDS and got["added"] == len(ODD_IDS)
    try:
        for i in ODD_IDS:
            assert hub.client().get_document(i)["id"] == i, repr(i)
        assert set(ODD_IDS) <= {d["id"] for d in hub.client().iter_documents()}
        for path in ("/v1/documents/tmp%2Fids%2Fa%0Ab", "/v1/documents/tmp/ids/a%0Ab"):   # as the issue sent it
            status, out, _ = call(hub.url, "GET", path, key=READ_KEY)
            assert (status, out["id"]) == (200, "tmp/ids/a\nb")
        for i in ODD_IDS:           # "x\n" before "x": deleting the one leaves the other
            assert w.delete(i), repr(i)
            with pytest.raises(HubError) as err:
                w.get_document(i)
            assert err.value.status == 404, repr(i)
            assert not w.delete(i), repr(i)
    finally:
        for i in ODD_IDS:
            w.delete(i)


def test_a_documents_server_path_is_shown_only_to_a_caller_who_may_write(hub):
    w = hub.writer
    w.add_documents([{"id": "tmp/pathed", "text": "서버 경로가 있는 문서", "path": "/srv/private/pathed.md"}])
    try:
        reader = hub.client()
        assert "path" not in reader.get_document("tmp/pathed")
        assert all("path" not in d for d in reader.iter_documents())
        assert w.get_document("tmp/pathed")["path"] == "/srv/private/pathed.md"
        assert {d["id"]: d["path"] for d in w.iter_documents()}["tmp/pathed"] == "/srv/private/pathed.md"
    finally:
        w.delete("tmp/pathed")


def test_sections_keep_their_marks_and_bad_marks_are_422(hub):
    w = hub.writer
    text = "첫 쪽의 본문입니다. " * 20 + "\n\n" + "둘째 쪽의 본문입니다. " * 20
    second = text.index("둘째")
    marks = [{"offset": 0, "unit": "page", "first": 1, "last": 1},
             {"offset": second, "unit": "page", "first": 2, "last": 2}]
    w.add_documents([{"id": "tmp/marked", "title": "쪽", "sections": [{"heading": [], "text": text, "marks": marks}]}])
    chunks = w.get_document("tmp/marked")["chunk_list"]
    assert [c["location"]["label"] for c in chunks] == ["p. 1", "p. 2"]
    for bad in ([marks[1], marks[0]], [{**marks[0], "offset": len(text) + 1}],
                [{**marks[0], "first": 3, "last": 2}], [{**marks[0], "unit": "chapter"}]):
        with pytest.raises(HubError) as err:
            w.add_documents([{"id": "tmp/bad", "title": "x", "sections": [{"text": text, "marks": bad}]}])
        assert err.value.status == 422, bad
    assert w.delete("tmp/marked")


def test_prune_is_explicit(hub):
    w = hub.writer
    with pytest.raises(HubError) as err:
        w.prune([])
    assert err.value.status == 422 and "remove_all" in err.value.detail
    w.add_documents([{"id": "tmp/prune-me", "text": "곧 지워질 문서"}])
    keep = [d["id"] for d in w.iter_documents() if d["id"] != "tmp/prune-me"]
    got = w.prune(keep)
    assert got == {"removed": 1, "ids": ["tmp/prune-me"]}
    assert [d["id"] for d in w.iter_documents()] == keep


def test_stats(hub):
    s = hub.client().stats()
    assert s["documents"] >= 9 and s["chunks"] >= s["documents"] and "e5" in s["encoder"]
    assert set(s["by_lang"]) == {"ko", "en"}
