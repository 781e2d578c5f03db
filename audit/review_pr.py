"""A pull-request review of a registry change: what changed between two revisions, and what it does to answers.

For each calculator whose file or content differs between the base and the head: its version and
status on each side, the decisions recorded in between (audit.decisions), every changed value
(registry.diffing), the supplied text's diff and the completeness audit's verdict on the new text,
the effect on answers (the shipped reference cases computed with the library on both registries,
with reclassification across the bands audit.impact classifies results with), its dependants whose
content hash changes, and a one-line kind. Then the guidelines that changed, the stored runs under
results/ that become stale (registry.versioned.stale), and every validation problem of the head.

Only the affected calculators are computed, so a review of one fix takes about a second.
"""
from __future__ import annotations

import dataclasses
import difflib
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from audit.decisions import Decision, decisions
from audit.impact import PAIR_BANDS, Bands
from audit.review_safety import SafetyReview, review_safety
from audit.revisions import RESULTS_DIR, Side
from registry import codes
from registry import versions as ver
from registry.diffing import Change, diff
from registry.loader import Registry, load
from registry.schema import Calculator, Version, VersionStatus
from registry.texts import TextError, render
from registry.validate import validate
from solver.data import REFERENCE_CASES, Case, read_cases
from solver.library import CalculatorError, compute
from solver.scoring import is_correct

Kind = Literal["clinical change", "wording only", "bookkeeping only"]
KIND_ORDER: dict[str, int] = {"clinical change": 0, "wording only": 1, "bookkeeping only": 2}
EXAMPLES = 3
MAX_RUNS = 500  # results/ folders read for staleness: a bound on the work a pull request can ask for
POLICY_DIR = "policy"
POLICY_DIFF_LINES = 400
MAX_POLICY_BYTES = 1_000_000  # a policy file larger than this is reported as changed, without its diff


class ValueChange(BaseModel):
    what: str
    name: str
    field: str | None
    old: Any
    new: Any
    unit: str | None
    scoring: bool
    line: str


class Example(BaseModel):
    case: str  # the reference case's file:row
    inputs: str  # the case's inputs with their units ("Sodium 130 mEq/L; Glucose 400 mg/dL")
    before: Any
    after: Any


class Reclassified(BaseModel):
    table: str  # calculator:table the bands come from
    moved: int
    examples: list[dict[str, Any]]  # case, before band, after band


class Effect(BaseModel):
    """The shipped reference cases of one calculator, computed on the base and on the head registry."""

    cases: int
    computed: bool
    unit: str | None = None  # the unit of the calculator's answer
    why_not: str | None = None
    changed: int = 0
    refused_before: int = 0
    refused_after: int = 0
    largest_abs: float | None = None
    largest_rel: float | None = None
    examples: list[Example] = []
    reclassified: Reclassified | None = None
    agree_before: int = 0  # reference answers that agree with the benchmark's (audit.completeness.AGREEMENT_RULE)
    agree_after: int = 0
    from_invalid_head: bool = False  # computed although the head does not validate (an unreleased edit, say)


class Completeness(BaseModel):
    """The text's completeness only: agreement with the benchmark's answers is the effect's (agree_before/after)."""

    status: Literal["complete", "incomplete"]
    missing: list[str]


class State(BaseModel):
    """Where a side's version stands, as its decisions say."""

    state: Literal["draft", "approved", "active", "rejected", "absent", "no active version"]
    version: str | None
    approvals: int = 0  # approvals that count under the policy (signed: verified ones only)
    required: int | None = None  # approvals the policy requires (drafts and approved drafts)
    effective: str | None = None
    words: str  # "approved, 1 of 1, effective 2026-12-07"


class CalculatorReview(BaseModel):
    slug: str
    name: str
    kind: Kind
    change: Literal["added", "removed", "unreadable", "changed"]  # unreadable: the head's file does not load
    base_version: str | None
    head_version: str | None
    base_state: State
    head_state: State
    base_hash: str | None
    head_hash: str | None
    changes: list[ValueChange]
    text_diff: list[str]
    completeness: Completeness | None
    effect: Effect | None
    dependants: list[str]  # calculators depending on this one whose content hash changes
    decisions: list[Decision]


class FieldChange(BaseModel):
    field: str
    old: Any
    new: Any


class GuidelineReview(BaseModel):
    slug: str
    change: Literal["added", "removed", "changed"]
    changes: list[FieldChange]


class PolicyFileChange(BaseModel):
    """A file of formulas/policy/ (who may decide, their keys, the seal of the history before signing)."""

    path: str
    change: Literal["added", "removed", "changed"]
    diff: list[str]  # unified diff, at most POLICY_DIFF_LINES lines
    cut: int  # diff lines left out


class StaleRun(BaseModel):
    run: str  # the results.jsonl path, relative to the head's registry root
    rows: int
    stale: int  # rows stale against the head and not against the base
    calculators: list[str]


class TouchedPath(BaseModel):
    """A path the change touches (git diff --name-status: A, M, D, T, R, C) and whether the review read it."""

    status: str
    path: str
    old: str | None = None  # a rename's or copy's source
    read: bool


class Review(BaseModel):
    base: dict[str, Any]  # revision, commit, subject, working_tree (uncommitted changes on top of commit)
    head: dict[str, Any]
    kind: Kind | None  # None: no calculator changed
    calculators: list[CalculatorReview]
    guidelines: list[GuidelineReview]
    units_changed: bool
    policy: list[PolicyFileChange]
    key_warnings: list[str] = []  # a key this change adds that signs a decision in the same change
    blocking: list[str] = []  # what the head cannot be trusted on by itself (audit.review_trust): exit 1
    paths: list[TouchedPath] = []  # every path the change touches, beside whether the review read it
    stale_runs: list[StaleRun]
    problems: list[str]
    safety: SafetyReview | None = None  # the hazard log and the safety officer's sign-off (audit.review_safety)

    @property
    def exit_code(self) -> int:
        return 1 if self.problems or self.key_warnings or self.blocking else 0


# ---------------------------------------------------------------------- reading both sides


def _load(root: Path) -> Registry:
    reg = load(root)
    validate(reg)
    return reg


def _computable(reg: Registry) -> Registry:
    """The registry the library computes from, for the review only (no result is published): what a side's
    content computes is its effect, whether or not the side validates (an unreleased edit is computed as if
    released, and the report says so); a file that does not load still refuses the calculators it touches."""
    what_if = _load(reg.root)
    what_if.problems = [p for p in what_if.problems if p.code in codes.UNREADABLE]
    return what_if


def _dump(c: Calculator | None) -> dict[str, Any] | None:
    return None if c is None else c.model_dump(mode="json")


def state_of(reg: Registry, c: Calculator | None, rejected: str | None = None) -> State:
    """The side's state: a waiting draft's (draft, or approved k of n awaiting its date), a draft rejected on this
    side (`rejected`: its version), else the active version's."""
    from registry.governance.pending import pending_one

    if c is None:
        return State(state="absent", version=None, words="absent")
    p = pending_one(reg, c)
    if p is not None:
        eff, k, n = p.effective.isoformat(), len(p.approvals), p.needed
        if p.state.startswith("approved"):
            return State(state="approved", version=p.version, approvals=k, required=n, effective=eff,
                         words=f"approved, {k} of {n}, effective {eff}")
        how = p.state if p.state.startswith("signature invalid") else f"awaiting approval, {k} of {n}"
        return State(state="draft", version=p.version, approvals=k, required=n, effective=eff,
                     words=f"draft, {how}, effective {eff}")
    if rejected is not None:
        return State(state="rejected", version=rejected, words=f"draft {rejected} rejected")
    try:
        v = c.active
    except (ValueError, StopIteration, LookupError):
        return State(state="no active version", version=None, words="no active version")
    return State(state="active", version=v.version, effective=v.effective.isoformat(),
                 words=f"active since {v.effective.isoformat()}")


def _rejected_now(base: Registry, head: Registry, slug: str) -> str | None:
    """The version of the last draft of `slug` rejected in the head and not in the base, if any."""
    from registry.trust.rejections import on_record

    new = on_record(head, slug)[len(on_record(base, slug)):]
    return new[-1][0] if new else None


def _proposal(c: Calculator) -> Version:
    """The version a calculator proposes: a waiting draft's (in a proposed registry), else the active one."""
    last = c.versions[-1]
    return last if last.status == VersionStatus.draft else c.active


def _content(reg: Registry, c: Calculator | None) -> dict[str, Any] | None:
    if c is None:
        return None
    try:
        return ver.released_content(reg, c, _proposal(c))
    except (ValueError, StopIteration, LookupError):
        return None


def _text(reg: Registry, c: Calculator | None) -> str:
    if c is None:
        return ""
    try:
        return render(c, _proposal(c), calcs=reg.calculators, units=reg.units)
    except (TextError, ValueError, LookupError, StopIteration) as e:
        return f"(the text does not render: {e})"


def proposed(reg: Registry) -> Registry:
    """The registry as it would be with every waiting draft (formulas/drafts/) approved: a pull request that
    drafts a change under four eyes proposes the draft, so that is what is diffed and computed."""
    from registry.governance.pending import draft_version

    drafts = {s: found[0] for s in sorted(reg.calculators) if (found := draft_version(reg, s)) is not None}
    if not drafts:
        return reg
    return dataclasses.replace(reg, calculators={**reg.calculators, **drafts}, hashes={}, _ids={})


def _draft(reg: Registry, slug: str) -> Any:
    from registry.governance.pending import draft_version

    found = draft_version(reg, slug)
    return None if found is None else found[0].model_dump(mode="json")


def changed_slugs(base: Registry, head: Registry) -> list[str]:
    """Calculators whose file, waiting draft or released content differs between the two registries."""
    out = []
    for slug in sorted(set(base.calculators) | set(head.calculators)):
        a, b = base.calculators.get(slug), head.calculators.get(slug)
        if (_dump(a) != _dump(b) or _draft(base, slug) != _draft(head, slug)
                or _content(base, a) != _content(head, b) or _rejected_now(base, head, slug) is not None):
            out.append(slug)
    return out


# ---------------------------------------------------------------------- effect on answers


def _classifiers() -> dict[str, Bands]:
    """The bands each calculator's result is classified with: those the impact reports use (audit.impact)."""
    out: dict[str, Bands] = {}
    for (pred, succ), (a, b) in sorted(PAIR_BANDS.items()):
        out.setdefault(pred, a)
        out.setdefault(succ, b)
    return out


def _where(case: Case) -> str:
    """The case's file name and line ("reference_cases.jsonl:12"): the same on every machine."""
    path, _, line = case.source.rpartition(":")
    return f"{Path(path).name}:{line}" if path else case.source


def _value(reg: Registry, slug: str, case: Case) -> tuple[Any, str | None]:
    try:
        return compute(slug, case.entities, variant="benchmark", registry=reg).value, None
    except CalculatorError as e:
        return None, str(e)


def _number(x: Any) -> float | None:
    if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x):
        return float(x)
    return None


def _band(bands: Bands | None, reg: Registry, value: Any, case: Case) -> str | None:
    x = _number(value)
    if bands is None or x is None:
        return None
    try:
        cat = bands.category(reg, x, case.entities)
        return bands.labels(reg).get(cat, "no band") if cat is not None else "no band"
    except (LookupError, ValueError, TypeError, ArithmeticError):
        return None


def _refusal(base: Registry, head: Registry, slug: str) -> str | None:
    from registry.broken_files import blocking_for

    for side, reg in (("base", base), ("head", head)):
        if slug not in reg.calculators:
            return f"not in the {side} registry"
        blocked = blocking_for(reg, slug)
        if blocked:
            return f"the {side} registry refuses it: {blocked[0]}"
    return None


def effect(base: Registry, head: Registry, slug: str, cases: list[Case], *, invalid_head: bool) -> Effect:
    """Compute `slug`'s reference cases on both registries and count what moves."""
    eff = Effect(cases=len(cases), computed=False, from_invalid_head=invalid_head)
    why = _refusal(base, head, slug) if cases else "no reference cases ship for this calculator"
    if why:
        eff.why_not = why
        return eff
    eff.computed = True
    eff.unit = head.calculators[slug].output.unit
    bands = _classifiers().get(slug)
    moved: list[dict[str, Any]] = []
    for case in cases:
        a, ea = _value(base, slug, case)
        b, eb = _value(head, slug, case)
        eff.refused_before += ea is not None
        eff.refused_after += eb is not None
        eff.agree_before += bool(is_correct(a, case.answer, case.lower, case.upper))
        eff.agree_after += bool(is_correct(b, case.answer, case.lower, case.upper))
        if a == b and ea == eb:
            continue
        eff.changed += 1
        if len(eff.examples) < EXAMPLES:
            eff.examples.append(Example(case=_where(case), inputs=_inputs(case), before=_shown(a, ea),
                                        after=_shown(b, eb)))
        _grow(eff, a, b)
        ba, bb = _band(bands, base, a, case), _band(bands, head, b, case)
        if ba is not None and bb is not None and ba != bb:
            moved.append({"case": _where(case), "before": ba, "after": bb})
    if bands is not None:
        eff.reclassified = Reclassified(table=f"{bands.calculator}:{bands.table}", moved=len(moved),
                                        examples=moved[:EXAMPLES])
    return eff


def _inputs(case: Case) -> str:
    """A case's inputs as a reader needs them to check an example: each value with its unit."""
    out = []
    for name, value in case.entities.items():
        if isinstance(value, (list, tuple)) and len(value) == 2 and isinstance(value[1], str):
            out.append(f"{name} {fmt_value(value[0])} {value[1]}")
        else:
            out.append(f"{name} {fmt_value(value)}")
    return "; ".join(out)


def fmt_value(x: Any) -> str:
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    return str(x)


def _shown(value: Any, error: str | None) -> Any:
    if error is not None:
        return f"refused: {error}"
    if isinstance(value, tuple):
        return list(value)
    return value if _number(value) is not None or value is None else str(value)


def _grow(eff: Effect, a: Any, b: Any) -> None:
    x, y = _number(a), _number(b)
    if x is None or y is None:
        return
    d = float(f"{abs(y - x):.12g}")  # 56.4991 - 55.1191 is 1.38, not binary noise around it
    eff.largest_abs = d if eff.largest_abs is None else max(eff.largest_abs, d)
    if x != 0:
        r = float(f"{d / abs(x):.12g}")
        eff.largest_rel = r if eff.largest_rel is None else max(eff.largest_rel, r)


# ---------------------------------------------------------------------- one calculator


def _completeness(head: Registry, c: Calculator | None) -> Completeness | None:
    """Whether the proposed text carries every input, constant and branch (agreement is the effect's)."""
    from audit.completeness import static_findings

    if c is None:
        return None
    missing = static_findings(c, _proposal(c).text, calcs=head.calculators, units=head.units)
    return Completeness(status="incomplete" if missing else "complete", missing=missing)


def _kind(changes: list[Change], eff: Effect | None, content_moved: bool, clinical_deps: bool,
          present: bool) -> Kind:
    """`present`: on both sides; a calculator added, removed or whose file no longer loads is a clinical change
    (what it now computes, if anything, is not known to be what it computed)."""
    if not present:
        return "clinical change"
    if not content_moved:
        return "bookkeeping only"
    own = [c for c in changes if c.scoring and not (c.what == "dependency" and c.field == "content")]
    if own or clinical_deps or (eff is not None and eff.changed):
        return "clinical change"
    return "wording only"


def _value_changes(changes: list[Change]) -> list[ValueChange]:
    return [ValueChange(what=c.what, name=c.name, field=c.field, old=c.old, new=c.new, unit=c.unit,
                        scoring=c.scoring, line=c.line()) for c in changes if c.what != "text"]


def review_calculator(regs: tuple[Registry, Registry, Registry, Registry], slug: str,
                      cases: list[Case], clinical: set[str], invalid_head: bool) -> CalculatorReview:
    """One changed calculator. `regs`: base, head as loaded, head as proposed (its drafts approved), and that
    as the library computes from it; `clinical`: calculators already found to change clinically (dependencies
    are reviewed before their dependants)."""
    base, loaded, head, head_calc = regs
    a, b = base.calculators.get(slug), head.calculators.get(slug)
    ca, cb = _content(base, a), _content(head, b)
    changes = diff(ca, cb) if cb is not None else []
    moved = ca != cb
    mine = [k for k in cases if (b or a) is not None and k.calculator_id == (b or a).medcalc_id]  # type: ignore[union-attr]
    eff = effect(base, head_calc, slug, mine, invalid_head=invalid_head) if moved and b is not None else None
    ta, tb = _text(base, a), _text(head, b)
    text_diff = list(difflib.unified_diff(ta.splitlines(), tb.splitlines(), f"{slug} (base)", f"{slug} (head)",
                                          lineterm="", n=2))
    from registry.governance.writeplan import dependants

    return CalculatorReview(
        slug=slug, name=(b or a).name,  # type: ignore[union-attr]
        kind=_kind(changes, eff, moved, _any_clinical(head, slug, clinical), a is not None and b is not None),
        change="added" if a is None else "changed" if b is not None else
        "unreadable" if (head.formulas_dir / f"{slug}.yaml").is_file() else "removed",
        base_version=a.active.version if a is not None else None,
        head_version=_proposal(b).version if b is not None else None,
        base_state=state_of(base, a), head_state=state_of(loaded, loaded.calculators.get(slug),
                                                          _rejected_now(base, loaded, slug)),
        base_hash=ver.content_hash(ca) if ca is not None else None,
        head_hash=ver.content_hash(cb) if cb is not None else None,
        changes=_value_changes(changes), text_diff=text_diff,
        completeness=_completeness(head, b) if moved else None, effect=eff,
        dependants=[d for d in dependants(head, slug) if d in base.calculators
                    and _content(base, base.calculators[d]) != _content(head, head.calculators[d])],
        decisions=decisions(base, loaded, a, loaded.calculators.get(slug)))


def _any_clinical(reg: Registry, slug: str, clinical: set[str]) -> bool:
    from registry.broken_files import uses

    return bool(uses(reg, slug) & clinical)


def _order(head: Registry, slugs: list[str]) -> list[str]:
    """Dependencies before dependants, else by slug (a dependant's kind follows from its dependencies')."""
    from registry.broken_files import uses

    return sorted(slugs, key=lambda s: (len(uses(head, s)) if s in head.calculators else 0, s))


# ---------------------------------------------------------------------- guidelines, runs


def _flat(d: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(d, dict) and d:
        out: dict[str, Any] = {}
        for k, v in d.items():
            out.update(_flat(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: d}


def guideline_reviews(base: Registry, head: Registry) -> list[GuidelineReview]:
    out = []
    for slug in sorted(set(base.guidelines) | set(head.guidelines)):
        a, b = base.guidelines.get(slug), head.guidelines.get(slug)
        da = a.model_dump(mode="json") if a is not None else {}
        db = b.model_dump(mode="json") if b is not None else {}
        if da == db:
            continue
        fa, fb = _flat(da), _flat(db)
        out.append(GuidelineReview(slug=slug, change="added" if a is None else "removed" if b is None else "changed",
                                   changes=[FieldChange(field=k, old=fa.get(k), new=fb.get(k))
                                            for k in sorted(set(fa) | set(fb)) if fa.get(k) != fb.get(k)]))
    return out


def _policy_files(reg: Registry) -> dict[str, bytes]:
    folder = reg.formulas_dir / POLICY_DIR
    if not folder.is_dir() or folder.is_symlink():
        return {}
    from registry.plain_files import is_plain, read_bytes

    files = sorted(p for p in folder.rglob("*") if is_plain(p))[:MAX_RUNS]
    return {p.relative_to(reg.root).as_posix(): read_bytes(p, MAX_POLICY_BYTES) for p in files}


def policy_changes(base: Registry, head: Registry) -> list[PolicyFileChange]:
    """What changed in formulas/policy/: the governance policy, the allowed signers, the seal."""
    a, b = _policy_files(base), _policy_files(head)
    out = []
    for path in sorted(set(a) | set(b)):
        x, y = a.get(path, b""), b.get(path, b"")
        if x == y:
            continue
        lines: list[str] = []
        if len(x) <= MAX_POLICY_BYTES and len(y) <= MAX_POLICY_BYTES:
            lines = list(difflib.unified_diff(x.decode("utf-8", "replace").splitlines(),
                                              y.decode("utf-8", "replace").splitlines(), f"{path} (base)",
                                              f"{path} (head)", lineterm="", n=1))
        out.append(PolicyFileChange(path=path, change="added" if path not in a else "removed" if path not in b
                                    else "changed", diff=lines[:POLICY_DIFF_LINES],
                                    cut=max(0, len(lines) - POLICY_DIFF_LINES)))
    seal_a, seal_b = _lock_seal(base), _lock_seal(head)
    if seal_a != seal_b:  # the lock's record of the seal is who-decides data too: it closes the history before signing
        out.append(PolicyFileChange(path=f"{base.rel(base.lock_path)} (sealed_before_signing)",
                                    change="added" if seal_a is None else "removed" if seal_b is None else "changed",
                                    diff=[f"-{seal_a}"] * (seal_a is not None) + [f"+{seal_b}"] * (seal_b is not None),
                                    cut=0))
    return out


def _lock_seal(reg: Registry) -> dict[str, str] | None:
    try:
        return ver.lock_seal(reg.lock_path)
    except (ValueError, OSError):
        return None


def new_keys(base: Registry, head: Registry) -> set[str]:
    """Fingerprints of the keys the change adds to allowed_signers."""
    from registry.trust.decisionlog import trust_of

    return {s.fingerprint for s in trust_of(head).signers} - {s.fingerprint for s in trust_of(base).signers}


def keys_added_and_used(base: Registry, head: Registry) -> list[str]:
    """A key the change adds to allowed_signers that also signs a decision of the change: a new decider and their
    decision arrive together, so whoever reviews the key reviews its first use in the same breath."""
    from registry.trust.decisionlog import audit, trust_of

    th = trust_of(head)
    new = new_keys(base, head)
    if not new:
        return []
    out = []
    for slug, c in sorted(head.calculators.items()):
        try:
            checked = audit(head, c, th).checked
        except (ValueError, StopIteration):
            continue
        for x in checked:
            if x.fingerprint in new:
                out.append(f"{slug} {x.entry.version}: the {x.entry.d.decision} by {x.entry.d.principal} on "
                           f"{x.entry.d.date} is signed with key {x.fingerprint}, which this change adds to "
                           "formulas/policy/allowed_signers: add a key in a change of its own, reviewed first")
    return out


def _run_files(root: Path) -> list[Path]:
    folder = root / RESULTS_DIR
    if not folder.is_dir() or folder.is_symlink():
        return []
    found = sorted(p for p in folder.rglob("results.jsonl") if p.is_file() and not p.is_symlink())
    return found[:MAX_RUNS]


def stale_runs(base: Registry, head: Registry, head_root: Path) -> list[StaleRun]:
    """Stored runs with cases stale against the head that were not stale against the base."""
    from registry.commands import read_jsonl
    from registry.versioned import stale

    out = []
    for path in _run_files(head_root):
        try:
            rows, _ = read_jsonl(path)
        except OSError:
            continue
        before = {r["line"] for r in stale(base, rows)[0]}
        now = [r for r in stale(head, rows)[0] if r["line"] not in before]
        if now:
            out.append(StaleRun(run=path.relative_to(head_root).as_posix(), rows=len(rows), stale=len(now),
                                calculators=sorted({r["slug"] for r in now})))
    return out


# ---------------------------------------------------------------------- the whole review


def _side(s: Side) -> dict[str, Any]:
    return {"revision": s.label, "commit": s.commit, "subject": s.subject, "working_tree": s.working_tree}


def _overall(items: Iterable[CalculatorReview]) -> Kind | None:
    kinds = sorted((r.kind for r in items), key=KIND_ORDER.__getitem__)
    return kinds[0] if kinds else None


def blocking(base: Registry, head: Registry, head_side: Side, slugs: list[str]) -> list[str]:
    """What the head cannot vouch for itself, judged by the base (audit.review_trust): decisions that count only
    under the head's rules, released versions rewritten, the seal moved, touched paths the review did not read."""
    from audit import review_trust as rt

    return (rt.unread(head_side.touched) + rt.seal_moved(base, head) + rt.rewritten(base, head)
            + rt.base_rules(base, head, slugs, new_keys(base, head)))


def review(base_side: Side, head_side: Side, cases: list[Case] | None = None) -> Review:
    """The review of `head_side` against `base_side` (each a registry root on disk)."""
    base, head = _load(base_side.root), _load(head_side.root)
    problems = [str(p) for p in head.problems]
    view = proposed(head)
    head_calc = proposed(_computable(head) if head.problems else head)
    base_calc = _computable(base) if base.problems else base
    cases = read_cases(REFERENCE_CASES) if cases is None else cases
    clinical: set[str] = set()
    items: list[CalculatorReview] = []
    slugs = changed_slugs(base, head)
    for slug in _order(view, slugs):
        item = review_calculator((base_calc, head, view, head_calc), slug, cases, clinical, bool(head.problems))
        if item.kind == "clinical change":
            clinical.add(slug)
        items.append(item)  # a decision that does not verify is a validation problem already (R-SIGNATURE)
    items.sort(key=lambda r: (KIND_ORDER[r.kind], r.slug))
    units_a = base.units.model_dump(mode="json") if base.units else None
    units_b = head.units.model_dump(mode="json") if head.units else None
    return Review(base=_side(base_side), head=_side(head_side), kind=_overall(items), calculators=items,
                  guidelines=guideline_reviews(base, head), units_changed=units_a != units_b,
                  policy=policy_changes(base, head), key_warnings=keys_added_and_used(base, head),
                  blocking=blocking(base, head, head_side, slugs),
                  paths=[TouchedPath(status=t.status, path=t.path, old=t.old, read=t.read) for t in head_side.touched],
                  stale_runs=stale_runs(base, head, head_side.root),
                  problems=problems, safety=review_safety(base, head))
