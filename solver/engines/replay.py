"""Answers from the stored replies of an earlier run: re-score or re-execute without a model.

A turn is matched on (row, seed, call) and must carry the same prompt hash as the stored turn;
a prompt that changed (a new arm version or formula text) is refused, never answered by a stale reply.
"""
from __future__ import annotations

from typing import Any

from registry import jsontext
from registry.plain_files import read_capped
from solver.arms.base import ChatReply, messages_sha256
from solver.engines import ENGINES, ChatRequest, EngineError, EngineOptions
from solver.replies import replayed


@ENGINES.register("replay")
class ReplayEngine:
    name = "replay"

    def __init__(self, options: EngineOptions):
        if options.replay_from is None:
            raise EngineError("the replay engine needs --replay-from DIR (an earlier run's folder)")
        path = options.replay_from / "results.jsonl"
        if not path.is_file():
            raise EngineError(f"{path}: no such file; --replay-from names the folder of an earlier run")
        self.source = options.replay_from
        self.turns: dict[tuple[int, int, int], dict[str, Any]] = {}
        try:
            for n, row in jsontext.read_lines(path):
                self._keep(row, f"{path}:{n}")
        except jsontext.LineError as e:
            raise EngineError(f"{path}:{e.line}: not a JSON line ({e})") from None
        except OSError as e:
            raise EngineError(f"{path}: not readable ({e})") from None
        self.model = None
        try:
            manifest = read_capped(options.replay_from / "manifest.json", jsontext.LOCK_MAX, "run manifest")
            self.model = jsontext.loads(manifest.decode("utf-8")).get("model")
        except (OSError, ValueError, AttributeError):
            pass

    def _keep(self, row: Any, where: str) -> None:
        """Remember a stored row's model turns by (row, seed, call)."""
        try:
            for call in row.get("calls") or []:
                self.turns[(int(row["row_number"]), int(row["seed"]), int(call["call"]))] = call
        except (AttributeError, KeyError, TypeError, ValueError):
            raise EngineError(f"{where}: not a results row (row_number, seed and calls with their number)") from None

    def describe(self) -> dict[str, Any]:
        return {"engine": "replay", "replay_from": str(self.source), "replayed_model": self.model,
                "seed_sent": False, "seed_reached_server": False}

    async def aclose(self) -> None:
        return None

    async def chat(self, request: ChatRequest) -> ChatReply:
        turn = self.turns.get(request.key)
        row, seed, call = request.key
        if turn is None:
            raise EngineError(f"replay: {self.source} has no stored reply for row {row}, seed {seed}, call {call}")
        if turn.get("prompt_sha256") != messages_sha256(request.messages):
            raise EngineError(f"replay: row {row}, seed {seed}, call {call}: the prompt differs from the stored one "
                              "(the arm or its formula text changed); rerun with a model")
        return ChatReply(text=replayed(turn), finish_reason=turn.get("finish_reason"))
