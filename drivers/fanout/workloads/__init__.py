"""The workloads, registered in one place (docs/workloads.md).

A workload is two modules: its function side under functions/downloader/ (the core that runs a
message and its typed, validated message parameters, listed in the function's workloads.py) and
its driver side here (what `fanout fire` takes for it and checks against the deployed stack, its
cost model, and how `fanout report` shows a run of it: saved queries, tables, plots). WORKLOADS
below is the drivers' registry; a test holds it to the function's. `wait` and the accounting
need neither: they read the envelope every record shares (fanout.wait).

Every driver module has the same interface, DRIVER_INTERFACE: OPTIONS and add_fire_arguments
(fire's flags; in a sweep, those that are message-level), options_from(args), plan(stack,
options, count) -> Plan, message_fields (what every body carries), the sweep's hooks, the report
of a run in three steps (build_report from the logs, show_report and write_report of its summary:
fanout.reporting decides whether the summary comes from the logs or from the saved files),
report_across and compare; and the deploy-level hooks of a workload whose
deployment has options of its own (latency's storage classes): DEPLOY_OPTIONS,
add_deploy_arguments, deploy_options, kept_options, terraform_variables, stack_fields and
deploy_summary.
fire, sweep, report, compare, deploy, the deploy parameters and the stack treat every workload
through it (the functions below) and never name one.
"""

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from fanout import costs
from fanout.errors import UsageError
from fanout.sizes import format_decimal_size, format_size


@dataclass(frozen=True)
class CellField:
    """A cell field, declared once (fanout.cells builds the cells from these): the record field
    `name`, its column `title`, its part of a cell's label (`{}`: the value as text), whether it
    sorts as a number (512 before 1024), and `show`, how a whole number is written (a size)."""

    name: str
    title: str
    label: str = "{}"
    numeric: bool = False
    show: Callable[[int], str] | None = None


@dataclass(frozen=True)
class Workload:
    """A registered workload; `driver()` is its module fanout.workloads.<name>. `cells`: the
    cell fields its records add to those every record shares (SHARED_CELLS), of which `deployed`
    are the deployment's (tables across runs put them before the architecture); `query`: its
    saved percentile query, grouped by them."""

    name: str
    help: str
    cells: tuple[CellField, ...]
    query: str
    deployed: tuple[str, ...] = ()

    @property
    def cell_fields(self) -> tuple[str, ...]:
        return tuple(field.name for field in self.cells)

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
                 (CellField("object_size", "object", numeric=True, show=format_size), CellField("strategy", "strategy")),
                 "download-percentiles", deployed=("object_size",)),
        Workload("latency", "PUT then GET objects of several sizes per storage class, each call timed",
                 (CellField("storage", "storage"), CellField("operation", "operation"),
                  CellField("size", "size", numeric=True, show=format_decimal_size)),
                 "latency-percentiles", deployed=("storage",)),
    )
}  # fmt: skip
DEFAULT = "download"
# What every driver module defines (docs/workloads.md, "Adding a workload"), the generic stages' only way in.
DRIVER_INTERFACE = (
    "OPTIONS", "add_fire_arguments", "options_from", "plan", "message_fields",  # fire
    "sweep_options", "cell_fire_fields", "describe_cell", "cell_estimate",  # sweep
    "build_report", "show_report", "write_report", "report_across", "compare",  # report, compare
    "DEPLOY_OPTIONS", "add_deploy_arguments", "deploy_options", "kept_options", "terraform_variables",  # deploy
    "stack_fields", "deploy_summary",  # the deployed stack
)  # fmt: skip
# The cell fields of every record, whatever the workload (the envelope, docs/workloads.md): a
# cell's fields are these with the workload's own before the tag (fanout.cells).
SHARED_CELLS = (CellField("memory_size", "memory MB", "{} MB", numeric=True),
                CellField("concurrency_limit", "concurrency", "concurrency {}", numeric=True),
                CellField("experiment_tag", "tag", "tag={}"))  # fmt: skip
SHARED_CELL_FIELDS = tuple(field.name for field in SHARED_CELLS)


def get(name: str) -> Workload:
    """The workload named `name`, or a one-line UsageError listing the registered ones."""
    if name not in WORKLOADS:
        raise UsageError(f"invalid workload {name!r}: expected one of {', '.join(WORKLOADS)}")
    return WORKLOADS[name]


def of_run(record: dict) -> Workload:
    """The workload a run (its run.json) was fired with; runs from before the registry downloaded."""
    return get(record["parameters"].get("workload", DEFAULT))


# ---- deploy-level options: every registered workload's, merged (deploy, params, stack, sweep) ----


def _drivers():
    return [workload.driver() for workload in WORKLOADS.values()]


def add_deploy_arguments(parser) -> None:
    """Every workload's deploy-level flags (deploy, plan and sweep take them)."""
    for driver in _drivers():
        driver.add_deploy_arguments(parser)


def deploy_option_names() -> tuple[str, ...]:
    """The names of every workload's deploy-level options: their flags' argparse names, the keys
    of deploy_options() and of a sweep's manifest."""
    return tuple(name for driver in _drivers() for name in driver.DEPLOY_OPTIONS)


def deploy_only_option_names() -> tuple[str, ...]:
    """The deploy-level options no workload's fire takes (latency's express_az; its storage is
    fire's too): fire checks one given against the deployed stack's."""
    fired = {name for driver in _drivers() for name in driver.OPTIONS}
    return tuple(name for name in deploy_option_names() if name not in fired)


def deploy_options(args, backend: str) -> dict:
    """Every workload's deploy-level options from the command line, checked against `backend`
    before anything is created (a one-line UsageError); JSON values, keyed by deploy_option_names()."""
    return {name: value for driver in _drivers() for name, value in driver.deploy_options(args, backend).items()}


def kept_options(outputs: dict, given: dict) -> dict:
    """The deploy-level options a redeploy keeps from the deployed stack (its `outputs`), as their
    flags write them: those not in `given` (the ones on the command line)."""
    return {name: text for driver in _drivers() for name, text in driver.kept_options(outputs, given).items()}


def recorded_deploy_options(record: dict) -> dict:
    """The deploy-level options a sweep's manifest holds; one recorded before an option existed
    lacks it, and terraform_variables() gives it the option's default."""
    return {name: record[name] for name in deploy_option_names() if name in record}


def terraform_variables(options: dict) -> dict:
    """infra/'s variables for the workloads' deploy-level options (defaults for those absent)."""
    return {name: value for driver in _drivers() for name, value in driver.terraform_variables(options).items()}


def stack_fields(outputs: dict) -> dict:
    """What the workloads read from a deployed stack's outputs (defaults for a stack deployed
    before an output existed); fanout.stack.Stack keeps it as `workload_outputs`."""
    return {name: value for driver in _drivers() for name, value in driver.stack_fields(outputs).items()}


def deploy_summary(stack) -> list[str]:
    """The workloads' lines of deploy's summary (each a label padded to 10 columns, then its value)."""
    return [line for driver in _drivers() for line in driver.deploy_summary(stack)]
