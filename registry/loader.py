"""Load the registry from disk into validated models, collecting every problem with its line.

A registry is a root folder holding `formulas/*.yaml` (one calculator each), `formulas/units.yaml`
(shared unit data), `formulas/REGISTRY.lock` (content hashes of released versions),
`formulas/history/<slug>/<version>.yaml` (snapshots of released versions) and
`guidelines/*.yaml`.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from registry import codes
from registry.model import LOCK_FILE, Problem, Registry
from registry.schema import Calculator, Guideline, UnitsFile
from registry.validate import validate
from registry.yamlio import YamlError, line_of, load_file

PROJECT_ROOT = Path(__file__).resolve().parent.parent  # the source checkout, when the package runs from one
EMBEDDED_ROOT = Path(__file__).resolve().parent / "embedded"  # the copy shipped in the wheel (read-only)
ROOT_ENV = "FORMULA_REGISTRY_ROOT"
UNITS_FILE = "units.yaml"

# Problem, Registry and LOCK_FILE live in registry.model; importing them from here keeps working.
__all__ = ["EMBEDDED_ROOT", "FOUND", "FROM_ENV", "GIVEN", "INSTALLED", "LOCK_FILE", "PROJECT_ROOT", "ROOT_ENV",
           "UNITS_FILE", "Found", "Problem", "Registry", "clear_cache", "default_root", "find_root", "get_registry",
           "hold", "holds_registry", "is_embedded", "load", "resolve_root", "shipped_root", "shown", "upward", "validated",
           "where"]


# How the root was chosen, as messages name it (`where`): git's order (`find_root`).
GIVEN, FROM_ENV, FOUND, INSTALLED = "given by --root", f"from ${ROOT_ENV}", "found from the current folder", \
    "the copy installed with the package, read-only"


@dataclass(frozen=True)
class Found:
    """A registry root and how it was chosen (one of GIVEN, FROM_ENV, FOUND, INSTALLED)."""

    path: Path
    how: str


def shipped_root() -> Path:
    """The registry this package ships: the copy its wheel carries (setup.py), else, in an editable install
    or `python -m cli`, the checkout it runs from (the same files the wheel would copy). `formula init` copies
    it; it is the last fallback of `find_root`, read-only either way."""
    if EMBEDDED_ROOT.is_dir():
        return EMBEDDED_ROOT
    return PROJECT_ROOT


def holds_registry(folder: Path) -> bool:
    return (folder / "formulas").is_dir() and (folder / "guidelines").is_dir()


def upward(start: Path) -> Path | None:
    """The nearest folder from `start` upwards that holds formulas/ and guidelines/ (as git finds .git)."""
    for folder in (start, *start.parents):
        if holds_registry(folder):
            return folder
    return None


def find_root(root: Path | str | None = None) -> Found:
    """Where the registry is, for every command, as git finds its repository: `root` (--root), else
    $FORMULA_REGISTRY_ROOT, else the nearest folder upwards from the current one holding formulas/ and
    guidelines/, else the copy installed with the package (read-only). A checkout is found only because
    the current folder is inside it."""
    if root is not None:
        return Found(Path(root), GIVEN)
    env = os.environ.get(ROOT_ENV)
    if env:
        held = _HELD[0] if _HELD else None
        return held if held is not None and str(held.path) == env else Found(Path(env), FROM_ENV)
    try:
        here: Path | None = Path.cwd()
    except OSError:  # the current folder was deleted
        here = None
    found = upward(here) if here is not None else None
    if found is not None:
        return Found(found, FOUND)
    return Found(shipped_root(), INSTALLED)


_HELD: list[Found] = []  # the root `cli.main` found for the running command (see `hold`)


def hold(found: Found | None) -> None:
    """For the running command (`cli.main`): the root it found, whose path it puts in $FORMULA_REGISTRY_ROOT so
    that every layer, and any process it starts, reads that registry without looking again (a `compute` per
    case would otherwise ask the filesystem for the current folder: 2-5 us a call); `find_root` still says how
    it was found. None: the command is over."""
    _HELD[:] = [found] if found is not None else []


def default_root() -> Path:
    """Where the registry is when no --root is given (`find_root`)."""
    return find_root().path


def resolve_root(root: Path | str | None = None) -> Path:
    return find_root(root).path


def shown(path: Path | str) -> str:
    """A path as messages show it: relative when under the current folder ('.' for that folder), else absolute."""
    p = Path(os.path.abspath(path))
    try:
        rel = p.relative_to(Path.cwd())
    except (ValueError, OSError):
        return str(p)
    return rel.as_posix() or "."


def where(root: Path | str | None = None) -> str:
    """The registry a command uses, for its output and its errors: its folder and how it was found."""
    f = find_root(root)
    return f"{shown(f.path)} ({f.how})"


def is_embedded(root: Path | str | None = None) -> bool:
    """Whether `root` is the read-only copy installed with the package: the last fallback of `find_root`, or
    a folder inside the wheel's copy (maintainers and committees edit a registry of their own)."""
    f = find_root(root)
    if f.how == INSTALLED:
        return True
    r = f.path.resolve()
    return r == EMBEDDED_ROOT or EMBEDDED_ROOT in r.parents


def _field_name(loc: tuple[Any, ...]) -> str:
    parts: list[str] = []
    for p in loc:
        if isinstance(p, int):
            parts.append(f"[{p}]")
        else:
            parts.append(("." if parts else "") + str(p))
    return "".join(parts) or "(file)"


def _validate(model: type[BaseModel], data: Any, path: str, problems: list[Problem]) -> Any:
    if not isinstance(data, dict):
        problems.append(Problem(path, 1, "(file)", "expected a mapping of fields at the top level",
                                codes.SCHEMA))
        return None
    try:
        return model.model_validate(data)
    except ValidationError as e:
        for err in e.errors(include_url=False):
            loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
            # pydantic adds union branch names (e.g. 'int', 'float') to locations; keep the data path
            data_loc = _data_path(data, loc)
            msg = err["msg"]
            if err["type"] == "extra_forbidden":
                msg = "unknown field (check its spelling against `formula schema`)"
            elif err["type"] == "missing":
                msg = "required field is missing"
            problems.append(Problem(path, line_of(data, data_loc), _field_name(data_loc), msg, codes.SCHEMA))
        return None


def _data_path(data: Any, loc: tuple[Any, ...]) -> tuple[Any, ...]:
    out: list[Any] = []
    node = data
    for p in loc:
        if isinstance(node, dict) and p in node:
            out.append(p)
            node = node[p]
        elif isinstance(node, list) and isinstance(p, int) and 0 <= p < len(node):
            out.append(p)
            node = node[p]
        elif isinstance(node, dict) and not out and p not in node:
            out.append(p)  # a missing or unknown top-level field
            break
        elif isinstance(node, dict):
            out.append(p)
            break
        # else: a pydantic-internal location part (union branch); skip it
    return tuple(out)


def _read(reg: Registry, path: Path) -> Any | None:
    try:
        data = load_file(path)
    except YamlError as e:
        reg.problems.append(Problem(reg.rel(path), e.line, "(file)", e.problem, codes.YAML))
        return None
    if data is None:  # empty or only comments: never let an entry vanish silently
        reg.problems.append(Problem(reg.rel(path), 1, "(file)", "the file is empty or holds only comments: "
                                    "restore its content (e.g. from git) or remove the file", codes.YAML))
    return data


def _slug_ok(reg: Registry, path: Path, data: Any, slug: str, taken: dict[str, Any], what: str) -> bool:
    """A slug must be unique and match its file name; returns False for a duplicate (not loaded)."""
    rel, line = reg.rel(path), line_of(data, ("slug",))
    if slug in taken:
        first = reg.paths.get(slug) or reg.paths.get("guideline:" + slug)
        where = reg.rel(first) if first else "another file"
        reg.problems.append(Problem(rel, line, "slug", f"duplicate {what}slug {slug!r} (also in {where})",
                                    codes.SLUG))
        return False
    if path.stem != slug:
        reg.problems.append(Problem(rel, line, "slug", f"slug {slug!r} must match the file name {path.stem!r}",
                                    codes.SLUG))
    return True


def load(root: Path | str | None = None) -> Registry:
    """Read every file; never raises for bad content, records problems instead."""
    found = find_root(root)
    root = found.path
    reg = Registry(root=root)
    fdir, gdir = root / "formulas", root / "guidelines"
    if not fdir.is_dir():
        reg.problems.append(Problem(str(fdir), 0, "(registry)", f"no formulas/ folder in {shown(root)} ({found.how}); "
                                    "run inside a registry, or pass --root DIR", codes.ROOT))
        return reg
    if _linked_top(reg, fdir, gdir):
        return reg
    for path in sorted(fdir.glob("*.yaml")):
        data = _read(reg, path)
        if data is None:
            continue
        if path.name == UNITS_FILE:
            reg.units = _validate(UnitsFile, data, reg.rel(path), reg.problems)
            continue
        calc = _validate(Calculator, data, reg.rel(path), reg.problems)
        if calc is not None and _slug_ok(reg, path, data, calc.slug, reg.calculators, ""):
            reg.calculators[calc.slug] = calc
            reg.raw[calc.slug] = data
            reg.paths[calc.slug] = path
    if reg.units is None and not any(p.path.endswith(UNITS_FILE) for p in reg.problems):
        reg.problems.append(Problem(reg.rel(fdir / UNITS_FILE), 0, "(file)", "missing: the shared unit data",
                                    codes.UNITS_MISSING))
    for path in sorted(gdir.glob("*.yaml")) if gdir.is_dir() else []:
        data = _read(reg, path)
        if data is None:
            continue
        g = _validate(Guideline, data, reg.rel(path), reg.problems)
        if g is not None and _slug_ok(reg, path, data, g.slug, reg.guidelines, "guideline "):
            reg.guidelines[g.slug] = g
            reg.raw["guideline:" + g.slug] = data
            reg.paths["guideline:" + g.slug] = path
    _links(reg, [fdir, gdir])
    return reg


def _linked_top(reg: Registry, *folders: Path) -> bool:
    """Whether formulas/ or guidelines/ is itself a symbolic link: a problem naming it, and nothing read through it."""
    from registry.plain_files import LINKED_FOLDER

    linked = [f for f in folders if f.is_symlink()]
    for f in linked:
        reg.problems.append(Problem(reg.rel(f), 1, "(folder)", LINKED_FOLDER, codes.YAML))
    return bool(linked)


def _links(reg: Registry, folders: list[Path]) -> None:
    """Every symbolic link or special file in the registry's folders is a problem, named (its target unread)."""
    from registry.plain_files import LINK, LINKED_FOLDER, SPECIAL, links

    said = {p.path for p in reg.problems}
    for folder in folders:
        for p in links(folder):
            if reg.rel(p) not in said:
                why = (LINKED_FOLDER if p.is_dir() else LINK) if p.is_symlink() else SPECIAL
                reg.problems.append(Problem(reg.rel(p), 1, "(folder)" if p.is_dir() else "(file)", why, codes.YAML))


def validated(root: Path | str | None = None) -> Registry:
    """The registry at `root`, loaded and validated, through the on-disk cache: a registry whose exact bytes
    (see `validation_key`) passed every rule before is read back from its snapshot without parsing a YAML file
    or re-running a rule; anything else is loaded and validated in full, and stored when it passes. Always a
    fresh object (callers may leave calculators out of it). Read-only commands use this; writers validate in
    full (`load` + `validate`) whatever the cache holds."""
    from registry import snapshot

    root = str(resolve_root(root))
    first = validation_key(Path(root))
    marker = _marker(first) if first is not None else None
    if marker is not None:  # this exact content loaded and passed before: its snapshot skips the YAML parsing
        saved = snapshot.read(snapshot.path_for(marker.parent, marker.name, root), root)
        if saved is not None:
            from registry.model_memo import adopt

            adopt(saved.derived)
            return saved
    reg = load(root)
    key = validation_key(Path(root))
    marker = _marker(key) if key is not None and not reg.problems else None
    if marker is not None and marker.is_file():
        reg.validated = True  # this exact content passed every rule before (see validation_key)
    else:
        validate(reg, parallel=True)
        if marker is not None and not reg.problems:
            try:
                from registry.atomic import atomic_write

                atomic_write(marker, "passed every validation rule\n")
            except OSError:
                pass  # a read-only cache only costs the next start-up its validation
    if marker is not None and key == first and reg.validated and not reg.problems:  # unchanged while loading
        from registry.snapshot_extras import for_snapshot

        reg.derived = for_snapshot(reg)
        snapshot.write(snapshot.path_for(marker.parent, marker.name, root), reg)
    return reg


@lru_cache(maxsize=4)
def _cached(root: str) -> Registry:
    return validated(root)


from registry.cachedir import CACHE_ENV  # noqa: E402 (one name for the cache folder, registry.cachedir)


def _marker(key: str) -> Path | None:
    base = os.environ.get(CACHE_ENV) or os.environ.get("XDG_CACHE_HOME")
    folder = Path(base) if base else Path.home() / ".cache"
    return (folder if os.environ.get(CACHE_ENV) else folder / "formula-registry") / f"validated-{key}"


def validation_key(root: Path) -> str | None:
    """A digest of everything validation reads and of the code that runs it: every file under formulas/ and
    guidelines/ (path and bytes), the registry package's source and the versions of the libraries it parses
    and renders with. Validation is a function of these alone (no clock, no network), so a registry whose key
    has passed before passes again: `get_registry` then skips re-running the rules (a one-case `formula solve`
    starts in a fraction of the time). Any change to any byte makes a new key. None: no cache (FORMULA_CACHE_DIR
    set to an empty string, or the tree cannot be read)."""
    if os.environ.get(CACHE_ENV) == "":
        return None
    import hashlib

    from registry.plain_files import is_plain, read_bytes

    h = hashlib.sha256(b"formula-registry validation 1\0")
    try:
        for p in sorted(Path(__file__).resolve().parent.glob("*.py")):
            h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
        # A decision dated after today fails until that day: a pass stays true as days go on, but a fixed
        # $FORMULA_TODAY may go back, so it is part of the key.
        h.update(f"today={os.environ.get('FORMULA_TODAY', '')}\0".encode())
        for dist in ("pydantic", "pydantic-core", "jinja2", "pyyaml", "ruamel.yaml"):
            h.update(f"{dist}={_installed_version(dist)}\0".encode())
        for folder in ("formulas", "guidelines"):
            base = root / folder
            for p in sorted(base.rglob("*")) if base.is_dir() else []:
                if is_plain(p):  # a link is never read: validation reports it (registry.plain_files.links)
                    h.update(p.relative_to(root).as_posix().encode() + b"\0" + read_bytes(p) + b"\0")
                elif p.is_symlink():
                    h.update(p.relative_to(root).as_posix().encode() + b"\0link\0")
    except OSError:
        return None
    return h.hexdigest()


def _installed_version(dist: str) -> str:
    """The version of an installed distribution, as `importlib.metadata.version` finds it (the first
    `<name>-<version>.dist-info` folder along sys.path), read from folder names: importing importlib.metadata
    cost a warm read-only command 12 ms of its 0.25 s. Anything else (an egg, no folder) asks importlib.metadata."""
    want = _normal(dist)
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            stem, dot, ext = name.rpartition(".")
            if dot and ext == "dist-info" and "-" in stem:
                project, _, version = stem.partition("-")
                if _normal(project) == want:
                    return version
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "none"


def _normal(name: str) -> str:
    return name.lower().replace("-", "_").replace(".", "_")


@lru_cache(maxsize=16)
def _default_root_str(key: Any) -> str:
    """The default root: the one the running command found and holds (`hold`), else `find_root`'s answer."""
    return str(_HELD[0].path) if _HELD and str(_HELD[0].path) == os.environ.get(ROOT_ENV) else str(default_root())


def get_registry(root: Path | str | None = None) -> Registry:
    """The validated registry, loaded once per process (the library and reports read this).

    Without `root`, the default root is looked up on the filesystem once per value of
    $FORMULA_REGISTRY_ROOT (or, when it is unset, of the current folder), not on every call (`compute`
    calls this for every case)."""
    if root is None:
        raw = _ENV_DATA.get(_ROOT_KEY) if _ENV_DATA is not None else os.environ.get(ROOT_ENV)
        if not raw:  # found from the current folder: it is part of the answer
            try:
                raw = ("cwd", os.getcwd())
            except OSError:
                raw = ("cwd", None)
        last = _last
        if last and last[0] == raw and last[1] is _cached:
            return last[2]
        reg = _cached(_default_root_str(raw))
        _last[:] = [raw, _cached, reg]
        return reg
    return _cached(str(resolve_root(root)))


# os.environ's own store, read directly on the hot path (os.environ.get encodes the key on every call);
# os.environ's setters and deleters keep it current. None where the platform's mapping has none.
_ENV_DATA: dict[Any, Any] | None = getattr(os.environ, "_data", None)
_ROOT_KEY: Any = getattr(os.environ, "encodekey", str)(ROOT_ENV)
_last: list[Any] = []  # the default registry of the last call: (env value, cache generation, registry)


def clear_cache() -> None:
    _last.clear()
    _cached.cache_clear()
    _default_root_str.cache_clear()
