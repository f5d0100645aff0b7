import pytest

from chaja.config import Config


def test_production_defaults():
    c = Config()
    assert c.search.rrf_k == 20
    assert c.search.gate and c.search.gate_depth == 20 and c.search.gate_share == 0.5
    assert c.search.reranker == "none"
    assert c.index.analyzer == "bigram"


def test_toml_round_trip(tmp_path):
    c = Config().override(["search.rrf_k=60", "search.source_weights={\"DART\": 1.15}", "search.gate=false",
                           "search.now=2026-10-01", "encoder.name=onnx"])
    p = tmp_path / "c.toml"
    p.write_text(c.to_toml())
    d = Config.load(p)
    assert d.to_dict() == c.to_dict()
    assert d.search.rrf_k == 60.0 and d.search.gate is False and d.search.source_weights == {"DART": 1.15}
    assert d.search.now == "2026-10-01"


def test_bad_settings_are_named():
    with pytest.raises(ValueError, match="unknown setting"):
        Config().set("search.rrf", 3)
    with pytest.raises(ValueError, match="unknown section"):
        Config().set("nope.x", 3)
    with pytest.raises(ValueError, match="true/false"):
        Config().set("search.gate", "maybe")
    with pytest.raises(ValueError, match="section.key=value"):
        Config().override(["rrf_k"])


def test_bad_toml(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text("[search\nrrf_k = ")
    with pytest.raises(ValueError, match="bad.toml"):
        Config.load(p)


def test_list_valued_maps_round_trip(tmp_path):
    c = Config().override(['index.expect_doc_types={"DART": ["filing", "annual"]}'])
    p = tmp_path / "c.toml"
    p.write_text(c.to_toml())
    assert Config.load(p).index.expect_doc_types == {"DART": ["filing", "annual"]}


@pytest.mark.parametrize("spec", ["none", "e5-windows", "onnx:/models/ce", "sentence-transformers:~/ce"])
def test_reranker_specs_are_accepted(spec):
    c = Config()
    c.set("search.reranker", spec)
    assert c.search.reranker == spec


@pytest.mark.parametrize("spec", ["cross-encoder", "onnx:", "onnx", "e5-windows:300", "sentence-transformers: "])
def test_a_reranker_spec_that_names_nothing_is_refused(spec):
    with pytest.raises(ValueError, match="search.reranker"):
        Config().set("search.reranker", spec)


def test_rerank_settings_have_a_section_and_bounds():
    c = Config().override(["rerank.depth=20", "rerank.threshold=0.3", "rerank.min_k=2", "rerank.max_k=8"])
    assert (c.rerank.depth, c.rerank.threshold, c.rerank.min_k, c.rerank.max_k) == (20, 0.3, 2, 8)
    assert "[rerank]" in c.to_toml()
    with pytest.raises(ValueError, match="rerank.threshold"):
        c.set("rerank.threshold", 1.5)
