"""A command line's values as the layers below take them: argparse's Namespace is read in the
stages (and cli.py) only, and what a workload's hooks or the cloud wing need of it goes down as
typed values (fanout.workloads.base.Given: the flags' texts by name)."""

import argparse


def texts(args: argparse.Namespace) -> dict[str, str]:
    """The flags given as text, by argparse name (one not given, None, is absent)."""
    return {name: value for name, value in vars(args).items() if isinstance(value, str)}
