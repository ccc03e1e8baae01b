"""The workloads, registered: one line each in REGISTERED (docs/architecture.md, *Adding a workload*).

A workload is a folder on each side: functions/runner/<name>/ (the core that runs a message, its
message parameters; the function's workloads.py registers it) and fanout/workloads/<name>/ (its
driver, a fanout.workloads.base.Driver, with its report, plots, cost model, saved queries and
README.md; the folder's __init__.py declares its fanout.common.workload.Workload). The drivers are
imported here as classes, so the import contracts see every edge: the stages reach a workload only
through this module, and the wings below (cloud, results...) never import it: the stages hand
them what they need of the workloads (a deploy's workload options and Terraform variables, a
stack's workload outputs, a run's cost estimate) as values.
"""

import argparse
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from fanout.results import cells
from fanout.common.errors import UsageError
from fanout.common.workload import DEFAULT as DEFAULT
from fanout.workloads.base import DeployPlace, Driver as Driver
from fanout.workloads.download.driver import DownloadDriver
from fanout.workloads.latency.driver import LatencyDriver
from fanout.workloads.seqread.driver import SeqreadDriver
from fanout.workloads.transfer.driver import TransferDriver

if TYPE_CHECKING:  # boto3 comes with the stack's module: a command that only parses needs neither
    from fanout.cloud.stack import Stack

# Each driver is generic over its own summary across runs (base.Driver): Any here.
REGISTERED: tuple[Driver[Any], ...] = (
    DownloadDriver(),
    LatencyDriver(),
    SeqreadDriver(),
    TransferDriver(),
)  # fmt: skip
DRIVERS: dict[str, Driver[Any]] = {driver.name: driver for driver in REGISTERED}
# Every registered workload's cells, built once here so that tables know all their column titles
# (fanout.results.cells.titles).
CELLS = {name: cells.of(driver.workload) for name, driver in DRIVERS.items()}


def get(name: str) -> Driver[Any]:
    """The driver of the workload named `name`, or a one-line UsageError listing the registered ones."""
    if name not in DRIVERS:
        raise UsageError(f"invalid workload {name!r}: expected one of {', '.join(DRIVERS)}")
    return DRIVERS[name]


# ---- deploy-level options: every registered workload's, merged (deploy, fire, sweep) ----


def deploy_option_names() -> tuple[str, ...]:
    """The names of every workload's deploy-level options: their flags' argparse names, the keys
    of deploy_options() and of a sweep's manifest."""
    return tuple(name for driver in DRIVERS.values() for name in driver.DEPLOY_OPTIONS)


def deploy_only_option_names() -> tuple[str, ...]:
    """The deploy-level options no workload's fire takes (latency's express_az; its storage is
    fire's too): fire checks one given against the deployed stack's."""
    fired = {name for driver in DRIVERS.values() for name in driver.OPTIONS}
    return tuple(name for name in deploy_option_names() if name not in fired)


def deploy_options(given: Mapping[str, str], place: DeployPlace) -> dict:
    """Every workload's deploy-level options from their flags' texts (`given`, by name; one absent:
    its default), checked against where the stack goes before anything is created (a one-line
    UsageError); JSON values, keyed by deploy_option_names()."""
    return {name: value for driver in DRIVERS.values() for name, value in driver.deploy_options(given, place).items()}


def kept_options(outputs: dict, given: Mapping[str, str]) -> dict:
    """The deploy-level options a redeploy keeps from the deployed stack (its `outputs`), as their
    flags write them: those not in `given` (the ones on the command line)."""
    return {name: text for driver in DRIVERS.values() for name, text in driver.kept_options(outputs, given).items()}


def recorded_deploy_options(record: dict) -> dict:
    """The deploy-level options a sweep's manifest holds; one recorded before an option existed
    lacks it, and terraform_variables() gives it the option's default."""
    return {name: record[name] for name in deploy_option_names() if name in record}


def terraform_variables(options: dict) -> dict:
    """infra/'s variables for the workloads' deploy-level options (defaults for those absent)."""
    return {name: value for driver in DRIVERS.values() for name, value in driver.terraform_variables(options).items()}


def stack_fields(outputs: dict) -> dict:
    """What the workloads read from a deployed stack's outputs (defaults for a stack deployed
    before an output existed); fanout.cloud.stack.Stack keeps it as `workload_outputs`."""
    return {name: value for driver in DRIVERS.values() for name, value in driver.stack_fields(outputs).items()}


def joined(name: str, values: list) -> str:
    """A sweep's list of values of flag `name` (its argparse name) as the flag takes them: separated
    by spaces, or by the separator a workload declares for it (Driver.LIST_SEPARATORS)."""
    separators = {flag: text for driver in DRIVERS.values() for flag, text in driver.LIST_SEPARATORS.items()}
    return separators.get(name, " ").join(str(value) for value in values)


def add_deploy_arguments(parser: argparse.ArgumentParser) -> None:
    """Every workload's deploy-level flags (deploy, plan and sweep take them)."""
    for driver in DRIVERS.values():
        driver.add_deploy_arguments(parser)


def deploy_summary(stack: "Stack") -> list[str]:
    """The workloads' lines of deploy's summary (each a label padded to 10 columns, then its value)."""
    return [line for driver in DRIVERS.values() for line in driver.deploy_summary(stack)]
