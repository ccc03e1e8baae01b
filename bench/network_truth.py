"""Network model ground truth: the report's estimates against the values injected by the model.

A known model (burst 32 MiB at 8x the sustained rate, i.e. peak 64 MB/s, sustained 8 MB/s, one
connection 12 MB/s, first byte 20 ms fixed) shapes four environments that each stream a 160 MiB
object once (five times the burst; a single connection spends the bucket at 12 - 8 = 4 MB/s, so
the burst lasts 8.4 s and delivers about 100 MB, and the tail runs at the sustained rate). Each
parameter is printed as estimated/injected (target: within 5%), estimated as the report does
(fanout.local.network.truth: medians; burst from each environment's first download):
- sustained: the records' sustained_mb_per_s (the tail's rate);
- burst: burst_excess_bytes (bytes above the sustained rate: the bucket's size);
- per-connection: peak_mb_per_s (the best 1 s, inside the 8.4 s burst one connection's cap);
- first byte: first_byte_seconds of 1 MiB stream GETs, one environment at a time (8 messages),
  because the emulator itself needs more than 20 ms to start answering a 160 MiB GET (it reads
  the whole object first), or any GET while other environments stream (measured and printed
  here as the 160 MiB downloads' first-byte time). The proxy subtracts what the path adds to
  its wait (sampled while the host runs: fanout.local.network.path) and never releases a first byte
  before the emulator's answer, which is then a floor: the bench prints how many requests'
  answers came after their latency (fanout.local.network.late).
- burst of parallel ranged parts: burst_excess_bytes of `ranged connections=4` and `=8` (2 MiB
  parts, one download each in a fresh environment) under a second model (PARALLEL: a 32 MiB
  bucket, 8 MB/s per connection, 16 MB/s sustained), over the bucket: one connection alone is
  slower than the sustained rate, so the bucket is spent only while several run at once (the
  suite's tests/network/test_truth.py checks an 8 MiB bucket on 1, 4 and 8 connections);
- uploads: seconds of PutObjects of UPLOAD_SIZE on one and two connections at once under the
  upload model of the suite's test (fanout.local.network.upload_truth), over truth.predicted_seconds of the upload
  direction (target within 10%).
Measured on a shared 2-core machine: other load stretches the figures. BENCH_TRUTH_SHRINK divides
the objects, the download buckets and the uploads, BENCH_TRUTH_ENVS (default 4) sets the
environments per large object and BENCH_TRUTH_MESSAGES (default 8) the small GETs (the suite runs
it tiny: 1/32, two environments, two GETs).
"""

import os
import statistics

from bench._ratios import judge
from fanout.common import aws
from fanout.local.emulator import control
from tests.harness.hosted import Downloader
from fanout.local.network import NetworkModel, late, model, truth
from fanout.local.network.proxy import Shaper
from fanout.local.network.upload_truth import MODEL as UPLOAD_MODEL
from fanout.local.network.upload_truth import SIZE as UPLOAD_SIZE
from fanout.local.network.upload_truth import timed_puts

MIB = 2**20
SHRINK = int(os.environ.get("BENCH_TRUTH_SHRINK", "1"))  # divides the objects and the buckets (the suite's tiny run)
VALUES = {"burst": 32 * MIB // SHRINK, "peak_mb_per_s": 64, "sustained_mb_per_s": 8, "connection_mb_per_s": 12,
          "first_byte_ms": 20}
PARALLEL = {"burst": 32 * MIB // SHRINK, "peak_mb_per_s": 200, "sustained_mb_per_s": 16, "connection_mb_per_s": 8,
            "first_byte_ms": 20}
PARALLEL_SIZE = 96 * MIB // SHRINK  # 4 connections spend the bucket in 2.1 s, then about 1.6 s of tail
ENVIRONMENTS = int(os.environ.get("BENCH_TRUTH_ENVS", "4"))
SMALL_GETS = int(os.environ.get("BENCH_TRUTH_MESSAGES", "8"))
TARGET = 0.05
UPLOAD_TARGET = 0.10


def main() -> None:
    known = NetworkModel("bench-known", 1.0, model.parameters(VALUES, "bench"))
    with control.private(prefix="bench-truth-") as endpoint:
        downloader = Downloader(endpoint)
        downloader.put("large", 160 * MIB // SHRINK)
        downloader.put("small", 1 * MIB // SHRINK)
        large_run = downloader.run("large", "stream", ENVIRONMENTS, known)
        small_run = downloader.run("small", "stream", 1, known, messages_per_env=SMALL_GETS)
        parallel_bursts(downloader)
        uploads(endpoint)
    large, small = large_run.records, small_run.records
    rows = {row["parameter"]: row for row in truth.compare(True, known.describe(), large)}
    shape = known.at(1024)
    figures = {
        "sustained rate": (rows["sustained_mb_per_s"]["estimated"], VALUES["sustained_mb_per_s"]),
        "burst (bucket) bytes": (rows["burst_bytes"]["estimated"], shape.burst_bytes),
        "per-connection rate": (statistics.median(r["peak_mb_per_s"] for r in large), VALUES["connection_mb_per_s"]),
        "first-byte latency (small GETs)": (statistics.median(r["first_byte_seconds"] for r in small),
                                            shape.first_byte_s),
    }
    for name, (estimated, injected) in figures.items():
        _verdict(name, estimated, injected, TARGET, "estimated/injected")
    for name, hosted in (("small", small_run), ("large", large_run)):
        held = late.totals(hosted.events, {r["request_id"] for r in hosted.records})
        print(f"network truth first byte, {name} GETs: {held.late} of {held.requests} requests' emulator answer "
              "exceeded the drawn latency (their first byte came later than the model's)")
    print(f"network truth first byte of the large GETs (emulator floor included): median "
          f"{statistics.median(r['first_byte_seconds'] for r in large) * 1000:.0f} ms; downloads took median "
          f"{statistics.median(r['seconds'] for r in large):.1f} s; {ENVIRONMENTS} environments per object")


def parallel_bursts(downloader: Downloader) -> None:
    parallel = NetworkModel("bench-parallel", 1.0, model.parameters(PARALLEL, "bench"))
    downloader.put("parallel", PARALLEL_SIZE)
    for connections in (4, 8):
        [record] = downloader.run("parallel", f"ranged connections={connections} chunk_size=2MiB", 1, parallel).records
        _verdict(f"burst (bucket) bytes, ranged connections={connections}", record["burst_excess_bytes"],
                 PARALLEL["burst"], TARGET, "estimated/injected")


def uploads(endpoint: str) -> None:
    aws.client("s3", "us-east-1", endpoint).create_bucket(Bucket="bench-truth-uploads")
    shape = NetworkModel("bench-uploads", 1.0, model.parameters(UPLOAD_MODEL, "bench")).at(1024)
    shaper = Shaper(endpoint)
    try:
        for connections in (1, 2):
            seconds = timed_puts(shaper.endpoint(shape), "bench-truth-uploads", connections, UPLOAD_SIZE // SHRINK)
            predicted = truth.predicted_seconds(shape.uploads(), connections * UPLOAD_SIZE // SHRINK, connections)
            _verdict(f"upload seconds, {connections} connection(s)", seconds, predicted, UPLOAD_TARGET, "measured/predicted")
    finally:
        shaper.close()


def _verdict(name: str, estimated: float, injected: float, target: float, ratio_name: str) -> None:
    ratio = estimated / injected
    verdict = "ok" if judge(f"{name}: {ratio_name}", ratio, 1 - target, 1 + target).met else "OFF"
    print(f"network truth {name}: {ratio_name} {ratio:.3f} ({estimated:.4g} / {injected:.4g}; "
          f"target within {target:.0%}: {verdict})")


if __name__ == "__main__":
    main()
