"""How a deciding command writes: under the registry lock, from a validated registry, every file in one plan.

The maintainer edits constants, tables, inputs or the active version's text in place (by hand or with
`formula fix`), then releases. The previous version's text comes back from its snapshot, so the file keeps
every version's text and the lock keeps every version's hash; the text catalogue (formulas/texts/) is
rendered again, so the diff shows every text that changed. `Plan` holds the files a command will write and
commits them as one transaction (registry/atomic.py); checks registered with `on_release` run afterwards.
"""
from __future__ import annotations

import copy
import dataclasses
import datetime as dt
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

from pydantic import ValidationError

from registry import plain_files
from registry import versions as ver
from registry.atomic import JournalRefused, LockBusy, WriteInterrupted, commit, recover, registry_lock
from registry.counted_nouns import counted
from registry.errors import ReleaseError
from registry.loader import Registry, clear_cache, load, resolve_root
from registry.schema import Calculator, VersionStatus
from registry.texts import INDEX_FILE, TEXTS_DIR, TextError, catalogue_changes
from registry.versioned import DRAFTS_DIR
from registry.yamlio import YamlError, block, load_text, rt_dump, rt_load

if TYPE_CHECKING:
    pass


# Checks run after a version is made (the audit layer registers the reference-case check): each gets the
# registry before and as it stands with the new versions, and the slugs released, and returns lines to print.
ReleaseCheck = Callable[[Registry, Registry, list[str]], list[str]]


AFTER_RELEASE: list[ReleaseCheck] = []


def on_release(check: ReleaseCheck) -> ReleaseCheck:
    if check not in AFTER_RELEASE:
        AFTER_RELEASE.append(check)
    return check


def after_checks(before: Registry, calcs: dict[str, Calculator], slugs: list[str]) -> str:
    """The lines of every registered check, on the registry as the release leaves it (validated: its lock is new)."""
    after = dataclasses.replace(before, calculators=calcs, problems=[], hashes={}, validated=True)
    was = dataclasses.replace(before, problems=[], hashes={}, validated=True)  # it validated before the change
    lines = [line for check in AFTER_RELEASE for line in check(was, after, slugs)]
    return "".join("\n" + line for line in lines)


@contextmanager
def writing(root: Path | str | None) -> Iterator[Path]:
    """Hold the registry lock; roll back whatever an interrupted command left half-done first; read each file once."""
    base = resolve_root(root)
    try:
        with registry_lock(base / "formulas"):
            restored = recover(base)
            if restored:
                import sys

                print(f"note: rolled back an interrupted change to {counted(len(restored), 'file')}: "
                      + ", ".join(restored), file=sys.stderr)
            clear_cache()
            with plain_files.reading_once():  # each file read from disk once while the lock is held
                yield base
    except (LockBusy, JournalRefused) as e:
        raise ReleaseError(str(e)) from None
    except KeyboardInterrupt as e:
        if isinstance(e, WriteInterrupted):  # the commit rolled its files back and says so
            raise
        raise WriteInterrupted("interrupted before anything was written; the registry is unchanged") from None
    finally:
        clear_cache()


def loaded(root: Path, doing: str) -> Registry:
    reg = load(root)
    if reg.problems:
        from registry.validate import first_fix

        advice = first_fix(reg.problems)
        raise ReleaseError("\n".join(map(str, reg.problems)) + f"\nfix these before {doing}"
                           + (f"; {advice}" if advice else ""))
    try:
        fmt = ver.lock_format(reg.lock_path)
    except ValueError as e:  # a lock that is not one (registry.versions._lock_data says why)
        raise ReleaseError(f"{e}\nfix it before {doing}") from None
    if fmt != ver.LOCK_FORMAT:
        raise ReleaseError(f"{reg.rel(reg.lock_path)} is in an older format: run `formula lock --rehash` first")
    return reg


def calculator(reg: Registry, ref: str) -> Calculator:
    try:
        return reg.get(ref)
    except KeyError:
        from registry.suggest import unknown_calculator

        raise ReleaseError(unknown_calculator(reg, ref)) from None


def dependants(reg: Registry, slug: str) -> list[str]:
    """Every calculator that depends on `slug`, directly or not, dependencies before dependants."""
    found: list[str] = []

    def visit(s: str) -> None:
        for other, c in sorted(reg.calculators.items()):
            if s in c.depends_on and other not in found:
                found.append(other)
                visit(other)

    visit(slug)
    order: list[str] = []

    def place(s: str) -> None:
        if s in order:
            return
        for d in reg.calculators[s].depends_on:
            if d in found:
                place(d)
        order.append(s)

    for s in found:
        place(s)
    return order


def draft_path(reg: Registry, slug: str) -> Path:
    return reg.formulas_dir / DRAFTS_DIR / f"{slug}.yaml"


def validated(text: str, path: Path) -> Calculator:
    try:
        return Calculator.model_validate(load_text(text, path))
    except ValidationError as e:
        raise ReleaseError(f"{path}: the edited file does not validate:\n{e}") from None
    except YamlError as e:
        raise ReleaseError(str(e)) from None


def active_index(rt: Any) -> int:
    return next(i for i, v in enumerate(rt["versions"]) if v.get("status") == VersionStatus.active.value)


def released_file(reg: Registry, calc: Calculator, recorded: str) -> str:
    """The calculator's file with its hand-edited content put back to the active version's snapshot."""
    path = reg.paths[calc.slug]
    original = plain_files.read_text(path)
    rt = rt_load(path)
    snap = ver.read_snapshot(reg.formulas_dir, calc.slug, calc.active.version) or {}
    now = ver.content(calc, calc.active, None)  # dumped as the snapshot is (defaults left out)
    for f in ver.covered_fields():
        if f in snap and snap[f] != now.get(f):
            rt[f] = _assign(rt[f], snap[f], now.get(f)) if f in rt else snap[f]
        elif f not in snap and f in now and f in rt and ver.MIGRATED_KEY not in snap:
            del rt[f]  # set since the release; it was at its default then
    restore_text(rt["versions"][active_index(rt)], snap.get("text", ""))
    text = rt_dump(rt, original)
    back = validated(text, path)
    if ver.content_hash(ver.released_content(view(reg, {**reg.calculators, calc.slug: back}), back,
                                             back.active)) != recorded:
        raise ReleaseError(f"{calc.slug}: cannot put the file back to {calc.active.version} automatically; "
                           "undo the hand edits and use `formula fix --set ... --draft`, or release them now")
    return text


def _assign(node: Any, target: Any, current: Any) -> Any:
    """Make a round-trip node hold `target` (a plain dump), changing only what differs from `current` (its dump now).

    Keys the schema filled with defaults stay absent; comments on untouched parts stay.
    """
    if isinstance(node, dict) and isinstance(target, dict) and isinstance(current, dict):
        for k in [k for k in node if k in current and k not in target]:
            del node[k]
        for k, v in target.items():
            if k in current and current[k] == v:
                continue
            node[k] = _assign(node[k], v, current.get(k)) if k in node else v
        return node
    if (isinstance(node, list) and isinstance(target, list) and isinstance(current, list)
            and len(node) == len(target) == len(current)):
        for i, v in enumerate(target):
            if current[i] != v:
                node[i] = _assign(node[i], v, current[i])
        return node
    if isinstance(target, float) and target.is_integer() and isinstance(node, int) and not isinstance(node, bool):
        return int(target)  # a range written 3000 comes back from the schema as 3000.0
    return block(target) if isinstance(target, str) else target


def restore_text(item: Any, released: str) -> None:
    """Put a version's released text back (texts are compared as the schema reads them, whitespace-stripped)."""
    if str(item["text"]).strip() != released.strip():
        item["text"] = block(released if released.endswith("\n") else released + "\n")


def _catalogue(reg: Registry, calcs: dict[str, Calculator], changed: set[str]) -> dict[Path, str]:
    """The catalogue files to write: only the texts whose inputs `changed` touched, and the index."""
    folder = reg.formulas_dir / TEXTS_DIR
    try:
        index = plain_files.read_text(folder / INDEX_FILE)
    except (OSError, UnicodeDecodeError):
        index = None
    try:
        files = catalogue_changes(calcs, reg.units, changed, index)
    except TextError as e:
        raise ReleaseError(f"a text does not render: {e}") from None
    return {reg.formulas_dir / TEXTS_DIR / name: text for name, text in files.items()}


def view(reg: Registry, calcs: dict[str, Calculator]) -> Registry:
    """The registry as it would stand with `calcs`: dependency hashes are computed afresh from them."""
    return dataclasses.replace(reg, calculators=calcs, problems=[], hashes={})


class Plan:
    """The files one command will write, built in memory and committed at once."""

    def __init__(self, reg: Registry):
        self.reg = reg
        self.changes: dict[Path, str | None] = {}
        self.calcs: dict[str, Calculator] = dict(reg.calculators)
        self.lock = ver.read_lock(reg.lock_path)
        self.promoted: list[str] = []

    def promote(self, slug: str, draft_rt: Any) -> str:
        """Make the draft version at the end of `draft_rt` the active one of `slug`; returns the version."""
        reg = self.reg
        c = reg.calculators[slug]
        path = reg.paths[slug]
        original = plain_files.read_text(path)
        main = rt_load(path)
        for f in ver.covered_fields():
            if plain(main.get(f)) != plain(draft_rt.get(f)):
                if f in draft_rt:
                    main[f] = copy.deepcopy(draft_rt[f])
                else:
                    del main[f]
        entry = copy.deepcopy(draft_rt["versions"][-1])
        entry["status"] = VersionStatus.active.value
        old = c.active
        snap = ver.read_snapshot(reg.formulas_dir, slug, old.version)
        if snap is None or old.version not in self.lock.get(slug, {}):
            raise ReleaseError(f"{slug} {old.version} was never locked; run `formula lock` first")
        idx = active_index(main)
        main["versions"][idx]["status"] = VersionStatus.superseded.value
        restore_text(main["versions"][idx], snap["text"])
        main["versions"].append(entry)
        text = rt_dump(main, original)
        new = validated(text, path)
        data = ver.released_content(view(reg, {**self.calcs, slug: new}), new, new.active)
        self.lock.setdefault(slug, {})[new.active.version] = ver.content_hash(data)
        self.changes[path] = text
        self.changes[ver.snapshot_path(reg.formulas_dir, slug, new.active.version)] = ver.snapshot_text(data)
        self.calcs[slug] = new
        self.promoted.append(slug)
        return new.active.version

    def finish(self, targets: list[str]) -> None:
        """Lock and catalogue for what was promoted; refuse if another calculator's content moved with it."""
        if not self.promoted:
            return
        after = view(self.reg, self.calcs)
        moved = {s: why for s, why in _unreleased_with(after, self.lock).items()
                 if s not in targets and not ver.only_guidelines_moved(after, after.calculators[s])}
        if moved:
            raise ReleaseError("this release changes the content of calculators that depend on it: "
                               + ", ".join(sorted(moved)) + "; add --with-dependants to release them too")
        self.changes[self.reg.lock_path] = ver.lock_text(self.lock, ver.lock_seal(self.reg.lock_path))
        self.changes.update(_catalogue(self.reg, self.calcs, set(self.promoted)))

    def commit(self) -> None:
        commit(self.reg.root, self.changes)


def _unreleased_with(reg: Registry, lock: dict[str, dict[str, str]]) -> dict[str, str]:
    out = {}
    for slug, c in reg.calculators.items():
        v = c.active
        recorded = lock.get(slug, {}).get(v.version)
        if recorded is None or ver.content_hash(ver.released_content(reg, c, v)) != recorded:
            out[slug] = "content differs from its lock entry"
    return out


def plain(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, (dt.date,)):
        return x.isoformat()
    if isinstance(x, str):
        return str(x)
    return x


def waiting_draft(reg: Registry, slug: str, version: str) -> tuple[Path, Any]:
    """The draft file of `slug` and its round-trip data, refused unless a draft of `version` is waiting."""
    dpath = draft_path(reg, slug)
    if not dpath.exists():
        raise ReleaseError(f"{slug} has no draft waiting for approval")
    drt = rt_load(dpath)
    found = drt["versions"][-1].get("version")
    if found != version:
        raise ReleaseError(f"{slug}'s draft is version {found}, not {version!r}")
    return dpath, drt
