"""The workloads the function runs: the one registry, by name.

Each entry names a workload's core `measure_message(s3, settings, body, context)`, its
`settings(environ)` and the S3 connections one message may use; the handler dispatches on the
body's `workload`, and the drivers load this file (fanout.common.function_modules). The
contract: docs/workloads.md, *The contract*. Stdlib plus boto3 only (it runs in the Lambda
runtime).
"""

from collections.abc import Mapping
from typing import TYPE_CHECKING, Callable, NamedTuple, cast

import envelope
import latency
import measure
import seqread
import transfer

if TYPE_CHECKING:  # botocore ships no types: an S3 client is Any to mypy, named for the reader
    from botocore.client import BaseClient


class UnknownWorkload(Exception):
    """A message named a workload this function does not have."""


class Workload(NamedTuple):
    settings: Callable[..., object]  # environ -> what run reads from it; raises on a deployment bug
    run: Callable[..., list[dict]]  # (s3, settings, body, context) -> the message's records
    connections: int  # S3 connections one message may use at once


def _download(s3: "BaseClient", settings: measure.Settings, body: str, context: dict) -> list[dict]:
    return [measure.measure_message(s3, settings, body, context)]


WORKLOADS = {
    "download": Workload(measure.Settings.from_env, _download, measure.CONNECTIONS),
    # The environment as it is: latency checks its variables per message, so that a stack
    # deployed without it still runs the other workloads.
    latency.NAME: Workload(dict, latency.measure_message, latency.CONNECTIONS),
    seqread.NAME: Workload(dict, seqread.measure_message, seqread.CONNECTIONS),
    transfer.NAME: Workload(dict, transfer.measure_message, transfer.CONNECTIONS),
}
DEFAULT = "download"  # what a body without `workload` runs (bodies sent before fire named it)
CONNECTIONS = max(workload.connections for workload in WORKLOADS.values())  # the shared client's pool


def settings_from_env(environ: Mapping[str, str]) -> dict:
    """Every workload's settings, by name; raises naming the variable on a deployment bug."""
    return {name: workload.settings(environ) for name, workload in WORKLOADS.items()}


def run_message(s3: "BaseClient", settings: dict, body: str, context: envelope.Delivery) -> list[envelope.Logged]:
    """The records of one message (`settings`: settings_from_env's), each with `workload`, the
    last with `outcome` (done or error): exactly one record per delivery says how it ended,
    whatever the workload wrote before it. Each is an envelope.Logged (the workloads build
    plain dicts: tests/functions/test_record_type.py checks what they log against the type)."""
    name = envelope.workload_of(body, DEFAULT)
    if isinstance(name, str) and name in WORKLOADS:
        records = WORKLOADS[name].run(s3, settings[name], body, context)
    else:
        name = str(name)[:40]
        problem = UnknownWorkload(f"unknown workload {name!r}: expected one of {', '.join(WORKLOADS)}")
        records = [envelope.error_record(problem, dict(context))]
    logged = [cast(envelope.Logged, {"workload": name, **record}) for record in records]
    logged[-1]["outcome"] = "error" if logged[-1]["event"] == "error" else "done"
    return logged
