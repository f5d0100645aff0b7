from chaja.documents import Chunk
from chaja.search.grouping import group_by_document
from chaja.search.result_json import why_line
from chaja.search.results import ChunkResult


def document(ranks, **kw):
    chunk = Chunk(id="c1", doc_id="manuals/coffee", ordinal=0, title="커피 머신", heading_path=("석회 제거",), text="")
    return group_by_document([ChunkResult(chunk, 2.49, ranks=ranks, **kw)])[0]


def test_the_why_line_names_the_aligned_lists_that_hold_the_chunk():
    d = document({"vector": 3, "heading": 12, "aligned": 9, "aligned_heading": 40, "translated:ko": 1},
                 vector_rank=3, vector_score=0.817, heading_rank=12)
    line = why_line(d, keyword_used=False)
    assert line.startswith("keyword #-, vector #3 (cos 0.817), heading #12, aligned #9, aligned heading #40, ")
    assert "translated:ko #1" in line and line.endswith("fused 2.4900")


def test_a_list_that_does_not_hold_the_chunk_is_not_named():
    line = why_line(document({"vector": 1}, vector_rank=1, vector_score=0.9), keyword_used=True)
    assert line == "keyword #-, vector #1 (cos 0.900), fused 2.4900"
    assert "aligned" not in line and "heading" not in line


def test_every_other_list_that_holds_the_chunk_is_named_by_its_name():
    line = why_line(document({"vector": 2, "title": 4, "keyword:en": 7}, vector_rank=2, vector_score=0.8),
                    keyword_used=True)
    assert line == "keyword #-, vector #2 (cos 0.800), keyword:en #7, title #4, fused 2.4900"
