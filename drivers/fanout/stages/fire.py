"""`fanout fire`: flood the stack's queue with one message per measurement, and record the run.

Every message carries the run id and its seq, so that each record matches the message that
caused it and `wait` can account for every seq; a seq that cannot be sent is recorded in
run.json, never dropped silently. The message body, retries, checkpoints and
`--inject-failures`: docs/experiment.md, *fire*.
"""

import argparse
import json
import random
import re
import threading
import time
from concurrent import futures
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from fractions import Fraction

from botocore.exceptions import BotoCoreError, ClientError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from botocore.client import BaseClient  # no types of its own: Any to mypy, named for the reader

from fanout.cloud import costs, params
from fanout.cloud.stack import Stack
from fanout.common import interrupts, numerals as numbers
from fanout.local import backends
from fanout.workloads import registry as workloads
from fanout.workloads.base import Given
from fanout.stages import command_line, deploy
from fanout.results import run_folders as runs, run_record
from fanout.cloud import stack as stacks
from fanout.common.errors import FanoutError, UsageError

BATCH = 10  # SendMessageBatch takes at most 10 entries
ATTEMPTS = 6  # per entry, on top of botocore's own retries of a throttled call
DEFAULT_WORKERS = 16
DEFAULT_MULTIPLIER = 10
CHECKPOINT_SECONDS = 1.0  # run.json is rewritten this often while sending
# A tag labels a cell in records, query groups (`by experiment_tag`), tables and plot labels, never
# a file name. Spaces inside are allowed (a published study's tag was `experiment 01`); quotes,
# backslashes and control characters are not: they would need escaping in Logs Insights queries,
# shell lines and CSV cells, and a line break would split a table row.
TAG_MAX_CHARS = 64
_TAG = re.compile(rf"[A-Za-z0-9._-](?:[A-Za-z0-9._ -]{{0,{TAG_MAX_CHARS - 2}}}[A-Za-z0-9._-])?")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("fire", help="send the messages of one run to the stack's queue")
    command_line.stack_arguments(parser)
    parser.add_argument("--messages", help="messages to send (default: MULTIPLIER x the stack's concurrency)")
    parser.add_argument("--multiplier", default=str(DEFAULT_MULTIPLIER), help="messages per concurrency slot (default: 10)")
    parser.add_argument("--tag", default="default", help="experiment tag carried by every message and record")
    parser.add_argument("--workload", default=workloads.DEFAULT,
                        help=f"what each message measures: {', '.join(workloads.DRIVERS)} (default: {workloads.DEFAULT})")
    for workload in workloads.DRIVERS.values():
        workload.add_fire_arguments(parser)
    options = sorted({*(name for workload in workloads.DRIVERS.values() for name in workload.OPTIONS),
                      *workloads.deploy_option_names()})  # fmt: skip
    parser.add_argument(
        "--deploy-level", action="append", default=[], choices=options, metavar="OPTION",
        help="an option given here whose value is the deployment's too (make passes STRATEGY and the workloads' "
        "deploy-level options, which deploy reads, with it): a run of a workload without that option ignores it "
        f"rather than refusing it; one of {', '.join(options)}, repeatable",
    )  # fmt: skip
    params.add_fire_checks(parser, workloads.deploy_only_option_names())
    parser.add_argument("--yes", action="store_true", help="send even when the run is large or costly")
    parser.add_argument("--workers", default=str(DEFAULT_WORKERS), help="parallel SendMessageBatch calls (default: 16)")
    parser.add_argument("--remote-copy", action="store_true",
                        help="objects the run reads in another region's bucket (seqread FROM=remote): copy the missing "
                        "ones server-side from the stack's bucket, not upload them from here (faster; billed as "
                        "inter-region transfer, which it states)")  # fmt: skip
    parser.add_argument(
        "--inject-failures",
        metavar="FRACTION",
        help="for testing the failure path: the handler fails this fraction of the messages (0 < FRACTION <= 1)",
    )
    parser.set_defaults(func=run, check=check)


@dataclass(frozen=True)
class FireParams:
    """What one run sends: `messages` messages tagged `tag` of `workload`, with its options
    `options` (its driver's, as JSON values: download's strategy and pin, another's message
    fields). `sweep` (sweep id and cell index) is recorded in run.json as given."""

    messages: int
    tag: str = "default"
    inject_failures: Fraction | None = None
    workers: int = DEFAULT_WORKERS
    sweep: run_record.RunSweep | None = None
    workload: str = workloads.DEFAULT
    options: dict | None = None
    remote_copy: bool = False  # objects a run needs in another region: copied from the stack's bucket, not uploaded


@dataclass(frozen=True)
class Checked:
    """fire's command line, checked before the stack is looked up."""

    messages: int | None  # None: MULTIPLIER x the stack's concurrency
    multiplier: int
    workers: int
    inject_failures: Fraction | None
    workload: workloads.Driver
    options: object  # the workload driver's options_from(args)


def check(args: argparse.Namespace) -> Checked:
    """Every value fire can check without the stack, with no side effect (nothing sent, no AWS
    call): what the docs test runs on the commands the docs show."""
    messages = positive_int("--messages (MESSAGES)", args.messages) if args.messages else None
    multiplier = positive_int("--multiplier (MULTIPLIER)", args.multiplier)
    workers = positive_int("--workers", args.workers)
    failure_fraction = _fraction(args.inject_failures) if args.inject_failures else None
    check_tag(args.tag)
    workload = workloads.get(args.workload)
    given = command_line.texts(args)
    check_options(workload, given, deploy_level=tuple(args.deploy_level))
    return Checked(messages, multiplier, workers, failure_fraction, workload, workload.options_from(given))


def run(args: argparse.Namespace) -> int:
    console = Console()
    checked = check(args)
    stack = stacks.acted_on(backends.get(args.backend), args.stack, workloads.stack_fields)
    check_deployed(deploy.given_of(args), stack)
    count = checked.messages or checked.multiplier * stack.concurrency
    plan = checked.workload.plan(stack, checked.options, count)
    check_estimate(stack, count, plan.estimate, args.yes, console)
    params = FireParams(count, args.tag, inject_failures=checked.inject_failures, workers=checked.workers,
                        remote_copy=args.remote_copy, **plan.fire_fields)  # fmt: skip
    fired = fire(stack, params, console=console)
    if not fired.sent:
        raise FanoutError(f"none of the {count} messages reached the queue; no run was recorded")
    if fired.failed_seqs:
        raise FanoutError(
            f"{len(fired.failed_seqs)} of {count} messages were not sent (seqs "
            f"{runs.seq_ranges(fired.failed_seqs)}); run {fired.run_id} records them"
        )
    return 0


def check_tag(text: str) -> str:
    """An experiment tag as messages and records carry it; UsageError otherwise."""
    if not _TAG.fullmatch(text):
        raise UsageError(f"invalid tag {text!r}: expected 1-{TAG_MAX_CHARS} ASCII letters, digits, '.', '_', '-' or "
                         "spaces (not at either end); no quotes, backslashes or control characters")
    return text


def check_options(workload: workloads.Driver, given: Given, deploy_level: tuple[str, ...] = ()) -> None:
    """Refuse another workload's options among the flags `given` (`--sizes` on a download run):
    they would be ignored. `deploy_level`: flags that are the deployment's there (a sweep's
    --strategy, --storage; fire's --deploy-level), which another workload's run ignores."""
    for other in workloads.DRIVERS.values():
        named = [name for name in other.OPTIONS if name not in deploy_level and name in given]
        if other != workload and named:
            raise UsageError(f"--{named[0]} is an option of the {other.name} workload, not of {workload.name}: "
                             f"add --workload {other.name}")  # fmt: skip


def check_deployed(given: params.DeployGiven, stack: Stack) -> None:
    """Refuse, before anything is sent, a deploy input given to fire (make passes MEMORY,
    CONCURRENCY... when set) that is not the stack's: the run would use the stack's value."""
    mismatches = deploy_mismatches(given, stack.as_record())
    if mismatches:
        raise UsageError(f"{'; '.join(mismatches)}; a run uses the stack's values: leave it out, or "
                         "`make deploy` it first")  # fmt: skip


def deploy_mismatches(given: params.DeployGiven, deployed: dict) -> list[str]:
    """params.fire_mismatches of fire's command line (`given`) on the stack `deployed` (its record)."""
    makes = params.fire_checked_makes(workloads.deploy_only_option_names())
    at_fire = {name: text for name, text in given.texts.items() if name in makes}
    if not at_fire:
        return []
    before = deploy.blank(given)
    after = params.DeployGiven(before.stack, before.backend, {**before.texts, **at_fire})
    return params.fire_mismatches(deployed.get("stack", given.stack), at_fire, makes,
                                  deploy.inputs_given(before, deployed), deploy.inputs_given(after, deployed))


def check_estimate(stack: Stack, count: int, estimate: costs.Estimate, confirmed: bool, console: Console) -> None:
    """Print the AWS cost estimate when firing at AWS or refusing; refuse a run above the hard
    cap always, and a large or costly one without --yes."""
    refused = costs.refusal(count, count, estimate.total, confirmed)
    if not backends.get(stack.backend).simulated or refused:
        for line in costs.describe(estimate):
            console.print(line, highlight=False)
    if refused:
        raise UsageError(refused)


def fire(stack: Stack, params: FireParams, recorded: Callable[[str], object] = lambda run_id: None,
         console: Console | None = None) -> run_record.RunRecord:
    """Send the messages of a new run, once its workload prepared the stack for it (the estimate
    was accepted before: fire's run, a sweep's preflight); returns its record (run.json).

    run.json is written once the first message has reached the queue, about every
    CHECKPOINT_SECONDS while sending and at the end, also on Ctrl-C or SIGTERM: whenever fire
    stops, even killed outright, the record names the seqs known to have reached the queue, and
    `wait` follows exactly those. A fire that sent nothing records nothing and leaves `latest`.
    `recorded(run_id)` is called at the first write, so that a caller interrupted before fire
    returns (a sweep's cell) still learns the run it made. Progress goes to `console` (the
    command's; None: the terminal).
    """
    console = console or Console()
    run_id, count, workers = runs.new_run_id(), params.messages, params.workers
    runs.check_writable(run_id)  # before anything is prepared or sent
    injected = injected_seqs(count, params.inject_failures) if params.inject_failures else set()
    driver = workloads.get(params.workload)
    driver.prepare(stack, params, say=lambda line: console.print(line, highlight=False))
    fields = {"workload": params.workload, **driver.message_fields(stack, params)}
    bodies = [(seq, message_body(run_id, seq, params.tag, fields, seq in injected)) for seq in range(count)]
    result = SendResult()
    how = _run_record(stack, run_id, params, injected)

    written: dict = {}  # the last record written, and the state it was written at

    def save(status: str) -> run_record.RunRecord:
        """Write run.json; a checkpoint with nothing new since the last write writes nothing
        (rebuilding a record of a million seqs every second would starve the senders)."""
        state = (status, len(result.sent), len(result.failed), result.first_send_ms)
        if written.get("state") == state:
            return written["record"]
        record = how.but(**_send_state(count, result, status))
        if not written and not record.sent:
            return record  # nothing reached the queue (yet): no run folder, `latest` stays
        (runs.update if written else runs.save)(record)  # `latest` points here after the first write
        if not written:
            recorded(run_id)
        written.update(state=state, record=record)
        return record

    console.print(f"run [bold]{run_id}[/]: {count:,} messages to the queue of stack {stack.stack!r}")
    client = stack.client("sqs", max_pool_connections=workers, retries={"mode": "standard", "max_attempts": 5})
    status = "interrupted"
    save("sending")
    with interrupts.sigterm_as_ctrl_c():
        try:
            with _progress(console) as progress:
                task = progress.add_task("sending", total=count)
                send(client, stack.queue_url, bodies, workers, lambda n: progress.advance(task, n), result,
                     checkpoint=lambda: save("sending"))  # fmt: skip
            status = "complete"
        finally:
            record = save(status)
            console.print(f"sent {record.sent:,} of {count:,} in {result.seconds():.2f} s "
                          f"({result.rate():,.0f} msgs/s); {'recorded in' if written else 'no run recorded'}",
                          highlight=False)  # fmt: skip
            if written:
                console.print(f"  {runs.run_dir(run_id) / runs.RUN_FILE}", highlight=False)
    return record


def message_body(run_id: str, seq: int, tag: str, fields: dict | None, inject_failure: bool) -> str:
    """The JSON body of one message: the envelope, then `fields`, the workload's name and the
    parameters its driver gives (message_fields; docs/workloads.md)."""
    body = {"run_id": run_id, "seq": seq, "experiment_tag": tag, **(fields or {})}
    if inject_failure:
        body["inject_failure"] = True
    return json.dumps(body, separators=(",", ":"))


def injected_seqs(count: int, fraction: Fraction) -> set[int]:
    """floor(count x fraction) seqs, evenly spread: seq s is chosen when floor((s+1)f) > floor(s f)."""
    return {seq for seq in range(count) if int((seq + 1) * fraction) > int(seq * fraction)}


@dataclass
class SendResult:
    """What a send did so far; updated by the sending threads, read at any time with snapshot()."""

    sent: set[int] = field(default_factory=set)
    failed: dict[int, str] = field(default_factory=dict)  # seq -> last error
    first_send_ms: int | None = None
    last_send_ms: int | None = None
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, sent: list[int], failed: dict[int, str], now_ms: int) -> None:
        with self.lock:
            self.sent.update(sent)
            self.failed.update(failed)
            self.last_send_ms = max(self.last_send_ms or now_ms, now_ms)

    def snapshot(self) -> tuple[set[int], dict[int, str]]:
        """Copies of `sent` and `failed`, consistent with each other."""
        with self.lock:
            return set(self.sent), dict(self.failed)

    def seconds(self) -> float:
        if self.first_send_ms is None or self.last_send_ms is None:
            return 0.0
        return max(self.last_send_ms - self.first_send_ms, 1) / 1000

    def rate(self) -> float:
        return len(self.sent) / self.seconds() if self.sent else 0.0


def send(client: BaseClient, queue_url: str, bodies: list[tuple[int, str]], workers: int,
         advance: Callable[[int], object] = lambda n: None, result: SendResult | None = None,
         checkpoint: Callable[[], object] = lambda: None) -> SendResult:
    """Send (seq, body) pairs in parallel batches of 10; retry what fails; return what happened.

    `result` (a new one by default) is filled in as batches complete, so after an interruption
    it still holds every seq that reached the queue: the batches in flight are let finish.
    Seqs never attempted are neither in `sent` nor in `failed`. `checkpoint()` is called from
    the calling thread about every CHECKPOINT_SECONDS.
    """
    result = result if result is not None else SendResult()

    def send_batch(batch: list[tuple[int, str]]) -> None:
        sent, failed = _send_with_retries(client, queue_url, batch)
        result.add(sent, failed, _now_ms())
        advance(len(batch))

    batches = [bodies[i : i + BATCH] for i in range(0, len(bodies), BATCH)]
    result.first_send_ms = _now_ms()
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="fire")
    try:
        pending = {pool.submit(send_batch, batch) for batch in batches}
        while pending:
            done, pending = futures.wait(pending, timeout=CHECKPOINT_SECONDS, return_when=futures.FIRST_EXCEPTION)
            for future in done:
                future.result()  # a batch's unexpected error stops the run
            if pending:
                checkpoint()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return result


def _send_with_retries(client: BaseClient, queue_url: str,
                       batch: list[tuple[int, str]]) -> tuple[list[int], dict[int, str]]:
    pending = {str(seq): body for seq, body in batch}
    errors: dict[str, str] = {}
    sent: list[int] = []
    for attempt in range(ATTEMPTS):
        if attempt:
            time.sleep(random.uniform(0, min(2.0, 0.05 * 2**attempt)))  # full jitter backoff
        entries = [{"Id": entry_id, "MessageBody": body} for entry_id, body in pending.items()]
        try:
            response = client.send_message_batch(QueueUrl=queue_url, Entries=entries)
        except (ClientError, BotoCoreError) as exc:
            errors.update((entry_id, str(exc)) for entry_id in pending)
            continue
        for ok in response.get("Successful", []):
            pending.pop(ok["Id"])
            errors.pop(ok["Id"], None)
            sent.append(int(ok["Id"]))
        for bad in response.get("Failed", []):
            errors[bad["Id"]] = f"{bad.get('Code')}: {bad.get('Message', '')}"
            if bad.get("SenderFault"):  # the request itself is wrong: retrying cannot help
                del pending[bad["Id"]]
        if not pending:
            break
    return sent, {int(entry_id): errors[entry_id] for entry_id in errors if int(entry_id) not in sent}


def _run_record(stack: Stack, run_id: str, params: FireParams, injected: set[int]) -> run_record.RunRecord:
    """The part of run.json that says how the run was made."""
    parameters = run_record.RunParameters(
        messages=params.messages, experiment_tag=params.tag,
        inject_failures=str(params.inject_failures) if params.inject_failures else None, send_workers=params.workers,
        workload=params.workload, workload_options=workloads.get(params.workload).run_options(stack, params),
    )  # fmt: skip
    return run_record.RunRecord(run_id=run_id, backend=stack.backend, stack=run_record.RunStack.from_json(stack.as_record()),
                                parameters=parameters, injected_seqs=sorted(injected), version=runs.project_version(),
                                sweep=params.sweep)  # fmt: skip


def _send_state(count: int, result: SendResult, status: str) -> dict:
    """The fields of run.json that say what was sent so far; `status` is sending (fire still
    running, or killed), complete or interrupted."""
    sent, failures = result.snapshot()
    unsent = sorted(set(range(count)) - sent)
    reason = "not known to be sent (fire was still sending)" if status == "sending" else "not attempted (interrupted)"
    return {
        "send_status": status,
        "sent": len(sent),
        "failed_seqs": unsent,
        "failure_reasons": {str(seq): failures.get(seq, reason) for seq in unsent},
        "first_send_ms": result.first_send_ms,
        "last_send_ms": result.last_send_ms,
        "send_rate_per_s": round(result.rate(), 1),
    }


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )


def positive_int(name: str, text: str) -> int:
    value = numbers.whole(text)
    if value is None or value <= 0:
        raise UsageError(f"invalid {name} {text!r}: expected a positive whole number")
    return value


def _fraction(text: str) -> Fraction:
    try:
        value = Fraction(str(text).strip()) if str(text).isascii() else Fraction(0)  # no full-width digits
    except (ValueError, ZeroDivisionError):
        value = Fraction(0)
    if not 0 < value <= 1:
        raise UsageError(f"invalid --inject-failures {text!r}: expected a fraction 0 < FRACTION <= 1, e.g. 0.25")
    return value


def _now_ms() -> int:
    return time.time_ns() // 1_000_000
