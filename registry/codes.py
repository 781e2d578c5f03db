"""Rule codes of validation problems: callers select problems by code, never by message text.

Each `Problem` carries one of these. `UNRELEASED` are the findings that an edit which has not
been released yet produces (the lock, snapshots and rendered catalogue lag the YAML); commands
that prepare a release (`texts render`, `lock`, the static completeness audit) tolerate them,
and everything that computes or reports a result does not.
"""
from __future__ import annotations

ROOT = "R-ROOT"  # no formulas/ folder at the root
YAML = "R-YAML"  # a file is not readable YAML
SCHEMA = "R-SCHEMA"  # a field breaks the file's schema (`formula schema`)
SLUG = "R-SLUG"  # duplicate slug, or slug and file name differ
UNITS_MISSING = "R-UNITS-MISSING"  # formulas/units.yaml is missing
ID_DUPLICATE = "R-ID-DUPLICATE"  # two calculators claim one benchmark id
REFERENCE = "R-REFERENCE"  # an unknown guideline, successor or dependency
CYCLE = "R-CYCLE"  # depends_on forms a cycle
VERSIONS = "R-VERSIONS"  # version list: one active, ascending, dates in order
INPUT = "R-INPUT"  # duplicate input, unknown analyte
SPELLING = "R-SPELLING"  # an alias or code of units.yaml `spellings:` or an input's `codes:` reads two ways
TEXT = "R-TEXT"  # a text or formula expression does not render
LOCK_UNREADABLE = "R-LOCK-UNREADABLE"  # REGISTRY.lock cannot be read
LOCK_FORMAT = "R-LOCK-FORMAT"  # REGISTRY.lock uses an older hashing scheme: `formula lock --rehash`
LOCK_MISSING = "R-LOCK-MISSING"  # a released version has no lock entry: `formula lock`
LOCK_CHANGED = "R-LOCK-CHANGED"  # a released version's own content changed: `formula release`
LOCK_DEPENDENCY = "R-LOCK-DEPENDENCY"  # a calculator it depends on changed: `formula release`
LOCK_TEXT = "R-LOCK-TEXT"  # the text of a superseded version changed
LOCK_ORDER = "R-LOCK-ORDER"  # a mapping of the active version is in another order than it was released with
LOCK_ORPHAN = "R-LOCK-ORPHAN"  # the lock names a calculator with no file
SNAPSHOT = "R-SNAPSHOT"  # a history snapshot is missing, unreadable or differs from its lock hash
CATALOGUE = "R-CATALOGUE"  # formulas/texts/ differs from a fresh render: `formula texts render`
JOURNAL = "R-JOURNAL"  # a multi-file change was interrupted: `formula recover`
ID_CHANGED = "R-ID-CHANGED"  # a released calculator's benchmark id changed
DRAFT = "R-DRAFT"  # a draft in formulas/drafts/ is unreadable or out of date
PLAUSIBILITY = "R-PLAUSIBILITY"  # a cross-input plausibility rule is malformed
POLICY = "R-POLICY"  # formulas/policy/governance.yaml (who may approve) is not valid
SIGNATURE = "R-SIGNATURE"  # a decision's signature, chain or approvals fail (registry.governance.signatures)
LABEL_NAME = "R-LABEL-NAME"  # a name or text keeps a label its constant no longer has (registry.labels; a warning)

SAFETY = "R-SAFETY"  # formulas/safety/ (the hazard log, its risk matrix) breaks its schema or names something unknown
SAFETY_COVERAGE = "R-SAFETY-COVERAGE"  # a calculator with a literature concern or an incomplete text has no hazard

# findings `formula validate` prints as warnings: the registry stays valid (registry.validate.warnings)
WARNINGS = frozenset({LABEL_NAME})

# the registry's files could not all be read as valid entries: nothing can be rendered from it faithfully
UNREADABLE = frozenset({ROOT, YAML, SCHEMA, SLUG, UNITS_MISSING, REFERENCE, CYCLE, TEXT, VERSIONS})
UNRELEASED = frozenset({LOCK_FORMAT, LOCK_MISSING, LOCK_CHANGED, LOCK_DEPENDENCY, LOCK_TEXT, CATALOGUE})


def blocking(problems: list) -> list:
    """The problems an unreleased edit does not explain (schema, references, tampering...)."""
    return [p for p in problems if p.code not in UNRELEASED]
