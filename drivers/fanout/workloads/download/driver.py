"""The download workload's driver (the default workload): fire's --strategy and --pin, their
checks against the deployed stack, the cost estimate, the report of a run (report.py), across runs
(across.py) and the comparison of runs (compare.py).

The strategy and pin definitions are the function's, loaded by fanout.workloads.download.strategies and
fanout.workloads.download.pins; the stack's default strategy is this workload's deploy-level option
(default_strategy.py).
"""

import itertools
from dataclasses import dataclass

from fanout.results import concurrency
from fanout.results.sections import Report
from fanout.cloud import costs, params as deploy_params
from fanout.workloads.download import WORKLOAD, costs as download_costs, default_strategy, pins, strategies
from fanout.workloads.base import DeployPlace, Driver, Given, Plan, ReportModule
from fanout.workloads.download.across_summary import Across
from fanout.workloads.download.strategies import check_fits_tmp
from fanout.local import backends
from fanout.local.network import capacity


@dataclass(frozen=True)
class Options:
    """What fire was given: a strategy (None: the stack's default) and a pin (None or none: no pin)."""

    strategy: strategies.Choice | None = None
    pin: str | None = None


def check_strategy(stack, strategy: strategies.Choice | None) -> strategies.Choice:
    """The run's strategy (given, else the stack's default), refused if this stack cannot run it:
    its endpoint, its /tmp, its memory, its timeout."""
    resolved = strategy or strategies.parse(default_strategy.deployed(stack))
    strategies.check_endpoint(resolved, stack.endpoint)
    check_fits_tmp(stack.object_size, resolved.name)
    strategies.check_fits_memory(resolved, stack.object_size, stack.memory)
    strategies.check_time_limit(resolved, stack.object_size, stack.timeout)
    return resolved


AT_TARGET = "at_target_fraction"  # the report option (and a run's summary key) of --at-target


def _at_target(options: dict | None) -> float:
    """The fraction of the target concurrency a download ran at to be kept (report_options')."""
    return (options or {}).get(AT_TARGET, concurrency.AT_TARGET_FRACTION)


class DownloadDriver(Driver[Across]):
    """Its deploy-level option is the stack's default strategy (default_strategy.py); the object it
    reads, its size and the function's memory are every stack's (fanout.cloud.params)."""

    workload = WORKLOAD
    OPTIONS = ("strategy", "pin")  # fire's --strategy (--mode) and --pin (STRATEGY, PIN)
    DEPLOY_OPTIONS = default_strategy.DEPLOY_OPTIONS
    deploy_level = default_strategy
    LIST_SEPARATORS = {default_strategy.OPTION: f"{strategies.definition.LIST_SEPARATOR} "}

    def add_fire_arguments(self, parser, sweep: bool = False) -> None:
        """--strategy and --pin; in a sweep (`sweep`) only --pin, a list (its --strategy is deploy's)."""
        if not sweep:
            parser.add_argument(
                "--strategy", "--mode", dest="strategy",
                help="download strategy of this run, e.g. 'ranged connections=8 chunk_size=8MiB' (default: the "
                f"stack's); one of {', '.join(strategies.STRATEGIES)}; --mode is its old name",
            )  # fmt: skip
        several = "; several separated by spaces, one cell each (a sweep axis)" if sweep else ""
        parser.add_argument(
            "--pin", metavar="none|auto|IP",
            help="connect every request of this run to one address of the bucket's endpoint (TLS still on its name): "
            "an IPv4/IPv6 address, or auto: resolve it several times and spread the messages over the addresses "
            f"found; none: where DNS says, as without --pin (docs/strategies.md){several}",
        )

    def report(self) -> ReportModule:
        from fanout.workloads.download import report
        return report

    def options_from(self, given: Given) -> Options:
        """fire's --strategy and --pin, checked before anything touches the stack."""
        strategy, pin = given.get("strategy"), given.get("pin")
        return Options(strategies.parse(strategy) if strategy is not None else None,
                       pins.parse(pin) if pin is not None else None)  # fmt: skip

    def plan(self, stack, options: Options, count: int) -> Plan:
        """fire's download run on `stack`: the strategy (given, else the stack's default) and the pin
        checked against it, FireParams' fields, cost of `count`."""
        resolved = check_strategy(stack, options.strategy)
        pins.check_strategy(options.pin, resolved)  # the run's strategy, or the stack's default
        pins.check_backend(options.pin, stack.backend)
        given = {"strategy": str(options.strategy) if options.strategy else None, "pin": options.pin}
        return Plan({"options": {name: value for name, value in given.items() if value is not None}},
                    download_costs.estimate(count, stack, resolved))  # fmt: skip

    def message_fields(self, stack, params) -> dict:
        """What every body of a run (fanout.stages.fire.FireParams) carries for it: the strategy (the run's,
        else the stack's default, as canonical text) and the pin when there is one."""
        given = params.options or {}
        return {"strategy": given.get("strategy") or default_strategy.deployed(stack),
                **({"pin": given["pin"]} if given.get("pin") else {})}  # fmt: skip

    def run_options(self, stack, params) -> dict:
        """run.json's record of the run's download: its strategy, where it came from, its pin (None: none)."""
        given = params.options or {}
        return {"strategy": given.get("strategy") or default_strategy.deployed(stack), "pin": given.get("pin"),
                "strategy_from": "fire --strategy" if given.get("strategy") else "stack default"}  # fmt: skip

    def sweep_options(self, given: Given, memories: tuple[int, ...]) -> tuple:
        """Its axes: every strategy (--strategy, separated by ';') with every pin (--pin, separated
        by spaces), one cell each, in that order; each strategy checked on each object size against
        the endpoint, /tmp, the function's timeout and every memory size, each pin against its
        strategy and the backend, as fire checks a run."""
        inputs = {**deploy_params.DEFAULTS, **deploy_params.given(given)}
        strategy_text = given.get(default_strategy.OPTION, strategies.DEFAULT)
        timeout = deploy_params.function_timeout_value(inputs["function_timeout"])
        ephemeral = deploy_params.ephemeral_value(inputs["ephemeral_storage"])
        backend = given["backend"]
        endpoint = deploy_params.endpoint(backends.get(backend), given.get("endpoint", ""))
        words = deploy_params.LIST_SEPARATORS.split(str(inputs["object_size"]).strip())
        sizes = [deploy_params.object_size(word) for word in words if word]
        chosen, pinned = strategies.parse_list(strategy_text), pins.parse_list(given.get("pin"))
        for choice, size in itertools.product(chosen, sizes):
            check_fits_tmp(size, choice.name, ephemeral)
        for choice, pin in itertools.product(chosen, pinned):
            pins.check_strategy(pin, choice)
        for choice, size in itertools.product(chosen, sizes):
            strategies.check_time_limit(choice, size, timeout)
            for memory in memories:
                strategies.check_fits_memory(choice, size, memory)
        for choice in chosen:
            strategies.check_deployment_endpoint(choice, backend, endpoint)
        for pin in pinned:
            pins.check_backend(pin, backend)
        return tuple({"strategy": str(choice), "pin": pin} for choice in chosen for pin in pinned)

    def sweep_stack_inputs(self, axes) -> dict:
        """The stack's default strategy a sweep deploys: its first strategy (every cell names its own)."""
        return {default_strategy.OPTION: next(combo["strategy"] for each in axes.every() for combo in each.options)}

    def check_deployment(self, inputs, backend: str, endpoint: str) -> None:
        """Refuse a stack's default strategy that cannot read from the deployment's endpoint, or a
        download_file default whose object does not fit the stack's /tmp."""
        chosen = default_strategy.of_inputs(inputs)
        strategies.check_deployment_endpoint(chosen, backend, endpoint)
        check_fits_tmp(inputs.object_size, chosen.name, inputs.ephemeral_storage)

    def cell_fire_fields(self, cell) -> dict:
        """FireParams' fields for a sweep cell (fanout.stages.sweep_axes.CellParams)."""
        return {"options": {name: value for name, value in (cell.options or {}).items() if value is not None}}

    def describe_cell(self, cell) -> str:
        """What a sweep cell (fanout.stages.sweep_axes.CellParams) downloads with: its strategy and pin."""
        options = cell.options or {}
        return options.get("strategy", "the stack's default strategy") + (f", pin {options['pin']}" if options.get("pin") else "")

    def cell_estimate(self, count: int, cell, deployed: dict) -> costs.Estimate:
        """The cost of `count` messages of a sweep cell: its strategy's GET requests on its object size."""
        return download_costs.cell_estimate(count, cell, deployed)

    def demand(self, cell) -> capacity.Demand:
        """A download of the cell's object with its strategy."""
        return strategies.strategy_demand(download_costs.cell_strategy(cell), cell.object_size)

    def default_demand(self, stack) -> capacity.Demand:
        """A download of the stack's object with its default strategy."""
        return strategies.strategy_demand(strategies.parse(default_strategy.deployed(stack)), stack.object_size)

    def add_report_arguments(self, parser) -> None:
        """--at-target: which downloads the tables keep (fanout.results.concurrency)."""
        parser.add_argument("--at-target", metavar="FRACTION",
                            help="a download ran at target when the mean number of the run's downloads over its "
                            "interval was at least this fraction of the target concurrency (default "
                            f"{concurrency.AT_TARGET_FRACTION}); the tables are over those downloads")  # fmt: skip

    def report_options(self, given: Given) -> dict:
        """--at-target, checked, as the summary's at_target_fraction, when given."""
        return {AT_TARGET: concurrency.fraction(given["at_target"])} if "at_target" in given else {}

    def report_across(self, run_ids: list[str], folder, title: str, options: dict | None = None) -> Across:
        """The tables across runs (fanout.workloads.download.across), over the downloads at target, written into `folder`."""
        from fanout.workloads.download import across as crossrun

        return crossrun.build(run_ids, folder, title, _at_target(options))

    def across_sections(self, summary: Across, folder) -> Report:
        from fanout.workloads.download import across as crossrun

        return crossrun.sections(summary, folder=folder)

    def compare(self, a_ids: list[str], b_ids: list[str], options: dict | None = None) -> Report:
        """`fanout compare`: the change in median and p99 throughput per matching cell, with CIs."""
        from fanout.workloads.download import compare as download_compare

        return download_compare.sections(download_compare.compare(a_ids, b_ids, _at_target(options)))
