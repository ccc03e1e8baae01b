"""What a workload's driver is to the generic stages: the hooks fire, sweep, report, compare and
deploy call, each with a default, so that a workload implements only what it needs
(docs/architecture.md, "Adding a workload")."""

import argparse
import importlib
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fanout.results import concurrency, run_record, sections
from fanout.cloud import costs
from fanout.local.network import capacity
from fanout.common.errors import UsageError

if TYPE_CHECKING:
    from fanout.cloud.stack import Stack


@dataclass(frozen=True)
class Plan:
    """What fire sends for a run, from a driver's plan(): `fire_fields`, the fields of
    fanout.stages.fire.FireParams the workload sets (download: strategy, pin; another: its name
    and message fields), and the cost estimate fire checks."""

    fire_fields: dict
    estimate: costs.Estimate


# A run's FireParams (fanout.stages.fire) and a sweep's CellParams (fanout.stages.sweep_axes) are
# the stages' types, a wing above this one: the hooks that take them take Any.


class Driver:
    """A workload's driver. `name` is its registry name; `report_module` the module (imported
    when a report is asked for: it loads numpy, scipy and matplotlib, which every command would
    otherwise pay for at start-up) whose build(stack, record) and write(summary, plots_too)
    report one run, and sections(summary) is its report as fanout.results.sections for the
    terminal."""

    name = ""
    report_module = ""
    OPTIONS: tuple[str, ...] = ()  # fire's flags (their argparse names); in a sweep, the message-level ones
    DEPLOY_OPTIONS: tuple[str, ...] = ()  # deploy's flags of its own (argparse names, manifest keys)

    # ---- fire ----

    def add_fire_arguments(self, parser: argparse.ArgumentParser, sweep: bool = False) -> None:
        """fire's flags for it (in a sweep, `sweep`, those that are message-level)."""

    def options_from(self, args: argparse.Namespace) -> object:
        """Its fire options from the command line, checked before anything touches the stack."""
        return None

    def plan(self, stack: "Stack", options: Any, count: int) -> Plan:  # options: options_from's
        """What fire sends for `count` messages on `stack`, checked against it, and their cost."""
        raise NotImplementedError

    def prepare(self, stack: "Stack", params: Any, say: Callable[[str], None]) -> None:
        """Make what a run (fanout.stages.fire.FireParams) needs on `stack` before its first message
        (seqread: its objects), saying what it did with `say`. fire calls it once the estimate was
        accepted, before sending: a refused run changes nothing. By default nothing is needed."""

    def message_fields(self, stack: "Stack", params: Any) -> dict:
        """What every message body of a run (fanout.stages.fire.FireParams) carries for it; by
        default its message fields as given (`options`). No side effect: see prepare()."""
        return dict(params.options or {})

    # ---- sweep ----

    def sweep_options(self, args: argparse.Namespace, memories: tuple[int, ...]) -> tuple:
        """Its message-level combinations of a sweep (one cell each); None: none of its own."""
        return (None,)

    def sweep_deploy_options(self, chosen: dict, args: argparse.Namespace, combos: tuple) -> dict:
        """The deploy-level options a sweep deploys (`chosen`: those the command line gave), with
        what its combinations (sweep_options) need deployed before the first cell (seqread: its
        objects); by default `chosen`."""
        return chosen

    def cell_fire_fields(self, cell: Any) -> dict:
        """FireParams' fields for a sweep cell (fanout.stages.sweep_axes.CellParams)."""
        return {"workload": self.name, "options": dict(cell.options or {})}

    def describe_cell(self, cell: Any) -> str:
        """What a sweep cell does, in a few words."""
        return self.name

    def cell_estimate(self, count: int, cell: Any, deployed: dict) -> costs.Estimate:
        """The cost of `count` messages of a sweep cell on `deployed`: the stack's `region` and the
        workloads' deploy-level options by name (a run's record of its stack holds them under the
        same names; a sweep gives those it deploys)."""
        raise NotImplementedError

    def demand(self, cell: Any) -> capacity.Demand:
        """What one message of a sweep cell (or of a run: fanout.results.run_cost.cell) asks of the
        network: on the local backend, the automatic network scale sizes the run by it."""
        raise NotImplementedError

    # ---- report, compare ----

    def build_report(self, stack: "Stack", record: run_record.RunRecord) -> dict:
        """The run's report summary from its logs and queries."""
        return self._report().build(stack, record)

    def report_sections(self, summary: dict) -> sections.Report:
        """The report as the terminal shows it (its files are drawn from the same sections)."""
        return self._report().sections(summary)

    def write_report(self, summary: dict, plots_too: bool = True) -> list:
        """The report's files and (unless a sweep's cell, `plots_too` False) plots; their paths."""
        return self._report().write(summary, plots_too)

    def report_across(self, run_ids: list[str], folder: Path, title: str,
                      at_target: float = concurrency.AT_TARGET_FRACTION) -> dict:
        """The report across runs (a sweep's closing report), written into `folder`; its summary."""
        raise UsageError(f"the {self.name} workload has no report across runs")

    def across_sections(self, summary: dict, folder: Path) -> sections.Report:
        """report_across's summary as the terminal shows it."""
        return sections.Report(summary.get("title", ""), summary.get("network", ""))

    def compare(self, a_ids: list[str], b_ids: list[str], at_target: float = concurrency.AT_TARGET_FRACTION) -> sections.Report:
        """`fanout compare A B` of its runs, as the terminal shows it."""
        raise UsageError(f"the {self.name} workload has no compare")

    def _report(self) -> ModuleType:
        return importlib.import_module(self.report_module)

    # ---- deploy-level options of its own (DEPLOY_OPTIONS) ----
    # A workload with such options keeps them in one module (latency: storage.py, seqread:
    # deploy_options.py) that defines each hook below as a function of the same name: `deploy_hooks`.
    # The hooks call it; without one they have nothing to do.

    deploy_hooks: ModuleType | None = None  # that module

    def _deploy_hook(self, name: str, none: Any, *args: Any) -> Any:  # the hook's own arguments and result
        return getattr(self.deploy_hooks, name)(*args) if self.deploy_hooks else none

    def add_deploy_arguments(self, parser: argparse.ArgumentParser) -> None:
        """deploy's (and plan's, sweep's) flags for its own options."""
        self._deploy_hook("add_deploy_arguments", None, parser)

    def deploy_options(self, args: argparse.Namespace, backend: str) -> dict:
        """Its deploy-level options from the command line, checked against `backend`; JSON values."""
        return self._deploy_hook("deploy_options", {}, args, backend)

    def kept_options(self, outputs: dict, given: dict) -> dict:
        """The options a redeploy keeps from the deployed stack's `outputs` (not in `given`)."""
        return self._deploy_hook("kept_options", {}, outputs, given)

    def terraform_variables(self, options: dict) -> dict:
        """infra/'s variables for its options (defaults for those absent)."""
        return self._deploy_hook("terraform_variables", {}, options)

    def stack_fields(self, outputs: dict) -> dict:
        """What it reads from a deployed stack's outputs."""
        return self._deploy_hook("stack_fields", {}, outputs)

    def deploy_summary(self, stack: "Stack") -> list[str]:
        """Its lines of deploy's summary."""
        return self._deploy_hook("deploy_summary", [], stack)
