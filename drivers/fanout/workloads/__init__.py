"""The workloads, registered in one place (docs/workloads.md).

A workload is two modules: its function side under functions/downloader/ (the core that runs a
message and its typed, validated message parameters, listed in the function's workloads.py) and
its driver side here (what `fanout fire` takes for it and checks against the deployed stack, its
cost model, and how `fanout report` shows a run of it: saved queries, tables, plots). WORKLOADS
below is the drivers' registry; a test holds it to the function's. `wait` and the accounting
need neither: they read the envelope every record shares (fanout.wait).

Every driver module has the same interface: OPTIONS and add_fire_arguments (fire's flags; in a
sweep, those that are message-level), options_from(args), plan(stack, options, count) -> Plan,
report and write_report. fire and sweep treat every workload through it.
"""

import importlib
from dataclasses import dataclass

from fanout import costs
from fanout.errors import UsageError


@dataclass(frozen=True)
class Workload:
    """A registered workload; `driver()` is its module fanout.workloads.<name>. `cell_fields`:
    the record fields it adds to the cell fields every record shares (SHARED_CELL_FIELDS);
    `query`: its saved percentile query, grouped by them."""

    name: str
    help: str
    cell_fields: tuple[str, ...]
    query: str

    def driver(self):
        return importlib.import_module(f"fanout.workloads.{self.name}")


@dataclass(frozen=True)
class Plan:
    """What fire sends for a run, from a driver's plan(): `fire_fields`, the fields of
    fanout.fire.FireParams the workload sets (download: strategy, pin; another: its name and
    message fields), and the cost estimate fire checks."""

    fire_fields: dict
    estimate: costs.Estimate


WORKLOADS = {
    workload.name: workload
    for workload in (
        Workload("download", "download the stack's test object with a strategy, timed (docs/strategies.md)",
                 ("object_size", "strategy"), "download-percentiles"),
        Workload("latency", "PUT then GET objects of several sizes per storage class, each call timed",
                 ("storage", "operation", "size"), "latency-percentiles"),
    )
}
DEFAULT = "download"
# The cell fields of every record, whatever the workload (the envelope, docs/workloads.md).
SHARED_CELL_FIELDS = ("memory_size", "concurrency_limit", "experiment_tag")


def get(name: str) -> Workload:
    """The workload named `name`, or a one-line UsageError listing the registered ones."""
    if name not in WORKLOADS:
        raise UsageError(f"invalid workload {name!r}: expected one of {', '.join(WORKLOADS)}")
    return WORKLOADS[name]


def of_run(record: dict) -> Workload:
    """The workload a run (its run.json) was fired with; runs from before the registry downloaded."""
    return get(record["parameters"].get("workload", DEFAULT))
