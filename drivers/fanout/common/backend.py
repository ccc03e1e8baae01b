"""What a backend is: where a stack runs, as the stages, the workloads and the results see it.

A backend (`Backend`) says what differs between running on AWS and rehearsing on this machine:
its endpoint, its credential and account checks, what it does before a deploy and instead of a
destroy, whether it hosts the function here (and the host's lifecycle), how long before a
message counts as lost, and how its numbers are labelled. Each lives in its own wing: AWS in
fanout.cloud.backend, the local backend in fanout.local.backend; the table that turns a name
(the `--backend` flag, run.json's "backend") into one of them is fanout.local.backends. The
protocol sits below every wing so that the cloud wing's code can take a backend as a value
(a stack's checks, Terraform's inputs) without importing the table above it. Adding a backend:
docs/architecture.md, *Adding a backend*.
"""

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol

from rich.console import Console


class Hosting(Protocol):
    """A function host running while a wait (or a sweep's deployment) lasts."""

    network: object  # the host's network model (fanout.local.network.NetworkModel), None: none

    def check(self) -> None:
        """Re-raise the host's failure, if it failed."""

    def idle(self) -> bool:
        """No invocation in flight."""

    def limits(self) -> dict[str, str] | None:
        """How the host held its environments to Lambda's limits, one line each by name (None:
        not known here)."""


class NotHosted:
    """Nothing hosted here (Lambda runs the function, or another command hosts it)."""

    network: object = None  # as Hosting's

    def check(self) -> None:
        pass

    def idle(self) -> bool:
        return True

    def limits(self) -> dict[str, str] | None:
        return None


class Backend(Protocol):
    """What a stage may ask of the place a stack runs (AWS, or the local rehearsal of it)."""

    name: str
    # Its figures are a simulation (the local host under a network model), never AWS measurements:
    # reports label them so, estimates cost nothing, and the network's ground truth applies.
    simulated: bool
    # The function runs here, in a host the wait (or a sweep) starts (hosting()), under a network model.
    hosts_function: bool
    # Its endpoint is the embedded emulator (moto): no --endpoint, no directory buckets, loopback
    # only, no CRT uploads, and a stack's state may be deleted once the emulator is gone.
    embedded_emulator: bool
    lost_after_s: float  # how long the queue stays empty before unaccounted messages are lost
    min_lost_after_s: float  # ... at least, once the records' ingestion lag is known
    poll_seconds: float  # between two looks of a wait
    dlq_wait_seconds: int  # ReceiveMessage's WaitTimeSeconds when peeking at the dead-letter queue
    redeploy_minutes: float  # a sweep cell's redeploy and accounting, for a study's estimate
    percentile_method: str  # how the saved queries' pct() is computed there

    def check_credentials(self, region: str, endpoint: str, stack: str) -> str | None:
        """Who the commands on stack `stack` act as (a line to say), or None when nothing needs
        saying; FanoutError when the credentials are unusable, or of another account than the
        one the stack, when deployed, was deployed in."""

    def check_account(self, region: str, stack: str, concurrency: int, memory: int, endpoint: str) -> list[str]:
        """Notes on whether the account's quotas can host the stack; FanoutError when they cannot."""

    def endpoint(self, given: str) -> str:
        """The endpoint a deploy applies to (before-deploy: the local backend starts its emulator)."""

    def check_stack(self, stack: Any) -> None:  # Any: a fanout.cloud.stack.Stack, a wing above
        """FanoutError when a deployed stack (fanout.cloud.stack.Stack) is no longer there."""

    def before_destroy(self, name: str, recorded: dict, console: Console) -> bool:
        """Checks before destroying stack `name` (its recorded inputs given); True when nothing is
        left to destroy (what it did is said on `console`)."""

    def will_start(self) -> bool:
        """Would a deploy now start what holds the stack (a command's teardown may then stop it)?"""

    def teardown(self, name: str, started: bool, console: Console) -> bool:
        """Remove stack `name` after a demo or a sweep without Terraform when that is quicker
        (`started`: the command started what holds it); True when done so, False: destroy it."""

    def after_purge(self, stack: Any, purged_at: float, say: Callable[[str], None], sleep: Callable[[float], None],
                    clock: Callable[[], float]) -> None:
        """Return once the purge of the queue of `stack` (a Stack) at `purged_at` (epoch s, by
        `clock`) is over and the invocations an abandoned run left running have ended, saying
        how long it may wait with `say`; `sleep` and `clock` are time.sleep and time.time."""

    def hosting(self, stack: Any, network: object, console: Console) -> AbstractContextManager[Hosting]:
        """The function host of `stack` while the block runs, under `network`."""

