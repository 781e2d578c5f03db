"""`formula review-pr --base REV`: the review of a registry change, for a pull-request comment or a tool."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

TOOL_ERROR = 2  # an unknown revision, a shallow clone lacking the base, no git: nothing was reviewed
NO_REGISTRY = 3  # no registry here (nor --root, nor $FORMULA_REGISTRY_ROOT): nothing was reviewed


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("review-pr",
                       description="Compare the registry at --base (a commit, branch or tag, read through git) with "
                       "--head or the working tree: per changed calculator its versions and their state, every decision "
                       "(who, role, date, reason, verified or why not), changed values, text diff and the text's "
                       "completeness, the effect on the shipped reference cases and their agreement with the "
                       "benchmark, dependants, and the "
                       "stored runs under results/ that become stale; then every validation problem of the head. "
                       "Exit 0 when the head is valid and nothing blocks, 1 when it has problems or a blocking finding (a "
                       "path the review did not read, a decision that counts only under the change's own rules, a "
                       "released version or the seal rewritten), 2 when a revision cannot be read, 3 when there is "
                       "no registry here.")
    p.add_argument("--base", metavar="REV", default=None,
                   help="the revision the change is proposed against (default: where the head left main, "
                   "`git merge-base main HEAD`)")
    p.add_argument("--head", metavar="REV", default=None, help="the proposed revision (default: the working tree)")
    p.add_argument("--format", choices=["markdown", "json"], default="markdown",
                   help="markdown: a pull-request comment (at most 65,536 characters); json: everything")
    p.add_argument("--out", type=Path, default=None, metavar="OUT",
                   help="write the report to the file OUT (the markdown in full, never cut) instead of stdout")
    p.add_argument("--root", type=Path, default=None,
                   help="the registry root inside a git repository (default: $FORMULA_REGISTRY_ROOT, else the "
                   "nearest folder upwards from the current one holding formulas/ and guidelines/)")
    p.set_defaults(handler=run)


def _root(given: Path | None) -> Path | None:
    """Found as every command finds it (registry.loader.find_root); None where no registry is found (the copy
    installed with the package is no registry of the user's: reviewing it would say "validates" of the wrong one)."""
    from registry.loader import INSTALLED, find_root

    found = find_root(given)
    return None if found.how == INSTALLED else found.path


def run(args: argparse.Namespace) -> int:
    from audit.review_markdown import as_json, markdown
    from audit.review_pr import review
    from audit.revisions import RevisionError, sides
    from registry.terminal import printable, say

    if args.out is not None and args.out.is_dir():
        say(f"error: --out {printable(str(args.out))} is a folder; give a file", file=sys.stderr)
        return TOOL_ERROR
    root = _root(args.root)
    if root is None:
        from registry.loader import ROOT_ENV

        say("error: no registry here: review-pr reviews a registry repository (a folder holding formulas/ and "
            f"guidelines/); run it inside one, or pass --root DIR (or set {ROOT_ENV})", file=sys.stderr)
        return NO_REGISTRY
    try:
        with sides(root, args.base, args.head) as (base, head):
            rev = review(base, head)
    except RevisionError as e:
        from registry.cliutil import in_registry

        say(printable(f"error: {in_registry(str(e), args.root)}"), file=sys.stderr)
        return TOOL_ERROR
    if args.format == "json":
        text = as_json(rev)
    else:
        text = markdown(rev, limit=None if args.out is not None else 65_536)
    if args.out is None:
        sys.stdout.write(text)
    else:
        from registry.atomic import atomic_write

        try:
            atomic_write(args.out, text)
        except OSError as e:
            say(printable(f"error: cannot write {args.out}: {e.strerror}"), file=sys.stderr)
            return TOOL_ERROR
        say(printable(f"wrote {args.out} ({len(text):,} characters)"))
    return rev.exit_code
