"""Run one arm: cases x seeds, model turns and executor work overlapping, rows appended as they finish."""
from __future__ import annotations

import asyncio
import datetime as dt
import inspect
import os
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from solver.arms import load_arm
from solver.arms.base import ArmResult, CaseInput, ChatReply
from solver.arms.spec import ArmSpec, check_access, load_spec, spec_digest
from solver.data import ONE_SHOT, REFERENCE_CASES, BenchmarkRow, Dataset, DatasetError, read_benchmark
from solver.engines import ChatRequest, EngineError, EngineOptions, build_engine
from solver.replies import stored
from solver.runner import manifest as mf
from solver.runner.results import ResultsError, ResultsFile, load
from solver.scoring import score

SHIPPED = {"reference": REFERENCE_CASES, "one-shot": ONE_SHOT}
_TEXTS: dict[tuple[int, str, str], str] = {}


class RunError(RuntimeError):
    """A run that cannot start or had to stop; the message says what to do."""


@dataclass
class RunConfig:
    arm: str
    data: Path
    out: Path
    seeds: list[int] = field(default_factory=lambda: [42, 43, 44, 45, 46])
    engine: str | None = None
    engine_options: EngineOptions = field(default_factory=EngineOptions)
    one_shot: Path | None = None
    limit: int | None = None
    executor_workers: int = max(1, min(4, os.cpu_count() or 1))
    executor_policy: str | None = None
    progress: bool = True


@dataclass
class Summary:
    out: Path
    rows: int
    done_before: int
    correct: int
    torn_bytes: int
    stopped: str | None = None


class ExecutorPool:
    """Several single-worker executors shared by the running cases (program runs proceed in parallel)."""

    def __init__(self, workers: int, policy: str | None):
        from solver.executor import Executor

        params = inspect.signature(Executor).parameters
        kwargs: dict[str, Any] = {}
        if policy is not None:
            if "policy" not in params:
                raise RunError("this executor has no policies yet; drop --policy")
            kwargs["policy"] = policy
        self.executors = [Executor(workers=1, **kwargs) for _ in range(workers)]
        self.queue: asyncio.Queue = asyncio.Queue()
        for ex in self.executors:
            self.queue.put_nowait(ex)

    async def start(self) -> None:
        """Start every fork server at once, in threads, while the first model turns are in flight."""
        await asyncio.gather(*(asyncio.to_thread(ex.start) for ex in self.executors))

    async def run(self, source: str) -> Any:
        ex = await self.queue.get()
        try:
            return await asyncio.to_thread(ex.run, source)
        finally:
            self.queue.put_nowait(ex)

    def close(self) -> None:
        for ex in self.executors:
            ex.shutdown()


class CaseEnv:
    def __init__(self, engine: Any, pool: ExecutorPool | None, row: BenchmarkRow, seed: int):
        self.engine, self.pool, self.row, self.seed = engine, pool, row, seed

    async def chat(self, messages: list[dict[str, str]], *, temperature: float, max_tokens: int,
                   call: int) -> ChatReply:
        if self.engine is None:
            raise RunError("this arm asked for a model turn but the run has no engine")
        return await self.engine.chat(ChatRequest(messages=messages, temperature=temperature, max_tokens=max_tokens,
                                                  key=(self.row.row_number, self.seed, call), seed=self.seed))

    async def execute(self, source: str) -> Any:
        if self.pool is None:
            raise RunError("this arm asked for the executor but the run has none")
        return await self.pool.run(source)


def resolve_data(path: Path | str) -> Path:
    return SHIPPED.get(str(path), Path(path))


def pick_example(spec: ArmSpec, row: BenchmarkRow, seed: int, pool: tuple[BenchmarkRow, ...]) -> BenchmarkRow | None:
    """The worked example: never the case itself; fixed per calculator, or chosen by the seed (note-only arms)."""
    if spec.worked_example == "none":
        return None
    others = [r for r in pool if r.note.strip() != row.note.strip() and not (r.note_id and r.note_id == row.note_id)]
    if not others:
        raise RunError("the one-shot file has no row besides the case itself to serve as the worked example")
    if spec.worked_example == "fixed":
        same = [r for r in others if r.calculator_id == row.calculator_id]
        return (same or others)[0]
    return random.Random(f"{seed}:{row.row_number}").choice(others)


def _plain(v: Any) -> Any:
    if isinstance(v, tuple):
        return list(v)
    if isinstance(v, (dt.date,)):
        return v.isoformat()
    return v


class Runner:
    def __init__(self, cfg: RunConfig):
        from registry.loader import get_registry
        from registry.texts import render, text_hash
        from solver.records import registry_digest

        self.cfg = cfg
        try:
            self.spec = load_spec(cfg.arm)
        except ValueError as e:
            raise RunError(str(e)) from None
        self.arm = load_arm(cfg.arm)
        if self.spec.needs_model and not cfg.engine:
            raise RunError(f"arm {cfg.arm} needs a model: give --engine (vllm, openai or replay) and --model")
        if not self.spec.needs_model and cfg.engine:
            raise RunError(f"arm {cfg.arm} runs without a model; drop --engine/--model")
        try:
            self.data: Dataset = read_benchmark(resolve_data(cfg.data))
            self.one_shot: Dataset | None = None
            if self.spec.worked_example != "none":
                self.one_shot = read_benchmark(resolve_data(cfg.one_shot or ONE_SHOT))
        except DatasetError as e:
            raise RunError(str(e)) from None
        if self.spec.needs_model and self.data.kind == "reference":
            raise RunError(f"arm {cfg.arm} reads the patient note, and the reference cases have none; give the "
                           "benchmark split (or one-shot rows) with --data")
        self.rows = list(self.data.rows[: cfg.limit] if cfg.limit else self.data.rows)
        self.reg = get_registry()
        self.texts: dict[int, tuple[Any, str, str, str]] = {}  # calculator id -> (calc, text, version, sha)
        for row in self.rows:
            if row.calculator_id in self.texts:
                continue
            try:
                calc = self.reg.by_id(row.calculator_id)
            except KeyError:
                raise RunError(f"{row.source}: calculator id {row.calculator_id} is not in the registry") from None
            key = (id(self.reg), calc.slug, calc.active.version)
            if key not in _TEXTS:  # the registry is cached per process; so are its rendered texts
                _TEXTS[key] = render(calc, calcs=self.reg.calculators, units=self.reg.units)
            text = _TEXTS[key]
            self.texts[row.calculator_id] = (calc, text, calc.active.version, text_hash(text))
        self.lock_digest = registry_digest(self.reg)
        self.reads_text = "formula_text" in self._template_names()

    def _template_names(self) -> set[str]:
        from solver.arms.spec import environment, template_names

        env = environment()
        names: set[str] = set()
        for file in self.spec.templates.values():
            names |= template_names(env, file)[0]
        return names

    def case(self, row: BenchmarkRow, seed: int) -> CaseInput:
        calc, text, version, sha = self.texts[row.calculator_id]
        example = pick_example(self.spec, row, seed, self.one_shot.rows) if self.one_shot else None
        return CaseInput(row=row, seed=seed, calc=calc, formula_text=text, text_version=version, text_sha256=sha,
                         example=example, registry=self.reg)

    def manifest(self, engine_info: dict[str, Any], policy: str | None) -> mf.Manifest:
        cfg, spec = self.cfg, self.spec
        opts = cfg.engine_options
        used = sorted({self.texts[r.calculator_id][0].slug: None for r in self.rows})
        by_slug = {v[0].slug: v for v in self.texts.values()}
        texts = {s: {"version": by_slug[s][2], "sha256": by_slug[s][3]} for s in used}
        ds = self.data
        one = self.one_shot
        return mf.Manifest(
            arm=spec.name, arm_version=spec.version, arm_digest=spec_digest(spec),
            arm_definition=spec.model_dump(mode="json"), model=opts.model if spec.needs_model else None,
            model_revision=opts.revision if spec.needs_model else None, engine=cfg.engine, engine_info=engine_info,
            decoding={"temperature": spec.temperature, "max_tokens": spec.max_tokens, "samples": spec.samples,
                      "top_p": None} if spec.needs_model else {},
            send_seed=opts.send_seed, seeds=list(cfg.seeds), limit=cfg.limit,
            dataset=mf.DatasetInfo(path=mf.display_path(ds.path), sha256=ds.sha256, rows=len(ds.rows), kind=ds.kind),
            one_shot=mf.DatasetInfo(path=mf.display_path(one.path), sha256=one.sha256, rows=len(one.rows),
                                    kind=one.kind) if one else None,
            registry_lock_digest=self.lock_digest,
            executor={"policy": policy, "workers": cfg.executor_workers} if spec.kind == "program" else None,
            git=mf.git_info(), packages=mf.packages(), templates=check_access(spec),
            formula_texts=texts, started_at=mf.now(), rows_expected=len(self.rows) * len(cfg.seeds),
        )

    def result_row(self, case: CaseInput, res: ArmResult) -> dict[str, Any]:
        row, spec = case.row, self.spec
        text_slug, text_version, text_sha = (case.calc.slug, case.text_version, case.text_sha256) \
            if (self.reads_text or spec.kind == "library") else (None, None, None)
        extra = dict(res.extra)
        text_slug = extra.pop("text_slug", text_slug)
        text_version = extra.pop("text_version", text_version)
        text_sha = extra.pop("text_sha256", text_sha)
        output_kind = "gestational_age" if case.answer_kind == "gestational_age" else row.output_type
        correct = score(res.answer, output_kind, row.answer, row.lower, row.upper)
        out = {
            "row_number": row.row_number, "calculator_id": row.calculator_id, "calculator": case.calc.slug,
            "seed": case.seed, "arm": spec.name, "arm_version": spec.version,
            "model": self.cfg.engine_options.model if spec.needs_model else None,
            "prompt_sha256": res.prompt_sha256, "text_slug": text_slug, "text_version": text_version,
            "text_sha256": text_sha, **stored(res.reply), "program": res.program, "outcome": res.outcome,
            "answer": _plain(res.answer), "correct": bool(correct), "ground_truth": _plain(row.answer),
            "lower_limit": _plain(row.lower), "upper_limit": _plain(row.upper), "output_type": row.output_type,
            "category": row.category, "table8": res.table8, "error": res.error,
            "example": case.example.note_id if case.example else None,
            "calls": res.calls,
        }
        out.update(extra)
        return out

    async def _run(self) -> Summary:
        """Resume what the folder holds, run the rest of the rows, and record how the run ended."""
        cfg = self.cfg
        out = cfg.out
        out.mkdir(parents=True, exist_ok=True)
        mpath, rpath = out / "manifest.json", out / "results.jsonl"
        engine = build_engine(cfg.engine, cfg.engine_options) if cfg.engine else None
        pool = ExecutorPool(cfg.executor_workers, cfg.executor_policy) if self.spec.kind == "program" else None
        try:
            new = self._manifest_for(engine, mpath, rpath)
            tally, torn = self._resumed(rpath)
            mf.write(mpath, new)
            total = len(self.rows) * len(cfg.seeds)
            bar = self._progress(total, tally.done_before)
            stopped = await self._dispatch(self._todo(tally.done), engine, pool, ResultsFile(rpath), bar, tally)
            new.engine_info = engine.describe() if engine else {}
            if new.executor is not None and tally.policies:
                new.executor["policies_seen"] = sorted(tally.policies)  # as the executor's outcomes report them
            new.rows_done = tally.done_before + tally.written
            new.correct = tally.correct
            new.status = "stopped" if stopped else "complete"
            new.finished_at = None if stopped else mf.now()
            mf.write(mpath, new)
            return Summary(out, total, tally.done_before, tally.correct, torn, stopped)
        finally:
            if engine is not None:
                await engine.aclose()
            if pool is not None:
                pool.close()

    def _manifest_for(self, engine: Any, mpath: Path, rpath: Path) -> mf.Manifest:
        """This run's manifest; resuming, the folder's own, refused when its settings differ from these."""
        new = self.manifest(engine.describe() if engine else {}, self.cfg.executor_policy)
        if mpath.exists():
            old = mf.read(mpath)
            diff = mf.differences(old.settings(), new.settings())
            if diff:
                raise RunError(f"{self.cfg.out} holds a run with other settings; use a new --out folder, or rerun "
                               "with the folder's settings:\n  " + "\n  ".join(diff))
            new.started_at, new.resumed_at = old.started_at, old.resumed_at + [mf.now()]
        elif rpath.exists() and rpath.stat().st_size:
            raise RunError(f"{rpath} exists without a manifest.json; use a new --out folder")
        return new

    @staticmethod
    def _resumed(rpath: Path) -> tuple[_Tally, int]:
        """The rows a previous run of this folder finished, and the bytes of a torn last line dropped."""
        try:
            done_rows, torn = load(rpath)
        except ResultsError as e:
            raise RunError(str(e)) from None
        done = {(int(r["row_number"]), int(r["seed"])) for r in done_rows}
        return _Tally(done=done, done_before=len(done), correct=sum(1 for r in done_rows if r.get("correct"))), torn

    def _todo(self, done: set[tuple[int, int]]) -> list[tuple[BenchmarkRow, int]]:
        todo = []
        for seed in self.cfg.seeds:
            order = list(self.rows)
            random.Random(seed).shuffle(order)  # the seed sets the case order (Appendix A.1)
            todo += [(row, seed) for row in order if (row.row_number, seed) not in done]
        return todo

    def _progress(self, total: int, done: int) -> Any:
        if not self.cfg.progress:
            return None
        from tqdm import tqdm

        return tqdm(total=total, initial=done, unit="row", desc=self.spec.name, file=sys.stderr, dynamic_ncols=True,
                    disable=None)

    async def _dispatch(self, todo: list[tuple[BenchmarkRow, int]], engine: Any, pool: ExecutorPool | None,
                        writer: ResultsFile, bar: Any, tally: _Tally) -> str | None:
        """Every row in flight at once; each finished row appended (one fsync for those that finish together).
        Returns why the run stopped early, or None; the rows saved so far are kept either way."""
        async def one(row: BenchmarkRow, seed: int) -> dict[str, Any]:
            case = self.case(row, seed)
            res = await self.arm.run(case, CaseEnv(engine, pool, row, seed))
            return self.result_row(case, res)

        tasks = [asyncio.ensure_future(one(r, s)) for r, s in todo]
        tasks_start = [asyncio.ensure_future(pool.start())] if pool is not None and todo else []
        pending = set(tasks)
        try:
            while pending:
                finished, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                before = tally.written
                failure = tally.record(finished, writer)
                await asyncio.to_thread(writer.sync)
                if bar is not None:
                    bar.update(tally.written - before)
                    bar.set_postfix_str(f"correct {tally.correct}/{tally.done_before + tally.written}", refresh=False)
                if failure is not None:
                    raise failure
        except (EngineError, RunError) as e:
            return str(e)
        except Exception as e:  # noqa: BLE001 - a defect in an arm: stop cleanly, keep the saved rows
            return f"internal error in arm {self.spec.name}: {type(e).__name__}: {e}"
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, *tasks_start, return_exceptions=True)
            writer.close()
            if bar is not None:
                bar.close()
        return None


@dataclass
class _Tally:
    """What a run has done so far: the rows resumed, those written now, how many were right, the executor
    policies its outcomes reported."""

    done: set[tuple[int, int]]
    done_before: int
    correct: int
    written: int = 0
    policies: set[str] = field(default_factory=set)

    def record(self, finished: Iterable[asyncio.Future[dict[str, Any]]], writer: ResultsFile) -> BaseException | None:
        """Append the rows that finished; the first failure among them, if any (raised after the others are saved)."""
        failure = None
        for fut in finished:
            if fut.exception() is not None:
                failure = failure or fut.exception()
                continue
            rec = fut.result()
            if rec.get("executor_policy"):
                self.policies.add(rec["executor_policy"])
            writer.write(rec)
            self.written += 1
            self.correct += bool(rec["correct"])
        return failure


def run(cfg: RunConfig) -> Summary:
    """Run (or resume) one arm into cfg.out; holds a lock on the folder while it writes."""
    from filelock import FileLock, Timeout

    runner = Runner(cfg)  # checks arguments and data before anything is written
    cfg.out.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(cfg.out / ".lock"))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise RunError(f"another run is writing {cfg.out}") from None
    try:
        return asyncio.run(runner._run())
    finally:
        lock.release()
