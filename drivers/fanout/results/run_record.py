"""The checks a run.json must pass when it is loaded, so that a corrupt record (truncated,
binary, wrong types, a negative `sent`) is one line naming the file, never a traceback deep in
wait or report.

Only the fields the commands rely on are checked. Hand-written rather than a JSON Schema: a
dozen fields, cross-field rules (`sent` against `messages`, seqs within range) a schema cannot
state, and messages that must name the file and the field in one line.
"""

import json
from pathlib import Path
from typing import cast

from fanout.common.errors import FanoutError


def check(data: object, path: Path) -> dict:
    """`data` (a run.json just parsed) when it is a usable run record; else FanoutError."""
    problem = _problem(data)
    if problem:
        raise FanoutError(f"corrupt run record {path}: {problem}; fire a new run or restore the file")
    return cast(dict, data)  # _problem found it one


def parse(raw: bytes, path: Path) -> dict:
    """Decode and check the bytes of a run.json."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise FanoutError(f"corrupt run record {path}: not UTF-8 text; fire a new run or restore the file") from None
    except ValueError as exc:
        raise FanoutError(f"corrupt run record {path}: not valid JSON ({exc}); fire a new run or restore the file") from None
    return check(data, path)


def _problem(data: object) -> str | None:
    if not isinstance(data, dict):
        return f"expected a JSON object, found {type(data).__name__}"
    checks = (
        ("run_id", str),
        ("stack", dict),
        ("parameters", dict),
        ("sent", int),
        ("failed_seqs", list),
        ("first_send_ms", (int, type(None))),
    )
    for name, kind in checks:
        if name not in data:
            return f"field {name!r} is missing"
        if not _is(data[name], kind):
            return f"field {name!r} is {data[name]!r:.40}, not {_kind_name(kind)}"
    messages = data["parameters"].get("messages")
    if not _is(messages, int) or messages < 1:
        return f"parameters.messages is {messages!r:.40}, not a whole number of at least 1"
    if not 0 <= data["sent"] <= messages:
        return f"sent is {data['sent']}, not between 0 and parameters.messages ({messages})"
    bad = [s for s in data["failed_seqs"] if not _is(s, int) or not 0 <= s < messages]
    if bad:
        return f"failed_seqs holds {bad[0]!r:.40}, not a seq from 0 to {messages - 1}"
    if messages - len(set(data["failed_seqs"])) != data["sent"]:
        return f"sent ({data['sent']}) does not match parameters.messages less failed_seqs"
    for name in ("backend", "stack"):
        if not isinstance(data["stack"].get(name), str):
            return f"stack.{name} is missing or not a string"
    return None


def _is(value: object, kind) -> bool:
    """isinstance, except that a bool is not an int (JSON true is not a count)."""
    return isinstance(value, kind) and not (isinstance(value, bool) and kind is not bool)


def _kind_name(kind) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {str: "a string", dict: "an object", int: "a whole number", list: "a list", type(None): "null"}
    return " or ".join(names[k] for k in kinds)
