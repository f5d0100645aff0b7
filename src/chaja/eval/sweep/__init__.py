"""Every search setting, measured: a one-at-a-time sweep against the production default.

The base is the production config (``Config()``, with any ``--config``/``--set``
applied). Each cell changes one setting (:data:`DEFAULT_SETTINGS`), runs the
question set with :func:`chaja.eval.runner.evaluate` into ``DIR/<setting>=<value>/``
(records kept for every cell; the base in ``DIR/base/``), and is compared with
the base by the paired noise test of :mod:`chaja.eval.noise` on every metric.
The verdict of a row is that of nDCG@10: ``better`` / ``worse`` when the 95%
bootstrap CI of the difference excludes 0 and the randomization p < 0.05, else
``within noise``.

Default settings and values (the base value is always included and marked):

============================  ==============================================
rrf_k                         10, 20, 60
candidates                    20, 60, 100
gate                          on, off
title_weight                  1, 2, 5
heading_weight                1, 1.5, 3
reserved_keyword_share        0, 0.4
title_path, title_slot        off, on
chunk_cap                     0, 1, 2
heading_list                  on, off     (only when the store keeps heading
                                           vectors)
language_projection,          off, on     (only when the store holds two or
language_centering,                        more languages)
cross_language_keyword
fusion, query_terms,          calibrated / convex / rrf; content / all; and
background_prior, multipart   the calibrated fusion's own settings on stores
language_margin … feedback_   of two or more languages (language_margin,
limit                         language_softness, keyword_neutral_depth and
                              _best, keyword_hold, translated_keyword,
                              translation_threshold, feedback_weight, _depth,
                              _limit): see ``chaja.eval.sweep.settings``
source_weights                none, production (filings and statistics 1.15,
                              brokerage API 1.10, news 1.00; only when those
                              weights tell the store's sources apart)
half_life_days                none, production (news 14, filing 90, financials
                              180, macro 30 days; only when the store holds
                              those document types and the base run retrieved
                              dated chunks of them)
============================  ==============================================

Freshness is measured from ``search.now``; when that is unset the half-life cell
uses the newest date among the chunks the base run retrieved (recorded in the
cell's config), so the sweep gives the same numbers on another day.

With ``grid=True`` the cells are every combination of the selected settings'
values instead (at most :data:`MAX_GRID_CELLS`). Settings fixed at index time
(analyser, chunk size, encoder batch size) need another store: each *variant*
``(setting, value, index)`` is run with the base search settings and compared
like a cell; the question ids pair the runs, so both stores must use the same
document ids.

The encoder dominates search time, so one :class:`QueryMemo` encodes each
question once (alone, as the searcher would) before the base run and serves every
cell; the ``ms`` in a sweep's records therefore exclude query encoding.

The steps live in their own modules: :mod:`~chaja.eval.sweep.settings` (what varies),
:mod:`~chaja.eval.sweep.memo` (the query memo), :mod:`~chaja.eval.sweep.watch` (what
the base run shows, and so what to skip), :mod:`~chaja.eval.sweep.plan` (the cells),
:mod:`~chaja.eval.sweep.run` (running them) and :mod:`~chaja.eval.sweep.tables` (the
result as text and Markdown).
"""
from __future__ import annotations

from chaja.eval.sweep.memo import QueryMemo
from chaja.eval.sweep.plan import MAX_GRID_CELLS, Cell, grid_cells, one_at_a_time, plan_rows
from chaja.eval.sweep.run import BASE_DIR, sweep
from chaja.eval.sweep.settings import (DEFAULT_SETTINGS, PRODUCTION_HALF_LIFE_DAYS, PRODUCTION_SOURCE_WEIGHTS, Setting,
                                       full_key, parse_values, select_settings, value_label)
from chaja.eval.sweep.tables import SWEEP_METRICS, VERDICT_METRIC, format_table, markdown_table
from chaja.eval.sweep.watch import _Watched, applicability

__all__ = [
    "BASE_DIR", "Cell", "DEFAULT_SETTINGS", "MAX_GRID_CELLS", "PRODUCTION_HALF_LIFE_DAYS",
    "PRODUCTION_SOURCE_WEIGHTS", "QueryMemo", "SWEEP_METRICS", "Setting", "VERDICT_METRIC", "_Watched",
    "applicability", "format_table", "full_key", "grid_cells", "markdown_table", "one_at_a_time", "parse_values",
    "plan_rows", "select_settings", "sweep", "value_label",
]
