"""The latency workload must time S3, not itself: one message through latency.measure_message
against the same PUT, GET (body read in the same chunks) and DELETE calls in a bare loop.

Ours: the function's core as the handler calls it (parse the body, random bytes per size, each
call timed and made a record, cleanup). Baseline: the same boto3 client making the same calls
for the same sizes and repetitions, with nothing else. Both against one emulator on loopback
with no network model; the figure is the ratio baseline seconds / ours for a whole message
(>= 0.95: the core adds at most ~5%), and the share of ours' wall time its records account for.
Each repeat measures both, alternating which goes first, after one uncounted warm-up of each.
BENCH_LATENCY_SIZES (default "1 1KB 1MB") and BENCH_LATENCY_REPS / _REPEATS (default 5, 5).
"""

import json
import os
import statistics
import sys
import time
import uuid

import boto3

from bench._emulator import serve
from bench._ratios import interleaved, verdict
from fanout.common import function_modules

SIZES = os.environ.get("BENCH_LATENCY_SIZES", "1 1KB 1MB")
REPS = int(os.environ.get("BENCH_LATENCY_REPS", "5"))
REPEATS = int(os.environ.get("BENCH_LATENCY_REPEATS", "5"))
TARGET_RATIO = 0.95


def main() -> None:
    sys.path[:0] = [str(folder) for folder in function_modules.folders()]
    import latency  # the function's own module, as the zip holds it

    sizes = latency.parse_sizes(SIZES)
    with serve() as endpoint:
        s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="test",
                          aws_secret_access_key="test")  # fmt: skip
        bucket = f"bench-latency-{uuid.uuid4().hex[:8]}"
        s3.create_bucket(Bucket=bucket)
        environ = {"LATENCY_BUCKETS": json.dumps({"standard": bucket})}
        body = json.dumps({"run_id": "bench", "seq": 0, "workload": "latency", "sizes": list(sizes), "reps": REPS})
        timed: list[float] = []  # per repeat of ours: the share of its wall time its records hold

        def ours() -> float:
            started = time.perf_counter()
            records = latency.measure_message(s3, environ, body, {})
            seconds = time.perf_counter() - started
            assert all(r["event"] == "latency" for r in records), records[-1]
            timed.append(sum(r["seconds"] for r in records) / seconds)
            return 1 / seconds

        def baseline() -> float:
            started = time.perf_counter()
            for size in sizes:
                data = os.urandom(size)
                for rep in range(REPS):
                    s3.put_object(Bucket=bucket, Key=f"base/{size}", Body=data)
                    read = s3.get_object(Bucket=bucket, Key=f"base/{size}")["Body"]
                    assert sum(len(chunk) for chunk in read.iter_chunks(latency.READ_CHUNK)) == size
                s3.delete_object(Bucket=bucket, Key=f"base/{size}")
            return 1 / (time.perf_counter() - started)

        ours(), baseline()
        timed.clear()
        mine, theirs = interleaved(ours, baseline, REPEATS)
        print(f"latency_overhead: sizes {SIZES}, {REPS} reps per message, emulator on loopback, no network model, "
              f"{REPEATS} repeats")  # fmt: skip
        print(f"  messages per second, core / bare calls: {verdict(mine, theirs, TARGET_RATIO, name='core / bare calls, messages/s')}")
        print(f"    medians: core {1 / statistics.median(mine):.3f} s, bare {1 / statistics.median(theirs):.3f} s "
              f"per message; the records hold {statistics.median(timed):.1%} of the core's wall time")  # fmt: skip


if __name__ == "__main__":
    main()
