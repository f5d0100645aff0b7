"""Progress bars on stderr through tqdm: drawn to the end, silent when quiet."""
from __future__ import annotations

import io
from types import SimpleNamespace

from chaja.progress import Progress, indexing


def test_a_log_gets_the_final_state_and_the_fields():
    out = io.StringIO()
    report, bar = indexing(stream=out)
    for i in range(1, 6):
        report(SimpleNamespace(documents_done=i, documents_total=5, chunks_done=3 * i, encode_rate=12.5))
    bar.close()
    text = out.getvalue()
    assert "5/5" in text and "chunks=15" in text and "passages_per_s=12.5" in text
    assert "100%" in text


def test_quiet_draws_nothing():
    out = io.StringIO()
    with Progress("work", quiet=True, stream=out) as bar:
        bar.show(3, 10)
    assert out.getvalue() == ""


def test_a_total_learned_late_and_a_closing_note():
    out = io.StringIO()
    bar = Progress("batches", "batch", stream=out)
    bar.show(2)
    bar.show(4, 4)
    bar.close("done in 1 s")
    assert "4/4" in out.getvalue() and "done in 1 s" in out.getvalue()


def test_each_finishing_step_is_drawn_as_it_begins():
    out = io.StringIO()
    report, bar = indexing(stream=out)
    report(SimpleNamespace(documents_done=5, documents_total=5, chunks_done=15, encode_rate=12.5, stage="encoding"))
    for step in ("vector statistics", "keyword postings", "graph chunk (30,000 vectors)"):
        report(SimpleNamespace(documents_done=5, documents_total=5, chunks_done=15, encode_rate=12.5, stage=step))
        assert f"step={step}" in out.getvalue()      # at once, not at the next interval
    bar.close()


def test_reading_draws_a_bar_only_for_a_long_file(tmp_path):
    import io

    from chaja import progress

    log = io.StringIO()
    show = progress.reading(stream=log)          # a log, not a terminal: 200 pages and up
    for n in range(1, 36):
        show("short.pdf", n, 35)
    assert log.getvalue() == ""
    for n in range(1, 501):
        show("long.pdf", n, 500)
    assert "reading long.pdf" in log.getvalue() and "500/500" in log.getvalue()
