"""The network model's predictions for downloads: a cell's median seconds, beside its measured
ones in the reports, and the strategies ranked (fanout.local.network.truth derives them;
docs/network-model.md, Ground truth)."""

from fanout.local import backends
from fanout.local.network.model import Shape, from_record
from fanout.local.network import truth
from fanout.local.network.truth import connections, predicted_median
from fanout.workloads.download import strategies


def cell_prediction(backend: str | None, network: dict | None, cell: dict, downloads: int) -> float | None:
    """predicted_median for a report's cell (its memory_size, concurrency_limit, object_size and
    strategy) of `downloads` downloads, for a run on `backend` under the model run.json recorded
    (`network`); None on AWS, without a model (or its parameters: a record older than them), or
    for a model with no rate (it predicts no time)."""
    known = downloads and cell.get("object_size") and cell.get("strategy")  # records before they carried them
    if not backends.simulated(backend) or "parameters" not in (network or {}) or not known:
        return None
    model = from_record(network)
    if not model.shaped:
        return None
    shape, choice, size = model.at(cell["memory_size"]), strategies.parse(cell["strategy"]), cell["object_size"]
    if shape.max_rate(connections(choice, size)) is None:
        return None
    return round(predicted_median(shape, size, choice, downloads, cell["concurrency_limit"]), 4)


def predicted_ranking(shape: Shape, size: int, choices: list) -> list[tuple[str, float]]:
    """(canonical text, predicted seconds) of each strategy (a strategies.Choice), fastest first.
    A strategy uses as many connections as it has parallel GETs, at most its parts."""
    seconds = {str(c): truth.predicted_seconds(shape, size * c.reads(), connections(c, size), c.gets(size),
                                               heads=c.heads(size)) for c in choices}  # fmt: skip
    return sorted(seconds.items(), key=lambda item: item[1])
