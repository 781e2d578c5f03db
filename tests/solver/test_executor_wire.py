"""The frames between the client and a fork server (solver/executor/wire.py) and the client-side classification."""
from __future__ import annotations

import os

import pytest

from solver.executor.classify import classify, outcome_wire
from solver.executor.pool import request
from solver.executor.wire import CHECKED_MARK, decode_result, encode_frame, encode_request, encode_result, read_request


def _through_a_pipe(frame: bytes) -> object:
    read_fd, write_fd = os.pipe()
    try:
        os.write(write_fd, frame)
        os.close(write_fd)
        return read_request(read_fd)
    finally:
        os.close(read_fd)


def test_a_request_arrives_exactly_with_lone_surrogates_and_fences() -> None:
    reply = "Here:\n```python\ndef solve():\n    return '\ud800'\n```\n\udfff"
    sent = request(reply, "paper")
    assert sent["located"] == {"fences": 1, "block": "def solve():\n    return '\ud800'\n"}
    assert _through_a_pipe(encode_request(sent)) == sent


def test_a_request_for_a_reply_without_fences() -> None:
    sent = request("def solve():\n    return 1\n", "clinical")
    assert sent["located"] is None and _through_a_pipe(encode_request(sent)) == sent


@pytest.mark.parametrize("sig, code, killed", [(None, 0, False), (9, None, True), (24, None, False), (None, 70, False)])
def test_a_relayed_result_round_trips(sig: int | None, code: int | None, killed: bool) -> None:
    data = CHECKED_MARK + b'{"kind": "value", "value": {"int": 3}, "detail": ""}'
    frame = encode_result(data, sig, code, 0.0123, 0.5, killed)
    relayed = decode_result(frame[4:])
    assert relayed == (data, sig, code, 0.0123, 0.5, killed)
    assert outcome_wire(frame[4:]) == classify(data, sig, code, 0.0123, 0.5, killed)


def test_an_outcome_the_server_decided_is_read_as_json() -> None:
    wire = {"kind": "no_program", "value": None, "detail": "no program in the reply", "cpu_s": 0.0, "wall_s": 0.0}
    assert decode_result(encode_frame(wire)[4:]) is None
    assert outcome_wire(encode_frame(wire)[4:]) == wire


@pytest.mark.parametrize("payload", [b"[1, 2]", b"R\x00", b"not json"])
def test_a_malformed_answer_is_an_error(payload: bytes) -> None:
    with pytest.raises(ValueError):
        outcome_wire(payload)


def test_whatever_a_child_writes_is_only_read_as_json() -> None:
    # a result that is not valid JSON (or not a valid outcome) is never trusted
    assert classify(CHECKED_MARK + b"\x80\x04K\x01.", None, 0, 0.0, 0.0, False)["kind"] == "crashed"
    assert classify(b'{"kind": "value", "value": {"int": 1}}', None, 0, 0.0, 0.0, False)["kind"] == "value"
    assert classify(b"", None, 70, 0.0, 0.0, False)["kind"] == "rejected"
