"""What durable settling costs the host: LogWriter.sync() against one PutLogEvents call.

The host deletes a batch's messages only after sync() has seen the invocation's log events into
the log group (so a killed host loses no result). The baseline is one direct PutLogEvents call of
the same event, on the same endpoint, BATCH calls in a row: calls per second. Ours, two ways:
- a put + sync through the writer from one thread, BATCH in a row: calls per second;
- BATCH put + syncs from THREADS threads at once (as many invocation threads settle at once,
  sharing flushes): syncs per second of wall time.
Target >= 0.5 for both: a sync costs at most about two round trips, so it never waits out the
writer's interval (200 ms, about 100 round trips on loopback), which it skips by waking the writer.
Each repeat runs ours and the baseline, alternating which goes first (bench._ratios.interleaved),
REPEATS times; the figure is the median paired ratio ours / baseline.

The emulator is local (loopback, no round-trip delay): absolute times here are not AWS's.
BENCH_LOG_SYNC_REPEATS (default 9) and BENCH_LOG_SYNC_BATCH (default 32) change the run.
"""

import os
import statistics
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

from bench._emulator import serve
from bench._ratios import interleaved, timer, verdict
from fanout.common import aws
from fanout.local.host.logs import LogWriter

REPEATS = int(os.environ.get("BENCH_LOG_SYNC_REPEATS", "9"))
BATCH = int(os.environ.get("BENCH_LOG_SYNC_BATCH", "32"))
THREADS = 16
TARGET_RATIO = 0.5


def main() -> None:
    with serve() as endpoint:
        logs = aws.client("logs", "us-east-1", endpoint)
        group = f"/bench/{uuid.uuid4().hex[:8]}"
        writer = LogWriter(logs, group)
        logs.create_log_stream(logGroupName=group, logStreamName="direct")

        def direct():
            event = {"timestamp": int(time.time() * 1000), "message": "x"}
            logs.put_log_events(logGroupName=group, logStreamName="direct", logEvents=[event])

        def synced(stream: str):
            writer.put(stream, "x")
            writer.sync()

        def in_threads():
            with ThreadPoolExecutor(max_workers=THREADS) as pool:
                list(pool.map(lambda n: synced(f"s{n % THREADS}"), range(BATCH)))

        baseline = per_second(lambda: [direct() for _ in range(BATCH)])
        contenders = (("one thread", per_second(lambda: [synced("s") for _ in range(BATCH)])),
                      (f"{THREADS} threads", per_second(in_threads)))  # fmt: skip
        print(f"log_sync: put + sync against direct PutLogEvents calls, {BATCH} calls a side per repeat, "
              f"{REPEATS} interleaved repeats; loopback emulator, not AWS")  # fmt: skip
        for name, ours in contenders:
            mine, theirs = interleaved(ours, baseline, REPEATS)
            print(f"  put + sync, {name}: {statistics.median(mine):,.0f} against {statistics.median(theirs):,.0f} "
                  f"calls/s; {verdict(mine, theirs, TARGET_RATIO, name=f'put + sync / PutLogEvents calls/s, {name}')}")
        writer.close()
        writer.check()


def per_second(batch):
    """A callable returning BATCH over the seconds `batch()` took."""
    timed = timer(batch)
    return lambda: BATCH / timed()


if __name__ == "__main__":
    main()
