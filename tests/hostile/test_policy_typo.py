"""One typo in the policy gives one problem, at its line (issue 49, item 11): the checks that depend on the policy
(people's keys, roles, approvals of every signed decision) say "not checked until it is fixed" in that one
problem instead of reporting seven false ones. Typos are generated over fields, types, people and YAML."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import copy_registry, solo
from tests.hostile.helpers import problems

POLICY = Path("formulas") / "policy" / "governance.yaml"


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A registry whose maintainer signed a release (so every dependent check has something to say)."""
    root = copy_registry(tmp_path_factory.mktemp("typo") / "registry")
    with pytest.MonkeyPatch.context() as mp:
        solo(root, mp)
        import os

        from registry.governance.deciding import KEY_ENV

        code = run_fix(root, os.environ[KEY_ENV])
    assert code == 0
    return root


def run_fix(root: Path, key: str) -> int:
    from tests.hostile.helpers import formula

    return formula(root, "fix", "calcium-correction", "--set", "albumin_coefficient=0.7", "--reason", "r",
                   "--key", key).returncode


# (what replaces a line of the policy, the text of that line, what the problem names)
TYPOS = [
    ("four_eyes: false", "four_eys: false", "four_eys"),
    ("four_eyes: false", "four_eyes: nope", "four_eyes"),
    ("approvals_required: 1", "approvals_required: 0", "approvals_required"),
    ("approver_roles: []", "approver_roles: []\nfour_eyes: true", "duplicate key"),
    ("approver_roles: []", "approver_roles: chair", "approver_roles"),
    ("four_eyes: false", "four_eyes: [false", "malformed YAML"),
    ("  author:", "  '*':", "literal identity"),
    ("    name: R. Maintainer", "    nme: R. Maintainer", "people.author"),
    ("    - renal pharmacist", "    - 7", "people.pharmacist.roles"),
]


@pytest.mark.parametrize("old, new, named", TYPOS)
def test_one_typo_is_one_problem_at_its_line(signed: Path, old: str, new: str, named: str) -> None:
    path = signed / POLICY
    text = path.read_text(encoding="utf-8")
    assert old in text, text
    try:
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
        where = text.replace(old, new, 1).splitlines().index(new.splitlines()[-1]) + 1  # the typo's own line
        found = problems(signed)
    finally:
        path.write_text(text, encoding="utf-8")
    assert len(found) == 1, found
    [(file, code, message)] = found
    assert (file, code) == (POLICY.as_posix(), "R-POLICY") and named in message, message
    assert message.startswith(f"{POLICY.as_posix()}:{where}:") or "malformed" in message, (where, message)
    assert "not checked until it is fixed" in message
    assert problems(signed) == []  # the policy restored, the registry validates again
