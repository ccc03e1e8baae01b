"""What durable settling costs the host: LogWriter.sync() against one PutLogEvents call.

The host deletes a batch's messages only after sync() has seen the invocation's log events into
the log group (so a killed host loses no result). The figure is the median sync() time over the
median time of one direct PutLogEvents call of the same event, on the same endpoint and in the
same run; near 1x means sync costs one round trip and no waiting for the writer's interval
(200 ms), which it skips by waking the writer. Concurrent syncs (as many invocation threads
settle at once) share flushes, so their median is printed too, per sync.

The emulator is local (loopback, no round-trip delay): absolute times here are not AWS's.
"""

import statistics
import threading
import time
import uuid

from bench._emulator import serve
from fanout.common import aws
from fanout.local.host.logs import LogWriter

REPEATS = 200
THREADS = 16


def main() -> None:
    with serve() as endpoint:
        logs = aws.client("logs", "us-east-1", endpoint)
        group = f"/bench/{uuid.uuid4().hex[:8]}"
        writer = LogWriter(logs, group)
        logs.create_log_stream(logGroupName=group, logStreamName="direct")
        direct = [_timed(lambda: logs.put_log_events(logGroupName=group, logStreamName="direct", logEvents=[
            {"timestamp": int(time.time() * 1000), "message": "x"}])) for _ in range(REPEATS)]
        single = [_timed(lambda: (writer.put("s", "x"), writer.sync())) for _ in range(REPEATS)]
        parallel = _parallel_syncs(writer)
        writer.close()
        writer.check()
    base = statistics.median(direct)
    print(f"one PutLogEvents (baseline): median {base * 1000:.2f} ms over {REPEATS}")
    print(f"put + sync, one thread:       {statistics.median(single) / base:.2f}x the baseline")
    print(f"put + sync, {THREADS} threads:       {statistics.median(parallel) / base:.2f}x the baseline per sync")
    print("  measured on a shared 2-core machine under other load; loopback emulator, not AWS")


def _parallel_syncs(writer) -> list[float]:
    times: list[float] = []
    lock = threading.Lock()

    def worker(n):
        for _ in range(REPEATS // THREADS):
            elapsed = _timed(lambda: (writer.put(f"s{n}", "x"), writer.sync()))
            with lock:
                times.append(elapsed)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return times


def _timed(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started
