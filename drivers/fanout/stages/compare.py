"""`fanout compare A B`: did a figure change between the runs A and B, with confidence intervals?

A and B are run ids or `latest`, `sweep:<id|latest>` for a sweep's runs, or several of them
comma-separated (fanout.stages.report.runs_of resolves each). The runs' one workload compares them:
comparing is a capability of its driver (`compare(a_ids, b_ids)`, fanout.workloads.registry), and a
workload that cannot be compared says so in its own words. Runs made under different networks
(another model or scale, or AWS against a simulation) are refused unless `--force`: their
difference would be the networks', not what A and B changed.
"""

import argparse
from rich.console import Console

from fanout.results import run_folders as runs, terminal
from fanout.stages import command_line, report as reporting
from fanout.common.errors import UsageError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("compare", help="change in median and p99 throughput between two runs, with CIs")
    parser.add_argument("a", metavar="A", help="run id or 'latest', or sweep:<id|latest> (several, comma-separated): "
                                                 "the baseline")
    parser.add_argument("b", metavar="B", help="the same for the side compared with A (changes are B - A)")
    parser.add_argument("--force", action="store_true", help="compare runs made under different networks too")
    reporting.add_report_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    missing = [side for side, refs in (("A", args.a), ("B", args.b)) if not refs.strip()]
    if missing:
        raise UsageError(f"compare needs {' and '.join(missing)}: `make compare A=<runs> B=<runs>`, each side "
                         "a run id, 'latest' or sweep:<id|latest>, several comma-separated")  # fmt: skip
    a, b = reporting.resolve_all(args.a), reporting.resolve_all(args.b)
    workload = reporting.workload_of(a + b)
    options = workload.report_options(command_line.texts(args))
    if not args.force:
        check_networks(a, b)
    terminal.show(workload.compare(a, b, options), Console())
    return 0


def check_networks(a: list[str], b: list[str]) -> None:
    """UsageError naming the networks when A's runs were made under other networks than B's. (A
    side of several networks, a sweep whose deployments took different scales, compares with a
    side of the same ones: cells are matched on the network where it varies within a side.)"""
    sides = {side: sorted({runs.load(run_id).network_label() for run_id in ids}) for side, ids in (("A", a), ("B", b))}
    if sides["A"] != sides["B"]:
        said = "; ".join(f"{side}: {' and '.join(labels)}" for side, labels in sides.items())
        raise UsageError(f"A and B were made under different networks ({said}): their difference would be the "
                         "networks'; `make compare ... FORCE=1` (--force) compares them anyway")
