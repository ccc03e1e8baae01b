"""A command line's values as the layers below take them: argparse's Namespace is read in the
stages (and cli.py) only, and what a workload's hooks or the cloud wing need of it goes down as
typed values (fanout.workloads.base.Given: the flags' texts by name)."""

import argparse

from fanout.cloud import owner
from fanout.cloud.stack import DEFAULT_STACK
from fanout.local import backends


def texts(args: argparse.Namespace) -> dict[str, str]:
    """The flags given as text, by argparse name (one not given, None, is absent)."""
    return {name: value for name, value in vars(args).items() if isinstance(value, str)}


SWEEPS_OWN = f"default: the sweeps' own stack of the region, {owner.sweep_stack('<region>')} (fanout.cloud.owner)"


def stack_arguments(parser: argparse.ArgumentParser, sweeps_own: bool = False) -> None:
    """--backend and --stack, shared by every command that acts on a deployed stack; with
    `sweeps_own` (sweep, study) --stack defaults to None: the sweeps' own stack."""
    parser.add_argument("--backend", choices=backends.NAMES, default=backends.NAMES[0], help=f"default: {backends.NAMES[0]}")
    if sweeps_own:
        parser.add_argument("--stack", help=f"stack name ({SWEEPS_OWN})")
    else:
        parser.add_argument("--stack", default=DEFAULT_STACK, help=f"stack name (default: {DEFAULT_STACK})")
