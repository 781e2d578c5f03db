"""`formula run` (one arm over a dataset, resumable) and `formula score` (re-score stored replies)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from registry.cliutil import add_root
from solver.engines import EngineOptions


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run",
                       description="Run one arm over a MedCalc-Bench Verified split (CSV or parquet) for each seed, "
                       "writing OUT/manifest.json and OUT/results.jsonl. Rerunning the same command resumes; "
                       "other settings into the same folder are refused. Arms gold-solve, gold-solve-published "
                       "and gold-solve-successor need no model (try --data reference, the shipped cases).")
    p.add_argument("--arm", required=True, help="arm name (see the arm table in docs/guide/evaluators.md)")
    p.add_argument("--model", help="model id the engine serves (Hugging Face id for vllm)")
    p.add_argument("--revision", help="model revision (recorded; passed to vllm)")
    p.add_argument("--engine", choices=["vllm", "openai", "replay"], help="where model turns are answered")
    p.add_argument("--data", required=True, type=Path,
                   help="benchmark split (.csv/.parquet); 'reference' or 'one-shot' for the shipped files")
    p.add_argument("--one-shot", type=Path, help="one-shot rows for worked examples (default: the shipped 55)")
    p.add_argument("--seeds", type=int, nargs="+", default=[42, 43, 44, 45, 46], help="default: 42 43 44 45 46")
    p.add_argument("--out", required=True, type=Path, help="run folder")
    p.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
    p.add_argument("--concurrency", type=int, default=8, help="requests in flight (openai engine; default 8)")
    p.add_argument("--limit", type=int, help="only the first N rows of the split")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per request (openai engine)")
    p.add_argument("--retries", type=int, default=5, help="retries per request on connection errors, 429, 5xx")
    p.add_argument("--send-seed", action="store_true",
                   help="send the seed with each request (the paper never does; recorded in the manifest)")
    p.add_argument("--replay-from", type=Path, help="earlier run folder whose replies the replay engine serves")
    p.add_argument("--workers", type=int, help="executor processes for program arms (default: up to 4)")
    p.add_argument("--policy", help="executor policy, where the executor offers policies")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_root(p)
    p.set_defaults(handler=_run)

    s = sub.add_parser("score",
                       description="Re-read every stored reply (text arms) or answer (other arms) of DIR/results.jsonl "
                       "with the current scorer, rewrite the file atomically and print the accuracy.")
    s.add_argument("dir", type=Path, metavar="DIR", help="a run folder (manifest.json + results.jsonl, as "
                   "`formula run` or `formula import` wrote it)")
    s.add_argument("--format", choices=["table", "json"], default="table",
                   help="table: for reading (default); json: the whole result, for scripts")
    add_root(s)
    s.set_defaults(handler=_score)


def _err(msg: str) -> int:
    from registry.terminal import tell

    tell(f"error: {msg}", file=sys.stderr)
    return 1


def _run(args: argparse.Namespace) -> int:
    from solver.engines import EngineError
    from solver.runner import RunConfig, RunError, run

    if args.concurrency < 1 or (args.limit is not None and args.limit < 1) or (args.workers is not None and args.workers < 1):
        return _err("--concurrency, --limit and --workers must be at least 1")
    if args.engine and args.engine != "replay" and not args.model:
        return _err(f"--engine {args.engine} needs --model")
    opts = EngineOptions(model=args.model, revision=args.revision, base_url=args.base_url, concurrency=args.concurrency,
                         timeout_s=args.timeout, retries=args.retries, send_seed=args.send_seed,
                         replay_from=args.replay_from)
    cfg = RunConfig(arm=args.arm, data=args.data, out=args.out, seeds=args.seeds, engine=args.engine,
                    engine_options=opts, one_shot=args.one_shot, limit=args.limit,
                    executor_policy=args.policy, progress=not args.no_progress)
    if args.workers:
        cfg.executor_workers = args.workers
    if args.engine == "replay" and not args.model and args.replay_from:
        try:
            from registry import jsontext

            opts.model = jsontext.read_file(args.replay_from / "manifest.json", what="run manifest").get("model")
        except (OSError, ValueError, AttributeError):
            pass
    try:
        summary = run(cfg)
    except (RunError, EngineError) as e:
        return _err(str(e))
    done = summary.rows
    if summary.torn_bytes:
        print(f"note: dropped a torn last line ({summary.torn_bytes} bytes) from results.jsonl; its row was run again",
              file=sys.stderr)
    if summary.stopped:
        return _err(f"{summary.stopped}\nstopped; the rows finished so far are saved in {summary.out}; rerun the same "
                    "command to resume")
    pct = 100.0 * summary.correct / done if done else 0.0
    print(f"{args.arm}: {summary.correct}/{done} correct ({pct:.2f}%); {done - summary.done_before} rows run now, "
          f"{summary.done_before} resumed; {summary.out}/results.jsonl")
    return 0


def _score(args: argparse.Namespace) -> int:
    from solver.runner.rescore import RescoreError, rescore

    try:
        report = rescore(args.dir)
    except RescoreError as e:
        return _err(str(e))
    if args.format == "json":
        print(json.dumps(report, indent=1))
        return 0
    from registry.tables import render_table
    from registry.terminal import say

    # the house table (registry.tables): columns sized to their cells, so a long arm name keeps them aligned
    row = {k: report[k] for k in ("arm", "rows", "correct", "changed")} | {"accuracy": f"{report['accuracy']:.2f}%"}
    say(render_table([row], ["arm", "rows", "correct", "accuracy", "changed"]))
    return 0
