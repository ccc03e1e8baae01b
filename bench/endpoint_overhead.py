"""Recording endpoint addresses must not slow the download: the handler's measurement with a
client instrumented by endpoints.instrument (as handler.py builds it), and with PIN=auto on top,
against the same measurement with a plain client.

`ranged connections=4 chunk_size=1MiB` over a 32 MiB object is 32 GETs per download, so any
per-request cost (a getpeername per response, the pin's resolver override on every connection)
shows; and, where a per-request cost shows most, HEAD_CALLS HeadObject calls in a row through
each client (requests per second). PIN=auto also resolves the name 8 times and drops the pooled connections before the
clock starts; the emulator closes every connection anyway. One emulator on loopback, no network
model: the ratio, measured / plain in the same run (interleaved, after one uncounted warm-up of
each), is the figure; target >= 0.95. BENCH_ENDPOINT_REPEATS (default 7) changes the run.
"""

import io
import json
import os
import statistics
import sys
import time
import uuid

import boto3
from boto3.s3.transfer import TransferConfig

from bench._emulator import serve
from bench._ratios import interleaved, verdict
from fanout.common import function_modules

SIZE = 32 * 2**20
REPEATS = int(os.environ.get("BENCH_ENDPOINT_REPEATS", "7"))
STRATEGY = "ranged connections=4 chunk_size=1MiB"
HEAD_CALLS = 200
TARGET_RATIO = 0.95


def main() -> None:
    sys.path[:0] = [str(folder) for folder in function_modules.folders()]
    import invocation  # the function's own modules, as the zip holds them
    import measure
    import workloads

    config = invocation.client_config(workloads.CONNECTIONS)  # as handler.py builds it
    with serve() as endpoint:
        plain, instrumented = (boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                                            aws_access_key_id="test", aws_secret_access_key="test",
                                            config=config) for _ in range(2))  # fmt: skip
        measure.endpoints.instrument(instrumented)
        bucket = f"bench-endpoint-{uuid.uuid4().hex[:8]}"
        plain.create_bucket(Bucket=bucket)
        parts = TransferConfig(multipart_chunksize=8 * 2**20)  # as `fanout deploy` uploads it
        plain.upload_fileobj(io.BytesIO(os.urandom(SIZE)), bucket, "object", Config=parts)
        settings = measure.Settings(bucket=bucket, key="object", expected_size=SIZE,
                                    default_strategy=measure.strategies.parse(STRATEGY))  # fmt: skip

        def rate(s3, **extra):
            body = json.dumps({"run_id": "bench", "seq": 0, **extra})

            def measured() -> float:
                record = measure.measure_message(s3, settings, body, {})
                assert record["event"] == "download", record
                return SIZE / record["seconds"]

            return measured

        def heads(s3):
            def per_second() -> float:
                started = time.perf_counter()
                for _ in range(HEAD_CALLS):
                    s3.head_object(Bucket=bucket, Key="object")
                return HEAD_CALLS / (time.perf_counter() - started)

            return per_second

        print(f"endpoint_overhead: the emulator on loopback, no network model, {REPEATS} repeats; ratios against a "
              "plain client")  # fmt: skip
        measured = ((f"{STRATEGY}, 32MiB, addresses recorded", rate(instrumented), rate(plain), "MB/s", 1e6),
                    ("the same with PIN=auto", rate(instrumented, pin="auto"), rate(plain), "MB/s", 1e6),
                    (f"{HEAD_CALLS} HeadObject calls, addresses noted", heads(instrumented), heads(plain), "requests/s", 1))
        for name, ours, baseline, unit, divisor in measured:
            ours(), baseline()
            mine, theirs = interleaved(ours, baseline, REPEATS)
            print(f"  {name}: {verdict(mine, theirs, TARGET_RATIO, name=f'{name}: measured / plain')}\n    medians: {statistics.median(mine) / divisor:,.1f} "
                  f"against {statistics.median(theirs) / divisor:,.1f} {unit} (decimal)")  # fmt: skip


if __name__ == "__main__":
    main()
