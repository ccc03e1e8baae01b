"""`fanout demo`: the whole experiment on the local backend, with small defaults: deploy, fire,
host and wait, report, then tear down, always (Ctrl-C and SIGTERM included), keeping
results/<run_id>/. The steps, the teardown and the exit codes: docs/experiment.md, *demo and
Ctrl-C*, and docs/local-backend.md.
"""

import argparse
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from fanout.stages import deploy, fire, report as reporting, wait
from fanout.common import interrupts
from fanout.workloads import registry as workloads
from fanout.cloud import params, terraform
from fanout.results import run_folders as runs, run_record, terminal
from fanout.local.emulator import control
from fanout.local.network import options as network_options

DEMO_STACK = "demo"
DEFAULTS = {"concurrency": "8", "memory": "1024", "object_size": "16MiB", "multiplier": "10"}
WAIT_TIMEOUT = 600
# Short, so that a failing message reaches the DLQ within the wait: 5 receives x 6 x 10 s = 5 min.
# A 16 MiB object downloads in well under a second locally.
FUNCTION_TIMEOUT = 10


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("demo", help="deploy, fire, run, wait, report and destroy on the local backend")
    parser.add_argument("--concurrency", default=DEFAULTS["concurrency"], help="default: 8")
    parser.add_argument("--memory", default=DEFAULTS["memory"], help="function memory in MB (default: 1024)")
    parser.add_argument("--object-size", default=DEFAULTS["object_size"], help="default: 16MiB")
    parser.add_argument("--multiplier", default=DEFAULTS["multiplier"], help="messages per concurrency slot (default: 10)")
    network_options.add_arguments(parser)  # lambda-2024 at the scale this machine sustains, said on screen
    deploy.add_verbose(parser)
    parser.set_defaults(func=run, check=check)


@dataclass(frozen=True)
class DemoParams:
    """The demo, checked: the stack it deploys, its messages per concurrency slot, and the network
    model the local host runs them under (--network, --network-scale: network_options.resolve)."""

    inputs: params.DeployParams
    multiplier: int
    network: str | None = None
    network_scale: str = network_options.AUTO


def check(args: argparse.Namespace) -> DemoParams:
    """The demo's options, checked with no side effect."""
    multiplier = fire.positive_int("--multiplier", args.multiplier)
    network_options.check(args.network, args.network_scale)
    inputs = params.parse(DEMO_STACK, "us-east-1", args.concurrency, args.memory, args.object_size, "x86_64",
                          FUNCTION_TIMEOUT, deploy.workload_deploy({}))  # fmt: skip
    return DemoParams(inputs, multiplier, args.network, args.network_scale)


def run(args: argparse.Namespace) -> int:
    console = Console()
    demo = check(args)
    timings: dict[str, float] = {}
    started_emulator = control.running_endpoint() is None
    with interrupts.sigterm_as_ctrl_c(), terraform.output_to_log("local", DEMO_STACK, args.verbose):
        try:
            accounting, record, folder = experiment(demo, timings, console)
        finally:
            with interrupts.ignored("tearing down; please wait"), _step(console, "teardown", timings):
                deploy.tear_down("local", DEMO_STACK, started_emulator, console)
    steps = ", ".join(f"{name} {seconds:.0f}" for name, seconds in timings.items())
    console.print(f"demo took {sum(timings.values()):.0f} s ({steps})", highlight=False)
    console.print(f"results: {folder}", highlight=False)
    check_accounted(accounting, record.run_id)
    return 0


def experiment(demo: DemoParams, timings: dict[str, float],
               console: Console) -> tuple[wait.Accounting, run_record.RunRecord, Path]:
    """Deploy, fire, run and wait, report (deploy -> Stack, fire -> RunRecord, wait -> Accounting,
    report -> RunSummary), each step under a rule on `console` and timed into `timings`; returns
    the wait's accounting, run.json and the results folder."""
    with _step(console, "deploy", timings):
        deployed = deploy.deploy(demo.inputs, "local", console=console)
        driver = workloads.get(workloads.DEFAULT)  # the demo fires the default workload
        network = network_options.resolve(demo.network, demo.network_scale, deployed, console.print,
                                          lambda: [driver.default_demand(deployed)])  # fmt: skip
    with _step(console, "fire", timings):
        record = fire.fire(deployed, fire.FireParams(demo.multiplier * deployed.concurrency, "demo"), console=console)
    with _step(console, "run and wait", timings):
        # hosts the function meanwhile
        accounting = wait.wait(deployed, record, wait.WaitParams(WAIT_TIMEOUT, host=True, network=network), console=console)
    with _step(console, "report", timings):
        summary = reporting.fetch(deployed, runs.load(record.run_id))
        terminal.show(reporting.sections_of(summary), console)  # its tables
        reporting.render(summary)  # its files and plots
        folder = runs.run_dir(record.run_id)
    return accounting, record, folder


def check_accounted(accounting: wait.Accounting, run_id: str) -> None:
    """Fail a demo whose wait left messages unaccounted for (wait listed them)."""
    wait.check_accounted(accounting, run_id, WAIT_TIMEOUT, prefix="demo failed: ")


@contextmanager
def _step(console: Console, name: str, timings: dict[str, float]) -> Iterator[None]:
    console.rule(f"[bold]{name}")
    started = time.monotonic()
    try:
        yield
    finally:
        timings[name] = time.monotonic() - started
