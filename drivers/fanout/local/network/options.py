"""The --network and --network-scale options of `fanout host`, `wait` and `demo`, and where the
model a run was hosted under is recorded.

Unless told otherwise a stack's function is hosted under DEFAULT, the model the demo runs, so that
the manual flow and the demo measure alike; `fanout host --function`, which has no stack to size
a scale from, keeps `none`. `--network-scale auto` (the default) picks the scale by the rule of fanout.local.network.capacity for
the stack's concurrency and memory and what the run's messages ask of the network (their
workload's driver says), measuring this machine first, and says what it picked.
`fanout host` publishes its model in the stack's state directory while it hosts, and how it holds
its environments to Lambda's limits once it knows, so that `fanout wait --no-host` can record both
in run.json.
"""

import argparse
import json
import math
from collections.abc import Callable, Sequence
from contextlib import contextmanager

from fanout.local import hostlock
from fanout.common import paths
from fanout.common.sizes import format_size
from fanout.local.network import capacity
from fanout.local.network.model import NONE, PROFILES, ModelError, NetworkModel, check_scale, from_record, label, load

__all__ = ["NONE", "AUTO", "DEFAULT", "LIMITS_FILE", "add_arguments", "check", "from_record", "label_of", "load",
           "publish_limits", "published", "read_published"]

AUTO = "auto"
DEFAULT = "lambda-2024"  # a stack's function is hosted under this model unless told otherwise
PUBLISHED_FILE = "network.json"
LIMITS_FILE = "limits.json"  # how the host holds its environments to Lambda's limits, once it knows
Demands = Callable[[], Sequence[capacity.Demand]]  # asked only when the automatic scale needs them


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--network", metavar="PROFILE|FILE",
                        help=f"local backend: network model, one of {', '.join(PROFILES)} or a .toml/.json "
                             f"model file (default: {DEFAULT} for a stack's function, {NONE} for `fanout host "
                             f"--function`; see docs/network-model.md)")
    parser.add_argument("--network-scale", default=AUTO, metavar="N|auto",
                        help="divide every modelled rate and burst by N; auto (default) picks the smallest "
                             "scale this machine sustains for the stack's concurrency")


def check(network: str | None, scale: str) -> None:
    """Validate --network (None: not given) and --network-scale before anything else happens (a
    typo must not cost a deploy)."""
    check_values(network or DEFAULT, scale)


def check_values(network: str, scale: str) -> None:
    """`check` for a model name or file and a scale given as text."""
    load(network, 1.0 if scale == AUTO else check_scale(scale))


def resolve(network: str | None, scale: str, stack=None, say=print, demands: Demands | None = None) -> NetworkModel:
    """The model `network` names (None: DEFAULT for a stack's function, NONE without a stack) at
    `scale`: a number, or auto, picked for `stack` running messages
    that ask `demands()` (each workload's driver gives a run's or a sweep cell's; the largest scale
    any of them needs is taken). No demands (`fanout host`, which hosts whatever is fired): one
    read of the stack's test object."""
    network = network or (NONE if stack is None else DEFAULT)
    if scale != AUTO:
        return load(network, check_scale(scale))
    model = load(network)
    if not model.shaped:
        return model
    if stack is None:
        raise ModelError(f"--network-scale {AUTO} needs a deployed stack to measure; give a number with --function")
    asked = (demands() if demands else ()) or (stack_demand(stack),)
    return auto_scaled(model, stack, asked, measure(stack, uploads=any(d.up.bytes for d in asked)), say)


def stack_demand(stack) -> capacity.Demand:
    """One GET of `stack`'s test object on one connection: the demand of a run nothing says
    more of (each workload's driver says what its messages ask)."""
    return capacity.Demand(f"a read of {format_size(stack.object_size)}", 1, capacity.Flow(stack.object_size, 1))


def measure(stack, uploads: bool = False) -> capacity.Capacity:
    """What this machine's emulator serves now in `stack`'s bucket (capacity.measure), and
    (`uploads`) what it takes in."""
    client = stack.client("s3", max_pool_connections=capacity.PROBE_CLIENTS)
    return capacity.measure(client, stack.bucket, stack.object_key, stack.object_size, uploads=uploads)


def auto_scaled(model: NetworkModel, stack, demands: Sequence[capacity.Demand], measured: capacity.Capacity,
                say=print) -> NetworkModel:  # fmt: skip
    """`model` at the scale the rule picks for `stack` (its concurrency and memory) running messages
    that ask `demands` on a machine that serves `measured`: the largest any demand needs. Says
    what it picked and the figures of the demand that needed it."""
    from fanout.local.host import limits  # the kernel's bounds on a CPU cap, where the host applies it

    draws = [capacity.Draw(stack.concurrency, stack.memory, demand) for demand in demands]
    scales = {draw: capacity.scale_for(model, draw, measured) for draw in draws}
    largest = max(scales, key=scales.__getitem__)
    say(auto_text(model, largest, measured, scales[largest], len(scales)))
    if limits.cpu_quota(stack.memory, scales[largest]) is None:
        say(f"CPU share not capped: {limits.CpuLimit.unenforceable(stack.memory, scales[largest])}")
    return model.with_scale(scales[largest])


def auto_text(model: NetworkModel, draw: capacity.Draw, measured: capacity.Capacity, scale: float,
              demands: int = 1) -> str:  # fmt: skip
    """What the automatic scale used: the run's bytes and requests at scale 1 and at the scale
    picked, against what the machine served (`demands`: how many kinds of message it sized, the
    largest need named)."""
    at_one, picked = model.with_scale(1.0), model.with_scale(scale)
    demand, requests = draw.demand, capacity.request_rate(at_one, draw)
    flows = zip(("read", "written"), (demand.down, demand.up), capacity.direction_rates(at_one, draw))
    drawn = [f"{'any number of' if rate is None else f'at most {rate:.0f}'} MB/s {way}"
             for way, flow, rate in flows if flow.bytes] or ["no bytes"]  # fmt: skip
    asked = "" if requests is None else f" and {requests:.0f} requests/s"
    took = "" if measured.upload_mb_per_s is None else f", took in {measured.upload_mb_per_s:.0f} MB/s from as many"
    largest = f", the largest need of {demands} kinds of message" if demands > 1 else ""
    busy = f" (other work kept {measured.busy:.0%} of the CPUs busy)" if measured.busy >= 0.05 else ""
    cpu = "" if math.isinf(measured.cpus) else (
        f"; their CPU shares, {capacity.cpu_need(draw):.2g} vCPU at scale 1, take {capacity.cpu_need(draw) / scale:.2g} "
        f"of this machine's {measured.cpus:g} CPUs, within {measured.headroom:.0%}")
    return (f"network {model.profile}: scale {scale:g} (auto: {draw.environments} environments of {draw.memory} MB, "
            f"{demand.what} on {demand.connections} connection{'s' * (demand.connections != 1)}{largest}, "
            f"{demand.requests} requests a message, may draw "
            f"{', '.join(drawn)}{asked} in total at scale 1; this machine's emulator served {measured.mb_per_s:.0f} MB/s "
            f"to {capacity.PROBE_CONNECTIONS} connections{took} and {measured.requests_per_s:.0f} requests/s to "
            f"{capacity.PROBE_CLIENTS} clients just now; at scale {scale:g} the run takes "
            f"{capacity.load(picked, draw, measured):.0%} of that, within {measured.headroom:.0%}{busy}{cpu})")


@contextmanager
def published(backend: str, stack: str, model: NetworkModel):
    """Publish the model of the host running now in the stack's state directory."""
    path = paths.stack_dir(backend, stack) / PUBLISHED_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(model.describe()) + "\n")
    try:
        yield
    finally:
        path.unlink(missing_ok=True)
        (path.parent / LIMITS_FILE).unlink(missing_ok=True)


def publish_limits(backend: str, stack: str, limits: dict[str, str]) -> None:
    """Publish how the host running now holds its environments to Lambda's limits (its
    Summary.limits), beside its model, for `fanout wait --no-host` to record."""
    (paths.stack_dir(backend, stack) / LIMITS_FILE).write_text(json.dumps(limits) + "\n")


def read_published(backend: str, stack: str, name: str = PUBLISHED_FILE) -> dict | None:
    """What the stack's running host published (its model; `name` LIMITS_FILE: its limits):
    None when no host runs (a crashed host's file is ignored, its lock being free)."""
    path = paths.stack_dir(backend, stack) / name
    if not hostlock.is_held(backend, stack):
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def label_of(model: NetworkModel) -> str:
    """The label (fanout.local.network.label) of runs hosted under `model`."""
    return label(True, model.describe())  # hosted here, under a model: simulated
