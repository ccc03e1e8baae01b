"""The local backend (fanout.common.backend.Backend): the stack lives in the embedded emulator,
which a deploy starts, and the function runs in a host that the wait starts here, under a network
model; every figure it gives is a simulation.
"""

import threading
from contextlib import contextmanager

from rich.console import Console

from fanout.cloud import terraform
from fanout.local import hostlock
from fanout.local.emulator import control, health


class Hosted:
    """The local function host on a background thread; check() re-raises its failure."""

    def __init__(self, stack, network, console: Console):
        from fanout.local.host import Host, load

        config = load(stack.function_name, stack.endpoint, stack.region)
        # Never stop on an idle queue: wait decides when the run is over.
        self.host = Host(config, idle_seconds=float("inf"), warn=lambda m: console.print(f"[yellow]host:[/] {m}"),
                         network=network)
        self.network = network
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="fanout-host", daemon=True)

    def _run(self):
        try:
            self.host.run()
        except BaseException as exc:  # handed to the waiting thread by check()
            self.error = exc

    def check(self):
        if self.error:
            raise self.error

    def idle(self) -> bool:
        """No invocation in flight: the environments wait for work."""
        return self.host.summary.in_flight == 0

    def limits(self) -> dict[str, str]:
        """How the host's environments were held to Lambda's limits (its Summary.limits)."""
        return dict(self.host.summary.limits)


class LocalBackend:
    name = "local"
    simulated = True
    hosts_function = True
    embedded_emulator = True
    lost_after_s = 5.0  # the emulator's logs arrive at once
    min_lost_after_s = 5.0
    poll_seconds = 1.0
    dlq_wait_seconds = 0
    redeploy_minutes = 0.25  # docs/sweep.md
    percentile_method = "exact, linear interpolation between closest ranks"

    def check_credentials(self, region: str, endpoint: str, stack: str) -> str | None:
        return None  # the emulator takes fixed test credentials

    def check_account(self, region: str, stack: str, concurrency: int, memory: int, endpoint: str) -> list[str]:
        return []

    def endpoint(self, given: str) -> str:
        return control.start()

    def check_stack(self, stack) -> None:
        health.check_stack(stack)

    def before_destroy(self, name: str, recorded: dict, console) -> bool:
        """The emulator keeps everything in memory: once it stops (or a new one runs elsewhere),
        the stack's resources no longer exist anywhere and its state describes nothing."""
        running = control.running_endpoint()
        if running is not None and recorded.get("endpoint") in (None, running):
            return False
        terraform.forget(self, name)
        console.out(f"The emulator that held stack {name!r} is no longer running, and its resources went "
                    "with it; deleted the stack's local state.", highlight=False)  # fmt: skip
        return True

    def will_start(self) -> bool:
        return control.running_endpoint() is None

    def teardown(self, name: str, started: bool, console) -> bool:
        """The emulator this command started holds every resource: stopping it removes them all
        (a destroy would add half a minute for nothing)."""
        if not started:
            return False
        control.stop()
        terraform.forget(self, name)
        console.out("stopped the emulator this command started; deleted the stack's state", highlight=False)
        return True

    def after_purge(self, stack, purged_at: float, say, sleep, clock) -> None:
        """The emulator purges at once, and the host that ran the abandoned invocations stopped
        with the process that was interrupted."""

    @contextmanager
    def hosting(self, stack, network, console):
        with hostlock.held(self.name, stack.stack):
            hosted = Hosted(stack, network, console)
            hosted.thread.start()
            try:
                yield hosted
            finally:
                hosted.host.stop()  # in-flight invocations finish and their logs are flushed
                hosted.thread.join()
