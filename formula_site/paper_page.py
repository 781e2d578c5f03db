"""The paper's own Tables 1 and 13, "as reported by the paper", kept apart from computed tables."""
from __future__ import annotations

from pathlib import Path

import yaml

from formula_site.markup import esc, table


def paper_page(data_file: Path) -> str:
    data = yaml.safe_load(data_file.read_text(encoding="utf-8"))
    t1, t13 = data["table1"], data["table13"]
    return "\n".join([
        "---\nhide:\n  - navigation\n  - toc\n---",  # the paper's tables need the width
        "# As reported by the paper",
        "",
        '!!! warning "Not computed here"',
        "    These are the paper's own numbers, transcribed from its Tables 1 and 13 for comparison. They come "
        "from model runs this site does not hold; none of them is mixed into the tables on the results page, "
        "which are computed from stored runs.",
        "",
        f"Source: *{esc(data['citation'])}*",
        "",
        "## Table 1: accuracy by arm",
        "",
        table(t1["headers"], t1["rows"], sortable=False),
        "",
        table(t1["other_headers"], t1["other_rows"], sortable=False),
        "",
        f"<small>{esc(t1['caption'])}</small>",
        "",
        "## Table 13: accuracy by audit group",
        "",
        table(t13["headers"], t13["rows"], sortable=False),
        "",
        f"<small>{esc(t13['caption'])}</small>",
        "",
    ])
