"""Write the guide's reference page (docs/guide/reference.md) from the code, so it cannot drift.

    PYTHONPATH=. python docs/reference.py           # rewrite docs/guide/reference.md
    PYTHONPATH=. python docs/reference.py --check   # exit 1 when the page differs (tests/docs/test_reference.py)

Commands and options come from the `formula` parser itself (its --help at 80 columns), rule codes from
registry/codes.py, JSON shapes from the pydantic models that read and write them.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PAGE = HERE / "guide" / "reference.md"
ROOT = HERE.parent

INTRO = """# Reference

This page is generated from the code by `docs/reference.py` (a test fails when it differs), so it says
what the installed `formula` does. The guide's other pages say when and why to use each command.
"""


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _command_sections(parser: argparse.ArgumentParser, name: str, level: int) -> list[str]:
    """`name`'s --help, then each sub-command's, one heading each."""
    out = [f"{'#' * level} `{name}`", "", "```text", parser.format_help().rstrip(), "```", ""]
    for sub, p in _subparsers(parser).items():
        out += _command_sections(p, f"{name} {sub}", min(level + 1, 4))
    return out


def commands() -> list[str]:
    from cli.main import COMMANDS, build_parser

    parser = build_parser()
    subs = _subparsers(parser)
    out = ["## Commands and options", "", "| command | what it does |", "|---|---|"]
    out += [f"| [`formula {n}`](#formula-{n}) | {text} |" for n, (_, text) in COMMANDS.items()]
    out += ["", "```text", parser.format_help().rstrip(), "```", ""]
    for n in COMMANDS:
        out += _command_sections(subs[n], f"formula {n}", 3)
    return out


def _exit_sentences(text: str) -> list[str]:
    """The sentences of a help text that speak of an exit status."""
    text = " ".join(text.split())
    return [x.strip() for x in re.split(r"(?<=\.)\s+(?=[A-Z`])", text) if re.search(r"\bexit", x, re.I)]


def _own_statuses(name: str, parser: argparse.ArgumentParser) -> list[str]:
    """What one parser's description, epilog and options say of exit statuses (`--help` itself left out)."""
    out = [f"| `{name}` | | {s.replace('|', '/')} |"
           for s in _exit_sentences(f"{parser.description or ''} {parser.epilog or ''}")]
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction) or not action.help or action.help == argparse.SUPPRESS:
            continue
        out += [f"| `{name}` | `{'/'.join(action.option_strings)}` | {s.replace('|', '/')} |"
                for s in _exit_sentences(action.help)]
    for sub, p in _subparsers(parser).items():
        out += _own_statuses(f"{name} {sub}", p)
    return out


def exit_codes() -> list[str]:
    """The rule every command follows (cli.main.main), then each command's own statuses from its help."""
    from cli.main import COMMANDS, build_parser, main

    rule = " ".join((main.__doc__ or "").split())
    out = ["## Exit status", "", f"Every command: {rule.removeprefix('Exit status: ')}", "",
           "What a command's help says of its own statuses:", "", "| command | option | says |", "|---|---|---|"]
    subs = _subparsers(build_parser())
    for n in COMMANDS:
        out += _own_statuses(f"formula {n}", subs[n])
    return out + [""]


def rule_codes() -> list[str]:
    """registry/codes.py: each code with the comment that says what it means."""
    from registry import codes

    src = (ROOT / "registry" / "codes.py").read_text(encoding="utf-8")
    out = ["## Rule codes", "", "A validation problem prints as `path:line: field: problem [CODE]`; select problems",
           "by code, never by message text. Warnings leave the registry valid.", "",
           "| code | what | kind |", "|---|---|---|"]
    for m in re.finditer(r'^[A-Z_]+ = "(R-[A-Z-]+)"\s+# (.*)$', src, re.M):
        kind = "warning" if m.group(1) in codes.WARNINGS else (
            "unreleased edit" if m.group(1) in codes.UNRELEASED else "error")
        out.append(f"| `{m.group(1)}` | {m.group(2).replace('|', '/')} | {kind} |")
    return out + [""]


def _type(spec: dict, defs: dict) -> str:
    """A field's type in words: an enumeration by its values, a nested model by its name."""
    if "$ref" in spec:
        name = spec["$ref"].rsplit("/", 1)[-1]
        return _type(defs[name], defs) if "enum" in defs.get(name, {}) else name
    if "anyOf" in spec:
        return " or ".join(_type(s, defs) for s in spec["anyOf"])
    if spec.get("type") == "array":
        return f"list of {_type(spec.get('items', {}), defs)}"
    if "enum" in spec:
        return " / ".join(f"`{v}`" for v in spec["enum"])
    return str(spec.get("type", spec.get("const", "any")))


def _fields(title: str, schema: dict) -> list[str]:
    need, defs = set(schema.get("required", ())), schema.get("$defs", {})
    out = [f"### {title}", "", " ".join((schema.get("description") or "").split()), "",
           "| field | type | required | what |", "|---|---|---|---|"]
    for name, spec in schema.get("properties", {}).items():
        what = " ".join((spec.get("description") or "").split()).replace("|", "/")
        kind = _type(spec, defs).replace("|", "/")
        out.append(f"| `{name}` | {kind} | {'yes' if name in need else 'no'} | {what} |")
    return out + [""]


def json_shapes() -> list[str]:
    from registry.schema import Calculator, Guideline, UnitsFile
    from registry.trust.policy import Policy
    from solver.records import AnswerRecord
    from solver.runner.manifest import Manifest

    out = ["## JSON shapes", "", "The top-level fields of each file the registry reads and each record the",
           "tools write; `formula schema --kind KIND` prints the whole JSON Schema of a registry file.", ""]
    for title, model in (("A calculator file (formulas/*.yaml)", Calculator),
                         ("A guideline file (guidelines/*.yaml)", Guideline),
                         ("The units file (formulas/units.yaml)", UnitsFile),
                         ("The policy (formulas/policy/governance.yaml)", Policy),
                         ("An answer record (formula solve --format json; formula replay)", AnswerRecord),
                         ("A run's manifest (RUN/manifest.json)", Manifest)):
        out += _fields(title, model.model_json_schema())
    return out


def page() -> str:
    os.environ["COLUMNS"] = "80"  # argparse wraps help to the terminal: the page shows an 80-column one
    lines = [INTRO, *commands(), *exit_codes(), *rule_codes(), *json_shapes()]
    return "\n".join(lines).rstrip("\n") + "\n"


if __name__ == "__main__":
    text = page()
    if "--check" in sys.argv[1:]:
        same = PAGE.read_text(encoding="utf-8") == text if PAGE.exists() else False
        print("docs/guide/reference.md is current" if same else "docs/guide/reference.md differs: run "
              "`PYTHONPATH=. python docs/reference.py`")
        sys.exit(0 if same else 1)
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
