"""`fanout demo`: the whole experiment on the local backend, with small defaults.

Starts the emulator (if none runs), deploys the stack DEMO_STACK, fires MULTIPLIER x CONCURRENCY
messages, hosts the function while waiting for every message, prints the report, then destroys
the stack: with `terraform destroy` when the emulator was already running, and by stopping the
emulator (which holds every resource) and deleting the stack's state when the demo started it.
results/<run_id>/ stays.

Teardown always runs: Ctrl-C or SIGTERM at any point (even during deploy) goes to the `finally`
that destroys the stack; further Ctrl-Cs during teardown are ignored so that it completes.
"""

import argparse
import signal
import time
from contextlib import contextmanager

from rich.console import Console

from fanout import deploy, fire, report, runs, stack, wait
from fanout.emulator import control

DEMO_STACK = "demo"
DEFAULTS = {"concurrency": "8", "memory": "1024", "object_size": "16MiB", "multiplier": "10"}
WAIT_TIMEOUT = 600

console = Console()


def register(subparsers) -> None:
    parser = subparsers.add_parser("demo", help="deploy, fire, run, wait, report and destroy on the local backend")
    parser.add_argument("--concurrency", default=DEFAULTS["concurrency"], help="default: 8")
    parser.add_argument("--memory", default=DEFAULTS["memory"], help="function memory in MB (default: 1024)")
    parser.add_argument("--object-size", default=DEFAULTS["object_size"], help="default: 16MiB")
    parser.add_argument("--multiplier", default=DEFAULTS["multiplier"], help="messages per concurrency slot (default: 10)")
    parser.set_defaults(func=run)


def run(args) -> int:
    multiplier = fire.positive_int("--multiplier", args.multiplier)
    target = argparse.Namespace(
        backend="local", stack=DEMO_STACK, concurrency=args.concurrency, memory=args.memory,
        object_size=args.object_size, region="us-east-1", architecture="x86_64", mode="download_file", endpoint="",
    )  # fmt: skip
    timings: dict[str, float] = {}
    started_emulator = control.running_endpoint() is None
    previous_term = signal.signal(signal.SIGTERM, _interrupt)
    try:
        with _step("deploy", timings):
            deploy.run_deploy(target)
            deployed = stack.load("local", DEMO_STACK)
        with _step("fire", timings):
            record = fire.fire(deployed, multiplier * deployed.concurrency, "demo", None, None, fire.DEFAULT_WORKERS)
        with _step("run and wait", timings):
            wait.wait(deployed, record, WAIT_TIMEOUT, host=True)  # hosts the function meanwhile
        with _step("report", timings):
            summary = report.build(deployed, runs.load(record["run_id"]))
            report.show(summary)
            folder = report.write(summary)
    finally:
        signal.signal(signal.SIGINT, _ignore)
        signal.signal(signal.SIGTERM, _ignore)
        try:
            with _step("destroy", timings):
                if started_emulator:
                    # Every resource lives in the emulator's memory: stopping it removes them
                    # all, and destroy then only deletes the state (it notices the emulator is
                    # gone). A full `terraform destroy` would add half a minute for nothing.
                    control.stop()
                    console.print("stopped the emulator the demo started")
                deploy.run_destroy(target)
        finally:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            signal.signal(signal.SIGTERM, previous_term)
    steps = ", ".join(f"{name} {seconds:.0f} s" for name, seconds in timings.items())
    console.print(f"[bold green]demo finished in {sum(timings.values()):.0f} s[/] ({steps}); results in {folder}")
    return 0


@contextmanager
def _step(name: str, timings: dict):
    console.rule(f"[bold]{name}")
    started = time.monotonic()
    try:
        yield
    finally:
        timings[name] = time.monotonic() - started


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def _ignore(signum, frame):
    console.print("[yellow]tearing down; please wait[/]")
