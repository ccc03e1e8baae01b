"""`fanout wait`: wait until every message of a run is accounted for.

A message is accounted for by its record with outcome "done", by its place in the dead-letter
queue, or by an "error" record on its last allowed receive: `outcome` is the envelope field every
workload sets (docs/workloads.md), so nothing here depends on what a workload measures. A seq
the logs, the DLQ and an idle queue all know nothing of is lost, and wait ends at once. On the
local backend wait also hosts the function. The rules, timeouts and outputs: docs/experiment.md,
*wait*.
"""

import argparse
import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import cast

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from fanout.results import deadletters, run_cost, run_folders as runs, run_record
from fanout import insights
from fanout.common import interrupts, numerals as numbers, queue_state
from fanout.common.backend import Hosting, NotHosted
from fanout.local import backends
from fanout.workloads import registry as workloads
from fanout.cloud import stack as stacks
from fanout.stages import command_line
from fanout.cloud.stack import Stack
from fanout.common.errors import FanoutError, UsageError
from fanout.local.network import capacity, options as network_options
from fanout.local.network.model import NetworkModel

QUERY = "message-outcomes"
# The query's `ended` value that means done: the outcome field; a record from before it (when
# one workload was the only one) ended a delivery with an event named after the run's workload,
# the one record such a delivery wrote on success (done_values).
DONE = "done"
PLATFORM_QUERY = "platform-errors"
# How long the main queue must stay empty before unaccounted seqs are called lost: the logs of
# the last invocations must have arrived (Insights lags on AWS, and SQS's counts are approximate).
# Until the run's records show their ingestion lag, the backend's lost_after_s; then LAG_FACTOR
# times the longest lag seen plus a poll, at least its min_lost_after_s (see lost_after).
LAG_FACTOR = 3
DEFAULT_TIMEOUT = 1800
MISSING_FILE = "missing.json"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("wait", help="wait until every message of a run is done, failed or dead-lettered")
    command_line.stack_arguments(parser)
    parser.add_argument("--run", default=runs.LATEST, help="run id, or 'latest' (default)")
    parser.add_argument(
        "--timeout", help=f"give up after this many seconds (default: {DEFAULT_TIMEOUT})"
    )
    parser.add_argument(
        "--no-host",
        action="store_true",
        help="local backend: do not host the function here (it is hosted elsewhere, e.g. by `make run`)",
    )
    network_options.add_arguments(parser)
    parser.set_defaults(func=run, check=check)


def check(args: argparse.Namespace) -> float:
    """wait's options, checked with no side effect (the run and the stack are not looked up);
    the timeout in seconds. The host it runs reads FANOUT_HOST_FAULTS: checked too."""
    timeout = DEFAULT_TIMEOUT if args.timeout is None else timeout_seconds(args.timeout)
    network_options.check(args.network, args.network_scale)
    hosts_here = _hosts_here(args.backend, args.no_host)
    if args.network not in (None, network_options.NONE) and not hosts_here:
        raise UsageError(f"--network {args.network} shapes the environments of a host this command runs; "
                         "with --no-host give it to `make run`, on AWS Lambda's own network applies")
    if hosts_here:
        from fanout.local.host import faults

        faults.from_environment()
    return timeout


def _hosts_here(backend: str, no_host: bool) -> bool:
    """Whether this command hosts the function while it waits (on `backend`, unless --no-host)."""
    return backends.get(backend).hosts_function and not no_host


def run(args: argparse.Namespace) -> int:
    console = Console()
    timeout = check(args)
    record = runs.load(args.run)
    stack = stacks.acted_on(backends.get(args.backend), args.stack, workloads.stack_fields)
    runs.check_same_stack(record, stack)
    hosting = _hosts_here(args.backend, args.no_host)
    network = (network_options.resolve(args.network, args.network_scale, stack, console.print, lambda: [demand(record)])
               if hosting else None)
    params = WaitParams(timeout, host=hosting, network=network, chosen_timeout=args.timeout is not None)
    with interrupts.sigterm_as_ctrl_c():  # the host it runs stops cleanly on either
        accounting = wait(stack, record, params, console=console)
    check_accounted(accounting, record.run_id, timeout)
    return 0


def demand(record: run_record.RunRecord) -> capacity.Demand:
    """What one message of the run asks of the network (its workload's driver says), for the
    automatic network scale."""
    return workloads.get(record.parameters.workload).demand(run_cost.cell(record))


def check_accounted(accounting: "Accounting", run_id: str, timeout: float, prefix: str = "") -> None:
    """Fail when the wait ended with messages lost or unaccounted for (it listed them already)."""
    if accounting.lost:
        raise FanoutError(
            f"{prefix}{len(accounting.lost)} of {len(accounting.sent)} messages of run {run_id} are lost "
            f"(not in the queue, no record, not dead-lettered): seqs {runs.seq_ranges(accounting.lost)}"
        )
    missing = accounting.in_flight()
    if missing:
        raise FanoutError(
            f"{prefix}{len(missing)} of {len(accounting.sent)} messages of run {run_id} are unaccounted "
            f"for after {timeout:g} s ({accounting.summary()})"
        )


@dataclass
class Accounting:
    """Where every sent message of a run is, as far as the logs and the DLQ tell."""

    sent: list[int]
    done: set[int] = field(default_factory=set)
    failed: set[int] = field(default_factory=set)  # retries exhausted, not yet seen in the DLQ
    retrying: set[int] = field(default_factory=set)  # failed with receives left, no outcome yet
    dead_lettered: set[int] = field(default_factory=set)
    duplicates: int = 0  # extra "done" deliveries (SQS delivers at least once)
    lost: set[int] = field(default_factory=set)  # no record, not in the DLQ, and the queue is empty
    platform_errors: dict[str, int] = field(default_factory=dict)  # crashes, timeouts, init failures
    last_record_ms: int | None = None  # the latest record's log timestamp (runs.run_window ends there)
    ingestion_lag_ms: int | None = None  # the longest time a record took to reach the logs

    def in_flight(self) -> list[int]:
        accounted = self.done | self.failed | self.dead_lettered | self.lost
        return [seq for seq in self.sent if seq not in accounted]

    def accounted(self) -> int:
        return len(self.sent) - len(self.in_flight()) - len(self.lost)

    def summary(self) -> str:
        lost = f", {len(self.lost)} lost" if self.lost else ""
        platform = "".join(f", {count} {kind}" for kind, count in sorted(self.platform_errors.items()))
        return (
            f"{len(self.done)} done, {len(self.failed)} failed, {len(self.dead_lettered)} dead-lettered, "
            f"{len(self.in_flight())} in flight{lost}{platform}"
        )

    def as_record(self) -> run_record.RunAccounting:
        """As run.json (and a sweep's manifest) keep it."""
        return run_record.RunAccounting(
            done=len(self.done), failed=sorted(self.failed), dead_lettered=sorted(self.dead_lettered),
            in_flight=self.in_flight(), lost=sorted(self.lost), duplicate_download_records=self.duplicates,
            platform_errors=dict(self.platform_errors), last_record_ms=self.last_record_ms,
            ingestion_lag_ms=self.ingestion_lag_ms,
        )  # fmt: skip


def done_values(record: run_record.RunRecord) -> tuple[str, str]:
    """The `ended` values of a delivery of `record`'s run that succeeded (DONE)."""
    return DONE, record.parameters.workload


def account(stack: Stack, record: run_record.RunRecord) -> Accounting:
    """One look at the logs and the DLQ."""
    accounting = Accounting(sent=record.sent_seqs())
    rows = outcome_rows(stack, record)
    for row in rows:
        seq, records = int(row["seq"]), int(row["records"])
        if row["ended"] in done_values(record):
            accounting.done.add(seq)
            accounting.duplicates += records - 1
        elif int(row["receive_count_max"] or 0) >= stack.max_receive_count:
            accounting.failed.add(seq)
        else:
            accounting.retrying.add(seq)
    dead = deadletters.peek(stack, record.run_id, wanted=set(accounting.sent) - accounting.done)
    accounting.dead_lettered = dead - accounting.done
    accounting.failed -= accounting.done | accounting.dead_lettered
    accounting.retrying -= accounting.done | accounting.failed | accounting.dead_lettered
    accounting.last_record_ms = _largest(rows, "last_ms")
    accounting.ingestion_lag_ms = _largest(rows, "lag_ms_max")
    return accounting


def _largest(rows: list[dict], name: str) -> int | None:
    """The largest value of column `name` (None when no row has one: no records, or no ingestion
    times, as in events written by hand)."""
    values = [int(row[name]) for row in rows if row.get(name) is not None]
    return max(values, default=None)


def lost_after(backend: str, lag_ms: int | None) -> float:
    """Seconds the queue must stay empty before unaccounted seqs are lost, for records reaching
    the logs `lag_ms` after they were written (None: not known yet)."""
    platform = backends.get(backend)
    if lag_ms is None:
        return platform.lost_after_s
    return max(platform.min_lost_after_s, LAG_FACTOR * lag_ms / 1000 + platform.poll_seconds)


def platform_errors(stack: Stack, record: run_record.RunRecord) -> dict[str, int]:
    """Crashes, timeouts and init failures the platform logged in the run's window, by kind."""
    rows = insights.run(stack, insights.load_query(PLATFORM_QUERY), *runs.run_window(record)).rows
    return {row["error_type"]: int(row["errors"]) for row in rows}


def slowest_outcome(stack: Stack) -> tuple[int, int]:
    """(receives, visibility timeout in s): a message failing every time reaches the DLQ after
    receives x visibility seconds."""
    attributes = stack.client("sqs").get_queue_attributes(QueueUrl=stack.queue_url, AttributeNames=["VisibilityTimeout"])
    return stack.max_receive_count, int(attributes["Attributes"]["VisibilityTimeout"])


def outcome_rows(stack: Stack, record: run_record.RunRecord) -> list[dict]:
    """Rows of the message-outcomes query for the run, one query per slice of seqs
    (insights.seq_slices, which the cost estimate counts)."""
    query = insights.load_query(QUERY)
    start_ms, end_ms = runs.run_window(record)
    rows = []
    for seqs in insights.seq_slices(record.parameters.messages):
        expr = f'run_id = "{record.run_id}" and seq >= {seqs.start} and seq < {seqs.stop}'
        rows += insights.run(stack, insights.restrict(query, expr), start_ms, end_ms).rows
    return rows


@dataclass(frozen=True)
class WaitParams:
    """How a wait waits: at most `timeout` seconds (`chosen_timeout`: the user gave it, then one
    shorter than a failing message's way to the DLQ is said at once; a default nobody chose is
    not); on the local backend, with `host`, hosting the function here for the wait (fresh
    environments each time), its S3 traffic following `network` (None: none)."""

    timeout: float
    host: bool = False
    network: NetworkModel | None = None
    chosen_timeout: bool = False


def wait(stack: Stack, record: run_record.RunRecord, params: WaitParams, hosted: Hosting | None = None,
         console: Console | None = None) -> Accounting:
    """Poll until every sent message of the run (`record`) is accounted for or the wait's
    timeout passes (`params`); its accounting. `hosted` is a host started by `hosting()` that
    outlives the wait (warm environments carried from one run to the next), under its own
    network. Progress goes to `console` (the command's; None: the terminal)."""
    console = console or Console()
    timeout, network = params.timeout, params.network
    deadline = time.monotonic() + timeout
    sent = len(record.sent_seqs())
    host = params.host or hosted is not None
    where = ", hosting the function here" if host else ""
    console.print(f"run {record.run_id}: waiting for {sent} messages{where}", highlight=False)
    receives, visibility = slowest_outcome(stack)
    noted = params.chosen_timeout and _note_slowest(console, receives, visibility, timeout)
    _note_unsent(console, record)
    empty_since = None
    network = cast(NetworkModel | None, hosted.network) if hosted else network  # Hosting's is typed below local/
    with (nullcontext(hosted) if hosted else _hosting(stack, host, network, console) as running,
          _progress(console) as progress):
        record = _record_network(console, stack, record, host, network)  # once the host lock is held
        task = progress.add_task("waiting", total=sent)
        while True:
            running.check()
            interrupts.raise_if_dropped()
            empty_since = (empty_since or time.monotonic()) if queue_state.is_idle(stack.client("sqs"), stack.queue_url) else None
            accounting = account(stack, record)
            if empty_since and time.monotonic() - empty_since >= lost_after(stack.backend, accounting.ingestion_lag_ms):
                accounting.lost = set(accounting.in_flight())
            progress.update(task, completed=accounting.accounted(), description=accounting.summary())
            if accounting.retrying and not noted:
                noted = _note_slowest(console, receives, visibility, timeout, len(accounting.retrying))
            if _finished(accounting, host) or time.monotonic() >= deadline:
                break
            time.sleep(backends.get(stack.backend).poll_seconds)
    accounting.platform_errors = platform_errors(stack, record)  # once: another full scan of the logs
    record = _record_limits(stack, record, running)
    runs.update(record.but(accounting=accounting.as_record()))
    missing = accounting.in_flight()
    console.print(f"[{'red' if missing or accounting.lost else 'green'}]{accounting.summary()}[/], of {sent} sent")
    if accounting.duplicates:
        console.print(f"[yellow]note:[/] {accounting.duplicates} messages were completed twice (SQS delivers at least once)")
    if accounting.lost:
        console.print(f"[red]lost seqs:[/] {runs.seq_ranges(accounting.lost)} (deleted from the queue without a record)",
                      highlight=False)
    _record_missing(console, record.run_id, missing)
    return accounting


def _record_network(console: Console, stack: Stack, record: run_record.RunRecord, host: bool,
                    network: NetworkModel | None) -> run_record.RunRecord:
    """run.json's "network": the model this wait hosts under, or the one the stack's running
    host published; the label every report of the run shows comes from it. Returns the record
    as saved."""
    if not backends.get(stack.backend).hosts_function:
        return record
    if host:
        record = record.but(network=(network or network_options.load(network_options.NONE)).describe())
    else:
        record = record.but(network=network_options.read_published(stack.backend, stack.stack) or record.network)
    runs.update(record)
    console.print(network_options.label_of(network_options.from_record(record.network)), highlight=False)
    return record


def _record_limits(stack: Stack, record: run_record.RunRecord, running: Hosting) -> run_record.RunRecord:
    """run.json's "limits": how the host held the environments to Lambda's limits, this wait's
    own or the one the stack's running host published (every report states them beside the
    network); nothing on AWS, where Lambda holds them."""
    if not backends.get(stack.backend).hosts_function:
        return record
    limits = running.limits() or network_options.read_published(stack.backend, stack.stack, network_options.LIMITS_FILE)
    return record.but(limits=limits) if limits else record


def _note_slowest(console: Console, receives: int, visibility: int, timeout: float, retrying: int = 0) -> bool:
    """Say how long a message that keeps failing takes to reach the DLQ, when it matters: some
    (`retrying`) failed and will be received again, or --timeout is shorter than that. Returns
    whether it was said, so that it is said once."""
    slowest = receives * visibility
    if not retrying and slowest <= timeout:
        return False
    why = f"{retrying} failing, retries pending" if retrying else "slowest outcome"
    console.print(f"[yellow]note:[/] {why}: a message failing every time reaches the dead-letter queue after "
                  f"{receives} receives x {visibility} s visibility = {_duration(slowest)}", highlight=False)
    if slowest > timeout:
        console.print(f"[yellow]note:[/] that is longer than --timeout {timeout:g} s; deploy with a shorter "
                      "FUNCTION_TIMEOUT (visibility = 6 x it) to see failures through", highlight=False)
    return True


def _duration(seconds: int) -> str:
    """3 h 0 min 0 s, 1 min 30 s, 45 s."""
    if seconds < 60:
        return f"{seconds} s"
    hours, rest = divmod(seconds, 3600)
    return (f"{hours} h " if hours else "") + f"{rest // 60} min {rest % 60} s"


def _record_missing(console: Console, run_id: str, missing: list[int]) -> None:
    """Print the missing seqs in short and write all of them to missing.json (or remove the
    missing.json of an earlier wait that timed out, once nothing is missing)."""
    path = runs.run_dir(run_id) / MISSING_FILE
    if not missing:
        path.unlink(missing_ok=True)
        return
    runs.write_file(run_id, MISSING_FILE, missing)
    console.print(f"missing seqs: {runs.seq_ranges(missing)}", highlight=False)
    console.print(f"  all {len(missing):,} listed in {path}", highlight=False)


def _note_unsent(console: Console, record: run_record.RunRecord) -> None:
    """Say which seqs are not waited for: fire did not send them, or was killed while sending."""
    unsent = record.failed_seqs
    if record.send_status == "sending":
        console.print("[yellow]note:[/] fire did not finish; waiting only for the seqs it recorded as sent")
    elif unsent:
        console.print(f"[yellow]note:[/] {len(unsent)} seqs were never sent; not waiting for them")


def _finished(accounting: Accounting, hosting: bool) -> bool:
    """Every message accounted for; when hosting here, also every exhausted one moved to the DLQ:
    the move happens on the next receive, and no one receives once this host stops."""
    return not accounting.in_flight() and not (hosting and accounting.failed)


def hosting(stack: Stack, network: NetworkModel | None = None,
            console: Console | None = None) -> AbstractContextManager[Hosting]:
    """The function host of `stack` (its backend's) until the block ends, its warnings on
    `console`; pass it to wait() to keep its environments across runs."""
    return backends.get(stack.backend).hosting(stack, network, console or Console())


def _hosting(stack: Stack, enabled: bool, network: NetworkModel | None,
             console: Console) -> AbstractContextManager[Hosting]:
    return hosting(stack, network, console) if enabled else nullcontext(NotHosted())


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
    )


def timeout_seconds(text: str) -> float:
    value = numbers.decimal(text)
    if value is None or not value > 0:
        raise UsageError(f"invalid --timeout {text!r}: expected a positive, finite number of seconds")
    return value
