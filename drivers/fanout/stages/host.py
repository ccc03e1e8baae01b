"""`fanout host`: run the deployed function locally until its queue is drained.

Ctrl-C stops polling: the invocations in flight finish, their messages are settled, the logs are
sent and the command exits 0. A second Ctrl-C kills the environments at once (their messages
return to the queue after the visibility timeout), sends the logs and exits 130.

Hosting the stack's function takes the stack's host lock (fanout.local.hostlock), as `fanout wait` does:
two hosts of one queue would double the concurrency the run measures.
"""

import argparse
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

from rich.console import Console

from fanout.local import hostlock
from fanout.common import numerals as numbers
from fanout.local import backends
from fanout.cloud import stack
from fanout.stages import command_line
from fanout.common.errors import UsageError
from fanout.local.host import config as function_config
from fanout.local.host import faults
from fanout.local.host.service import ACCOUNT_CONCURRENCY, DEFAULT_IDLE_SECONDS, Host, Summary
from fanout.local.network import options as network_options
from fanout.local.network.model import NetworkModel


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "host", help="local backend: run the function on its SQS queue until the queue is drained",
        description=__doc__)
    command_line.stack_arguments(parser)
    parser.add_argument("--function", help="host this function instead of the stack's (any Python "
                        "function deployed in the emulator)")
    parser.add_argument("--endpoint", help="emulator URL for --function (default: the running emulator)")
    parser.add_argument("--region", default="us-east-1", help="region for --function (default: us-east-1)")
    parser.add_argument("--idle", default=str(DEFAULT_IDLE_SECONDS), metavar="SECONDS",
                        help=f"stop once the queue stays empty this long (default: {DEFAULT_IDLE_SECONDS:g})")
    parser.add_argument("--max-envs", default=str(ACCOUNT_CONCURRENCY), metavar="N",
                        help="cap on concurrent environments, below the function's own limits "
                             f"(default: {ACCOUNT_CONCURRENCY}, Lambda's default account concurrency)")
    network_options.add_arguments(parser)
    parser.set_defaults(func=command, check=check)


def check(args: argparse.Namespace) -> tuple[float, int]:
    """The options and FANOUT_HOST_FAULTS, checked with no side effect (no emulator or stack
    looked up): idle seconds and the environments' cap."""
    idle, max_envs = numbers.decimal(args.idle), numbers.whole(args.max_envs)
    if idle is None or idle <= 0:
        raise UsageError(f"invalid --idle {args.idle!r}: expected a finite number of seconds above 0")
    if max_envs is None or max_envs < 1:
        raise UsageError(f"invalid --max-envs {args.max_envs!r}: expected a whole number, 1 or more")
    network_options.check(args.network, args.network_scale)
    faults.from_environment()
    if not args.function and not backends.get(args.backend).hosts_function:
        raise UsageError(f"--backend {args.backend}: `fanout host` runs functions for the local backend "
                         "only; on AWS, Lambda runs them")
    return idle, max_envs


def command(args: argparse.Namespace) -> int:
    idle, max_envs = check(args)
    config, deployed = _function_config(args)
    console = Console(stderr=True)
    network = network_options.resolve(args.network, args.network_scale, deployed, say=console.print)
    publish = _limits_publisher(deployed)
    with _hosting_lock(deployed, network), console.status(f"hosting {config.name}") as status:

        def progress(s: Summary) -> None:
            status.update(f"hosting {config.name}: {_progress(s)}")
            publish(s.limits)

        host = Host(config, idle_seconds=idle, max_envs=max_envs, progress=progress,
                    warn=lambda message: console.print(f"[yellow]warning:[/] {message}"), network=network)
        with _graceful_interrupt(host, console) as interrupt:
            summary = host.run()
    console.print(f"{config.name}: {_progress(summary)}; {summary.errors} errors, {summary.timeouts} timeouts, "
                  f"{summary.cold_starts} cold starts in {summary.seconds:.1f} s; "
                  f"{network_options.label_of(network)}")
    if interrupt.aborted:
        raise KeyboardInterrupt
    return 0


def _function_config(args: argparse.Namespace) -> tuple[function_config.FunctionConfig, stack.Stack | None]:
    """The function to host, and its deployed stack (None for --function)."""
    if args.function:
        endpoint = args.endpoint or _running_emulator()
        return function_config.load(args.function, endpoint, args.region), None
    deployed = stack.acted_on(backends.get(args.backend), args.stack, stack.no_workload_fields)
    config = function_config.load(deployed.function_name, deployed.endpoint, deployed.region)
    return config, deployed


@contextmanager
def _hosting_lock(deployed: stack.Stack | None, network: NetworkModel) -> Iterator[None]:
    """The stack's host lock, with the network model published for `fanout wait --no-host`."""
    if deployed is None:
        yield
        return
    with hostlock.held(deployed.backend, deployed.stack), \
            network_options.published(deployed.backend, deployed.stack, network):
        yield


def _limits_publisher(deployed: stack.Stack | None) -> Callable[[dict[str, str]], None]:
    """A function that publishes the host's limits (Summary.limits) for `fanout wait --no-host`
    when they change; it does nothing for --function (no stack to publish in)."""
    published: dict[str, str] = {}

    def publish(limits: dict[str, str]) -> None:
        if deployed is not None and limits != published:
            network_options.publish_limits(deployed.backend, deployed.stack, limits)
            published.clear()
            published.update(limits)

    return publish


def _running_emulator() -> str:
    from fanout.local.emulator import control

    endpoint = control.running_endpoint()
    if not endpoint:
        raise UsageError("no emulator is running: start it with `make emulator-up` or pass --endpoint URL")
    return endpoint


def _progress(s: Summary) -> str:
    return (f"{s.messages_deleted}/{s.messages_received} messages done, {s.messages_failed} failed, "
            f"{s.in_flight} in flight (limit {s.concurrency_limit}), {s.environments} environments")


class _graceful_interrupt:
    """First Ctrl-C: stop polling and let in-flight work finish; second: abort, which kills the
    environments and still sends the logs; a third raises KeyboardInterrupt wherever it lands."""

    def __init__(self, host: Host, console: Console) -> None:
        self.host, self.console = host, console
        self.aborted = False

    def __enter__(self) -> "_graceful_interrupt":
        self.previous = signal.signal(signal.SIGINT, self._stop)
        return self

    def __exit__(self, *exc_info: object) -> None:
        signal.signal(signal.SIGINT, self.previous)

    def _stop(self, signum: int, frame: FrameType | None) -> None:
        signal.signal(signal.SIGINT, self._abort)
        self.host.stop()
        self.console.print("stopping after the invocations in flight; Ctrl-C again to stop at once")

    def _abort(self, signum: int, frame: FrameType | None) -> None:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        self.aborted = True
        self.host.abort()
        self.console.print("stopping now: killing the environments, sending their logs")
