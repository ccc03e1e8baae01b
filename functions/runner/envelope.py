"""The envelope every message and record shares, whatever the workload.

A message carries run_id, seq, experiment_tag, optionally workload and inject_failure, plus the
workload's parameters; every record carries the envelope back, so that wait, the accounting and
the completeness checks read the envelope only and never name a workload. Fields:
docs/workloads.md, *The envelope*; their types (Logged, Record) are the drivers' too. Stdlib
only (it runs in the Lambda runtime).
"""

import json
from typing import Callable, NotRequired, Protocol, TypedDict, TypeVar


class WithFields(Protocol):
    """A workload's message parameters: what its records carry of them is fields()."""

    def fields(self) -> dict: ...


P = TypeVar("P", bound=WithFields)


class MalformedMessage(ValueError):
    """The body is not what `fanout fire` sends; `known` holds the fields that were valid."""

    def __init__(self, problem: str, known: dict):
        super().__init__(problem)
        self.known = known


class InjectedFailure(Exception):
    """The message asked to fail (inject_failure), to exercise the failure path end to end."""


def load(body: str) -> dict:
    """The body as a JSON object, or MalformedMessage."""
    try:
        data = json.loads(body)
    except (TypeError, ValueError):
        raise MalformedMessage(f"body is not JSON: {str(body)[:80]!r}", {}) from None
    if not isinstance(data, dict):
        raise MalformedMessage(f"body is not a JSON object: {str(body)[:80]!r}", {})
    return data


def workload_of(body: str, default: str) -> object:
    """The workload a body names (`default` when it names none, or is not even JSON: the
    default workload's parser then reports what is wrong with it)."""
    try:
        data = load(body)
    except MalformedMessage:
        return default
    return data.get("workload", default)


_CHECKS = {
    "run_id": (lambda v: isinstance(v, str) and v != "", "a non-empty string", None),
    "seq": (lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer", None),
    "experiment_tag": (lambda v: isinstance(v, str), "a string", ""),
    "inject_failure": (lambda v: isinstance(v, bool), "true or false", False),
}


def check(data: dict) -> tuple[dict, list[str]]:
    """(the valid envelope fields, a problem per invalid or missing one)."""
    known, problems = {}, []
    for name, (valid, allowed, default) in _CHECKS.items():
        value = data.get(name, default)
        if value is not None and valid(value):
            known[name] = value
        elif name in data:
            problems.append(f"{name}={data[name]!r} is not {allowed}")
        else:
            problems.append(f"{name} is missing")
    return known, problems


class Sdk(TypedDict):
    """The SDK an execution environment imported (invocation.sdk_fields)."""

    boto3_version: str
    botocore_version: str
    s3transfer_version: str
    awscrt_version: NotRequired[str | None]  # None without awscrt, then absent from the logged line
    sdk_source: str  # bundled (the zip's) or runtime


class Invocation(Sdk):
    """What every record of one invocation carries (invocation.Environment.invocation_fields)."""

    request_id: str
    env_id: str
    cold_start: bool
    memory_size: int
    concurrency_limit: int


class Delivery(Invocation):
    """What every record of one delivery of a message carries: the invocation's fields and SQS's."""

    message_id: str
    receive_count: int


class Logged(Delivery):
    """Every record the function logs, a body's that is not even JSON too: the keys all share.
    A workload's own keys ride beside them (its README lists them)."""

    event: str  # the workload's record kind, or "error"
    workload: str  # the workload that ran the message (the name as given when unknown)
    outcome: NotRequired[str]  # on the delivery's last record only: "done" or "error"
    error_type: NotRequired[str]  # on an event="error" record (error_record)
    error_message: NotRequired[str]


class Message(TypedDict):
    """What every record of a message carries from its envelope, in this order."""

    run_id: str
    seq: int
    experiment_tag: str


class Record(Logged, Message):
    """A record of a message whose envelope was valid: what the drivers find a run's records
    by. Records of runs from before `workload` and `outcome` existed lack those two."""


RECORD_FIELDS = tuple(Message.__annotations__)  # what every record of a message carries from it


def opened(body: str, params_from_body: Callable[[dict], P]) -> tuple[dict, P, dict]:
    """A workload's message: (its envelope fields, its parameters from `params_from_body(data)`, the
    fields each of its records carries: RECORD_FIELDS and `params.fields()`). Raises
    MalformedMessage for a bad envelope or parameter."""
    data = load(body)
    known, problems = check(data)
    if problems:
        raise MalformedMessage("; ".join(problems), known)
    params = params_from_body(data)
    return known, params, {name: known[name] for name in RECORD_FIELDS} | params.fields()


def records(body: str, context: dict, parse: Callable[[dict], P],
            measure: Callable[[P, dict, Callable[[dict], None]], None]) -> list[dict]:
    """The records of one message for a workload that measures with `measure(params, known, emit)`
    (`params`: `parse(data)`, an object with fields() that raises MalformedMessage; `known`: the
    envelope; `emit(record)` adds one record, its `event` first, then the envelope's fields, the
    message's parameters, the record and `context`). An event="error" record comes last when
    anything failed; the records before it stay: they were measured."""
    out: list[dict] = []
    fields: dict = {}
    try:
        known, params, fields = opened(body, parse)
        if known["inject_failure"]:
            raise InjectedFailure("the message asked to fail (inject_failure)")
        measure(params, known, lambda record: out.append({"event": record["event"], **fields, **record, **context}))
    except MalformedMessage as exc:
        out.append(error_record(exc, {**exc.known, **context}))
    except Exception as exc:  # noqa: BLE001 - logged as the message's error record; the message fails
        out.append(error_record(exc, {**fields, **context}))
    return out


def error_record(exc: Exception, fields: dict) -> dict:
    """The event="error" record: what failed, plus every field known at that point."""
    return {"event": "error", "error_type": type(exc).__name__, "error_message": str(exc), **fields}
