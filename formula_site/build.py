"""Generate the report's pages from the layers below, then run mkdocs (strict) on them.

Steps: load and check the registry; run the audits the pages show; read the stored runs through the
report tables of the audit layer; write Markdown, SVG and FHIR JSON into the source folder; run
mkdocs into a fresh folder and swap it into place, so an interrupted build never leaves half a site.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import logging
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Sequence

from formula_site import adapters, fhir
from formula_site.paper_page import paper_page
from formula_site.registry_pages import (
    AuditInputs,
    calculator_page,
    calculators_index,
    changelog_page,
    completeness_audit,
    fidelity_audit,
    lineage,
    literature_audit,
    ordered,
    overview,
)
from formula_site.results_pages import calculator_accuracy, read_rows, results_page
from registry.loader import PROJECT_ROOT, Registry, get_registry
from solver.data import REFERENCE_CASES, file_hash, read_cases

MKDOCS_YML = PROJECT_ROOT / "mkdocs.yml"
STATIC = PROJECT_ROOT / "site"
EMBEDDED_RESULTS = PROJECT_ROOT / "results" / "embedded"
DEFAULT_OUT = PROJECT_ROOT / "build" / "site"
MARKER = ".formula-site"  # written into every built site: only such a folder is ever replaced


class SiteError(Exception):
    """A build that cannot go ahead; the message says what to fix."""


@dataclass
class BuildResult:
    out: Path
    pages: int
    runs: int
    fhir: int
    seconds: float


def default_runs() -> list[Path]:
    """Every run folder (one holding results.jsonl) under results/embedded/, sorted."""
    if not EMBEDDED_RESULTS.is_dir():
        return []
    return sorted(p.parent for p in EMBEDDED_RESULTS.rglob("results.jsonl"))


def check_runs(dirs: Sequence[Path]) -> list[Path]:
    out = []
    for d in dirs:
        d = Path(d)
        for name in ("manifest.json", "results.jsonl"):
            if not (d / name).is_file():
                raise SiteError(f"{d}: not a stored run (no {name}); a run folder holds manifest.json and "
                                "results.jsonl")
        _check_run_files(d)
        out.append(d.resolve())
    return out


REQUIRED_ROW_FIELDS = ("calculator_id", "arm", "outcome", "correct")


def _check_run_files(d: Path) -> None:
    """Refuse a run the pages cannot read, naming the file, line and field."""
    import json

    try:
        manifest = json.loads((d / "manifest.json").read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise SiteError(f"{d / 'manifest.json'}: not valid JSON ({e})") from None
    if not isinstance(manifest, dict):
        raise SiteError(f"{d / 'manifest.json'}: expected a JSON object")
    with open(d / "results.jsonl", encoding="utf-8", errors="replace") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as e:
                raise SiteError(f"{d / 'results.jsonl'}:{n}: not valid JSON ({e})") from None
            missing = [f for f in REQUIRED_ROW_FIELDS if not isinstance(row, dict) or f not in row]
            if missing:
                raise SiteError(f"{d / 'results.jsonl'}:{n}: missing field(s) {', '.join(missing)}")
            if not isinstance(row["calculator_id"], int):
                raise SiteError(f"{d / 'results.jsonl'}:{n}: calculator_id must be an integer")


def _audits(reg: Registry) -> AuditInputs:
    from audit.completeness import audit as completeness
    from audit.deviations import fidelity

    cases = read_cases(REFERENCE_CASES)
    return AuditInputs(
        completeness={a.slug: a for a in completeness(reg, cases)},
        fidelity={r.slug: r for r in fidelity(reg, cases)},
        fidelity_cases=len(cases),
        fidelity_data=REFERENCE_CASES.name,
        fidelity_hash=file_hash(REFERENCE_CASES),
    )


def _compare(runs: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Pairs to compare: every other arm against the first (gold-solve when present)."""
    arms = [r["arm"] for r in runs]
    if not arms:
        return []
    base = "gold-solve" if "gold-solve" in arms else arms[0]
    return [(a, base) for a in dict.fromkeys(arms) if a != base]


def _arm(run_dir: Path) -> str:
    """A run's arm, from its manifest (or its first row, or its folder name)."""
    import json

    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    if manifest.get("arm"):
        return str(manifest["arm"])
    with open(run_dir / "results.jsonl", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                return str(json.loads(line).get("arm") or run_dir.name)
    return run_dir.name


def _package_version() -> str:
    try:
        return metadata.version("formula-registry")
    except metadata.PackageNotFoundError:
        return "unknown"


def generate(reg: Registry, src: Path, run_dirs: Sequence[Path], *, on: dt.date) -> tuple[list[Any], int, int]:
    """Write every page into src; returns (nav entries of the calculator pages, runs, FHIR files)."""
    if src.exists():
        if any(src.iterdir()) and not (src / MARKER).is_file():
            raise SiteError(f"{src}: the folder for the generated pages holds files this command did not write; "
                            "move them, or choose another --out")
        shutil.rmtree(src)
    for sub in ("pages", "assets"):
        shutil.copytree(STATIC / sub, src if sub == "pages" else src / sub, dirs_exist_ok=True)

    (src / MARKER).write_text("Pages generated by `formula site build`; the next build replaces this folder.\n",
                              encoding="utf-8")

    def write(rel: str, text: str) -> None:
        p = src / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")

    audits = _audits(reg)
    report: dict[str, Any] = {"runs": [], "gaps": []}
    if run_dirs:
        pairs = _compare([{"arm": _arm(d)} for d in run_dirs])
        try:
            report = adapters.build_report(list(run_dirs), compare=pairs, registry=reg)
        except Exception as e:  # noqa: BLE001 - the report layer refuses runs it cannot pair; show them unpaired
            if not pairs:
                raise
            report = adapters.build_report(list(run_dirs), compare=(), registry=reg)
            report["gap_error"] = f"{type(e).__name__}: {e}"
    runs = report.get("runs", [])
    rows_by_dir = {str(r["dir"]): read_rows(Path(r["dir"])) for r in runs}
    acc = calculator_accuracy(reg, runs, rows_by_dir)
    changes = adapters.changelog(reg)

    write("index.md", overview(reg, on=on, package_version=_package_version(), runs=runs, changes=changes,
                               audits=audits))
    write("audits/literature.md", literature_audit(reg))
    write("audits/completeness.md", completeness_audit(reg, audits))
    write("audits/fidelity.md", fidelity_audit(reg, audits))
    write("calculators/index.md", calculators_index(reg, on))
    nav = []
    for c in ordered(reg):
        write(f"calculators/{c.slug}.md", calculator_page(reg, c, audits=audits, on=on, accuracy=acc.get(c.slug, [])))
        nav.append({c.name: f"calculators/{c.slug}.md"})
    write("lineage.md", lineage(reg))
    figures: dict[str, str] = {}
    from registry.versions import lock_digest

    write("results/index.md", results_page(reg, report, [Path(r["dir"]) for r in runs], figures,
                                           lock_digest=lock_digest(reg.lock_path)))
    for name, svg in figures.items():
        write(f"results/{name}", svg)
    write("changelog.md", changelog_page(changes))
    write("paper.md", paper_page(STATIC / "data" / "paper.yaml"))
    n_fhir = len(fhir.export(reg, src / "fhir"))
    return nav, len(runs), n_fhir


def _nav(calc_nav: list[Any]) -> list[Any]:
    import yaml
    from mkdocs.utils.yaml import get_yaml_loader

    with open(MKDOCS_YML, encoding="utf-8") as fh:
        cfg = yaml.load(fh, Loader=get_yaml_loader())
    nav = cfg["nav"]
    for entry in nav:
        if isinstance(entry, dict) and "Calculators" in entry:
            entry["Calculators"] = list(entry["Calculators"]) + calc_nav
    return nav


def run_mkdocs(src: Path, site_dir: Path, calc_nav: list[Any]) -> None:
    from mkdocs.commands.build import build as mkdocs_build
    from mkdocs.config import load_config
    from mkdocs.exceptions import MkDocsException

    logging.getLogger("mkdocs").setLevel(logging.WARNING)
    try:
        cfg = load_config(config_file=str(MKDOCS_YML), docs_dir=str(src), site_dir=str(site_dir), strict=True,
                          nav=_nav(calc_nav))
        mkdocs_build(cfg)
    except MkDocsException as e:
        raise SiteError(f"mkdocs: {e}") from None
    except SystemExit as e:  # mkdocs' Abort is a ClickException, a SystemExit on some paths
        raise SiteError(f"mkdocs aborted ({e})") from None


def build(results: Sequence[Path] | None = None, out: Path | None = None, *, on: dt.date | None = None,
          registry: Registry | None = None) -> BuildResult:
    t0 = time.perf_counter()
    missing = [p for p in (MKDOCS_YML, STATIC / "pages", STATIC / "assets") if not p.exists()]
    if missing:
        raise SiteError(f"the site's sources are missing ({', '.join(map(str, missing))}); build from a checkout "
                        "of the repository")
    reg = registry or get_registry()
    if reg.problems:
        raise SiteError(f"the registry has {len(reg.problems)} problem(s); run `formula validate` and fix them "
                        f"first (first: {reg.problems[0]})")
    run_dirs = check_runs(default_runs() if results is None else results)
    out = Path(out or DEFAULT_OUT).resolve()
    if out == PROJECT_ROOT or out in PROJECT_ROOT.parents or (out.exists() and not out.is_dir()):
        raise SiteError(f"--out {out}: choose a folder of its own (it is replaced by every build)")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise SiteError(f"--out {out}: the folder holds files that are not a site this command built; every build "
                        "replaces its output folder, so choose an empty or new folder")
    out.parent.mkdir(parents=True, exist_ok=True)
    src = out.parent / f"{out.name}-src"
    with _locked(out.parent / f".{out.name}.lock"):
        calc_nav, n_runs, n_fhir = generate(reg, src, run_dirs, on=on or dt.date.today())
        _swap_in(src, out, calc_nav)
    pages = sum(1 for _ in out.rglob("*.html"))
    return BuildResult(out, pages, n_runs, n_fhir, time.perf_counter() - t0)


@contextlib.contextmanager
def _locked(path: Path):
    """One build of a folder at a time (two would interleave their generated pages)."""
    with open(path, "a+") as fh:
        try:
            import fcntl
        except ImportError:  # not POSIX: no lock
            yield
            return
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SiteError(f"another build of {path.parent} is running (lock {path}); wait for it") from None
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _swap_in(src: Path, out: Path, calc_nav: list[Any]) -> None:
    """Build into a fresh folder next to `out`, then put it in place."""
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}."))
    try:
        run_mkdocs(src, tmp / "site", calc_nav)
        (tmp / "site" / MARKER).write_text("Built by `formula site build`; the next build replaces this folder.\n",
                                           encoding="utf-8")
        old = None
        if out.exists():
            old = out.parent / f".{out.name}.old-{os.getpid()}"
            os.replace(out, old)
        os.replace(tmp / "site", out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
