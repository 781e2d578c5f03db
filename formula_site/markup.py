"""Small HTML helpers for generated pages: escaping, sortable tables, citations, badges.

Pages are Markdown files with raw HTML tables inside, so every cell is escaped once, here, and
the tables stay styled by mkdocs-material (its table styles apply to tables without a class).
"""
from __future__ import annotations

import html
import json
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

GROUP_LABELS = {"replaced": "Replaced by guideline", "other": "Other concern", "none": "No issue identified"}
GROUP_ORDER = ("replaced", "other", "none")
CONCERN_LABELS = {
    "none": "none",
    "replaced_by_guideline": "replaced by guideline",
    "jurisdiction_dependent": "jurisdiction dependent",
    "use_specific_caveat": "use-specific caveat",
    "contested_coefficient": "contested coefficient",
    "newer_version_exists": "newer version exists",
}


def impact_page(predecessor: str, successor: str) -> str:
    """The Impact section's page name for a predecessor -> successor pair (without extension)."""
    return f"{predecessor}--{successor}"


@dataclass(frozen=True)
class Raw:
    """Cell content that is already HTML."""

    html: str
    sort: str | None = None


# Characters Markdown (with the site's attr_list and md_in_html extensions) gives a meaning to beyond
# HTML's: link and image brackets, attribute lists, backslash escapes. As numeric references they are
# plain text to both Markdown and the browser.
_MARKDOWN_ACTIVE = str.maketrans({c: f"&#{ord(c)};" for c in "[]{}\\`"})
SAFE_SCHEMES = ("http://", "https://")


def esc(v: Any) -> str:
    """Registry (or run) text as inert page text, wherever it lands: in raw HTML, in an attribute or in a
    Markdown line. HTML is escaped (no tag, no attribute, no entity of the author's passes), and so are the
    characters that make Markdown links, images and attribute lists, so no registry text becomes a link,
    an image, a script or an event handler. This is the site's one escaping helper."""
    if v is None:
        return "–"
    return html.escape(str(v), quote=True).translate(_MARKDOWN_ACTIVE)


def front_matter_title(text: str) -> str:
    """A page's front matter naming its title, escaped: the theme writes the title into <title> and the
    navigation unescaped, and a title taken from the page's heading would be unescaped first."""
    return f"---\ntitle: {json.dumps(esc(text))}\n---\n"


def safe_href(href: str) -> str:
    """A link target the site may use: a relative path inside the site, or an http(s) URL; anything else
    (javascript:, data:, vbscript:, file:, protocol-relative //host) becomes "#"."""
    h = href.strip()
    if h.lower().startswith(SAFE_SCHEMES):
        return h
    scheme = h.split("/", 1)[0]
    if h.startswith("//") or ":" in scheme or any(ord(ch) < 0x20 for ch in h):
        return "#"
    return h


def link(href: str, text: str) -> Raw:
    return Raw(f'<a href="{esc(safe_href(href))}">{esc(text)}</a>', sort=text)


def fixed(x: float, digits: int = 2) -> str:
    """x with `digits` decimals, a value that rounds to zero from below shown as 0.00, never -0.00."""
    text = f"{x:.{digits}f}"
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


def signed(x: float, digits: int = 2) -> str:
    """A difference with its sign (+2.50, -2.50); one that rounds to zero has none (0.00)."""
    text = fixed(x, digits)
    return text if text.startswith("-") or not text.strip("0.") else "+" + text


def pct(x: float | None, digits: int = 2) -> Raw:
    if x is None:
        return Raw("–", sort="")
    return Raw(fixed(x, digits), sort=f"{x:.6f}")


def num(x: float | int | None) -> Raw:
    if x is None:
        return Raw("–", sort="")
    return Raw(esc(x), sort=str(x))


LONG_CELL = 30  # characters: a plain cell this long is prose, whose long words may break (report.css, fr-long)


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], *, sortable: bool = True,
          caption: str | None = None) -> str:
    """An HTML table; `data-sortable` tables get a filter box and clickable headers (site/js/tables.js)."""
    attrs = ' data-sortable="true"' if sortable else ""
    out = [f"<table{attrs}>"]
    if caption:
        out.append(f"<caption>{esc(caption)}</caption>")
    if any(headers):
        out.append("<thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in headers) + "</tr></thead>")
    out.append("<tbody>")
    for row in rows:
        cells = []
        for v in row:
            if isinstance(v, Raw):
                sort = f' data-sort="{esc(v.sort)}"' if v.sort is not None else ""
                cells.append(f"<td{sort}>{v.html}</td>")
            else:
                text = esc(v)
                cells.append(f'<td class="fr-long">{text}</td>' if len(text) > LONG_CELL else f"<td>{text}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out) + "\n"


def cite(c: Any) -> str:
    """A citation as HTML. Identifiers appear as text, not links: the site makes no external requests
    and links to no outside host."""
    who = ", ".join(c.authors).rstrip(".")
    venue = c.journal or c.body
    s = f"{esc(who)}. <em>{esc(c.title)}</em>. {esc(venue)} {c.year}"
    if c.volume:
        s += f";{esc(c.volume)}"
    if c.pages:
        s += f":{esc(c.pages)}"
    s += "."
    if c.doi:
        s += f" doi:<code>{esc(c.doi)}</code>"
    if c.pmid:
        s += f" PMID <code>{esc(c.pmid)}</code>"
    if c.url:
        s += f" <code>{esc(c.url)}</code>"
    s += " " + verified_badge(c.verified)
    return s


def verified_badge(ok: bool) -> str:
    return ('<span class="fr-badge fr-ok">verified</span>' if ok
            else '<span class="fr-badge fr-warn">unverified</span>')


def badge(text: str, kind: str = "info") -> str:
    return f'<span class="fr-badge fr-{esc(kind)}">{esc(text)}</span>'


def group_badge(group: str) -> str:
    kind = {"replaced": "bad", "other": "warn", "none": "ok"}.get(group, "info")
    return badge(GROUP_LABELS.get(group, group), kind)


def completeness_badge(status: str) -> str:
    kind = {"complete": "ok", "incomplete": "warn", "wrong": "bad"}.get(status, "info")
    return badge(status, kind)
