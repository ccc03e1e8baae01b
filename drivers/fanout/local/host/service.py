"""The event source mapping's work: poll the queue, run batches in environments, settle messages.

Pollers long-poll SQS only while an invocation slot is free, so a received message never
waits for an environment (its visibility timeout would be ticking). Each batch runs on its
own thread in an idle (warm) environment, or a new (cold) one when all are busy; the number of
slots bounds both invocations in flight and environments alive. A slot is free again as soon as
the function returns, as Lambda's concurrency is: deleting the batch's messages comes after.
"""

import math
import os
import shutil
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from fanout.common import paths, queue_state, ramp
from fanout.common.errors import FanoutError
from fanout.local.host import calls, environment, faults, limits
from fanout.local.host.config import FunctionConfig
from fanout.local.host.environment import Environment, InitFailed
from fanout.local.host.event import failed_message_ids, sqs_event
from fanout.local.host.logs import LogWriter
from fanout.local.host.scaling import Scaling
from fanout.local.network import late
from fanout.local.network.model import NetworkModel
from fanout.local.network.proxy import Shaper

ACCOUNT_CONCURRENCY = 1000  # Lambda's default regional limit: the ceiling without other limits
DEFAULT_IDLE_SECONDS = 10.0
POLLERS = 5  # Lambda starts an SQS mapping with five pollers
POLL_WAIT_SECONDS = 1  # short long-polls, so a stop request is noticed within a second
SQS_MAX_RECEIVE = 10


@dataclass
class Summary:
    """What the host did; also the snapshot given to progress callbacks."""

    function: str
    concurrency_limit: int
    invocations: int = 0
    succeeded: int = 0  # the handler returned (some messages may still have been reported failed)
    errors: int = 0  # the handler raised, or its environment failed to start or died
    timeouts: int = 0
    cold_starts: int = 0
    messages_received: int = 0
    messages_deleted: int = 0
    messages_failed: int = 0  # left for a retry (or the DLQ)
    in_flight: int = 0
    environments: int = 0
    drained: bool = False  # stopped because the queue stayed empty for the idle period
    seconds: float = 0.0
    # How the environments were held to Lambda's limits, by name (Environment.limits): the first
    # environment's word, or the first that could not enforce one; what the run's report states.
    limits: dict[str, str] = field(default_factory=dict)


def _stderr_warning(message: str) -> None:
    print(f"fanout host: warning: {message}", file=sys.stderr)


def effective_limit(config: FunctionConfig, max_envs: int, warn=_stderr_warning) -> int:
    """min(reserved concurrency, ESM maximum concurrency, max_envs), warning when max_envs binds."""
    limit = config.concurrency_limit()
    function_limit = ACCOUNT_CONCURRENCY if limit is None else limit
    if max_envs < function_limit:
        warn(f"--max-envs {max_envs} caps concurrency below the function's limit of {function_limit}; "
             f"at most {max_envs} environments will run at once")
    return min(function_limit, max_envs)


class Host:
    """Hosts one function until its queue is drained, stop() or abort()."""

    def __init__(self, config: FunctionConfig, *, idle_seconds: float = DEFAULT_IDLE_SECONDS,
                 max_envs: int = ACCOUNT_CONCURRENCY, progress=None, warn=_stderr_warning,
                 network: NetworkModel | None = None, scale_per_minute: float | None = ramp.SCALE_PER_MINUTE):
        """`network` shapes each environment's S3 traffic (fanout.local.network); None or `none`: loopback.
        `scale_per_minute`: the queue mapping's scale-out (fanout.local.host.scaling); None: every slot at once."""
        self.config, self.idle_seconds, self._progress, self._warn = config, idle_seconds, progress, warn
        self.network = network if network and network.shaped else None
        self._shaper: Shaper | None = None
        # (start, end) in epoch ms of every invocation: exactly when each environment was busy.
        self.busy_intervals: list[tuple[float, float]] = []
        self.summary = Summary(config.name, effective_limit(config, max_envs, warn))
        self._slots = threading.BoundedSemaphore(self.summary.concurrency_limit)
        self._scaling = Scaling(self._slots, self.summary.concurrency_limit, per_minute=scale_per_minute)
        self._lock = threading.Lock()
        self._idle: list[Environment] = []
        self._alive: set[Environment] = set()
        # Plain flags and a pipe, not threading.Event: stop() and abort() are called from signal
        # handlers, which must not wait for a lock the interrupted code may hold.
        self._stopping = False
        self._aborting = False
        self._abort_read, abort_write = os.pipe()  # readable once aborting: wakes every wait
        self._abort_write: int | None = abort_write
        self._failure: BaseException | None = None  # an unexpected error on a poller or invocation thread
        self._last_activity = time.monotonic()
        self._tmp_warned = False
        self._unenforced: set[str] = set()  # limits already reported as not enforced
        self._sqs = config.client("sqs", max_pool_connections=self.summary.concurrency_limit + POLLERS)
        self._faults = faults.from_environment()  # the fault layer, for tests of the failure paths

    def environment_pids(self) -> list[int]:
        """Process ids of the live environments (for memory measurements)."""
        with self._lock:
            return [env.process.pid for env in self._alive]

    def stop(self) -> None:
        """Stop polling; in-flight invocations finish and their logs are sent. Signal-safe."""
        self._stopping = True

    def abort(self) -> None:
        """Stop at once: environments starting or running an invocation are killed (their messages
        return to the queue after the visibility timeout); logs are still sent. Signal-safe."""
        if not self._aborting:
            self._aborting = self._stopping = True
            if self._abort_write is not None:  # None once run() has ended
                os.write(self._abort_write, b"!")

    def run(self) -> Summary:
        """Host the function until the queue is drained, stop() or abort(); the summary.

        Every way out (drained, stopped, aborted, Ctrl-C, an error on any thread) closes the
        environments, sends every log event and removes the working directory, even when a
        second Ctrl-C lands while that happens: each step is in a finally of its own.
        """
        started = time.monotonic()
        scratch = paths.home() / "host"
        scratch.mkdir(parents=True, exist_ok=True)
        self._workdir = Path(tempfile.mkdtemp(prefix=f"{self.config.name}-", dir=scratch))
        self._trace_fd = calls.open_trace(calls.trace_path())  # the mapping and log delivery act with the function's role
        calls.trace(self._sqs.meta.events, self._trace_fd)
        try:
            environment.prepare(self.config, self._workdir)
            logs = self.config.client("logs")
            calls.trace(logs.meta.events, self._trace_fd)
            self._log = LogWriter(logs, self.config.log_group)
            try:
                if self.network:
                    self._shaper = Shaper(self.config.endpoint)
                self._serve()
            finally:
                try:
                    self._log.close()
                finally:
                    if self._shaper:
                        self._shaper.close()
        finally:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._close_abort_pipe()
            if self._trace_fd is not None:
                os.close(self._trace_fd)
            self.summary.seconds = time.monotonic() - started
        self._check_failures()
        self._report()
        return self.summary

    def _close_abort_pipe(self) -> None:
        write, self._abort_write = self._abort_write, None
        assert write is not None, "run() closes it once"
        os.close(write)
        os.close(self._abort_read)

    def _serve(self) -> None:
        """Start the first environment, poll until told to stop, then let in-flight work end."""
        # An invocation's thread settles its batch after freeing the slot, and settling waits for
        # the log group (LogWriter.sync): twice the slots in threads, so that a free slot finds a
        # thread while others settle, yet settling slower than invoking holds the pollers back
        # (a backlog of unsettled messages would outlive their visibility timeout).
        executor = ThreadPoolExecutor(2 * self.summary.concurrency_limit, thread_name_prefix="invoke")
        pollers = [threading.Thread(target=self._poll, args=(executor,), name=f"poller-{i}")
                   for i in range(min(POLLERS, self.summary.concurrency_limit))]
        try:
            self._start_first_environment()
            for poller in pollers:
                poller.start()
            self._watch(pollers)
        except BaseException:  # Ctrl-C (outside the CLI) or an error: in-flight work dies
            self.abort()
            raise
        finally:
            try:
                self._finish(pollers, executor)
            finally:
                for env in list(self._alive):
                    env.close()

    def _finish(self, pollers: list[threading.Thread], executor: ThreadPoolExecutor) -> None:
        """Wait for the pollers and the invocations in flight. Interrupted (a second Ctrl-C), abort
        and wait again: aborted invocations end at once, and their END and REPORT are logged."""
        self.stop()
        try:
            _join(pollers, executor)
        except BaseException:
            self.abort()
            _join(pollers, executor)
            raise

    def _start_first_environment(self) -> None:
        """Start one environment before touching the queue: an import error stops the host
        with that error instead of cycling every message to the DLQ."""
        try:
            self._idle.append(self._new_environment())
        except InitFailed as exc:
            if not self._aborting:  # else it was killed on purpose
                raise FanoutError(f"function {self.config.name!r} (handler {self.config.handler!r}) "
                                  f"failed to initialise: {str(exc).splitlines()[0]}") from None

    def _new_environment(self) -> Environment:
        s3_endpoint = resolve = None
        if self._shaper and self.network:  # a shaper runs only under a network model
            s3_endpoint, resolve = self._shaper.named_endpoint(self.network.at(self.config.memory))
        env = Environment(self.config, self._workdir, self._log, self._abort_read, self._faults, s3_endpoint, resolve,
                          self.network.scale if self.network else 1.0)
        with self._lock:
            self._alive.add(env)
            self.summary.environments += 1
        try:
            tmp_problem = env.initialise()
        except InitFailed:
            self._discard(env)
            raise
        if tmp_problem:
            self._warn_shared_tmp(tmp_problem)
        self._note_limits(env)
        return env

    def _note_limits(self, env: Environment) -> None:
        """Keep how `env` was held to Lambda's limits (Summary.limits), and say once per host, one
        line each, which of them this machine cannot enforce."""
        with self._lock:
            held = {name: limit.enforcement for name, limit in env.limits().items()}
            new = {name: text for name, text in held.items()
                   if text.startswith(limits.NOT_ENFORCED) and name not in self._unenforced}
            self._unenforced.update(new)
            self.summary.limits = {**held, **self.summary.limits, **new}
        for name, enforcement in new.items():
            self._warn(f"Lambda's {name}: {enforcement}")

    def _warn_shared_tmp(self, problem: str) -> None:
        """Warn once per host, however many environments start at the same time."""
        with self._lock:
            if not self._tmp_warned:
                self._tmp_warned = True
                self._warn(f"no private /tmp per environment ({problem}); environments share /tmp "
                           "and can write to the task root")

    def _discard(self, env: Environment) -> None:
        env.close()
        if self._shaper and env.s3_endpoint:
            self._shaper.close_endpoint(env.s3_endpoint)  # its bucket and listening socket go with it
        with self._lock:
            self._alive.discard(env)

    def _watch(self, pollers: list[threading.Thread]) -> None:
        """Report progress; stop once idle for the idle period with nothing left in the queue."""
        while any(p.is_alive() for p in pollers) or self.summary.in_flight:
            time.sleep(0.2)
            self._check_failures()
            self._report()
            if self._stopping or self.summary.in_flight:
                continue
            if time.monotonic() - self._last_activity >= self.idle_seconds and \
                    queue_state.is_idle(self._sqs, self.config.source.queue_url):  # fmt: skip
                self.summary.drained = True
                self.stop()

    def _report(self) -> None:
        if self._progress:
            with self._lock:
                snapshot = replace(self.summary)
            self._progress(snapshot)

    def _poll(self, executor: ThreadPoolExecutor) -> None:
        try:
            self._poll_until_stopped(executor)
        except Exception as exc:  # noqa: BLE001 - kept for _check_failures, which raises it
            self._note_failure(exc)

    def _poll_until_stopped(self, executor: ThreadPoolExecutor) -> None:
        batch_size = self.config.source.batch_size
        while not self._stopping:
            self._scaling.release_due()
            slots = self._take_slots(math.ceil(SQS_MAX_RECEIVE / batch_size))
            if not slots:
                continue
            messages = self._receive(slots * batch_size)
            if messages:
                self._scaling.start()
            batches = [messages[i:i + batch_size] for i in range(0, len(messages), batch_size)]
            with self._lock:
                self.summary.messages_received += len(messages)
                self.summary.in_flight += len(batches)
            for batch in batches:
                executor.submit(self._invoke, batch).add_done_callback(self._invocation_done)
            for _ in range(slots - len(batches)):
                self._slots.release()

    def _take_slots(self, most: int) -> int:
        """Block (briefly, to notice a stop) for one free slot, then take up to `most`."""
        if not self._slots.acquire(timeout=0.2):
            return 0
        taken = 1
        while taken < most and self._slots.acquire(blocking=False):
            taken += 1
        return taken

    def _receive(self, wanted: int) -> list[dict]:
        """Up to `wanted` messages; keeps receiving during the mapping's batching window."""
        messages = self._receive_once(min(SQS_MAX_RECEIVE, wanted), POLL_WAIT_SECONDS)
        window_end = time.monotonic() + self.config.source.batching_window
        while messages and len(messages) < wanted and time.monotonic() < window_end:
            messages += self._receive_once(min(SQS_MAX_RECEIVE, wanted - len(messages)), 1)
        if messages:
            self._last_activity = time.monotonic()
        return messages

    def _receive_once(self, count: int, wait: int) -> list[dict]:
        return self._sqs.receive_message(
            QueueUrl=self.config.source.queue_url, MaxNumberOfMessages=count, WaitTimeSeconds=wait,
            MessageSystemAttributeNames=["All"], MessageAttributeNames=["All"],
        ).get("Messages", [])

    def _check_failures(self) -> None:
        """Raise what went wrong on another thread: a run whose records did not all reach the log
        group, or whose messages were not all settled, must fail rather than look complete."""
        self._log.check()
        if self._failure:
            raise self._failure

    def _invocation_done(self, future) -> None:
        if not future.cancelled() and future.exception():
            self._note_failure(future.exception())

    def _note_failure(self, exc: BaseException) -> None:
        """Keep the first unexpected error of a poller or invocation thread for _check_failures."""
        with self._lock:
            self._failure = self._failure or exc

    def _invoke(self, batch: list[dict]) -> None:
        try:
            settlement = self._run_batch(batch)
        finally:
            with self._lock:
                self.summary.in_flight -= 1
            self._last_activity = time.monotonic()
            self._slots.release()
        if settlement:
            self._settle(batch, *settlement)

    def _run_batch(self, batch: list[dict]) -> tuple[list[str], str, bool] | None:
        """Invoke the function on `batch`: (ids of the failed messages, status, cold start)."""
        if self._aborting:
            return None  # left on the queue: the messages reappear after their visibility timeout
        ids = [m["MessageId"] for m in batch]
        try:
            env = self._take_environment()
        except InitFailed:
            return ids, "error", True
        event = sqs_event(batch, self.config.source, self.config.region)
        started, request_id = time.time() * 1000, str(uuid.uuid4())
        try:
            outcome = env.invoke(request_id, event)
        finally:
            with self._lock:
                self.busy_intervals.append((started, time.time() * 1000))
        self._log_first_bytes(env, request_id)
        if outcome.status == "ok":
            failed = failed_message_ids(outcome.result, ids, self.config.source.report_batch_item_failures)
        else:
            failed = ids
        if outcome.status == "timeout" or not env.alive:
            self._discard(env)  # the next invocation gets a fresh (cold) environment
        else:
            with self._lock:
                self._idle.append(env)
        return failed, outcome.status, outcome.init_ms is not None

    def _log_first_bytes(self, env: Environment, request_id: str) -> None:
        """Log how many of the invocation's responses the model could hold to their first-byte
        latency (fanout.local.network.late), before its messages are settled."""
        if self._shaper and env.s3_endpoint:
            counts = self._shaper.first_bytes(env.s3_endpoint)
            if counts.requests:
                self._log.put(env.stream, late.line(request_id, counts))

    def _take_environment(self) -> Environment:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        return self._new_environment()

    def _settle(self, batch: list[dict], failed: list[str], status: str, cold: bool) -> None:
        """Delete the messages that succeeded, once the invocation's log events are in the log
        group (a host killed before that loses no result: the messages come back); failed ones
        reappear after the visibility timeout."""
        done = [m for m in batch if m["MessageId"] not in failed]
        if done:
            self._log.sync()
        deleted = 0
        for i in range(0, len(done), SQS_MAX_RECEIVE):
            entries = [{"Id": str(n), "ReceiptHandle": m["ReceiptHandle"]}
                       for n, m in enumerate(done[i:i + SQS_MAX_RECEIVE])]
            response = self._sqs.delete_message_batch(QueueUrl=self.config.source.queue_url, Entries=entries)
            deleted += len(response.get("Successful", []))
        with self._lock:
            s = self.summary
            s.invocations += 1
            s.succeeded += status == "ok"
            s.errors += status == "error"
            s.timeouts += status == "timeout"
            s.cold_starts += cold
            s.messages_deleted += deleted
            s.messages_failed += len(batch) - len(done)


def _join(pollers: list[threading.Thread], executor: ThreadPoolExecutor) -> None:
    for poller in pollers:
        if poller.ident:
            poller.join()
    executor.shutdown(wait=True, cancel_futures=True)
