"""The one table helper every `formula` command prints its tables with (rich, imported lazily).

A table fits the terminal (`$COLUMNS`, else the terminal's width; unlimited when the output is not
a terminal). Identifiers, versions, dates and hashes are never cut: columns named in `whole` keep
their cells on one line. When even those do not fit, the low-value columns named in `drop` are
left out, last first, and a note under the table names them (`--format json` shows every column).
Other columns wrap inside their cell. Cells are plain strings; escaping terminal control
characters is the caller's job (one helper does it for all human output).
"""
from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from typing import Any

# Column names that hold an identifier, a version, a date or a hash: never wrapped or cut.
WHOLE_COLUMNS = frozenset("""
    slug medcalc_id id version active_version old_version new_version recorded_version current_version
    effective approved next_review last_review date since hash sha256 old_sha256 new_sha256 recorded_sha256
    line row_number seed arm calculator
""".split())
GAP = 2  # spaces between columns


def terminal_width() -> int | None:
    """$COLUMNS, else the terminal's width; None when the output is not a terminal (never cut)."""
    env = os.environ.get("COLUMNS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    if sys.stdout.isatty():
        return shutil.get_terminal_size().columns
    return None


def cell(v: Any) -> str:
    """One cell as terminal-safe plain text: every table cell passes here (cells hold registry and record
    text, so control characters are made visible by registry.terminal.printable)."""
    from registry.terminal import printable

    if v is None:
        return "-"
    if isinstance(v, (list, tuple)):
        return printable(", ".join(map(str, v))) or "-"
    if isinstance(v, bool):
        return "yes" if v else ""
    return printable(str(v))


def _widths(cells: list[list[str]], cols: list[str], whole: set[str]) -> tuple[list[int], list[int]]:
    """Per column, the narrowest it can be (a whole cell, else its longest word) and its natural width."""
    least, natural = [], []
    for i, c in enumerate(cols):
        texts = [r[i] for r in cells]
        full = max([len(c)] + [len(t) for t in texts])
        words = max([len(w) for w in c.split()] + [len(w) for t in texts for w in t.split()] + [1])
        least.append(max(full if c in whole else words, max(len(w) for w in c.split() or [c])))
        natural.append(full)
    return least, natural


def fit_columns(cells: list[list[str]], cols: list[str], whole: set[str], drop: Sequence[str],
                width: int | None) -> dict[str, int] | None:
    """The columns kept and the width of each: the `drop` ones go, last first, until every kept one fits.

    None when there is no width limit (every column at its natural width).
    """
    if width is None:
        return None
    least, natural = _widths(cells, cols, whole)
    keep = list(range(len(cols)))

    def need() -> int:
        return sum(least[i] for i in keep) + GAP * (len(keep) - 1)

    for name in reversed(list(drop)):
        if need() <= width:
            break
        if name in cols and cols.index(name) in keep:
            keep.remove(cols.index(name))
    out = {i: least[i] for i in keep}
    spare = width - need()
    if spare < 0:  # still too wide: whole columns stay whole, the others share what is left and fold long words
        free = [i for i in keep if cols[i] not in whole]
        room = width - sum(least[i] for i in keep if i not in free) - GAP * (len(keep) - 1)
        total = sum(least[i] for i in free) or 1
        for i in free:
            out[i] = max(3, room * least[i] // total)
        spare = 0
    for i in sorted(keep, key=lambda k: natural[k] - out[k]):  # the closest to one line per cell first
        grow = min(spare, natural[i] - out[i])
        if grow > 0:
            out[i] += grow
            spare -= grow
    return {cols[i]: out[i] for i in keep}


# rich's box parts: only a dashed line under the header, columns apart by spaces
_BOX_LINES = ("    ", "    ", " -  ", "    ", "    ", "    ", "    ", "    ")


def render_table(rows: list[dict[str, Any]], cols: list[str], *, whole: Sequence[str] = (),
                 drop: Sequence[str] = ()) -> str:
    """The rows as a plain-text table of `cols` that fits the terminal (see the module docstring).

    `whole` adds column names to WHOLE_COLUMNS; `drop` names low-value columns, most valuable first.
    """
    from rich.box import Box
    from rich.console import Console
    from rich.table import Table

    keep_whole = set(whole) | (WHOLE_COLUMNS & set(cols))
    cells = [[cell(r.get(c)) for c in cols] for r in rows]
    width = terminal_width()
    fitted = fit_columns(cells, cols, keep_whole, drop, width)
    shown = list(fitted) if fitted is not None else list(cols)
    index = [cols.index(c) for c in shown]
    table = Table(box=Box("\n".join(_BOX_LINES) + "\n", ascii=True), show_edge=False, pad_edge=False,
                  padding=(0, GAP - 1, 0, 0), header_style="", highlight=False)
    for c in shown:
        w = fitted[c] if fitted is not None else None
        table.add_column(c, no_wrap=c in keep_whole, overflow="fold", width=w, min_width=w)
    for row in cells:
        table.add_row(*(row[i] for i in index))
    natural = sum(max([len(c)] + [len(r[i]) for r in cells]) for c, i in zip(shown, index))
    console = Console(width=(width or natural + GAP * len(shown)) + 1, color_system=None, force_terminal=False,
                      markup=False, emoji=False, highlight=False, soft_wrap=False, legacy_windows=False)
    with console.capture() as cap:
        console.print(table)
    text = "\n".join(line.rstrip() for line in cap.get().splitlines() if line.strip())
    left = [c for c in cols if c not in shown]
    if left:
        import textwrap

        note = f"(not shown at {width} columns: {', '.join(left)}; --format json has every column)"
        text += "\n" + textwrap.fill(note, width=max(width or 0, 40))
    return text
