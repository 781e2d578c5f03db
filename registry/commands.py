"""Sub-commands of `formula` that read or maintain what a registry is: validate, list, show, diff, schema, lock,
recover, stale (who decided what has its own: registry.governance.commands)."""
from __future__ import annotations

import argparse
import difflib
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from registry import jsontext
from registry import versions as ver
from registry.cliutil import (
    CommandError,
    add_format,
    add_key,
    add_root,
    find_calculator,
    load_valid,
    maintain,
    require_writable,
)
from registry.counted_nouns import agree, counted
from registry.loader import Registry, clear_cache, load
from registry.report import calculator_rows, show_text
from registry.schema import Calculator, ConcernType, VersionStatus
from registry.tables import render_table
from registry.terminal import printable, say
from registry.validate import summary, validate


def register(sub: argparse._SubParsersAction) -> None:
    _register_reading(sub)
    _register_maintaining(sub)


def _register_reading(sub: argparse._SubParsersAction) -> None:
    """validate, list, show, diff: what the registry holds"""
    p = sub.add_parser("validate",
                       description="Check schema, references, cycles, versions and the lock file. "
                       "Errors print as path:line: field: problem; exit status 1 when any.")
    add_root(p)
    p.set_defaults(handler=cmd_validate)

    p = sub.add_parser("list", description="List the calculators with their audit status.")
    add_root(p)
    add_format(p)
    concerns = [c.value for c in ConcernType]  # named in the help, where they wrap (a {a,b,...} metavar cannot)
    p.add_argument("--concern", choices=concerns, metavar="CONCERN",
                   help="only this literature-audit concern: " + ", ".join(concerns))
    p.add_argument("--group", choices=["replaced", "other", "none"], help="only this audit group (paper Table 13)")
    p.set_defaults(handler=cmd_list)

    p = sub.add_parser("show", description="Show one calculator for a clinician.")
    add_root(p)
    p.add_argument("calculator", help="slug or benchmark id")
    add_format(p)
    p.set_defaults(handler=cmd_show)

    p = sub.add_parser("diff",
                       description="The rendered supplied text of each version, as a unified diff, then the changed "
                       "constants, inputs, tables and dependencies. V2 may be a draft waiting for approval.")
    add_root(p)
    p.add_argument("calculator", help="slug or benchmark id")
    p.add_argument("v1", metavar="V1", help="the older version, e.g. 1.0.0 (`formula history` lists them)")
    p.add_argument("v2", metavar="V2", help="the newer version, or a draft waiting for approval")
    p.add_argument("--format", choices=["text", "json"], default="text",
                   help="json: the text diff and every change with its old and new values, for tools")
    p.set_defaults(handler=cmd_diff)


def _register_maintaining(sub: argparse._SubParsersAction) -> None:
    """schema, lock, recover, stale: the files behind the registry"""
    p = sub.add_parser("schema")
    add_root(p)
    p.add_argument("--kind", choices=["calculator", "guideline", "units", "policy"], default="calculator",
                   help="policy: formulas/policy/governance.yaml, who may approve")
    p.set_defaults(handler=cmd_schema)

    p = sub.add_parser("lock",
                       description="Add every active or superseded version missing from formulas/REGISTRY.lock, "
                       "with a snapshot under formulas/history/. Never overwrites a recorded hash, except with "
                       "--rehash, the one-off migration of a lock written in an older format.")
    add_root(p)
    p.add_argument("--rehash", action="store_true",
                   help="migrate a format-1 lock to the current format: refuses unless every released version "
                   "still matches its recorded hash under the old scheme; rewrites active versions' hashes and "
                   "snapshots (superseded snapshots keep theirs)")
    add_key(p)
    p.set_defaults(handler=cmd_lock)

    p = sub.add_parser("recover",
                       description="Restores every file named in formulas/.journal.json to its previous content. "
                       "Writing commands do this themselves before they start.")
    add_root(p)
    p.set_defaults(handler=cmd_recover)

    p = sub.add_parser("stale",
                       description="Reads a results.jsonl (one JSON object per line naming its calculator by "
                       "slug/text_slug or calculator_id, with text_version and/or text_sha256) and lists the "
                       "cases whose text changed since. Exit 1 when the file (or a line of it) cannot be read, and with --check "
                       "when any case is stale.")
    add_root(p)
    p.add_argument("results", type=Path, nargs="?", help="RESULTS.jsonl, or a run folder holding results.jsonl")
    p.add_argument("--runs", type=Path, metavar="DIR", help="instead of RESULTS: every results.jsonl below DIR (e.g. "
                   "results/; none there is nothing stale)")
    add_format(p)
    p.add_argument("--check", action="store_true", help="exit 1 when any case is stale or cannot be checked "
                   "(for pipelines)")
    p.set_defaults(handler=cmd_stale)


def cmd_validate(args: argparse.Namespace) -> int:
    from registry.cliutil import registry_line

    say(registry_line(args.root))  # which registry these problems are of (as git names its repository)
    reg = load(args.root)
    validate(reg, parallel=True)
    from registry.validate import warnings

    for w in warnings(reg):  # the registry stays valid: a name that keeps a replaced label, say
        say(printable(f"warning: {w}"))
    if reg.problems:
        from registry.validate import first_fix

        for p in reg.problems:
            say(printable(p))
        advice = first_fix(reg.problems)
        raise CommandError(counted(len(reg.problems), "problem") + (f"; {printable(advice)}" if advice else ""))
    print(summary(reg))
    from registry.governance.pending import pending

    waiting = pending(reg)
    for item in waiting:  # an approval that does not count on a draft: said now, before anyone counts on it
        for why in item.problems:
            say(printable(f"warning: {item.slug} {item.version} (draft): {why}"))
    if waiting:
        say(printable(f"{counted(len(waiting), 'version')} pending approval or their effective date: "
                      + ", ".join(f"{p.slug} {p.version}" for p in waiting) + " (`formula pending`)"))
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    reg = load_valid(args.root)
    rows = calculator_rows(reg)
    if args.concern:
        rows = [r for r in rows if r["concern"] == args.concern]
    if args.group:
        rows = [r for r in rows if r["audit_group"] == args.group]
    if args.format == "json":
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    # the paper's finding stands in the heading ("original text (paper)"), so a cell is one word or two, and a row
    # keeps to one line at 80 columns unless its concern is long
    shown = [{"id": r["medcalc_id"], "slug": r["slug"], "version": r["active_version"], "concern": r["concern"].replace("_", " "),
              "group": r["audit_group"], "original text (paper)": r["completeness"],
              "successors": r["successors"], "intended use": r["intended_use"], "category": r["category"],
              "output": r["output"]} for r in rows]
    say(render_table(shown, list(shown[0]) if shown else ["slug"], whole=["id", "original text (paper)"],
                       drop=["group", "successors", "intended use", "category", "output"]))
    say(_counts(rows))
    return 0


NBSP = "\u00a0"  # joins a count to its words, so a line never ends between 'wrong' and '10'


def _counts(rows: list[dict[str, Any]]) -> str:
    def tally(key: str) -> str:
        c: dict[str, int] = {}
        for r in rows:
            c[str(r[key])] = c.get(str(r[key]), 0) + 1
        return ", ".join(f"{k} {v}".replace("_", " ").replace(" ", NBSP) for k, v in sorted(c.items()))

    import textwrap

    from registry.tables import terminal_width

    lines = [f"{len(rows)} calculators", f"concern: {tally('concern')}", f"audit group: {tally('audit_group')}",
             f"original text (paper's audit): {tally('completeness')}",
             "current text: `formula audit completeness` checks the registry's texts today"]
    width = min(terminal_width() or 100, 100)
    wrapped = (textwrap.fill(line, width=width, subsequent_indent="  ", break_on_hyphens=False) for line in lines)
    return "\n" + "\n".join(wrapped).replace(NBSP, " ")


def cmd_show(args: argparse.Namespace) -> int:
    reg = load_valid(args.root)
    c = find_calculator(reg, args.calculator)
    if args.format == "json":
        from registry.governance.signatures import views

        checked = [d.model_dump() for d in views(reg, c) if d.version == c.active.version]
        print(json.dumps({**c.model_dump(mode="json"), "active_decisions": checked}, indent=2, ensure_ascii=False))
    else:
        say(show_text(reg, c))
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    from registry.diffing import diff, scoring_changes
    from registry.versioned import rendered, version_content

    reg = load_valid(args.root)
    c = find_calculator(reg, args.calculator)
    a, b = version_content(reg, c, args.v1), version_content(reg, c, args.v2)
    for v, data in ((args.v1, a), (args.v2, b)):
        if data is None:
            known = ", ".join(x.version for x in c.versions)
            raise CommandError(f"{c.slug} has no released or draft version {v!r}; versions: {known}")
    assert a is not None and b is not None
    ta, tb = rendered(reg, c, args.v1) or "", rendered(reg, c, args.v2) or ""
    text = list(difflib.unified_diff(ta.splitlines(), tb.splitlines(), f"{c.slug} {args.v1} (supplied text)",
                                     f"{c.slug} {args.v2} (supplied text)", lineterm=""))
    changes = [ch for ch in diff(a, b) if ch.what != "text"]
    scoring = bool(scoring_changes(changes))
    if args.format == "json":
        print(json.dumps({"slug": c.slug, "from": args.v1, "to": args.v2, "text_diff": text,
                          "changes": [ch.model_dump(mode="json") for ch in changes],
                          "scoring_changed": scoring}, indent=2, ensure_ascii=False))
        return 0
    if not text and not changes:
        say(printable(f"{c.slug}: {args.v1} and {args.v2} have the same content; no change to scoring"))
        return 0
    say("\n".join(printable(t) for t in text) if text else "supplied text: unchanged")
    say()
    say("\n".join(printable(f"- {ch.line()}") for ch in changes) or "- no change beyond the text")
    if not scoring:
        say("no change to scoring: the same inputs give the same answers")
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    from registry.schema import Guideline, UnitsFile

    if args.root is not None and not (args.root / "formulas").is_dir():
        raise CommandError(f"no formulas/ folder in {args.root}; pass --root DIR")

    from registry.trust.policy import Policy

    models: dict[str, type[BaseModel]] = {"calculator": Calculator, "guideline": Guideline, "units": UnitsFile,
                                          "policy": Policy}
    model = models[args.kind]
    print(json.dumps(model.model_json_schema(), indent=2, ensure_ascii=False))
    return 0


def cmd_lock(args: argparse.Namespace) -> int:
    if args.rehash:
        from registry.errors import ReleaseError
        from registry.governance.writeplan import writing

        require_writable(args.root)
        try:
            with writing(args.root) as base:  # the registry lock, and any interrupted change rolled back first
                reg = load(base)
                if reg.problems and any(p.code != "R-LOCK-FORMAT" for p in reg.problems):
                    for p in reg.problems:
                        print(p, file=sys.stderr)
                    raise CommandError(f"{counted(len(reg.problems), 'problem')} in the registry files: fix them before "
                                       "rehashing")
                from registry.cliutil import registry_line

                say(registry_line(args.root))
                return _rehash(reg)
        except ReleaseError as e:  # the lock is held by another command
            from registry.cliutil import in_registry

            raise CommandError(in_registry(str(e), args.root)) from None

    def lock_all() -> str:
        from registry.atomic import commit
        from registry.errors import ReleaseError
        from registry.governance.writeplan import writing

        with writing(args.root) as base:
            reg = load(base)
            if reg.problems:
                raise ReleaseError("\n".join(map(str, reg.problems)))
            lock = _current_lock(reg)
            changes: dict[Path, str | None] = {}
            added = 0
            new: list[tuple[Calculator, str, str]] = []
            for slug, c in sorted(reg.calculators.items()):
                entry = lock.setdefault(slug, {})
                for v in ver.released(c):
                    if v.version in entry:
                        continue
                    if v.status != VersionStatus.active:
                        raise ReleaseError(f"{slug}: superseded version {v.version} has no lock entry and cannot "
                                           "be reconstructed")
                    data = ver.released_content(reg, c, v)
                    entry[v.version] = ver.content_hash(data)
                    changes[ver.snapshot_path(reg.formulas_dir, slug, v.version)] = ver.snapshot_text(data)
                    new.append((c, v.version, entry[v.version]))
                    added += 1
            from registry.governance.release import sign_new_versions

            signed = sign_new_versions(reg, new, args.key, changes)
            changes[reg.lock_path] = ver.lock_text(lock, ver.lock_seal(reg.lock_path))
            commit(reg.root, changes)
        return (f"locked {counted(added, 'new version')}; {reg.rel(reg.lock_path)} holds "
                f"{sum(len(v) for v in lock.values())}" + signed)

    return maintain(args.root, lock_all)


def _rehash(reg: Registry) -> int:
    """Migrate an older lock: verify every released version under its old scheme, then hash with the current one.

    Safe to re-run: on a current-format lock it changes nothing. Each active version is rehashed
    (its dependencies and cited guidelines included) and snapshotted again. A superseded version
    is rebuilt from its snapshot through the schema (it must dump back to exactly what the
    snapshot holds) and its snapshot rewritten in the current form: it keeps only what the older
    format recorded, and the dependency hashes it was released with.
    """
    try:
        fmt = ver.lock_format(reg.lock_path)
    except ValueError as e:
        raise CommandError(str(e)) from None
    if fmt == ver.LOCK_FORMAT:
        print(f"{reg.rel(reg.lock_path)} is already format {fmt}; nothing to rehash")
        return 0
    if fmt > ver.LOCK_FORMAT or fmt < 1:
        raise CommandError(f"{reg.rel(reg.lock_path)} is format {fmt}, which this tool does not know")
    lock = ver.read_lock(reg.lock_path)
    stale, snaps = [], {}
    for slug, c in sorted(reg.calculators.items()):
        for v in ver.released(c):
            recorded = lock.get(slug, {}).get(v.version)
            now: str | None
            if v.status == VersionStatus.active:
                now = ver.legacy_hash(reg, slug, fmt)
            else:
                snap = ver.read_snapshot(reg.formulas_dir, slug, v.version)
                now = ver.content_hash(snap) if snap is not None else None
                snaps[(slug, v.version)] = snap
            if recorded is None or now != recorded:
                stale.append(f"{slug} {v.version}")
    if stale:
        raise CommandError(f"these released versions no longer match their format-{fmt} hash, so rehashing would "
                           "bless unreleased edits; undo the edits (or release them with the old tool) first:\n  "
                           + "\n  ".join(stale))
    from registry.atomic import commit

    changes: dict[Path, str | None] = {}
    for (slug, version), snap in snaps.items():
        assert snap is not None
        migrated = ver.migrated_snapshot(reg.calculators[slug], snap, reg.units)
        if migrated is None:
            raise CommandError(f"formulas/history/{slug}/{version}.yaml does not rebuild into a calculator entry "
                               "losslessly; nothing was changed")
        lock[slug][version] = ver.content_hash(migrated)
        changes[ver.snapshot_path(reg.formulas_dir, slug, version)] = ver.snapshot_text(migrated)
    for slug, c in sorted(reg.calculators.items()):
        data = ver.released_content(reg, c, c.active)
        lock[slug][c.active.version] = ver.content_hash(data)
        changes[ver.snapshot_path(reg.formulas_dir, slug, c.active.version)] = ver.snapshot_text(data)
    changes[reg.lock_path] = ver.lock_text(lock, _reseal(reg, lock, changes))
    commit(reg.root, changes)  # every snapshot, the lock and the seal, or none of them
    clear_cache()
    print(f"rehashed {len(reg.calculators)} active and {counted(len(snaps), 'superseded version')} from lock format {fmt} "
          f"into format {ver.LOCK_FORMAT}; commit {reg.rel(reg.lock_path)} and formulas/history/")
    return 0


def _reseal(reg: Registry, lock: dict[str, dict[str, str]], changes: dict[Path, str | None]) -> dict[str, str] | None:
    """The seal of history before signing, rehashed: its file into `changes`, and what the lock fixes of it."""
    from registry.trust.decisionlog import LEGACY_FILE, resealed, seal_day, seal_digest
    from registry.yamlio import load_text

    seal = resealed(reg.formulas_dir, ver.read_lock(reg.lock_path), lock)
    fixed = ver.lock_seal(reg.lock_path)
    if seal is None:
        return fixed
    changes[reg.formulas_dir / LEGACY_FILE] = seal  # the sealed versions named by their new hashes
    data = load_text(seal, reg.formulas_dir / LEGACY_FILE)
    # the lock fixes the resealed entries, the seal's own date kept (a lock older than the seal record: the day
    # of the last release recorded before signing, which signing began after)
    return {"digest": seal_digest(data), "date": fixed["date"] if fixed is not None else seal_day(reg, data)}


def cmd_recover(args: argparse.Namespace) -> int:
    from registry.atomic import recover, registry_lock
    from registry.loader import resolve_root

    base = resolve_root(args.root)

    def run() -> str:
        with registry_lock(base / "formulas"):
            restored = recover(base)
        return ("rolled back " + ", ".join(restored)) if restored else "nothing to recover"

    return maintain(args.root, run)


def _current_lock(reg: Registry) -> dict[str, dict[str, str]]:
    """The lock's entries, refused (ReleaseError, saying why) when it is not a lock or is in an older format."""
    from registry.errors import ReleaseError

    try:
        fmt, lock = ver.lock_format(reg.lock_path), ver.read_lock(reg.lock_path)
    except ValueError as e:  # a lock that is not one (registry.versions._lock_data says why)
        raise ReleaseError(str(e)) from None
    if fmt != ver.LOCK_FORMAT:
        raise ReleaseError(f"{reg.rel(reg.lock_path)} is in an older format: run `formula lock --rehash` first")
    return lock


def read_jsonl(path: Path) -> tuple[list[tuple[int, dict[str, Any]]], list[str]]:
    """Rows of a JSON-lines file with their line numbers, and one problem per unreadable line (its own number).

    Only '\\n' ends a line (as the runner writes them); blank lines are skipped and not counted. Bounded: a line
    over `jsontext.LINE_MAX` bytes is a problem, never read whole; a file over `jsontext.RESULTS_MAX` bytes or
    values is refused (FileRefused, naming it)."""
    from registry.plain_files import TooBig, lines

    rows: list[tuple[int, dict[str, Any]]] = []
    bad: list[str] = []
    budget = jsontext.Budget()
    for n, raw in lines(path, jsontext.LINE_MAX, jsontext.RESULTS_MAX):
        if raw is None:
            bad.append(f"line {n}: over {jsontext.LINE_MAX:,} bytes, more than a results line may hold")
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            bad.append(f"line {n}: not UTF-8 text")
            continue
        if not line.strip():
            continue
        try:
            row = jsontext.loads(line, budget=budget)
        except jsontext.OverBudget as e:
            raise TooBig(path, f"line {n}: {e}") from None
        except ValueError as e:
            bad.append(f"line {n}: not JSON ({e})")
            continue
        if not isinstance(row, dict):
            bad.append(f"line {n}: not a JSON object")
            continue
        rows.append((n, row))
    return rows, bad


def cmd_stale(args: argparse.Namespace) -> int:
    reg = load_valid(args.root)
    if args.runs is not None:
        return _stale_runs(reg, args)
    if args.results is None:
        raise CommandError("give RESULTS.jsonl (or a run folder), or --runs DIR for every run below DIR")
    path: Path = args.results
    if path.is_dir():  # a run folder, as `formula score` and `formula report` take it
        path = path / "results.jsonl"
        if not path.is_file():
            raise CommandError(f"{args.results} is a folder without results.jsonl; give a run folder or a "
                               "results.jsonl file (or --runs DIR for every run below a folder)")
    out, problems, bad = _stale_file(reg, path, args.format)
    if args.format == "json":
        print(json.dumps(out, indent=2))
    if bad:
        raise CommandError(printable(f"{counted(len(bad), 'line')} of {path} "
                                     f"{agree(len(bad), 'is not a JSON line', 'are not JSON lines')} (first: {bad[0]})"))
    if args.check and (out or problems):
        print(f"stale --check: {counted(len(out), 'stale case')}, {counted(len(problems), 'unchecked line')}",
              file=sys.stderr)
        return 1
    return 0


UNCHECKED_SHOWN = 5  # lines that could not be checked, listed one a line before the count of the rest


def _stale_file(reg: Registry, path: Path, fmt: str) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """One results file: its stale rows, the lines that could not be checked and those that are not JSON lines
    (printed as a table unless `fmt` is json)."""
    from registry.versioned import stale

    try:
        rows, bad = read_jsonl(path)
    except OSError as e:
        raise CommandError(f"cannot read {path}: {e.strerror or e}") from None
    if bad and not rows:  # a file of another kind (a README, a picture, CSV): say so once, not once a line
        raise CommandError(printable(f"{path} is not a JSON-lines results file: none of its lines is a JSON object "
                                     f"(first: {bad[0]}); give a run folder or its results.jsonl"))
    out, problems = stale(reg, rows)
    listed = bad + problems
    for p in listed[:UNCHECKED_SHOWN]:
        say(printable(f"{path}: {p}"), file=sys.stderr)
    if len(listed) > UNCHECKED_SHOWN:
        say(printable(f"{path}: ... and {counted(len(listed) - UNCHECKED_SHOWN, 'more line')} like these"),
            file=sys.stderr)
    checked = len(rows) - len(problems)
    if fmt != "json":
        if out:
            say(render_table(out, ["line", "slug", "recorded_version", "current_version", "why", "row_number",
                                   "seed", "arm"], drop=["row_number", "seed", "arm"]))
        skipped = len(bad) + len(problems)
        print(f"\n{len(out)} of {counted(checked, 'case')} stale against the registry now"
              + (f"; {counted(skipped, 'line')} could not be checked (listed above)" if skipped else ""))
    return out, problems, bad


def _stale_runs(reg: Registry, args: argparse.Namespace) -> int:
    """`stale --runs DIR`: every results.jsonl below DIR (a registry repository's results/, for pre-commit)."""
    folder: Path = args.runs
    if args.results is not None:
        raise CommandError("give either RESULTS or --runs DIR, not both")
    files = sorted(p for p in folder.rglob("results.jsonl") if p.is_file()) if folder.is_dir() else []
    if not files:
        print(f"no stored run below {folder}: nothing can be stale")
        return 0
    found: list[dict[str, Any]] = []
    unchecked, unreadable = 0, []
    for path in files:
        if args.format != "json":
            say(printable(f"{path}:"))
        out, problems, bad = _stale_file(reg, path, args.format)
        found += [dict(r, results=str(path)) for r in out]
        unchecked += len(problems)
        unreadable += [f"{path}: {b}" for b in bad]
    if args.format == "json":
        print(json.dumps(found, indent=2))
    if unreadable:
        raise CommandError(printable(f"{counted(len(unreadable), 'line')} "
                                     f"{agree(len(unreadable), 'is not a JSON line', 'are not JSON lines')} "
                                     f"(first: {unreadable[0]})"))
    if args.check and (found or unchecked):
        print(f"stale --check: {counted(len(found), 'stale case')} in {len({r['results'] for r in found})} of "
              f"{counted(len(files), 'run')}, {counted(unchecked, 'unchecked line')}", file=sys.stderr)
        return 1
    return 0

