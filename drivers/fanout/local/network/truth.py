"""Ground truth: what a run under a model should show, next to what its records show.

For each memory size of a run, the injected values come from the model run.json recorded
(fanout.local.network.model.from_record), the estimates from the download records' timelines
(functions/runner/download/timeline.py): sustained rate, burst, first-byte latency (an upper
bound when emulator answers came late) and each endpoint address's rate factor. The model's
prediction of one download (`predicted_seconds`) ranks strategies. Each estimate's definition
and the prediction's derivation: docs/network-model.md, *Ground truth* and *Endpoint addresses*.
"""

import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, replace

from fanout.local.network import late
from fanout.local.network.model import Shape, from_record


# What a download that ends inside its burst cannot show: it never drains the bucket, never runs
# at the sustained rate. Its estimates of these describe the object, not the model: no ratio.
BUCKET_PARAMETERS = ("sustained_mb_per_s", "burst_bytes")


def compare(simulated: bool, network: dict | None, downloads: list[dict], events: Sequence[dict] = ()) -> list[dict]:
    """One row per memory size: injected and estimated values, and their ratio (None where the
    estimate cannot be made: `estimable` False, a bucket the object never leaves), for a run
    hosted under `network` (run.json's) on a backend whose figures are `simulated`
    (fanout.local.backends.simulated; a measured run has no injected values); `events`, the
    run's log events, give the first-byte row its late answers (docs/network-model.md, Ground
    truth)."""
    model = from_record(network)
    if not simulated or not model.shaped:
        return []
    rows = []
    for memory in sorted({d["memory_size"] for d in downloads if "sustained_mb_per_s" in d}):
        mine = [d for d in downloads if d["memory_size"] == memory and "sustained_mb_per_s" in d]
        shape = model.at(memory)
        firsts = _first_per_environment(mine)
        estimates = {
            "sustained_mb_per_s": (_mb(shape.sustained_rate), _median(d["sustained_mb_per_s"] for d in mine)),
            "burst_bytes": (shape.burst_bytes, _median(d["burst_excess_bytes"] for d in firsts)),
            "first_byte_seconds": (shape.first_byte_s, _median(d["first_byte_seconds"] for d in mine
                                                              if d.get("first_byte_seconds") is not None)),
        }
        invocations = {d["request_id"] for d in mine if "request_id" in d}
        held = {"first_byte_seconds": asdict(late.totals(events, invocations))}
        inside = _ends_inside_burst(mine, shape.burst_bytes)
        for name, (injected, estimated) in estimates.items():
            estimable = not (inside and name in BUCKET_PARAMETERS)
            ratio = estimated / injected if injected and estimated is not None and estimable else None
            rows.append({"memory_size": memory, "parameter": name, "injected": injected, "estimated": estimated,
                         "ratio": None if ratio is None else round(ratio, 3), "downloads": len(mine),
                         "inside_burst": inside, "estimable": estimable, **held.get(name, {})})
        rows += _address_factors(memory, shape.addresses or {}, mine)
    return rows


def _address_factors(memory: int, factors: dict, downloads: list[dict]) -> list[dict]:
    """One row per endpoint address of the model: its rate factor, injected and estimated."""
    rates = {address: [d["bytes"] / d["seconds"] for d in downloads if d.get("endpoint_ip") == address]
             for address in factors}  # fmt: skip
    if not factors:
        return []
    top = max(factors.values())
    reference = _median(r for address, values in rates.items() if factors[address] == top for r in values)
    rows = []
    for address, factor in factors.items():
        mine = _median(rates[address])
        estimated = None if mine is None or not reference else top * mine / reference
        rows.append({"memory_size": memory, "parameter": f"rate_factor {address}", "injected": factor,
                     "estimated": estimated, "ratio": None if estimated is None else round(estimated / factor, 3),
                     "downloads": len(rates[address]), "inside_burst": False})  # fmt: skip
    return rows


def predicted_seconds(shape: Shape, size: int, connections: int, gets: int = 1, wait: float | None = None,
                      credit: float | None = None, heads: int = 0) -> float:
    """Seconds for one download of `size` bytes in `gets` GETs over `connections` connections
    that starts with `credit` bytes in the bucket (None: a full bucket), under `shape`, each GET
    first waiting `wait` seconds (None: the model's median first-byte latency), after `heads`
    requests that read nothing (the transfer manager's HeadObject) and wait as long each. See
    docs/network-model.md, Ground truth."""
    wait = (shape.first_byte_s or 0.0) if wait is None else wait
    per_connection = math.ceil(gets / connections)  # GETs each connection makes one after another
    if shape.connection_rate and per_connection > 1 and wait:
        at_cap = size / (connections * shape.connection_rate)
        shape = replace(shape, connection_rate=shape.connection_rate * at_cap / (at_cap + (per_connection - 1) * wait))
    credit = shape.burst_bytes if credit is None else credit
    return (heads + 1) * wait + _fluid_seconds(shape, size, connections, credit)


def predicted_median(shape: Shape, size: int, choice, downloads: int, environments: int) -> float:
    """The median seconds of a cell's downloads: `downloads` of `size` bytes with strategy
    `choice` (a fanout.workloads.download.strategies Choice) spread over `environments` environments, each of which
    downloads its share back to back from a full bucket. Each download starts with the credit
    the previous one left: the bucket loses the bytes drawn and regains the sustained rate over
    the download's seconds, within 0 and its size (the gaps between downloads are the host's,
    not the model's: none is assumed, so a later download may start with less credit than it
    would have). An aggregate cap gives each environment its share of it."""
    shape = shared(shape, environments, connections(choice, size))
    credit, seconds, read = shape.burst_bytes, [], size * choice.reads()  # repeated reads it many times
    for _ in range(max(1, round(downloads / environments))):
        seconds.append(predicted_seconds(shape, read, connections(choice, size), choice.gets(size), credit=credit,
                                         heads=choice.heads(size)))  # fmt: skip
        if credit is not None and shape.burst_bytes is not None:  # the same: a model with a bucket
            credit = min(shape.burst_bytes, max(0.0, credit + (shape.sustained_rate or 0.0) * seconds[-1] - read))
    return float(statistics.median(seconds))


def shared(shape: Shape, environments: int, connections: int) -> Shape:
    """`shape` with each of an environment's `connections` held to its share of the aggregate
    cap, when the model has one, among `environments` downloading at once."""
    if not shape.aggregate_rate:
        return shape
    share = shape.aggregate_rate / environments / connections
    cap = shape.connection_rate
    return replace(shape, connection_rate=min(cap, share) if cap else share)


def _fluid_seconds(shape: Shape, size: int, connections: int, credit: float | None) -> float:
    """The bytes alone: the bucket's burst while `credit` lasts, then the sustained rate
    (docs/network-model.md, Ground truth)."""
    burst_rate = _rate(shape, connections, shape.peak_rate)
    sustained_rate = _rate(shape, connections, shape.sustained_rate)
    if not credit or shape.sustained_rate is None or burst_rate <= shape.sustained_rate:
        return size / sustained_rate
    burst_seconds = credit / (burst_rate - shape.sustained_rate)
    if size <= burst_rate * burst_seconds:
        return size / burst_rate
    return burst_seconds + (size - burst_rate * burst_seconds) / sustained_rate


PARALLEL = ("connections", "max_concurrency", "in_flight")  # the strategies' parameters of parallel GETs


def connections(choice, size: int) -> int:
    """Connections a strategy (fanout.workloads.download.strategies Choice) reads `size` bytes over at once: its
    parallel GETs (1 for stream), at most one per GET."""
    values = dict(choice.values)
    return min(next((values[name] for name in PARALLEL if name in values), 1), choice.gets(size))


def _rate(shape: Shape, connections: int, environment: float | None) -> float:
    """What `connections` connections draw when the environment allows `environment` bytes/s."""
    limits = [environment, None if shape.connection_rate is None else shape.connection_rate * connections]
    finite = [rate for rate in limits if rate is not None]
    if not finite:
        raise ValueError("a model with neither a per-connection nor an environment rate predicts no time")
    return min(finite)


def _first_per_environment(downloads: list[dict]) -> list[dict]:
    first: dict[str, dict] = {}
    for d in sorted(downloads, key=lambda d: d["start_ms"]):
        first.setdefault(d["env_id"], d)
    return list(first.values())


def _ends_inside_burst(downloads: list[dict], bucket: float | None) -> bool:
    """Is the object no larger than the bucket? Then a download that starts with a full bucket
    ends inside its burst, never reaching the sustained rate, and the estimates of sustained rate
    and burst describe the burst, not the model."""
    return bool(bucket and (_median(d["bytes"] for d in downloads) or 0) <= bucket)


def _median(values) -> float | None:
    values = list(values)
    return float(statistics.median(values)) if values else None


def _mb(rate: float | None) -> float | None:
    return None if rate is None else rate / 1e6
