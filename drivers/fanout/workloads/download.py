"""The download workload's driver side (the default workload): fire's --strategy and --pin, their
checks against the deployed stack, the cost estimate, the report (fanout.report, across runs
fanout.crossrun) and the comparison of runs (fanout.workloads.download_compare).

The strategy and pin definitions are the function's (fanout.strategies, fanout.pins load them
from functions/downloader/); this module gives them the registry's interface, as
fanout.workloads.latency does for its parameters.
"""

from dataclasses import dataclass

from fanout import concurrency, costs, pins, strategies, workloads
from fanout.params import check_fits_tmp, ephemeral_mib

OPTIONS = ("strategy", "pin")  # fire's --strategy (--mode) and --pin (STRATEGY, PIN)
# Its deploy-level inputs (object size, default strategy, memory...) are the stack's own, generic
# (fanout.params): the deploy-level hooks below add none.
DEPLOY_OPTIONS = ()


@dataclass(frozen=True)
class Options:
    """What fire was given: a strategy (None: the stack's default) and a pin (None or none: no pin)."""

    strategy: strategies.Choice | None = None
    pin: str | None = None


def add_fire_arguments(parser, sweep: bool = False) -> None:
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


def options_from(args) -> Options:
    """fire's --strategy and --pin, checked before anything touches the stack."""
    return Options(strategies.parse(args.strategy) if args.strategy is not None else None,
                   pins.parse(args.pin) if args.pin is not None else None)  # fmt: skip


def plan(stack, options: Options, count: int) -> workloads.Plan:
    """fire's download run on `stack`: the strategy (given, else the stack's default) and the pin
    checked against it, FireParams' fields, cost of `count`."""
    resolved = check_strategy(stack, options.strategy)
    pins.check_strategy(options.pin, resolved)  # the run's strategy, or the stack's default
    pins.check_backend(options.pin, stack.backend)
    fields = {"strategy": str(options.strategy) if options.strategy else None, "pin": options.pin}
    return workloads.Plan(fields, estimate(stack, count, resolved))


def message_fields(stack, params) -> dict:
    """What every body of a run (fanout.fire.FireParams) carries for it: the strategy (the run's,
    else the stack's default, as canonical text) and the pin when there is one."""
    return {"strategy": params.strategy or stack.default_strategy, **({"pin": params.pin} if params.pin else {})}


def check_strategy(stack, strategy: strategies.Choice | None) -> strategies.Choice:
    """The run's strategy (given, else the stack's default), refused if this stack cannot run it."""
    resolved = strategy or strategies.parse(stack.default_strategy)
    strategies.check_endpoint(resolved, stack.endpoint)
    check_fits_tmp(stack.object_size, resolved.name)
    return resolved


def estimate(stack, count: int, strategy: strategies.Choice) -> costs.Estimate:
    """The cost of `count` downloads of the stack's object with `strategy` (its requests)."""
    return _estimate(count, stack, strategy)


def _estimate(count: int, deployed, strategy: strategies.Choice) -> costs.Estimate:
    """`deployed`: a Stack or a sweep cell (fanout.axes.CellParams), which name alike what a
    run's price depends on."""
    deployment = costs.Deployment(deployed.memory, deployed.concurrency, deployed.architecture,
                                  ephemeral_mib(deployed.object_size))  # fmt: skip
    size = deployed.object_size
    return costs.estimate(count, deployment, size, strategy.gets(size), strategy.heads(size))


def sweep_options(args, memories: tuple[int, ...]) -> tuple[None]:
    """No combinations of its own: a sweep's strategy and pin are fanout.axes' message-level axes."""
    return (None,)


def cell_fire_fields(cell) -> dict:
    """FireParams' fields for a sweep cell (fanout.axes.CellParams)."""
    return {"strategy": cell.strategy, "pin": cell.pin}


def describe_cell(cell) -> str:
    """What a sweep cell (fanout.axes.CellParams) downloads with: its strategy and pin."""
    return cell.strategy + (f", pin {cell.pin}" if cell.pin else "")


def cell_estimate(count: int, cell) -> costs.Estimate:
    """The cost of `count` messages of a sweep cell: its strategy's GET requests on its object size."""
    return _estimate(count, cell, strategies.parse(cell.strategy))


def build_report(stack, record: dict) -> dict:
    """The run's report summary from its logs and queries (fanout.report)."""
    # Imported here, as every report module below: they load numpy, scipy and matplotlib, which
    # every `fanout` command would otherwise pay for at start-up (--help included).
    from fanout import report as run_report

    return run_report.build(stack, record)


def show_report(summary: dict) -> None:
    """The report's tables on the console."""
    from fanout import report as run_report

    run_report.show(summary)


def write_report(summary: dict, plots_too: bool = True) -> list:
    """The report's files and (unless a sweep's cell, `plots_too` False) plots; their paths."""
    from fanout import report as run_report

    return run_report.write(summary, plots_too)


def report_across(run_ids: list[str], folder, title: str, at_target: float = concurrency.AT_TARGET_FRACTION) -> dict:
    """The tables across runs (fanout.crossrun), over the downloads at target, printed and written into `folder`."""
    from fanout import crossrun

    return crossrun.report_across(run_ids, folder, title, at_target)


def compare(a_ids: list[str], b_ids: list[str], at_target: float = concurrency.AT_TARGET_FRACTION) -> None:
    """`fanout compare`: the change in median and p99 throughput per matching cell, with CIs."""
    from fanout.workloads import download_compare

    download_compare.show(download_compare.compare(a_ids, b_ids, at_target))


# ---- deploy-level hooks: none of its own (DEPLOY_OPTIONS) -------------------------------------


def add_deploy_arguments(parser) -> None:
    """No flags: deploy's --object-size, --strategy, --memory... are the stack's (fanout.params)."""


def deploy_options(args, backend: str) -> dict:
    return {}


def kept_options(outputs: dict, given: dict) -> dict:
    return {}


def terraform_variables(options: dict) -> dict:
    return {}


def stack_fields(outputs: dict) -> dict:
    return {}


def deploy_summary(stack) -> list[str]:
    """Its lines are the summary's own (strategy, object)."""
    return []
