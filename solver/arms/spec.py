"""An arm's definition (YAML) and its prompt templates (jinja2), with the paper's access rules checked.

Table 16's settings are fields of the definition; the access rules are checked from each
template's syntax tree, so an arm without formula access cannot name the formula text, an arm
without variable access cannot name the gold variables, and no template can name anything the
context does not offer (the test row's answer, explanation and limits are never offered).
"""
from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any, Literal

import jinja2
import yaml
from jinja2 import meta
from jinja2.sandbox import ImmutableSandboxedEnvironment
from pydantic import BaseModel, ConfigDict, Field, model_validator

HERE = Path(__file__).resolve().parent
DEFS = HERE / "defs"
TEMPLATES = HERE / "templates"
LOCK = HERE / "arms.lock.json"

# Every name a template may use, and the access rule that admits it.
FORMULA_NAMES = frozenset({"formula_text"})
VARIABLE_NAMES = frozenset({"variables"})
EXAMPLE_NAMES = frozenset({"example"})
INPUT_LIST_NAMES = frozenset({"needed_inputs"})
CALCULATOR_NAMES = frozenset({"calculator_name"})
ALWAYS = frozenset({"note", "question", "answer_format", "answer_kind"})
REPAIR_NAMES = frozenset({"previous_reply", "error"})


class ArmError(ValueError):
    """An arm definition or template that breaks its own access rules."""


class ArmSpec(BaseModel):
    """One arm, as its YAML file states it (Table 16 and Appendix A.1)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    version: str = Field(pattern=r"^\d+\.\d+\.\d+$")
    changelog: list[str] = Field(min_length=1, description="one line per version, newest last: 'X.Y.Z: what changed'")
    title: str
    paper: str = Field(description="where the paper states this arm")
    kind: Literal["text", "extract", "library", "program", "formulate"]
    formula_access: Literal["given", "suppressed", "recalled", "hardcoded"]
    variable_access: Literal["given", "extracted"]
    names_calculator: bool = True
    note_budget_words: int | None = Field(ge=0, description="0 = the whole note; None = no note (library arms)")
    worked_example: Literal["none", "fixed", "seeded"] = "none"
    example_note_words: int = 24
    example_explanation_words: int = 40
    temperature: float | None = None
    max_tokens: int | None = None
    samples: int = Field(default=1, ge=1)
    repair: bool = False
    max_repairs: int = 0
    library_variant: Literal["benchmark", "published", "successor"] | None = None
    skip_output_kinds: list[str] = Field(default_factory=list, description="output kinds that abstain before any call")
    templates: dict[str, str] = Field(default_factory=dict, description="role -> template file (user, repair)")

    @model_validator(mode="after")
    def _rules(self) -> "ArmSpec":
        if not self.changelog[-1].startswith(self.version + ":"):
            raise ValueError(f"the last changelog line must start with the version '{self.version}:'")
        if self.kind == "library":
            if self.templates or self.temperature is not None or self.library_variant is None:
                raise ValueError("a library arm has no templates or decoding settings, and names its variant")
            return self
        if "user" not in self.templates:
            raise ValueError("a model arm needs a 'user' template")
        if self.temperature is None or self.max_tokens is None:
            raise ValueError("a model arm sets temperature and max_tokens (Table 16)")
        if self.samples > 1 and self.temperature != 0.7:
            raise ValueError("sampled candidates decode at temperature 0.7 (Table 16)")
        if self.samples == 1 and self.temperature != 0.0:
            raise ValueError("single-call arms decode greedily, temperature 0 (Table 16)")
        if self.repair and "repair" not in self.templates:
            raise ValueError("a repair arm needs a 'repair' template")
        if self.note_budget_words is None:
            raise ValueError("a model arm reads the note: set note_budget_words (0 = whole note)")
        return self

    @property
    def needs_model(self) -> bool:
        return self.kind != "library"

    def decoding(self) -> tuple[float, int]:
        """(temperature, max_tokens) of a model arm; the validator guarantees a model arm sets both."""
        if self.temperature is None or self.max_tokens is None:
            raise ArmError(f"arm {self.name}: a library arm has no decoding settings")
        return self.temperature, self.max_tokens

    def allowed_names(self, role: str) -> frozenset[str]:
        names = set(ALWAYS)
        if self.formula_access == "given":
            names |= FORMULA_NAMES
        if self.variable_access == "given":
            names |= VARIABLE_NAMES
        if self.worked_example != "none":
            names |= EXAMPLE_NAMES
        if self.names_calculator:
            names |= CALCULATOR_NAMES
        if self.kind == "extract":
            names |= INPUT_LIST_NAMES
        if role == "repair":
            names |= REPAIR_NAMES
        return frozenset(names)

    def required_names(self, role: str) -> frozenset[str]:
        need = {"note"} if role == "user" else {"error"}
        if role == "user":
            if self.formula_access == "given":
                need |= FORMULA_NAMES
            if self.variable_access == "given":
                need |= VARIABLE_NAMES
            if self.worked_example != "none":
                need |= EXAMPLE_NAMES
            if self.kind == "extract":
                need |= INPUT_LIST_NAMES
        return frozenset(need)


def environment() -> jinja2.Environment:
    # The prompt templates are the project's own files, but the values they show come from the
    # registry and from data sets: the immutable sandbox keeps a value from reaching anything else.
    env = ImmutableSandboxedEnvironment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )
    env.filters["entity"] = entity_text
    env.filters["words"] = first_words
    return env


def first_words(text: str, n: int) -> str:
    """The first `n` words of a text (0 = all of it), whitespace collapsed within the cut."""
    if not n:
        return text
    words = text.split()
    return text if len(words) <= n else " ".join(words[:n])


def entity_text(value: Any) -> str:
    """A gold variable as the benchmark writes it: [1.2, 'mg/dL'] -> '1.2 mg/dL'."""
    if isinstance(value, (list, tuple)):
        return " ".join(str(v) for v in value)
    return str(value)


def template_names(env: jinja2.Environment, name: str, seen: set[str] | None = None) -> tuple[set[str], list[str]]:
    """Free names of a template and every template it extends or includes; and the files read."""
    seen = seen if seen is not None else set()
    if name in seen:
        return set(), []
    seen.add(name)
    source = (TEMPLATES / name).read_text(encoding="utf-8")
    try:
        tree = env.parse(source)
    except jinja2.TemplateSyntaxError as e:
        raise ArmError(f"{TEMPLATES / name}:{e.lineno}: template syntax error: {e.message}") from None
    names = set(meta.find_undeclared_variables(tree))
    files = [name]
    for ref in meta.find_referenced_templates(tree):
        if ref is None:
            raise ArmError(f"{TEMPLATES / name}: includes a template chosen at run time; name it literally")
        more, more_files = template_names(env, ref, seen)
        names |= more
        files += more_files
    return names, files


def check_access(spec: ArmSpec, env: jinja2.Environment | None = None) -> dict[str, str]:
    """Check every template of `spec` against its access rules; return {file: sha256} of what it reads."""
    env = env or environment()
    hashes: dict[str, str] = {}
    for role, file in spec.templates.items():
        if not (TEMPLATES / file).is_file():
            raise ArmError(f"arm {spec.name}: template {file!r} not found in {TEMPLATES}")
        names, files = template_names(env, file)
        extra = names - spec.allowed_names(role)
        if extra:
            raise ArmError(f"arm {spec.name}: template {file} names {', '.join(sorted(extra))}, which its access "
                           f"rules (formula {spec.formula_access}, variables {spec.variable_access}, worked example "
                           f"{spec.worked_example}) do not give it")
        missing = spec.required_names(role) - names
        if missing:
            raise ArmError(f"arm {spec.name}: template {file} never uses {', '.join(sorted(missing))}, which its "
                           "access rules promise")
        for f in files:
            hashes[f] = "sha256:" + hashlib.sha256((TEMPLATES / f).read_bytes()).hexdigest()
    return hashes


@cache
def load_spec(name: str) -> ArmSpec:
    path = DEFS / f"{name}.yaml"
    if not path.is_file():
        from registry.suggest import did_you_mean

        names = sorted(p.stem for p in DEFS.glob("*.yaml"))
        raise ArmError(f"unknown arm {name!r}{did_you_mean(name, names)}; known: {', '.join(names)}")
    try:
        spec = ArmSpec.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
    except Exception as e:  # noqa: BLE001 - pydantic/yaml errors, reported with the file
        raise ArmError(f"{path}: {e}") from None
    if spec.name != name:
        raise ArmError(f"{path}: name {spec.name!r} does not match the file name")
    check_access(spec)
    return spec


def spec_digest(spec: ArmSpec) -> str:
    """SHA-256 over the definition file and every template it reads: what a version bump guards."""
    h = hashlib.sha256((DEFS / f"{spec.name}.yaml").read_bytes())
    for file, digest in sorted(check_access(spec).items()):
        h.update(file.encode() + digest.encode())
    return "sha256:" + h.hexdigest()


def spec_digest_without_version(spec: ArmSpec) -> str:
    """Like `spec_digest` but blind to the version and changelog lines (to catch a missed bump)."""
    data = yaml.safe_load((DEFS / f"{spec.name}.yaml").read_text(encoding="utf-8"))
    data.pop("version", None)
    data.pop("changelog", None)
    h = hashlib.sha256(json.dumps(data, sort_keys=True).encode())
    for file, digest in sorted(check_access(spec).items()):
        h.update(file.encode() + digest.encode())
    return "sha256:" + h.hexdigest()


def all_specs() -> list[ArmSpec]:
    return [load_spec(p.stem) for p in sorted(DEFS.glob("*.yaml"))]


def write_lock() -> dict[str, Any]:
    """Record every arm's version and content digest (run after bumping a version)."""
    data = {s.name: {"version": s.version, "content": spec_digest_without_version(s)} for s in all_specs()}
    from registry.atomic import atomic_write  # an exclusive, unpredictable temporary file, then a rename

    atomic_write(LOCK, json.dumps(data, indent=1, sort_keys=True) + "\n")
    return data


def lock_problems() -> list[str]:
    """Arms whose prompt changed without a version bump (and changelog line) since the lock."""
    lock = json.loads(LOCK.read_text(encoding="utf-8")) if LOCK.exists() else {}
    out = []
    for s in all_specs():
        was = lock.get(s.name)
        now = spec_digest_without_version(s)
        if was is None:
            out.append(f"{s.name}: not in {LOCK.name}; run `python -m solver.arms.spec` to record it")
        elif was["content"] != now and was["version"] == s.version:
            out.append(f"{s.name}: prompt or settings changed but version is still {s.version}; bump it and add a "
                       "changelog line, then run `python -m solver.arms.spec`")
    return out


if __name__ == "__main__":  # python -m solver.arms.spec: refresh the lock after a version bump
    bad = [p for p in lock_problems() if "bump" in p]
    if bad:
        raise SystemExit("\n".join(bad))
    print(json.dumps(write_lock(), indent=1))
