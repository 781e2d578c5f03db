"""The one table helper every `formula` command prints its tables with (rich, imported lazily).

A table fits the terminal (`$COLUMNS`, else the terminal's width; unlimited when the output is not
a terminal, or with `--wide`). Identifiers, versions, dates and hashes are never cut: columns named in
`whole` keep their cells on one line. Other columns wrap at spaces only, never inside a word (a token over
PROSE_WORD characters gets lines of its own, cut at the column's edge). When the
table cannot fit so, the low-value columns named in `drop` are left out, last first (then others from the
right, never one named in `keep`), and a note under the table names them and how to see them (`--wide`,
`--format json`). When even the `keep` columns cannot fit side by side (a governance table at 80 columns:
who drafted, what changed, who approved), each row is printed as a record instead, one field a line, so
nothing a committee reads is left out to make room. Cells are
plain strings; escaping terminal control characters is the caller's job (one helper does it for all human
output).
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


# Set by the command line for one command: `--wide` asked for (no width limit), and whether the command has
# the option at all (the note under a narrowed table names it only then).
WIDE = False
WIDE_OPTION = False
COMFORT = 28  # a prose column narrower than this wraps into many lines: low-value columns go first
# A prose column is never narrower than its longest word, up to this: a longer token (a dotted identifier, a
# path) is cut at the column's edge rather than costing the table its most telling column.
PROSE_WORD = 20


def terminal_width() -> int | None:
    """$COLUMNS, else the terminal's width; None when the output is not a terminal, or with --wide (never cut)."""
    if WIDE:
        return None
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


def heading(col: str) -> str:
    """A column's heading as printed: its name with spaces for underscores (`released by`), so a heading wraps
    at its spaces like any prose instead of widening its column or breaking inside a word."""
    return col.replace("_", " ")


def _widths(cells: list[list[str]], cols: list[str], whole: set[str]) -> tuple[list[int], list[int]]:
    """Per column, the narrowest it can be without breaking a word (a whole cell, else its longest word; the
    heading's longest word) and its natural width (every cell and the heading on one line)."""
    least, natural = [], []
    for i, c in enumerate(cols):
        texts = [r[i] for r in cells]
        head = heading(c)
        full = max([len(head)] + [len(t) for t in texts])
        words = min(PROSE_WORD, max([len(w) for t in texts for w in t.split()] + [1]))
        # a whole column keeps its heading on one line too: its cells never wrap, so neither may the heading
        least.append(max(max(len(t) for t in texts) if c in whole and texts else words,
                         len(head) if c in whole else max(len(w) for w in head.split() or [head])))
        natural.append(full)
    return least, natural


def fit_columns(cells: list[list[str]], cols: list[str], whole: set[str], drop: Sequence[str],
                width: int | None, keep: Sequence[str] = ()) -> dict[str, int] | None:
    """The columns kept and the width of each; None when there is no width limit (every column at its natural
    width). Words are never broken, so a column is never narrower than its longest word (or, for `whole` ones,
    its longest cell):

    1. the `drop` columns go, last first, until every kept prose column can be COMFORT wide (or its natural
       width), so what is kept reads in a few lines rather than a word a line;
    2. if the kept columns still cannot fit at their narrowest, more go from the right (never the first, nor
       one named in `keep` that has something to show); the result may then still be too wide (`render_table`
       prints records instead);
    3. what is left over widens the columns closest to one line per cell first.
    """
    if width is None:
        return None
    least, natural = _widths(cells, cols, whole)
    comfortable = [natural[i] if cols[i] in whole else min(natural[i], max(least[i], COMFORT))
                   for i in range(len(cols))]
    showing = list(range(len(cols)))
    # a `keep` column with nothing in it (no one signed the history before signing) goes first, as decoration
    empty = {cols.index(c) for c in keep if c in cols and all(r[cols.index(c)] in ("", "-") for r in cells)}
    drop = [*drop, *(cols[i] for i in sorted(empty, reverse=True))]

    def need(ws: list[int]) -> int:
        return sum(ws[i] for i in showing) + GAP * (len(showing) - 1)

    for name in reversed(list(drop)):
        if need(comfortable) <= width:
            break
        if name in cols and cols.index(name) in showing:
            showing.remove(cols.index(name))
    kept = {cols.index(c) for c in keep if c in cols and cols.index(c) not in empty}
    while need(least) > width:
        spare_cols = [i for i in showing[1:] if i not in kept]
        if not spare_cols:
            break
        showing.remove(spare_cols[-1])
    out = {i: least[i] for i in showing}
    spare = max(0, width - need(least))
    for i in sorted(showing, key=lambda k: natural[k] - out[k]):  # the closest to one line per cell first
        grow = min(spare, natural[i] - out[i])
        if grow > 0:
            out[i] += grow
            spare -= grow
    return {cols[i]: out[i] for i in showing}


def wrap_cell(text: str, width: int) -> str:
    """A prose cell in lines of at most `width`, broken at spaces only; a token longer than the column (a dotted
    identifier, a path) gets lines of its own, cut at the column's edge."""
    out: list[str] = []
    for para in text.split("\n"):
        line = ""
        for word in para.split():
            if len(word) > width:
                if line:
                    out.append(line)
                    line = ""
                while len(word) > width:
                    out.append(word[:width])
                    word = word[width:]
            if not line:
                line = word
            elif len(line) + 1 + len(word) <= width:
                line += " " + word
            else:
                out.append(line)
                line = word
        out.append(line)
    return "\n".join(out)


# rich's box parts: only a dashed line under the header, columns apart by spaces
_BOX_LINES = ("    ", "    ", " -  ", "    ", "    ", "    ", "    ", "    ")


def render_table(rows: list[dict[str, Any]], cols: list[str], *, whole: Sequence[str] = (),
                 drop: Sequence[str] = (), keep: Sequence[str] = ()) -> str:
    """The rows as a plain-text table of `cols` that fits the terminal (see the module docstring).

    `whole` adds column names to WHOLE_COLUMNS; `drop` names low-value columns, most valuable first; `keep`
    names columns never left out (records are printed when they cannot fit side by side).
    """
    from rich.box import Box
    from rich.console import Console
    from rich.table import Table

    keep_whole = set(whole) | (WHOLE_COLUMNS & set(cols))
    cells = [[cell(r.get(c)) for c in cols] for r in rows]
    width = terminal_width()
    fitted = fit_columns(cells, cols, keep_whole, drop, width, keep)
    if fitted is not None and width is not None and _too_wide(cells, cols, keep_whole, fitted, width):
        return records(cells, cols, keep_whole, cols, width)  # (a record has room for every column)
    shown = list(fitted) if fitted is not None else list(cols)
    index = [cols.index(c) for c in shown]
    table = Table(box=Box("\n".join(_BOX_LINES) + "\n", ascii=True), show_edge=False, pad_edge=False,
                  padding=(0, GAP - 1, 0, 0), header_style="", highlight=False)
    for c in shown:
        w = fitted[c] if fitted is not None else None
        head = heading(c) if w is None or len(heading(c)) <= w else wrap_cell(heading(c), w)  # at its spaces
        table.add_column(head, no_wrap=c in keep_whole, overflow="fold", width=w, min_width=w)
    def wrapped(c: str, text: str) -> str:
        w = fitted.get(c) if fitted is not None else None
        return text if w is None or c in keep_whole or len(text) <= w else wrap_cell(text, w)

    for row in cells:
        table.add_row(*(wrapped(c, row[i]) for c, i in zip(shown, index)))
    natural = sum(max([len(heading(c))] + [len(r[i]) for r in cells]) for c, i in zip(shown, index))
    console = Console(width=(width or natural + GAP * len(shown)) + 1, color_system=None, force_terminal=False,
                      markup=False, emoji=False, highlight=False, soft_wrap=False, legacy_windows=False)
    with console.capture() as cap:
        console.print(table)
    text = "\n".join(line.rstrip() for line in cap.get().splitlines() if line.strip())
    left = [c for c in cols if c not in shown]
    if left:
        import textwrap

        how = "--wide or --format json shows" if WIDE_OPTION else "--format json has"
        note = f"(not shown at {width} columns: {', '.join(heading(c) for c in left)}; {how} every column)"
        text += "\n" + textwrap.fill(note, width=max(width or 0, 40), break_on_hyphens=False)
    return text


def _too_wide(cells: list[list[str]], cols: list[str], whole: set[str], fitted: dict[str, int], width: int) -> bool:
    """Whether the columns `fit_columns` kept still cannot stand side by side within `width` at their narrowest."""
    least, _ = _widths(cells, cols, whole)
    return sum(least[cols.index(c)] for c in fitted) + GAP * (len(fitted) - 1) > width


def records(cells: list[list[str]], cols: list[str], whole: set[str], shown: list[str], width: int) -> str:
    """Each row as a record: its leading identifier columns (those in `whole`) on the first line, then one field
    a line, `label  value`, the value wrapped at spaces within `width`; a blank line between records."""
    ids: list[str] = []
    for c in shown:
        if c not in whole or len(ids) == 2:
            break
        ids.append(c)
    fields = [c for c in shown if c not in ids]
    label = max((len(heading(c)) for c in fields), default=0)
    room = max(width - 2 - label - GAP, 16)
    out: list[str] = []
    for row in cells:
        if out:
            out.append("")
        out.append("  ".join(row[cols.index(c)] for c in ids) if ids else "-")
        for c in fields:
            lines = wrap_cell(row[cols.index(c)] or "-", room).split("\n")
            out.append(f"  {heading(c):<{label}}{' ' * GAP}{lines[0]}".rstrip())
            out += [f"{' ' * (2 + label + GAP)}{line}".rstrip() for line in lines[1:]]
    return "\n".join(out)
