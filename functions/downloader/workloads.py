"""The workloads the function runs: the one registry, by name (docs/workloads.md).

A workload is a module with a plain core `measure_message(s3, environ, body, context)` that
returns the records of one message (the last one event="error" when the message failed). This
table is where a workload is registered; the handler dispatches on the body's `workload` field
and adds the envelope (workload, outcome); the drivers load this file through
fanout.function_modules and add their side in fanout.workloads.

Stdlib plus boto3 only (it runs in the Lambda runtime).
"""

import envelope
import latency
import measure


class UnknownWorkload(Exception):
    """A message named a workload this function does not have."""


def _download(s3, environ, body: str, context: dict) -> list[dict]:
    return [measure.measure_message(s3, measure.Settings.from_env(environ), body, context)]


WORKLOADS = {"download": _download, latency.NAME: latency.measure_message}
DEFAULT = envelope.DEFAULT_WORKLOAD


def run_message(s3, environ, body: str, context: dict) -> list[dict]:
    """The records of one message, each with `workload`, the last with `outcome` (done or error):
    exactly one record per delivery says how it ended, whatever the workload wrote before it."""
    name = envelope.workload_of(body)
    if isinstance(name, str) and name in WORKLOADS:
        records = WORKLOADS[name](s3, environ, body, context)
    else:
        name = str(name)[:40]
        problem = UnknownWorkload(f"unknown workload {name!r}: expected one of {', '.join(WORKLOADS)}")
        records = [envelope.error_record(problem, dict(context))]
    records = [{"workload": name, **record} for record in records]
    records[-1]["outcome"] = "error" if records[-1]["event"] == "error" else "done"
    return records
