"""`formula texts ...`: render the supplied-text catalogue, and list what changed since a ref."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from registry import codes, jsontext
from registry.cliutil import add_root, load_registry, require_writable
from registry.counted_nouns import agree, counted
from registry.loader import Registry
from registry.tables import render_table
from registry.terminal import printable, say
from registry.texts import INDEX_FILE, TEXTS_DIR, TextError, catalogue_entry, render


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("texts")
    tsub = p.add_subparsers(dest="texts", metavar="ACTION")
    tsub.required = True
    r = tsub.add_parser("render", help="write the catalogue: one file per calculator plus index.json",
                        description="Render every calculator's active text into formulas/texts/ (or --out DIR).")
    add_root(r)
    r.add_argument("--out", type=Path, default=None, help="output folder (default: ROOT/formulas/texts)")
    r.add_argument("--preview", metavar="SLUG", help="print one calculator's text as its file stands now (unreleased "
                   "edits included) to stdout, writing nothing")
    r.add_argument("--check", action="store_true", help="write nothing; exit 1 when formulas/texts/ differs from a "
                   "fresh render or an edit is unreleased (for pre-commit hooks and pipelines)")
    r.set_defaults(handler=cmd_render)
    c = tsub.add_parser("changed", help="which calculators' texts changed since a git ref or an index file",
                        description="Compare the texts rendered from the registry now with the catalogue index "
                        "at REF: a git ref (commit, tag, branch) or the path of an index.json.")
    c.add_argument("--since", required=True, metavar="REF",
                   help="a git ref (commit, tag, branch: the catalogue index as committed there) or the path of an "
                   "index.json")
    add_root(c)
    c.add_argument("--format", choices=["table", "json"], default="table",
                   help="table: for reading (default); json: the whole result, for scripts")
    c.add_argument("--check", action="store_true", help="exit 1 when any text changed (for pipelines)")
    c.set_defaults(handler=cmd_changed)


def _registry(root: Path | None) -> Registry:
    return load_registry(root, tolerate=codes.UNRELEASED)  # an unreleased edit is what these commands are for


def cmd_render(args: argparse.Namespace) -> int:
    """Render the released texts. Unreleased edits are never rendered: the command refuses and names them."""
    from registry.atomic import JournalRefused, LockBusy, atomic_write, commit, recover, registry_lock
    from registry.loader import resolve_root
    from registry.texts import catalogue_files
    from registry.versioned import unreleased

    if args.preview is not None:
        return preview(args.root, args.preview)
    if args.check:
        return check(args.root, args.out)
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        print(f"error: --out {args.out} is a file; give a folder (it is created if missing)", file=sys.stderr)
        return 1
    if args.out is None:
        require_writable(args.root)
    base = resolve_root(args.root)
    try:
        with registry_lock(base / "formulas"):
            recover(base)
            reg = _registry(base)
            dirty = unreleased(reg)
            if dirty:
                print("error: unreleased edits would enter the catalogue under a released version: "
                      + "; ".join(f"{s} ({why})" for s, why in dirty.items())
                      + ". Release them (`formula release SLUG --reason ...`) or undo them, then render.",
                      file=sys.stderr)
                return 1
            out = args.out or reg.formulas_dir / TEXTS_DIR
            try:
                files = catalogue_files(reg.calculators, reg.units)
            except TextError as e:
                say(printable(f"error: {e}"), file=sys.stderr)
                return 1
            if Path(os.path.abspath(out)).is_relative_to(os.path.abspath(reg.formulas_dir)):
                commit(base, {out / name: text for name, text in files.items()})
            else:  # a catalogue outside the registry is no registry state: each file atomic, no journal
                for name, text in files.items():
                    atomic_write(out / name, text)
    except (LockBusy, JournalRefused) as e:
        say(printable(f"error: {e}"), file=sys.stderr)
        return 1
    except OSError as e:
        print(f"error: cannot write the catalogue into {args.out or 'formulas/texts'}: {e.strerror}", file=sys.stderr)
        return 1
    from registry.cliutil import registry_line
    from registry.loader import shown

    say(registry_line(args.root))
    say(printable(f"rendered {len(files) - 1} texts into {shown(out)}"))
    return 0


def check(root: Path | None, out: Path | None) -> int:
    """`texts render --check`: the committed catalogue is what a render would write (validation's catalogue rule)."""
    from registry.versioned import unreleased

    if out is not None:
        print("error: --check compares the registry's own catalogue (formulas/texts/); drop --out", file=sys.stderr)
        return 1
    reg = _registry(root)
    dirty = unreleased(reg)
    stale = [p for p in reg.problems if p.code == codes.CATALOGUE]
    for p in stale:
        say(printable(p), file=sys.stderr)
    for slug, why in dirty.items():
        say(printable(f"{slug}: {why}: release it (`formula release {slug} --reason ...`) before rendering"),
            file=sys.stderr)
    if stale or dirty:
        print(f"texts render --check: {counted(len(stale), 'catalogue file')} {agree(len(stale), 'differs', 'differ')} "
              f"from a fresh render, {counted(len(dirty), 'unreleased edit')}", file=sys.stderr)
        return 1
    print(f"the catalogue in {reg.rel(reg.formulas_dir / TEXTS_DIR)} is what a render writes")
    return 0


def preview(root: Path | None, ref: str) -> int:
    """Render the working copy of one calculator's text (a hand edit before release); writes nothing."""
    from registry.broken_files import blocking_for

    reg = load_registry(root, tolerate=codes.UNRELEASED, partial=True)
    try:
        c = reg.get(ref)
    except KeyError:
        mine = blocking_for(reg, ref)
        why = f": {mine[0]}" if mine else "; see `formula list`"
        say(printable(f"error: cannot preview {ref!r}{why}"), file=sys.stderr)
        return 1
    try:
        text = render(c, calcs=reg.calculators, units=reg.units)
    except TextError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    say(f"<!-- preview of {c.slug} as formulas/{c.slug}.yaml stands now; not written, not released -->")
    say(text.rstrip())
    return 0


def _old_index(ref: str, root: Path) -> dict[str, Any] | None:
    p = Path(ref)
    if p.is_file():
        try:
            data = jsontext.read_file(p, jsontext.LOCK_MAX, "catalogue index")
            if not isinstance(data, dict) or not isinstance(data.get("texts"), list):
                raise ValueError("it has no 'texts' list")
            return data
        except (ValueError, UnicodeDecodeError) as e:
            print(f"error: {ref} is not a catalogue index (formulas/texts/index.json): {e}", file=sys.stderr)
            return None
    try:
        blob = subprocess.run(["git", "show", f"{ref}:formulas/{TEXTS_DIR}/{INDEX_FILE}"], cwd=root,
                              capture_output=True, text=True, check=True).stdout
    except (subprocess.CalledProcessError, FileNotFoundError) as e:
        msg = getattr(e, "stderr", "") or str(e)
        print(f"error: cannot read the catalogue index at {ref!r}: {msg.strip()}", file=sys.stderr)
        return None
    try:
        if len(blob) > jsontext.LOCK_MAX:
            raise ValueError(f"over {jsontext.LOCK_MAX:,} bytes, more than a catalogue index holds")
        return jsontext.loads(blob)
    except ValueError as e:
        print(f"error: the catalogue index at {ref!r} is not JSON: {e}", file=sys.stderr)
        return None


def changes(old: dict[str, Any], reg: Registry) -> list[dict[str, Any]]:
    before = {e["slug"]: e for e in old.get("texts", [])}
    now = {c.slug: catalogue_entry(c, render(c, calcs=reg.calculators, units=reg.units))
           for c in reg.calculators.values()}
    rows = []
    for slug in sorted(set(before) | set(now)):
        a, b = before.get(slug), now.get(slug)
        if a and b and a["sha256"] == b["sha256"]:
            continue
        rows.append({"slug": slug, "change": "added" if a is None else "removed" if b is None else "changed",
                     "old_version": a["version"] if a else None, "new_version": b["version"] if b else None,
                     "old_sha256": a["sha256"] if a else None, "new_sha256": b["sha256"] if b else None})
    return rows


def cmd_changed(args: argparse.Namespace) -> int:
    reg = _registry(args.root)
    old = _old_index(args.since, reg.root)
    if old is None:
        return 1
    try:
        rows = changes(old, reg)
    except TextError as e:
        say(printable(f"error: {e}"), file=sys.stderr)
        return 1
    if args.format == "json":
        print(json.dumps(rows, indent=2))
    elif not rows:
        print(f"no supplied text changed since {args.since}")
    else:
        short = [dict(r, old_sha256=(r["old_sha256"] or "-")[:19], new_sha256=(r["new_sha256"] or "-")[:19])
                 for r in rows]
        print(render_table(short, ["slug", "change", "old_version", "new_version", "old_sha256", "new_sha256"],
                           drop=["old_sha256", "new_sha256"]))
    if args.check and rows:
        print(f"texts changed --check: {counted(len(rows), 'text')} changed since {args.since}", file=sys.stderr)
        return 1
    return 0
