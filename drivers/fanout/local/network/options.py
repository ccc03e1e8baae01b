"""The --network and --network-scale options of `fanout host`, `wait` and `demo`, and where the
model a run was hosted under is recorded.

`--network-scale auto` (the default) picks the scale by the rule of fanout.local.network.capacity for
the stack's concurrency and memory, measuring this machine first, and says what it picked.
`fanout host` publishes its model in the stack's state directory while it hosts, so that
`fanout wait --no-host` can record it in run.json.
"""

import argparse
import json
from contextlib import contextmanager

from fanout.local import hostlock
from fanout.common import paths, registry as workloads
from fanout.cloud import strategies
from fanout.local.network import capacity
from fanout.local.network.model import NONE, PROFILES, ModelError, NetworkModel, check_scale, from_record, label, load

__all__ = ["NONE", "AUTO", "add_arguments", "check", "from_args", "from_record", "label_of", "load", "published",
           "read_published"]

AUTO = "auto"
SIZED_WORKLOAD = workloads.DEFAULT  # the workload whose draw the automatic scale knows (capacity.Draw: a download's)
PUBLISHED_FILE = "network.json"


def add_arguments(parser: argparse.ArgumentParser, default: str = NONE) -> None:
    parser.add_argument("--network", default=default, metavar="PROFILE|FILE",
                        help=f"local backend: network model, one of {', '.join(PROFILES)} or a .toml/.json "
                             f"model file (default: {default}; see docs/network-model.md)")
    parser.add_argument("--network-scale", default=AUTO, metavar="N|auto",
                        help="divide every modelled rate and burst by N; auto (default) picks the smallest "
                             "scale this machine sustains for the stack's concurrency")


def check(args: argparse.Namespace) -> None:
    """Validate the options before anything else happens (a typo must not cost a deploy)."""
    check_values(args.network, args.network_scale)


def check_values(network: str, scale: str) -> None:
    """`check` for a model name or file and a scale given as text."""
    load(network, 1.0 if scale == AUTO else check_scale(scale))


def from_args(args: argparse.Namespace, stack=None, say=print, workload: str = SIZED_WORKLOAD) -> NetworkModel:
    """The model the options name; `stack` (a deployed fanout.cloud.stack.Stack) for the auto scale."""
    return resolve(args.network, args.network_scale, stack, say, workload)


def resolve(network: str, scale: str, stack=None, say=print, workload: str = SIZED_WORKLOAD) -> NetworkModel:
    """The model `network` names at `scale` (a number, or auto: picked for `stack` running `workload`)."""
    if scale != AUTO:
        return load(network, check_scale(scale))
    model = load(network)
    if not model.shaped:
        return model
    if workload != SIZED_WORKLOAD:
        say(f"network {model.profile}: scale 1 (auto sizes a {SIZED_WORKLOAD} run's draw from the stack's object and "
            f"strategy; a {workload} run's own draw is not modelled, so it runs unscaled: NETWORK_SCALE=N slows it)")
        return model
    if stack is None:
        raise ModelError(f"--network-scale {AUTO} needs a deployed stack to measure; give a number with --function")
    return auto_scaled(model, stack, say)


def auto_scaled(model: NetworkModel, stack, say=print) -> NetworkModel:
    """`model` at the scale the rule picks for `stack` (its concurrency, memory, object and
    default strategy), measured now; says what it picked and the figures it used."""
    draw = capacity.Draw(stack.concurrency, stack.memory, stack.object_size, strategies.parse(stack.default_strategy))
    client = stack.client("s3", max_pool_connections=capacity.PROBE_CLIENTS)
    measured = capacity.measure(client, stack.bucket, stack.object_key, stack.object_size)
    scale = capacity.scale_for(model, draw, measured)
    say(auto_text(model, draw, measured, scale))
    return model.with_scale(scale)


def auto_text(model: NetworkModel, draw, measured, scale: float) -> str:
    """What the automatic scale used: the run's bytes and requests at scale 1 and at the scale
    picked, against what the machine served."""
    at_one, picked = model.with_scale(1.0), model.with_scale(scale)
    mb, requests = capacity.byte_rate(at_one, draw), capacity.request_rate(at_one, draw)
    drawn = "unlimited bytes" if mb is None else f"{mb:.0f} MB/s at peak"
    asked = "" if requests is None else f" and {requests:.0f} requests/s"
    return (f"network {model.profile}: scale {scale:g} (auto: {draw.environments} environments of {draw.memory} MB, "
            f"{draw.choice} on {draw.connections} connection{'s' * (draw.connections != 1)}, {draw.requests} requests a "
            f"message, may draw "
            f"{drawn}{asked} in total at scale 1; this machine's emulator served {measured.mb_per_s:.0f} MB/s to "
            f"{capacity.PROBE_CONNECTIONS} connections and {measured.requests_per_s:.0f} requests/s to "
            f"{capacity.PROBE_CLIENTS} clients just now; at scale {scale:g} the run takes "
            f"{capacity.load(picked, draw, measured):.0%} of that, within {capacity.HEADROOM:.0%})")


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


def read_published(backend: str, stack: str) -> dict | None:
    """What the stack's running host published (None when no host runs: a crashed host's file
    is ignored, its lock being free)."""
    path = paths.stack_dir(backend, stack) / PUBLISHED_FILE
    if not hostlock.is_held(backend, stack):
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def label_of(model: NetworkModel) -> str:
    """The label (fanout.local.network.label) of runs hosted under `model`."""
    return label("local", model.describe())
