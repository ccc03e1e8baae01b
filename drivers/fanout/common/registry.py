"""The workloads, registered by name: one line each in REGISTERED (docs/architecture.md).

A workload is a folder on each side: functions/runner/<name>/ (the core that runs a message, its
message parameters; the function's workloads.py registers it) and fanout/workloads/<name>/ (its
driver, a fanout.workloads.base.Driver, with its report, plots, cost model, saved queries and
README.md; the folder's __init__.py declares its fanout.common.workload.Workload). The generic
stages and the results reach a workload only through this module, which loads the folders by
name: it sits below them all, so that what it hands on (cell fields, deploy-level options) needs
no import of a workload.
"""

import argparse
import importlib
from typing import Any

from fanout.common.errors import UsageError
# What a workload declares, handed on (re-exported): the stages and the results read it all here.
from fanout.common.workload import SHARED_CELL_FIELDS as SHARED_CELL_FIELDS
from fanout.common.workload import SHARED_CELLS as SHARED_CELLS
from fanout.common.workload import CellField as CellField
from fanout.common.workload import Workload as Workload

REGISTERED = (
    "download",
    "latency",
    "seqread",
    "transfer",
)  # fmt: skip
DEFAULT = "download"


def _declared() -> dict:
    """Each registered folder's Workload (its __init__.py's WORKLOAD), by name."""
    return {name: importlib.import_module(f"fanout.workloads.{name}").WORKLOAD for name in REGISTERED}


WORKLOADS = _declared()


def get(name: str) -> Workload:
    """The workload named `name`, or a one-line UsageError listing the registered ones."""
    if name not in WORKLOADS:
        raise UsageError(f"invalid workload {name!r}: expected one of {', '.join(WORKLOADS)}")
    return WORKLOADS[name]


# ---- deploy-level options: every registered workload's, merged (deploy, params, stack, sweep) ----


def _drivers() -> list[Any]:  # fanout.workloads.base.Driver objects, a wing above (Workload.driver)
    return [workload.driver() for workload in WORKLOADS.values()]


def add_deploy_arguments(parser: argparse.ArgumentParser) -> None:
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


def deploy_options(args: argparse.Namespace, backend: str) -> dict:
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
    before an output existed); fanout.cloud.stack.Stack keeps it as `workload_outputs`."""
    return {name: value for driver in _drivers() for name, value in driver.stack_fields(outputs).items()}


def deploy_summary(stack: Any) -> list[str]:  # a fanout.cloud.stack.Stack, a wing above
    """The workloads' lines of deploy's summary (each a label padded to 10 columns, then its value)."""
    return [line for driver in _drivers() for line in driver.deploy_summary(stack)]
