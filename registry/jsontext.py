"""JSON text from outside (run files, logs, --entities, requests) read with every refusal in words.

`json.loads` refuses a text in three ways: a syntax error (JSONDecodeError), an integer past Python's
4,300-digit limit (a plain ValueError) and nesting past the recursion limit (RecursionError). Each
reader used to catch only the first, so the other two escaped as tracebacks; here all three become
`JsonError`, whose message says what is wrong and where.
"""
from __future__ import annotations

import json
from typing import Any


class JsonError(ValueError):
    """A text that is not JSON this tool can read; the message says why (line and column where known)."""


def loads(text: str | bytes, **kwargs: Any) -> Any:
    try:
        return json.loads(text, **kwargs)
    except json.JSONDecodeError as e:
        raise JsonError(f"{e.msg} at line {e.lineno} column {e.colno}") from None
    except RecursionError:
        raise JsonError("nested too deeply") from None
    except ValueError as e:
        if "integer string conversion" in str(e):
            raise JsonError("an integer of more than 4,300 digits") from None
        raise JsonError(str(e)) from None
