"""Reading stored run directories (`manifest.json` + `results.jsonl`) into frames, and pairing them.

The runner (solver) writes one directory per run: `manifest.json` records what produced it and
`results.jsonl` holds one JSON object per case and seed. The manifest is read as a plain mapping,
tolerantly (only the keys present are used), so this module does not depend on the runner's
model class; the rows are checked field by field and every problem names the file and line.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from registry import jsontext

MANIFEST = "manifest.json"
RESULTS = "results.jsonl"

# Fields every results row must carry, with the JSON types accepted.
REQUIRED: dict[str, tuple[type, ...]] = {
    "row_number": (int,),
    "calculator_id": (int,),
    "seed": (int,),
    "correct": (bool,),
    "outcome": (str,),
}
OPTIONAL = ("arm", "model", "prompt_sha256", "text_version", "text_sha256", "text_slug", "calculator", "answer",
            "ground_truth", "category", "output_type", "note_id")

# The outcome taxonomy of Tables 8 and 14.
ANSWERED = frozenset({"value", "answered"})  # an answer reached the scorer: right or wrong
NO_OUTPUT = frozenset({"no_program", "no_answer"})
EXECUTOR = frozenset({"rejected", "raised", "timeout", "memory", "line_limit", "bad_kind", "crashed"})
UNREADABLE = frozenset({"unreadable"})
KNOWN_OUTCOMES = ANSWERED | NO_OUTPUT | EXECUTOR | UNREADABLE


class RunError(ValueError):
    """A run directory that cannot be read or runs that cannot be compared; the message says why."""


@dataclass
class Run:
    """One stored run: its directory, manifest (as read) and rows (one per case and seed)."""

    dir: Path
    manifest: dict[str, Any]
    rows: pd.DataFrame
    arm: str
    model: str | None
    warnings: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        """How tables name the run: its directory's name."""
        return self.dir.name or str(self.dir)

    @property
    def seeds(self) -> list[int]:
        return sorted(int(s) for s in self.rows["seed"].unique())


def _manifest(path: Path) -> tuple[dict[str, Any], list[str]]:
    if not path.exists():
        return {}, [f"{path}: no manifest; the run's provenance is unknown"]
    try:
        data = jsontext.read_file(path, what="run manifest")
    except (OSError, UnicodeDecodeError, jsontext.JsonError) as e:
        raise RunError(f"{path}: not readable JSON ({e})") from None
    if not isinstance(data, dict):
        raise RunError(f"{path}: expected a JSON object")
    return data, []


def _name(value: Any) -> str | None:
    """A model or arm as a string, whether the manifest wrote a string or a mapping with an id."""
    if value is None:
        return None
    if isinstance(value, dict):
        for key in ("id", "name", "model_id", "hf_id"):
            if isinstance(value.get(key), str):
                return value[key]
        return None
    return str(value)


def _check_row(obj: Any, where: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise RunError(f"{where}: expected a JSON object per line")
    for key, types in REQUIRED.items():
        if key not in obj:
            raise RunError(f"{where}: missing field '{key}'")
        v = obj[key]
        ok = isinstance(v, types) and not (bool not in types and isinstance(v, bool))
        if not ok:
            want = " or ".join(t.__name__ for t in types)
            raise RunError(f"{where}: field '{key}' must be {want}, got {json.dumps(v)}")
    row = {k: obj[k] for k in REQUIRED}
    for k in OPTIONAL:
        v = obj.get(k)
        row[k] = None if isinstance(v, float) and math.isnan(v) else v
    return row


def _rows(results: Path) -> list[dict[str, Any]]:
    """The checked rows of a results file, read a bounded line at a time (registry.jsontext.read_lines)."""
    rows: list[dict[str, Any]] = []
    seen: dict[tuple[int, int], int] = {}
    try:
        for n, obj in jsontext.read_lines(results):
            where = f"{results}:{n}"
            row = _check_row(obj, where)
            key = (row["row_number"], row["seed"])
            if key in seen:
                raise RunError(f"{where}: row_number {key[0]} seed {key[1]} already on line {seen[key]}")
            seen[key] = n
            row["line"] = n
            rows.append(row)
    except jsontext.LineError as e:
        raise RunError(f"{results}:{e.line}: not valid JSON ({e})") from None
    except OSError as e:
        raise RunError(f"{results}: not readable ({e})") from None
    return rows


def read_run(directory: Path | str) -> Run:
    """Read one run directory; raises RunError naming the file, line and field of any problem."""
    d = Path(directory)
    if not d.is_dir():
        raise RunError(f"{d}: not a run directory (no such folder)")
    results = d / RESULTS
    if not results.exists():
        raise RunError(f"{d}: no {RESULTS}; is this a run directory written by `formula run`?")
    manifest, warnings = _manifest(d / MANIFEST)
    rows = _rows(results)
    if not rows:
        raise RunError(f"{results}: no rows")
    frame = pd.DataFrame(rows)
    calcs = frame.groupby("row_number")["calculator_id"].nunique()
    if (calcs > 1).any():
        bad = int(calcs[calcs > 1].index[0])
        raise RunError(f"{results}: row_number {bad} appears with different calculator_id values")
    arm = _name(manifest.get("arm"))
    if arm is None:
        arms = sorted({a for a in frame["arm"] if isinstance(a, str)})
        arm = arms[0] if len(arms) == 1 else (d.name if not arms else "+".join(arms))
    model = _name(manifest.get("model"))
    if model is None:
        models = sorted({m for m in frame["model"] if isinstance(m, str)})
        model = models[0] if len(models) == 1 else ("+".join(models) if models else None)
    seeds = sorted(int(x) for x in frame["seed"].unique())
    planned = manifest.get("seeds")
    if isinstance(planned, list) and all(isinstance(x, int) for x in planned) and set(planned) != set(seeds):
        warnings.append(f"{d}: the manifest lists seeds {sorted(planned)}, the results hold {seeds}")
    n_cases = frame["row_number"].nunique()
    if len(frame) != n_cases * len(seeds):
        warnings.append(f"{d}: incomplete, {len(frame)} of {n_cases * len(seeds)} case-seed rows "
                        f"({n_cases} cases x {len(seeds)} seeds); resume the run before comparing")
    unknown = sorted(set(frame["outcome"]) - KNOWN_OUTCOMES)
    if unknown:
        warnings.append(f"{results}: unknown outcome kind(s) {', '.join(unknown)}, counted as no valid answer")
    return Run(dir=d, manifest=manifest, rows=frame, arm=arm, model=model, warnings=warnings)


def status(outcome: pd.Series, correct: pd.Series) -> pd.Series:
    """right / wrong / none per row: correct rows are right; an answer that scored false is wrong."""
    out = pd.Series("none", index=outcome.index, dtype=object)
    out[outcome.isin(ANSWERED)] = "wrong"
    out[correct.astype(bool)] = "right"
    return out


def answered(run: Run) -> pd.Series:
    """Whether each row reached the scorer with an answer (right or wrong)."""
    return status(run.rows["outcome"], run.rows["correct"]) != "none"


def _describe(keys: set[tuple[int, int]], limit: int = 3) -> str:
    seeds = sorted({s for _, s in keys})
    rows = sorted({r for r, _ in keys})
    ex = ", ".join(f"row {r} seed {s}" for r, s in sorted(keys)[:limit])
    return f"{len(keys)} case-seed rows ({len(rows)} cases; seeds {', '.join(map(str, seeds))}), e.g. {ex}"


def dataset_name(run: Run) -> str | None:
    """The dataset as the manifest names it (imported runs: "MedCalc-Bench 2024 test split, ..."), or None."""
    ds = run.manifest.get("dataset")
    name = ds.get("name") if isinstance(ds, dict) else None
    return name if isinstance(name, str) and name else None


def dataset_key(run: Run) -> str | None:
    """What identifies a run's dataset for pairing: a named dataset's kind, else the data file's SHA-256."""
    ds = run.manifest.get("dataset")
    if not isinstance(ds, dict):
        return None
    if dataset_name(run) is not None and isinstance(ds.get("kind"), str):
        return "named:" + ds["kind"]
    sha = ds.get("sha256")
    return sha if isinstance(sha, str) else None


def _gold(v: Any) -> str:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return repr(float(v))
    return json.dumps(v, sort_keys=True)


def _case_key(frame: pd.DataFrame) -> pd.Series:
    """A case's identity within a named dataset: its note and calculator where the rows record the note
    (row numbers of one benchmark differ between its releases), else its row number."""
    note = frame["note_id"] if "note_id" in frame else pd.Series(None, index=frame.index)
    by_row = "row:" + frame["row_number"].astype(str)
    by_note = "note:" + note.astype(str) + "|" + frame["calculator_id"].astype(str)
    return by_note.where(note.notna(), by_row) + "|seed:" + frame["seed"].astype(str)


def _shared_rows(a: Run, b: Run) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """Two runs of one named dataset (partial imports) pair on the cases both hold with the same gold;
    returns both sides aligned (indexed by A's row number and seed) and how many shared cases were left
    out because their gold answers differ (a revised release of the dataset)."""
    ka = a.rows.assign(_key=_case_key(a.rows)).set_index("_key")
    kb = b.rows.assign(_key=_case_key(b.rows)).set_index("_key")
    for run, k in ((a, ka), (b, kb)):
        if k.index.has_duplicates:
            raise RunError(f"{run.label}: one case ({k.index[k.index.duplicated()][0]}) appears twice")
    common = ka.index.intersection(kb.index)
    ka, kb = ka.loc[common], kb.loc[common]
    excluded = 0
    if "ground_truth" in ka and "ground_truth" in kb:
        same = (ka["ground_truth"].map(_gold) == kb["ground_truth"].map(_gold)).to_numpy()
        excluded = int((~same).sum())
        ka, kb = ka[same], kb[same]
    if not len(ka):
        raise RunError(f"runs {a.label} and {b.label} share no case of {dataset_name(a)} with the same gold answer")
    index = pd.MultiIndex.from_arrays([ka["row_number"].to_numpy(), ka["seed"].to_numpy()], names=["row_number", "seed"])
    return ka.set_index(index), kb.set_index(index), excluded


def pair(a: Run, b: Run) -> pd.DataFrame:
    """The two runs' rows aligned on (row_number, seed), with columns calculator_id, a, b.

    Runs that do not hold exactly the same cases and seeds cannot be compared: the error names
    what differs (seeds, then case-seed rows missing on either side). Runs whose manifests name their
    dataset (imported runs) pair only with runs of the same dataset, on the rows both hold.
    """
    key_a, key_b = dataset_key(a), dataset_key(b)
    named = dataset_name(a) is not None or dataset_name(b) is not None
    if named and key_a != key_b:
        raise RunError(f"runs {a.label} and {b.label} are on different datasets ({dataset_name(a) or key_a}; "
                       f"{dataset_name(b) or key_b}): runs of different datasets are never paired")
    excluded = 0
    if named:
        ka, kb, excluded = _shared_rows(a, b)
    else:
        ka = a.rows.set_index(["row_number", "seed"])
        kb = b.rows.set_index(["row_number", "seed"])
    sa, sb = set(ka.index), set(kb.index)
    if sa != sb and not named:
        seeds_a, seeds_b = set(a.seeds), set(b.seeds)
        parts = [f"runs {a.label} and {b.label} do not share cases and seeds"]
        if seeds_a != seeds_b:
            parts.append(f"seeds differ ({a.label}: {sorted(seeds_a)}; {b.label}: {sorted(seeds_b)})")
        common = seeds_a & seeds_b
        only_a = {k for k in sa - sb if k[1] in common}
        only_b = {k for k in sb - sa if k[1] in common}
        where = " under the shared seeds" if seeds_a != seeds_b else ""
        if only_a:
            parts.append(f"only in {a.label}{where}: {_describe(only_a)}")
        if only_b:
            parts.append(f"only in {b.label}{where}: {_describe(only_b)}")
        raise RunError("; ".join(parts))
    kb = kb.loc[ka.index]
    mismatch = ka["calculator_id"].to_numpy() != kb["calculator_id"].to_numpy()
    if mismatch.any():
        r, s = ka.index[mismatch][0]
        raise RunError(f"runs {a.label} and {b.label} disagree on the calculator of row {r} (seed {s}): "
                       f"{ka['calculator_id'].iloc[mismatch.argmax()]} against "
                       f"{kb['calculator_id'].iloc[mismatch.argmax()]}; were they run on the same dataset?")
    out = pd.DataFrame({"calculator_id": ka["calculator_id"].to_numpy(),
                        "a": ka["correct"].astype(bool).to_numpy(),
                        "b": kb["correct"].astype(bool).to_numpy(),
                        "a_answered": (status(ka["outcome"], ka["correct"]) != "none").to_numpy(),
                        "b_answered": (status(kb["outcome"], kb["correct"]) != "none").to_numpy()},
                       index=ka.index).reset_index()
    out.attrs["gold_differs"] = excluded  # shared cases left out: their gold differs between the runs
    return out


def expand_run_dirs(items: list[str] | list[Path], option: str = "RUN_DIR") -> list[Path]:
    """Run folders from the command line: folders as given, and glob patterns (`runs/*/`, `'runs/**/'`, quoted
    so the shell leaves them) expanded to the folders they match that hold a results.jsonl, sorted. A folder
    named twice counts once. Raises RunError for a pattern that matches no run folder."""
    import glob

    out: list[Path] = []
    for item in map(str, items):
        if glob.has_magic(item):
            found = sorted(Path(p) for p in glob.glob(item, recursive=True) if (Path(p) / RESULTS).is_file())
            if not found:
                raise RunError(f"{option} {item!r}: no run folder (a folder holding {RESULTS}) matches")
            out += found
        else:
            out.append(Path(item))
    seen: set[Path] = set()
    unique = []
    for p in out:
        if p.resolve() not in seen:
            seen.add(p.resolve())
            unique.append(p)
    return unique
