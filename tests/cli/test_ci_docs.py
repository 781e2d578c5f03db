"""docs/ci's workflows stay what docs/ci/README.md says: the review computes without write access, from a
full history, with the tool from the base; the comment job writes to the pull request and runs no code."""
from __future__ import annotations

import yaml

from registry.loader import PROJECT_ROOT

CI = PROJECT_ROOT / "docs" / "ci"


def _load(name: str) -> dict:
    data = yaml.safe_load((CI / name).read_text(encoding="utf-8"))
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as true
    return data


def test_the_review_job_reads_only_and_installs_the_tool_from_the_base() -> None:
    wf = _load("review-pr.yml")
    assert set(wf["on"]) == {"pull_request"} and wf["permissions"] == {"contents": "read"}
    steps = wf["jobs"]["review"]["steps"]
    checkouts = [s for s in steps if s.get("uses", "").startswith("actions/checkout@")]
    tool, pr = (next(s for s in checkouts if s["with"]["path"] == p) for p in ("tool", "pr"))
    assert "base.sha" in tool["with"]["ref"] and "head.sha" in pr["with"]["ref"] and pr["with"]["fetch-depth"] == 0
    assert all(s["with"]["persist-credentials"] is False for s in checkouts)
    script = "\n".join(s.get("run", "") for s in steps)
    assert "pip install --quiet ./tool" in script and 'formula review-pr --base "$BASE" --root pr' in script


def test_the_comment_job_writes_to_the_pull_request_and_checks_out_nothing() -> None:
    wf = _load("review-pr-comment.yml")
    assert set(wf["on"]) == {"workflow_run"}
    assert wf["permissions"] == {"actions": "read", "pull-requests": "write"}
    steps = wf["jobs"]["comment"]["steps"]
    assert not [s for s in steps if "checkout" in s.get("uses", "")]
    assert "gh pr comment" in "\n".join(s.get("run", "") for s in steps)
    text = (CI / "README.md").read_text(encoding="utf-8")
    assert "`contents: read`" in text and "`pull-requests: write`" in text and "`actions: read`" in text
