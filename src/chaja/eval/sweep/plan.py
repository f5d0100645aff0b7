"""The cells of a sweep, in the order its table shows them: each setting's values one at
a time (or every combination, a grid), then the variant stores; the base marked."""
from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from chaja.config import Config
from chaja.eval.sweep.settings import Setting, config_value, freeze

MAX_GRID_CELLS = 256

#: one row of the table: (setting label, value label, is the base, the cell to run or None for the base)
Row = tuple[str, str, bool, "Cell | None"]


@dataclass
class Cell:
    name: str                                   # directory name under the sweep folder
    changes: list[tuple[str, Any]]              # (dotted key, value); empty for the base
    labels: list[tuple[str, str]]               # (short key, value label)
    index: Any = None                           # a variant's own index, else None
    extra: dict = field(default_factory=dict)   # further config changes (e.g. the freshness date)


def _dir_name(text: str) -> str:
    return re.sub(r"[^\w.=,+-]", "_", text)


def one_at_a_time(settings: Sequence[Setting], base: Config) -> list[tuple[Setting, list[Any]]]:
    """Each setting with its values, the base value first when the list lacks it."""
    out = []
    for s in settings:
        values = list(s.values)
        current = config_value(base, s.key)
        if freeze(current) not in {freeze(v) for v in values}:
            values.insert(0, current)
        out.append((s, values))
    return out


def grid_cells(settings: Sequence[Setting], base: Config) -> list[Cell]:
    lists = [[(s, v) for v in s.values] for s in settings]
    total = math.prod(len(x) for x in lists)
    if total > MAX_GRID_CELLS:
        raise ValueError(f"a grid over {len(settings)} settings has {total} cells (limit {MAX_GRID_CELLS}); "
                         "narrow it with --only")
    cells = []
    for combo in itertools.product(*lists):
        changes = [(s.key, v) for s, v in combo if freeze(v) != freeze(config_value(base, s.key))]
        labels = [(s.short, s.label(v)) for s, v in combo]
        name = ",".join(f"{k}={v}" for k, v in labels)
        cells.append(Cell(_dir_name(name), changes, labels))
    return cells


def plan_rows(settings: Sequence[Setting], base: Config, grid: bool,
         variants: Sequence[tuple[str, str, Any]]) -> list[Row]:
    """Every row of the sweep: the settings' cells (the base among them), then one per variant."""
    rows: list[Row] = []
    if grid:
        cells = grid_cells(settings, base)
        if all(c.changes for c in cells):          # the base is not a combination of the listed values
            rows.append(("base", "", True, None))
        for cell in cells:
            rows.append((",".join(k for k, _ in cell.labels), ",".join(v for _, v in cell.labels),
                         not cell.changes, None if not cell.changes else cell))
    else:
        for s, values in one_at_a_time(settings, base):
            current = freeze(config_value(base, s.key))
            for v in values:
                is_base = freeze(v) == current
                cell = None if is_base else Cell(_dir_name(f"{s.short}={s.label(v)}"), [(s.key, v)],
                                                 [(s.short, s.label(v))])
                rows.append((s.short, s.label(v), is_base, cell))
    for setting, value, idx in variants:
        rows.append((setting, value, False, Cell(_dir_name(f"{setting}={value}"), [], [(setting, value)], index=idx)))
    return rows


def freshness(changes: list[tuple[str, Any]], base: Config, newest: str | None) -> dict:
    """The further change a cell with half-lives needs: measured from ``newest`` (the newest
    date the base run retrieved) when ``search.now`` is unset, so a sweep gives the same
    numbers on another day."""
    if any(k == "search.half_life_days" and v for k, v in changes) and base.search.now is None and newest:
        return {"search.now": newest}
    return {}
