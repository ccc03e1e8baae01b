"""What a workload's driver is to the generic stages: the hooks fire, sweep, report, compare and
deploy call, each with a default, so that a workload implements only what it needs
(docs/architecture.md, "Adding a workload")."""

import argparse
from collections.abc import Callable, Mapping
from pathlib import Path
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from fanout.results import run_record, sections
from fanout.results.summary import RunSummary
from fanout.cloud import costs
from fanout.local.network import capacity, options as network_options
from fanout.common.errors import UsageError
from fanout.common.workload import Workload

if TYPE_CHECKING:
    from fanout.cloud.stack import Stack


@dataclass(frozen=True)
class Plan:
    """What fire sends for a run, from a driver's plan(): `fire_fields`, the fields of
    fanout.stages.fire.FireParams the workload sets (its name and its options), and the cost
    estimate fire checks."""

    fire_fields: dict
    estimate: costs.Estimate


@dataclass(frozen=True)
class DeployPlace:
    """Where a deploy (or a sweep) puts its stack, what a workload checks its deploy-level
    options against: the stack's name, its region (given, or kept from the deployed stack), the
    backend's name (fanout.local.backends.NAMES), and whether a sweep deploys it (`sweep`: an
    option that is also one of its axes, download's strategy, is given as a list there)."""

    stack: str
    region: str
    backend: str
    sweep: bool = False


# What a command line gave a hook: each flag's text by its argparse name, those not given absent
# (a stage parses argparse's Namespace into it: no hook reads a Namespace).
Given = Mapping[str, str]


class ReportModule(Protocol):
    """A workload's report module (its folder's report.py): one run's report, whose summary is
    the header every run has and the module's `Body` (fanout.results.summary)."""

    @property
    def Body(self) -> type:  # noqa: N802 - the module's class
        """Its summary body, a dataclass (fanout.results.summary.Body)."""

    def build(self, stack: "Stack", record: run_record.RunRecord) -> RunSummary[Any]:
        """The run's report summary from its logs and queries."""

    def sections(self, summary: RunSummary[Any]) -> sections.Report:
        """The report as the terminal shows it."""

    def write(self, summary: RunSummary[Any], plots_too: bool) -> list:
        """The report's files and plots; their paths."""


class AcrossSummary(Protocol):
    """What a workload's summary across runs (its report_across's, a dataclass of its own: its
    `Across`) is to generic code: a report with a title; its driver's across_sections reads the rest."""

    @property
    def title(self) -> str:
        """The report's title (a sweep's says which sweep)."""


AcrossT = TypeVar("AcrossT", bound=AcrossSummary)


# A run's FireParams (fanout.stages.fire) and a sweep's CellParams (fanout.stages.sweep_axes) are
# the stages' types, a wing above this one: the hooks that take them take Any.


class DeployLevel(Protocol):
    """A workload's deploy-level options, kept in one module of its folder whose functions are
    these: the driver names that module (Driver.deploy_level) and its deploy hooks call them."""

    def add_deploy_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def deploy_options(self, given: Given, place: DeployPlace) -> dict: ...

    def kept_options(self, outputs: dict, given: Given) -> dict: ...

    def terraform_variables(self, options: dict) -> dict: ...

    def stack_fields(self, outputs: dict) -> dict: ...

    def deploy_summary(self, stack: "Stack") -> list[str]: ...


class Driver(Generic[AcrossT]):
    """A workload's driver. `workload` is what its folder declares (its name, cells, query);
    report() its report module, imported when a report is asked for (it loads numpy, scipy and
    matplotlib, which every command would otherwise pay for at start-up). `AcrossT`: its summary
    across runs (report_across's, which its across_sections reads)."""

    workload: Workload
    OPTIONS: tuple[str, ...] = ()  # fire's flags (their argparse names); in a sweep, the message-level ones
    DEPLOY_OPTIONS: tuple[str, ...] = ()  # deploy's flags of its own (argparse names, manifest keys)
    # Its flags whose list (a sweep's) separates values by other than spaces, by argparse name: the
    # separator as a list is written (download's strategies, which hold spaces, by "; ").
    LIST_SEPARATORS: dict[str, str] = {}
    deploy_level: DeployLevel | None = None  # the module of its deploy-level options, if it has any

    @property
    def name(self) -> str:
        """Its registry name."""
        return self.workload.name

    def report(self) -> ReportModule:
        """Its report module (a plain import inside the method: loaded when first asked for)."""
        raise NotImplementedError

    # ---- fire ----

    def add_fire_arguments(self, parser: argparse.ArgumentParser, sweep: bool = False) -> None:
        """fire's flags for it (in a sweep, `sweep`, those that are message-level)."""

    def options_from(self, given: Given) -> object:
        """Its fire options from the command line's flags (`given`), checked before anything
        touches the stack."""
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

    def run_options(self, stack: "Stack", params: Any) -> dict | None:
        """What run.json records of a run's options (fanout.stages.fire.FireParams), as JSON values;
        by default its options as given (None: it has none)."""
        return dict(params.options) if params.options else None

    # ---- sweep ----

    def sweep_options(self, given: Given, memories: tuple[int, ...]) -> tuple:
        """Its message-level combinations of a sweep (one cell each) from the command line's
        flags (`given`); None: none of its own."""
        return (None,)

    def sweep_deploy_options(self, chosen: dict, given: Given, place: DeployPlace, combos: tuple) -> dict:
        """The deploy-level options a sweep deploys at `place` (`chosen`: those the command line
        gave, `given` its flags), with what its combinations (sweep_options) need deployed before
        the first cell (seqread: its objects); by default `chosen`."""
        return chosen

    def sweep_stack_inputs(self, axes: Any) -> dict:  # axes: fanout.stages.sweep_axes.Axes
        """Its deploy-level options a sweep of its cells (`axes`) deploys with every cell, over
        those the sweep recorded (download: the stack's default strategy, its first strategy, also
        for a sweep recorded before that was an option); by default none."""
        return {}

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

    def default_demand(self, stack: "Stack") -> capacity.Demand:
        """What a run of it fired with no options of its own asks of the network (the demo's run):
        by default one read of the stack's test object."""
        return network_options.stack_demand(stack)

    # ---- report, compare ----

    def build_report(self, stack: "Stack", record: run_record.RunRecord) -> RunSummary[Any]:
        """The run's report summary from its logs and queries."""
        return self.report().build(stack, record)

    def summary_body(self) -> type:
        """Its report's summary body (fanout.results.summary.Body), which reads a saved summary.json."""
        return self.report().Body

    def report_sections(self, summary: RunSummary[Any]) -> sections.Report:
        """The report as the terminal shows it (its files are drawn from the same sections)."""
        return self.report().sections(summary)

    def write_report(self, summary: RunSummary[Any], plots_too: bool = True) -> list:
        """The report's files and (unless a sweep's cell, `plots_too` False) plots; their paths."""
        return self.report().write(summary, plots_too)

    def add_report_arguments(self, parser: argparse.ArgumentParser) -> None:
        """report's and compare's flags for it (download: --at-target); by default none."""

    def report_options(self, given: Given) -> dict:
        """What its report flags asked (`given`: the command line's texts), checked, as
        report_across's and compare's `options`: the fields of its summary's body they set in a
        run's report; the flags not given are left out (a saved report keeps its own). By default none."""
        return {}

    def report_across(self, run_ids: list[str], folder: Path, title: str, options: dict | None = None) -> AcrossT:
        """The report across runs (a sweep's closing report) with `options` (report_options'),
        written into `folder`; its summary (the workload's own type, which its across_sections reads)."""
        raise UsageError(f"the {self.name} workload has no report across runs")

    def across_sections(self, summary: AcrossT, folder: Path) -> sections.Report:
        """report_across's summary as the terminal shows it; by default its title."""
        return sections.Report(summary.title, "")

    def compare(self, a_ids: list[str], b_ids: list[str], options: dict | None = None) -> sections.Report:
        """`fanout compare A B` of its runs with `options` (report_options'), as the terminal shows it."""
        raise UsageError(f"the {self.name} workload has no compare")

    # ---- deploy ----

    def check_deployment(self, inputs: Any, backend: str, endpoint: str) -> None:
        """Refuse deploy inputs (fanout.cloud.params.DeployParams) it cannot run on at `endpoint`
        (the deployment's: "" for AWS), before anything is created; by default any will do."""

    # ---- deploy-level options of its own (DEPLOY_OPTIONS): its deploy_level module's; without one, none ----

    def add_deploy_arguments(self, parser: argparse.ArgumentParser) -> None:
        """deploy's (and plan's, sweep's) flags for its own options."""
        if self.deploy_level:
            self.deploy_level.add_deploy_arguments(parser)

    def deploy_options(self, given: Given, place: DeployPlace) -> dict:
        """Its deploy-level options from their flags' texts (`given`), checked against where the
        stack goes (`place`); JSON values."""
        return self.deploy_level.deploy_options(given, place) if self.deploy_level else {}

    def kept_options(self, outputs: dict, given: Given) -> dict:
        """The options a redeploy keeps from the deployed stack's `outputs` (not in `given`)."""
        return self.deploy_level.kept_options(outputs, given) if self.deploy_level else {}

    def terraform_variables(self, options: dict) -> dict:
        """infra/'s variables for its options (defaults for those absent)."""
        return self.deploy_level.terraform_variables(options) if self.deploy_level else {}

    def stack_fields(self, outputs: dict) -> dict:
        """What it reads from a deployed stack's outputs."""
        return self.deploy_level.stack_fields(outputs) if self.deploy_level else {}

    def deploy_summary(self, stack: "Stack") -> list[str]:
        """Its lines of deploy's summary."""
        return self.deploy_level.deploy_summary(stack) if self.deploy_level else []
