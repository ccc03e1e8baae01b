"""The download workload's cost model: a run's GET and HEAD requests on its object size, with
the Lambda time its strategy takes (fanout.cloud.costs prices them). The driver's estimates and
the report's estimate beside the bill (fanout.results.run_cost) are both this one."""

from fanout.cloud import costs
from fanout.cloud.params import ephemeral_mib
from fanout.common.errors import FanoutError
from fanout.workloads.download import strategies


def estimate(count: int, deployed, strategy: strategies.Choice) -> costs.Estimate:
    """The cost of `count` downloads with `strategy`. `deployed`: a Stack or a sweep cell
    (fanout.stages.sweep_axes.CellParams), which name alike what a run's price depends on."""
    deployment = costs.Deployment(deployed.memory, deployed.concurrency, deployed.architecture,
                                  ephemeral_mib(deployed.object_size))  # fmt: skip
    size = deployed.object_size
    return costs.estimate(count, deployment, size, strategy.gets(size), strategy.heads(size),
                          strategies.message_seconds(strategy, size))


def cell_estimate(count: int, cell, deployed: dict) -> costs.Estimate:
    """The cost of `count` messages of a sweep cell: its strategy's requests on its object size."""
    return estimate(count, cell, cell_strategy(cell))


def cell_strategy(cell) -> strategies.Choice:
    """The strategy of a sweep cell, or of a run as one (fanout.results.run_cost.cell); FanoutError
    when its record lacks it (fire records it: such a record was truncated or written by hand)."""
    text = (cell.options or {}).get("strategy")
    if text is None:
        raise FanoutError("run.json lacks the download's strategy, so its cost cannot be estimated; fire a new run")
    return strategies.parse(text)
