"""``chaja eval report DIR --html OUT.html``: a run's report as one self-contained file.

Everything is inside the file (styles, the figures as inline SVG, a few lines of
script for the question filter); nothing is fetched, so it opens from a disk, a CI
artefact or an e-mail. It holds:

* the run: name, model, store fingerprint, question count, the whole config;
* the summary table (nDCG@10, R@1, R@3, R@5, MRR) and the same by kind and by
  language, with each cell's value in a ``data-value`` attribute as well, so a test
  can read the numbers back from the rendered page;
* figures: the run's metrics with 95% bootstrap intervals, and nDCG@10 by kind
  (:func:`chaja.eval.figures.svg_figure`);
* graded-pool tables when the questions are graded;
* every question, misses first: its gold rank and nDCG@10, and in a drill-down what
  ranked above the gold and why (each document's keyword and vector ranks and fused
  score, whether the gate kept the keyword list, the search's signals); a filter by
  text, and "misses only" (also by opening the file with ``#misses``).
"""
from __future__ import annotations

import json
from html import escape
from pathlib import Path

import numpy as np

from chaja.eval.figures import Series, series_from_runs, svg_figure
from chaja.eval.noise import bootstrap_ci
from chaja.eval.report import question_row, read_records, record_gold
from chaja.eval.single import METRICS, gold_rank

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#1d1d1f;padding:0 16px}
h1{font-size:22px;margin-bottom:4px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:8px 0}th,td{padding:3px 10px;border-bottom:1px solid #eee;text-align:right}
th:first-child,td:first-child{text-align:left}td.text{text-align:left;max-width:520px}
.meta{color:#555}.miss{background:#fff4f2}.hit{background:#f3fbf4}details{margin:2px 0}
code{font-size:12px}.small{font-size:12px;color:#555}#filter{margin:6px 0;padding:4px;width:320px}
#questions td:first-child{max-width:240px;word-break:break-all;font-size:12px}#questions td:nth-child(2){white-space:nowrap}#questions th:nth-child(3){text-align:left}
svg{vertical-align:top;margin-right:16px}
"""

SCRIPT = """
function applyFilter(){const q=document.getElementById('filter').value.toLowerCase();
const missesOnly=document.getElementById('misses').checked;
for(const row of document.querySelectorAll('tr.question')){
 const show=(!q||row.dataset.search.includes(q))&&(!missesOnly||row.classList.contains('miss'));
 row.style.display=show?'':'none';}
document.getElementById('shown').textContent=
 [...document.querySelectorAll('tr.question')].filter(r=>r.style.display!=='none').length;}
document.addEventListener('DOMContentLoaded',()=>{
 if(location.hash==='#misses'){document.getElementById('misses').checked=true;applyFilter();}});
"""


def _num(value) -> str:
    return "—" if value is None else f"{value:.3f}"


def _metric_table(rows: list[tuple[str, int, dict]], table_id: str) -> str:
    head = "".join(f"<th>{escape(m)}</th>" for m in METRICS)
    out = [f'<table id="{table_id}"><tr><th>set</th><th>questions</th>{head}</tr>']
    for name, n, metrics in rows:
        cells = "".join(f'<td data-metric="{escape(m)}" data-value="{metrics[m]!r}">{_num(metrics[m])}</td>'
                        for m in METRICS)
        out.append(f'<tr data-row="{escape(name)}"><td>{escape(name)}</td><td data-value="{n}">{n}</td>{cells}</tr>')
    return "".join(out) + "</table>"


def _kind_series(run_dir: Path, metric: str = "nDCG@10") -> list[Series]:
    """One series per question kind (its mean and 95% interval of ``metric``)."""
    _, records = read_records(run_dir)
    by_kind: dict[str, list[float]] = {}
    for rec in records:
        row = question_row(rec)
        if row["scores"] is not None:
            by_kind.setdefault(row["kind"] or "-", []).append(row["scores"][metric])
    out = []
    for kind, values in sorted(by_kind.items()):
        arr = np.asarray(values, dtype=np.float64)
        lo, hi = bootstrap_ci(arr)
        out.append(Series(kind, [float(arr.mean())], [lo], [hi], len(values)))
    return out


def _graded(summary: dict) -> str:
    g = summary.get("graded")
    if not g:
        return ""
    cut = g["cutoffs"]
    out = [f"<h2>Graded pools</h2><p>{g['questions']} questions, {g['answerable_questions']} answerable.</p>",
           '<table id="graded"><tr><th>view</th><th>metric</th>' + "".join(f"<th>@{k}</th>" for k in cut) + "</tr>"]
    for view in ("answerable", "all", "random"):
        for metric in ("Hit", "P", "Recall", "nDCG"):
            if f"{metric}@{cut[0]}" in g[view]:
                out.append(f"<tr><td>{view}</td><td>{metric}</td>" + "".join(
                    f'<td data-value="{g[view][f"{metric}@{k}"]!r}">{_num(g[view][f"{metric}@{k}"])}</td>'
                    for k in cut) + "</tr>")
    return "".join(out) + "</table>"


def _question_rows(records: list[dict]) -> tuple[str, int]:
    rows = []
    for rec in records:
        row = question_row(rec)
        gold = record_gold(rec) or []
        rank = gold_rank(rec.get("ranked") or [], gold)
        ndcg = row["scores"]["nDCG@10"] if row["scores"] else None
        rows.append((rank is not None and rank <= 3, rank, ndcg, rec, gold))
    rows.sort(key=lambda r: (r[0], -(r[1] or 10**6), r[3]["id"]))       # misses first, worst first
    out = []
    for good, rank, ndcg, rec, gold in rows:
        docs = rec.get("documents") or [{"doc_id": d} for d in rec.get("ranked") or []]
        above = docs[: (rank - 1) if rank else len(docs)]
        detail = ["<table><tr><th>#</th><th>document</th><th>keyword</th><th>vector</th><th>fused</th></tr>"]
        for i, d in enumerate(above + ([docs[rank - 1]] if rank else []), 1):
            mark = " (gold)" if d["doc_id"] in gold else ""
            detail.append(f"<tr><td>{i}</td><td class='text'>{escape(d.get('title') or '')} "
                          f"<code>{escape(d['doc_id'])}</code>{mark}</td><td>{d.get('keyword_rank') or '—'}</td>"
                          f"<td>{d.get('vector_rank') or '—'}</td><td>{_num(d.get('score'))}</td></tr>")
        detail.append("</table>")
        signals = ", ".join(f"{k} {v:.3f}" for k, v in (rec.get("signals") or {}).items() if isinstance(v, (int, float)))
        gate = "keyword list fused" if rec.get("keyword_used") else "keyword list gated off"
        why = (f"<p class='small'>gold: {', '.join(f'<code>{escape(g)}</code>' for g in gold) or 'none'}; {gate}"
               f"{'; ' + escape(signals) if signals else ''}</p>")
        search = escape(f"{rec['id']} {rec.get('text', '')} {rec.get('kind', '')}".lower(), quote=True)
        out.append(
            f"<tr class='question {'hit' if good else 'miss'}' data-id='{escape(rec['id'], quote=True)}' "
            f"data-search='{search}'><td>{escape(rec['id'])}</td><td>{escape(rec.get('kind') or '')}</td>"
            f"<td class='text'><details><summary>{escape(rec.get('text', ''))}</summary>{why}{''.join(detail)}"
            f"</details></td><td data-value='{rank if rank else ''}'>{rank or 'not found'}</td>"
            f"<td data-value='{ndcg!r}'>{_num(ndcg)}</td></tr>")
    return "".join(out), len(rows)


def render_html(run_dir: str | Path, summary: dict) -> str:
    run_dir = Path(run_dir)
    meta, records = read_records(run_dir)
    name = summary.get("name") or run_dir.name
    parts = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>chaja report: {escape(name)}</title>",
             f"<style>{STYLE}</style><script>{SCRIPT}</script></head><body>",
             f"<h1>{escape(name)}</h1><p class='meta'>model <code>{escape(str(summary.get('model')))}</code> · "
             f"store <code>{escape(str(summary.get('store')))}</code> · {summary['questions']} questions, "
             f"{summary.get('scored', summary['questions'])} scored · keyword list used on "
             f"{_num(summary.get('keyword_used'))} · {summary.get('abstained', 0)} abstained</p>",
             "<h2>Summary</h2>",
             _metric_table([(name, summary.get("scored", summary["questions"]), summary["metrics"])], "summary")]
    if summary.get("by_kind"):
        parts += ["<h2>By kind</h2>", _metric_table([(k, g["questions"], g["metrics"])
                                                     for k, g in summary["by_kind"].items()], "by-kind")]
    if len(summary.get("by_lang") or {}) > 1:
        parts += ["<h2>By question language</h2>", _metric_table([(k, g["questions"], g["metrics"])
                                                                   for k, g in summary["by_lang"].items()], "by-lang")]
    if summary.get("scored"):
        parts += ["<h2>Figures</h2><p class='small'>Bars are means, whiskers 95% bootstrap intervals "
                  "(10,000 resamples, seed 0).</p>", svg_figure(series_from_runs([run_dir]), METRICS, name)]
        kinds = _kind_series(run_dir)
        if len(kinds) > 1:
            parts.append(svg_figure(kinds, ["nDCG@10"], "nDCG@10 by kind"))
    parts.append(_graded(summary))
    rows, n = _question_rows(records)
    parts += ["<h2>Questions</h2><p class='small'>Misses (gold not in the top 3) first. Open a question to see "
              "what ranked above its gold page and why.</p>",
              "<input id='filter' placeholder='filter by id, text or kind' oninput='applyFilter()'> "
              "<label><input type='checkbox' id='misses' onchange='applyFilter()'> misses only</label> "
              f"<span class='small'><span id='shown'>{n}</span> shown</span>",
              f"<table id='questions'><tr><th>id</th><th>kind</th><th>question</th><th>gold rank</th>"
              f"<th>nDCG@10</th></tr>{rows}</table>",
              "<h2>Configuration</h2><details><summary>every setting of this run</summary><pre>"
              + escape(json.dumps(meta.get("config"), ensure_ascii=False, indent=2)) + "</pre></details>",
              "</body></html>"]
    return "".join(parts)


def write_html(run_dir: str | Path, out: Path, summary: dict) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_html(run_dir, summary), encoding="utf-8")
    return out
