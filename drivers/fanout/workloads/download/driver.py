"""The download workload's driver (the default workload): fire's --strategy and --pin, their
checks against the deployed stack, the cost estimate, the report of a run (report.py), across runs
(across.py) and the comparison of runs (compare.py).

The strategy and pin definitions are the function's, loaded by fanout.cloud.strategies and
fanout.cloud.pins: the stack's default strategy is a deploy input of every stack.
"""

from dataclasses import dataclass

from fanout.results import concurrency
from fanout.results.sections import Report
from fanout.cloud import costs, params as deploy_params
from fanout.cloud import pins, strategies
from fanout.workloads.base import Driver, Given, Plan, ReportModule
from fanout.workloads.download import WORKLOAD, costs as download_costs
from fanout.cloud.params import check_fits_tmp
from fanout.local.network import capacity

@dataclass(frozen=True)
class Options:
    """What fire was given: a strategy (None: the stack's default) and a pin (None or none: no pin)."""

    strategy: strategies.Choice | None = None
    pin: str | None = None


def check_strategy(stack, strategy: strategies.Choice | None) -> strategies.Choice:
    """The run's strategy (given, else the stack's default), refused if this stack cannot run it:
    its endpoint, its /tmp, its memory, its timeout."""
    resolved = strategy or strategies.parse(stack.default_strategy)
    strategies.check_endpoint(resolved, stack.endpoint)
    check_fits_tmp(stack.object_size, resolved.name)
    deploy_params.check_fits_memory(resolved, stack.object_size, stack.memory)
    strategies.check_time_limit(resolved, stack.object_size, stack.timeout)
    return resolved


class DownloadDriver(Driver):
    """Its deploy-level inputs (object size, default strategy, memory...) are every stack's
    (fanout.cloud.params): it adds no deploy hooks of its own."""

    workload = WORKLOAD
    OPTIONS = ("strategy", "pin")  # fire's --strategy (--mode) and --pin (STRATEGY, PIN)

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
        fields = {"strategy": str(options.strategy) if options.strategy else None, "pin": options.pin}
        return Plan(fields, download_costs.estimate(count, stack, resolved))

    def message_fields(self, stack, params) -> dict:
        """What every body of a run (fanout.stages.fire.FireParams) carries for it: the strategy (the run's,
        else the stack's default, as canonical text) and the pin when there is one."""
        return {"strategy": params.strategy or stack.default_strategy, **({"pin": params.pin} if params.pin else {})}

    def sweep_options(self, given: Given, memories: tuple[int, ...]) -> tuple:
        """No options of its own (its strategy and pin are the sweep's axes); each strategy on
        each object size checked against the function's timeout and every memory size first, as
        fire checks a run."""
        inputs = {**deploy_params.DEFAULTS, **deploy_params.given(given)}
        timeout = deploy_params.function_timeout_value(inputs["function_timeout"])
        words = deploy_params.LIST_SEPARATORS.split(str(inputs["object_size"]).strip())
        for choice in strategies.parse_list(inputs["strategy"]):
            for size in (deploy_params.object_size(word) for word in words if word):
                strategies.check_time_limit(choice, size, timeout)
                for memory in memories:
                    deploy_params.check_fits_memory(choice, size, memory)
        return (None,)

    def cell_fire_fields(self, cell) -> dict:
        """FireParams' fields for a sweep cell (fanout.stages.sweep_axes.CellParams)."""
        return {"strategy": cell.strategy, "pin": cell.pin}

    def describe_cell(self, cell) -> str:
        """What a sweep cell (fanout.stages.sweep_axes.CellParams) downloads with: its strategy and pin."""
        return cell.strategy + (f", pin {cell.pin}" if cell.pin else "")

    def cell_estimate(self, count: int, cell, deployed: dict) -> costs.Estimate:
        """The cost of `count` messages of a sweep cell: its strategy's GET requests on its object size."""
        return download_costs.cell_estimate(count, cell, deployed)

    def demand(self, cell) -> capacity.Demand:
        """A download of the cell's object with its strategy."""
        return capacity.strategy_demand(strategies.parse(cell.strategy), cell.object_size)

    def report_across(self, run_ids: list[str], folder, title: str, at_target: float = concurrency.AT_TARGET_FRACTION) -> object:
        """The tables across runs (fanout.workloads.download.across), over the downloads at target, written into `folder`."""
        from fanout.workloads.download import across as crossrun

        return crossrun.build(run_ids, folder, title, at_target)

    def across_sections(self, summary, folder) -> Report:
        from fanout.workloads.download import across as crossrun

        return crossrun.sections(summary, folder=folder)

    def compare(self, a_ids: list[str], b_ids: list[str], at_target: float = concurrency.AT_TARGET_FRACTION) -> Report:
        """`fanout compare`: the change in median and p99 throughput per matching cell, with CIs."""
        from fanout.workloads.download import compare as download_compare

        return download_compare.sections(download_compare.compare(a_ids, b_ids, at_target))
