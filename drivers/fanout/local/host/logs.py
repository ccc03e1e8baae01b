"""CloudWatch Logs as Lambda writes them: one stream per environment, platform lines, batches.

One background writer puts the events in order per stream; `sync()` returns once everything put
before it is in the log group, so the host deletes a message only after its records are
delivered, and a writer that cannot deliver stops the run (`check()`). Details:
docs/local-backend.md, *The function host*.
"""

import math
import secrets
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone

from botocore.exceptions import ClientError

from fanout.common.errors import FanoutError

# PutLogEvents quotas: events and bytes per call; 26 bytes of overhead are counted per event.
MAX_EVENTS = 10_000
MAX_BATCH_BYTES = 1_048_576
EVENT_OVERHEAD = 26
MAX_EVENT_BYTES = 262_144 - EVENT_OVERHEAD
DELIVERY_THREADS = 8  # streams sent at once; within botocore's default of 10 connections per client


def stream_name(now: float) -> str:
    """YYYY/MM/DD/[$LATEST]<32 hex>, Lambda's name for an environment's log stream."""
    day = datetime.fromtimestamp(now, timezone.utc).strftime("%Y/%m/%d")
    return f"{day}/[$LATEST]{secrets.token_hex(16)}"


def start_line(request_id: str, version: str) -> str:
    return f"START RequestId: {request_id} Version: {version}\n"


def end_line(request_id: str) -> str:
    return f"END RequestId: {request_id}\n"


def report_line(request_id: str, duration_ms: float, memory: int, max_memory_mb: float,
                init_ms: float | None, error_type: str | None = None) -> str:
    """Lambda's REPORT line. A cold start's Billed Duration includes its Init Duration: Lambda
    bills the INIT phase of zip functions on managed runtimes since 2025-08-01 (docs/experiment.md).
    An invocation that ran out of memory ends it with its status and error type, as Lambda does."""
    billed_ms = math.ceil(duration_ms + (init_ms or 0))
    line = (f"REPORT RequestId: {request_id}\tDuration: {duration_ms:.2f} ms\t"
            f"Billed Duration: {billed_ms} ms\tMemory Size: {memory} MB\t"
            f"Max Memory Used: {math.ceil(max_memory_mb)} MB\t")
    if init_ms is not None:
        line += f"Init Duration: {init_ms:.2f} ms\t"
    if error_type:
        line += f"Status: error\tError Type: {error_type}\t"
    return line + "\n"


def timeout_line(request_id: str, now: float, elapsed_s: float) -> str:
    stamp = datetime.fromtimestamp(now, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    return f"{stamp} {request_id} Task timed out after {elapsed_s:.2f} seconds\n"


class LogWriter:
    """Buffers events per stream and ships them every `interval` seconds until closed."""

    def __init__(self, client, group: str, interval: float = 0.2):
        self._client, self._group, self._interval = client, group, interval
        self._pending: dict[str, list[dict]] = {}
        self._last_ms: dict[str, int] = {}
        self._created: set[str] = set()
        self._failure: str | None = None  # why delivery stopped
        self._lost = 0  # events not delivered since then
        self._lock = threading.Lock()
        self._flushed = threading.Condition(self._lock)
        self._taken = 0  # flushes that have taken the pending events
        self._done = 0  # flushes that have finished (delivered, or failed)
        self._wake = threading.Event()
        self._closed = False
        self._ensure_group()
        self._pool = ThreadPoolExecutor(DELIVERY_THREADS, thread_name_prefix="log-delivery")
        self._thread = threading.Thread(target=self._run, name="log-writer", daemon=True)
        self._thread.start()

    def put(self, stream: str, message: str, when: float | None = None) -> None:
        """Queue one event; timestamps never go backwards within a stream."""
        data = message.encode("utf-8", "replace")[:MAX_EVENT_BYTES]
        ms = int((time.time() if when is None else when) * 1000)
        with self._lock:
            if self._failure:
                self._lost += 1
                return
            ms = max(ms, self._last_ms.get(stream, 0))
            self._last_ms[stream] = ms
            self._pending.setdefault(stream, []).append(
                {"timestamp": ms, "message": data.decode("utf-8", "ignore")})

    def sync(self) -> None:
        """Return once every event put so far is in the log group; FanoutError if delivery failed.

        The next flush to take the pending events takes all of them, so waiting for that flush
        to finish is enough; the writer is woken rather than left to its interval."""
        with self._lock:
            wanted = self._taken + 1
        self._wake.set()
        with self._flushed:
            self._flushed.wait_for(lambda: self._done >= wanted or self._failure is not None)
        self.check()

    def close(self) -> None:
        """Send everything still buffered, then stop (call check() to learn whether it all went)."""
        self._closed = True
        self._wake.set()
        self._thread.join()
        self._pool.shutdown()

    def check(self) -> None:
        """Raise FanoutError if any event could not be delivered."""
        with self._lock:
            if self._failure:
                raise FanoutError(f"writing to log group {self._group} failed ({self._failure}); "
                                  f"{self._lost} log events were lost")

    def _ensure_group(self) -> None:
        """Lambda creates the function's log group on first use when it does not exist."""
        try:
            self._client.create_log_group(logGroupName=self._group)
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "ResourceAlreadyExistsException":
                raise

    def _run(self) -> None:
        delivering = True
        while delivering and not self._closed:
            self._wake.wait(self._interval)
            self._wake.clear()
            delivering = self._flush()
        self._flush()

    def _flush(self) -> bool:
        """Send what is buffered; False once delivery has failed (botocore has retried already)."""
        with self._lock:
            pending, self._pending = self._pending, {}
            self._taken += 1
        try:
            return self._deliver(pending)
        finally:
            with self._flushed:
                self._done += 1
                self._flushed.notify_all()

    def _deliver(self, pending: dict[str, list[dict]]) -> bool:
        """Send each stream's events, streams in parallel (each stream's calls in order, by one
        thread): a flush of hundreds of environments' streams would otherwise take hundreds of
        round trips, and every sync() waits for one whole flush."""
        with self._lock:
            if self._failure:
                self._lost += sum(len(events) for events in pending.values())
                return False
        futures = [self._pool.submit(self._deliver_stream, stream, events) for stream, events in pending.items()]
        failures = [failure for failure in (future.result() for future in futures) if failure]
        if failures:
            with self._lock:
                self._failure = failures[0][0]
                self._lost += sum(unsent for _, unsent in failures)
            return False
        return True

    def _deliver_stream(self, stream: str, events: list[dict]) -> tuple[str, int] | None:
        """Send one stream's events; (why it failed, events not sent) or None."""
        unsent = len(events)
        try:
            if stream not in self._created:
                self._client.create_log_stream(logGroupName=self._group, logStreamName=stream)
                self._created.add(stream)
            for batch in batches(events):
                self._client.put_log_events(logGroupName=self._group, logStreamName=stream, logEvents=batch)
                unsent -= len(batch)
        except Exception as exc:  # noqa: BLE001 - whatever stops delivery is reported by check()
            return f"{type(exc).__name__}: {exc}".splitlines()[0], unsent
        return None


def batches(events: list[dict]):
    """PutLogEvents calls for `events`, in order: at most MAX_EVENTS events and MAX_BATCH_BYTES each."""
    batch: list[dict] = []
    size = 0
    for event in events:
        event_size = len(event["message"].encode()) + EVENT_OVERHEAD
        if batch and (len(batch) == MAX_EVENTS or size + event_size > MAX_BATCH_BYTES):
            yield batch
            batch, size = [], 0
        batch.append(event)
        size += event_size
    if batch:
        yield batch
