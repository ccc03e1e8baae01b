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
from fanout.common import paths
from fanout.local.network import capacity
from fanout.local.network.model import NONE, PROFILES, ModelError, NetworkModel, check_scale, label, load, parameters

__all__ = ["NONE", "AUTO", "add_arguments", "check", "from_args", "from_record", "label_of", "load", "published",
           "read_published"]

AUTO = "auto"
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


def from_args(args: argparse.Namespace, stack=None, say=print) -> NetworkModel:
    """The model the options name; `stack` (a deployed fanout.cloud.stack.Stack) for the auto scale."""
    return resolve(args.network, args.network_scale, stack, say)


def resolve(network: str, scale: str, stack=None, say=print) -> NetworkModel:
    """The model `network` names at `scale` (a number, or auto: picked for `stack`)."""
    if scale != AUTO:
        return load(network, check_scale(scale))
    model = load(network)
    if not model.shaped:
        return model
    if stack is None:
        raise ModelError(f"--network-scale {AUTO} needs a deployed stack to measure; give a number with --function")
    return auto_scaled(model, stack, say)


def auto_scaled(model: NetworkModel, stack, say=print) -> NetworkModel:
    """`model` at the scale the rule picks for `stack`, measured now; says what it picked."""
    measured = capacity.measure(stack.client("s3"), stack.bucket, stack.object_key)
    scale = capacity.scale_for(model, stack.memory, stack.concurrency, measured)
    total = capacity.total_rate(model.with_scale(1.0), stack.memory, stack.concurrency)
    modelled = "an unlimited total" if total is None else f"{total:.0f} MB/s in total at scale 1"
    say(f"network {model.profile}: scale {scale:g} (auto: {stack.concurrency} environments of {stack.memory} MB "
        f"may draw {modelled}; the total must stay within {capacity.HEADROOM:.0%} of the "
        f"{measured:.0f} MB/s this machine's emulator served just now)")
    return model.with_scale(scale)


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


def from_record(network: dict | None) -> NetworkModel:
    """The model a run.json "network" entry describes (none when absent)."""
    if not network:
        return load(NONE)
    return NetworkModel(network["profile"], network["scale"], parameters(network["parameters"], "run.json"))


def label_of(model: NetworkModel) -> str:
    """The label (fanout.local.network.label) of runs hosted under `model`."""
    return label("local", model.describe())
