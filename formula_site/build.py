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
from typing import Any, Callable, Sequence

from audit.runs import Run, RunError, dataset_key, dataset_name, read_run
from audit.safety_case import SafetyCase
from audit.tables import build_report, split_pair
from formula_site import fhir
from formula_site.impact_pages import compute_pages, index_page, pair_page
from formula_site.markup import esc
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
from formula_site.report import SiteReport, from_report
from formula_site.results_pages import calculator_accuracy, results_page
from formula_site.safety_pages import calculator_hazards, safety_page
from registry import clock
from registry.counted_nouns import counted
from registry.governance.changelog import changelog
from registry.loader import PROJECT_ROOT, Registry, get_registry
from solver.data import REFERENCE_CASES, Case, file_hash, read_cases

# A checkout builds from its own sources; an installed package from the copy its wheel carries
# (setup.py), writing into ./build/site of the folder it runs in.
_CHECKOUT = (PROJECT_ROOT / "mkdocs.yml").is_file()
SOURCES = PROJECT_ROOT if _CHECKOUT else Path(__file__).resolve().parent / "embedded"
MKDOCS_YML = SOURCES / "mkdocs.yml"
STATIC = SOURCES / "site"
EMBEDDED_RESULTS = SOURCES / "results" / "embedded"
DEFAULT_OUT = (PROJECT_ROOT if _CHECKOUT else Path.cwd()) / "build" / "site"
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


def runs_folder(root: Path | None = None) -> Path:
    """Where the runs a site publishes by default live: a committee's registry (`formula init`) publishes its
    own, under its results/; the registry this package ships, the runs shipped with it (results/embedded/)."""
    from registry.loader import shipped_root

    if root is None or Path(root).resolve() in (shipped_root().resolve(), PROJECT_ROOT.resolve()):
        return EMBEDDED_RESULTS
    return Path(root) / "results"


def default_runs(root: Path | None = None) -> list[Path]:
    """Every run folder (one holding results.jsonl) under `runs_folder(root)`, sorted."""
    folder = runs_folder(root)
    if not folder.is_dir():
        return []
    return sorted(p.parent for p in folder.rglob("results.jsonl"))


def check_runs(dirs: Sequence[Path]) -> list[Run]:
    """Read every run folder with the audit layer's reader, which names the file, line and field of any
    problem; nothing is written before all of them read."""
    out = []
    for d in dirs:
        d = Path(d)
        for name in ("manifest.json", "results.jsonl"):
            if not (d / name).is_file():
                raise SiteError(f"{d}: not a stored run (no {name}); a run folder holds manifest.json and "
                                "results.jsonl")
        try:
            out.append(read_run(d.resolve()))
        except RunError as e:
            raise SiteError(str(e)) from None
    return out


def _audits(reg: Registry, cases: list[Case]) -> AuditInputs:
    from audit.completeness import audit as completeness
    from audit.deviations import fidelity

    return AuditInputs(
        completeness={a.slug: a for a in completeness(reg, cases)},
        fidelity={r.slug: r for r in fidelity(reg, cases)},
        fidelity_cases=len(cases),
        fidelity_data=REFERENCE_CASES.name,
        fidelity_hash=file_hash(REFERENCE_CASES),
    )


def chosen_pairs(texts: Sequence[str], runs: Sequence[Run]) -> list[tuple[str, str]]:
    """--compare A:B (run folder name, folder or arm) as (A, B) run folders; refused before anything is written."""
    labels = [r.label for r in runs]
    out = []
    for text in texts:
        try:
            a, b = split_pair(text, list(runs), labels)
        except RunError as e:
            raise SiteError(f"--compare {e}") from None
        if a == b:
            raise SiteError(f"--compare {text}: compares a run with itself")
        out.append((str(runs[a].dir), str(runs[b].dir)))
    return out


def default_pairs(runs: Sequence[Run]) -> list[tuple[str, str]]:
    """Pairs to compare, as (A, B) run folders, within each dataset only: every other run against the
    gold-solve run (the library's benchmark variant), or against the first run when there is no single
    gold-solve run; runs of a named dataset (imported ones) against the run of that dataset holding the
    most cases, on the cases both hold."""
    groups: dict[str | None, list[Run]] = {}
    for r in runs:
        groups.setdefault(dataset_key(r) if dataset_name(r) else None, []).append(r)
    out: list[tuple[str, str]] = []
    for key, members in groups.items():
        if len(members) < 2:
            continue
        gold = [r for r in members if r.arm == "gold-solve"]
        if len(gold) == 1:
            base = gold[0]
        elif key is None:
            base = members[0]
        else:
            base = max(members, key=lambda r: r.rows["row_number"].nunique())
        out += [(str(r.dir), str(base.dir)) for r in members if r is not base]
    return out


def _package_version() -> str:
    try:
        return metadata.version("formula-registry")
    except metadata.PackageNotFoundError:
        return "unknown"


Write = Callable[[str, str], None]


def generate(reg: Registry, src: Path, runs: Sequence[Run], *, on: dt.date,
             pairs: Sequence[tuple[str, str]] | None = None) -> tuple[dict[str, list[Any]], int, int]:
    """Write every page into src; returns (generated nav entries by section, runs, FHIR files). Each page family
    is written in turn, in the order the nav shows them."""
    write = _fresh_sources(src)
    cases = read_cases(REFERENCE_CASES)
    audits = _audits(reg, cases)
    rep = tabulated(reg, runs, pairs)  # built once: every page reads this
    changes = changelog(reg)
    impact = compute_pages(reg, cases)
    write("index.md", overview(reg, on=on, package_version=_package_version(), runs=rep.runs, changes=changes,
                               audits=audits, impact_pairs=[f"{p.predecessor} → {p.successor}" for p in impact]))
    nav = _registry_pages(write, reg, audits, on, calculator_accuracy(rep), _safety_case(reg, cases))
    _results_pages(write, reg, rep)
    nav_impact = _impact_pages(write, reg, impact)
    write("changelog.md", changelog_page(changes))
    write("paper.md", paper_page(STATIC / "data" / "paper.yaml"))
    n_fhir = len(fhir.export(reg, src / "fhir"))
    return {"Calculators": nav, "Impact": nav_impact}, len(rep.runs), n_fhir


def _fresh_sources(src: Path) -> Write:
    """An empty source folder holding the hand-written pages and assets (only a folder this command made is
    ever emptied), and the function that writes a generated page into it."""
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

    return write


def tabulated(reg: Registry, runs: Sequence[Run], pairs: Sequence[tuple[str, str]] | None) -> SiteReport:
    """The runs through the audit layer's report tables; runs that cannot be paired (other cases or seeds) are
    shown unpaired, with the reason, unless the pairs were asked for."""
    report: dict[str, Any] = {"runs": [], "gaps": []}
    if runs:
        explicit = pairs is not None
        pairs = default_pairs(runs) if pairs is None else pairs
        try:
            report = build_report(runs, compare=pairs, registry=reg)
        except RunError as e:
            if not pairs or explicit:
                raise SiteError(str(e)) from None
            try:
                report = build_report(runs, compare=(), registry=reg)
            except RunError as e2:
                raise SiteError(str(e2)) from None
            report["gap_error"] = str(e)
    return from_report(report, {str(r.dir): r.manifest for r in runs})


def _registry_pages(write: Write, reg: Registry, audits: AuditInputs, on: dt.date,
                    accuracy: dict[str, Any], safety: SafetyCase) -> list[Any]:
    """The audits, the clinical safety page, one page per calculator and the lineage; the calculators' nav
    entries."""
    write("audits/literature.md", literature_audit(reg))
    write("audits/completeness.md", completeness_audit(reg, audits))
    write("audits/fidelity.md", fidelity_audit(reg, audits))
    write("calculators/index.md", calculators_index(reg, on))
    write("safety.md", safety_page(safety))
    nav: list[Any] = []
    for c in ordered(reg):
        write(f"calculators/{c.slug}.md", calculator_page(reg, c, audits=audits, on=on,
                                                          accuracy=accuracy.get(c.slug, []),
                                                          safety=calculator_hazards(safety, c.slug)))
        nav.append({esc(c.name): f"calculators/{c.slug}.md"})  # the theme puts nav titles in pages unescaped
    write("lineage.md", lineage(reg))
    return nav


def _results_pages(write: Write, reg: Registry, rep: SiteReport) -> None:
    from registry.versions import lock_digest

    figures: dict[str, str] = {}
    write("results/index.md", results_page(reg, rep, figures, lock_digest=lock_digest(reg.lock_path)))
    for name, svg in figures.items():
        write(f"results/{name}", svg)


def _impact_pages(write: Write, reg: Registry, impact: list[Any]) -> list[Any]:
    """Each formula against its successor on the shipped reference cases; the pairs' nav entries."""
    data_label = f"the shipped reference cases, {REFERENCE_CASES.name} ({file_hash(REFERENCE_CASES)[:19]})"
    write("impact/index.md", index_page(reg, impact, data_label))
    figures: dict[str, str] = {}
    nav: list[Any] = []
    for p in impact:
        write(f"impact/{p.name}.md", pair_page(reg, p, data_label, figures))
        nav.append({esc(f"{p.predecessor} → {p.successor}"): f"impact/{p.name}.md"})
    for name, svg in figures.items():
        write(f"impact/{name}", svg)
    return nav


def _safety_case(reg: Registry, cases: list[Case]) -> SafetyCase:
    """The clinical safety case, computed once for the safety page and every calculator page."""
    from audit.safety_case import build
    from registry.trust.safety_signoff import state

    return build(reg, sign_off=state(reg).to_json(), cases=cases)


def _nav(generated: dict[str, list[Any]]) -> list[Any]:
    """mkdocs.yml's nav with the generated pages appended to their sections (Calculators, Impact)."""
    import yaml
    from mkdocs.utils.yaml import get_yaml_loader

    with open(MKDOCS_YML, encoding="utf-8") as fh:
        cfg = yaml.load(fh, Loader=get_yaml_loader())
    nav = cfg["nav"]
    for entry in nav:
        if isinstance(entry, dict):
            for section, pages in generated.items():
                if section in entry:
                    entry[section] = list(entry[section]) + pages
    return nav


def built_from(reg: Registry) -> str:
    """The footer of every page: the registry lock digest and the git commit the site was built from (and
    whether the registry's files differ from that commit), so a reader can tell which registry a page shows."""
    from audit.revisions import head_of
    from registry.versions import lock_digest

    digest = lock_digest(reg.lock_path)
    head, dirty = head_of(reg.root)
    commit = "no git commit" if head is None else f"commit {head}" + (" with uncommitted changes" if dirty else "")
    return f"Built from registry lock <code>{esc(digest)}</code>, {esc(commit)}"


def run_mkdocs(src: Path, site_dir: Path, generated: dict[str, list[Any]], *, footer: str = "",
               site_url: str | None = None) -> None:
    from mkdocs.commands.build import build as mkdocs_build
    from mkdocs.config import load_config
    from mkdocs.exceptions import MkDocsException

    logging.getLogger("mkdocs").setLevel(logging.WARNING)
    try:
        cfg = load_config(config_file=str(MKDOCS_YML), docs_dir=str(src), site_dir=str(site_dir), strict=True,
                          nav=_nav(generated), copyright=footer or None, site_url=site_url)
        mkdocs_build(cfg)
    except MkDocsException as e:
        raise SiteError(f"mkdocs: {e}") from None
    except SystemExit as e:  # mkdocs' Abort is a ClickException, a SystemExit on some paths
        raise SiteError(f"mkdocs aborted ({e})") from None


def build(results: Sequence[Path] | None = None, out: Path | None = None, *, on: dt.date | None = None,
          registry: Registry | None = None, compare: Sequence[str] | None = None,
          site_url: str | None = None) -> BuildResult:
    """Build the site; `compare` holds "A:B" run pairs (default: every run against the gold-solve run);
    `site_url`, where it will be served (its path is where the 404 page's links start)."""
    t0 = time.perf_counter()
    missing = [p for p in (MKDOCS_YML, STATIC / "pages", STATIC / "assets") if not p.exists()]
    if missing:
        raise SiteError(f"the site's sources are missing ({', '.join(map(str, missing))}); build from a checkout "
                        "of the repository")
    reg = registry or get_registry()
    if reg.problems:
        raise SiteError(f"the registry has {counted(len(reg.problems), 'problem')}; run `formula validate` and fix them "
                        f"first (first: {reg.problems[0]})")
    runs = check_runs(default_runs(reg.root) if results is None else results)
    pairs = chosen_pairs(compare, runs) if compare else None
    out = Path(out or DEFAULT_OUT).resolve()
    if out == PROJECT_ROOT or out in PROJECT_ROOT.parents or (out.exists() and not out.is_dir()):
        raise SiteError(f"--out {out}: choose a folder of its own (it is replaced by every build)")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise SiteError(f"--out {out}: the folder holds files that are not a site this command built; every build "
                        "replaces its output folder, so choose an empty or new folder")
    out.parent.mkdir(parents=True, exist_ok=True)
    src = out.parent / f"{out.name}-src"
    with _locked(out.parent / f".{out.name}.lock"):
        generated, n_runs, n_fhir = generate(reg, src, runs, on=on or clock.today(), pairs=pairs)
        _swap_in(src, out, generated, footer=built_from(reg), site_url=site_url)
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


def _swap_in(src: Path, out: Path, generated: dict[str, list[Any]], *, footer: str = "",
             site_url: str | None = None) -> None:
    """Build into a fresh folder next to `out`, then put it in place."""
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}."))
    try:
        run_mkdocs(src, tmp / "site", generated, footer=footer, site_url=site_url)
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
