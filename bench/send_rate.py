"""fire's send rate against a plain sequential SendMessageBatch loop, on the same endpoint.

Both send the same bodies to a fresh queue each (the emulator's SendMessageBatch slows down as
a queue fills, so sharing one would favour whichever goes first). The figure is the ratio of
the two rates; one measurement of it varies a lot on a shared two-core machine, so it is taken
REPEATS times, interleaved (each repeat measures both, alternating which goes first, so that
drift in the machine's load hits both alike) and the median is reported. Target: >= 5x.

Two endpoints are measured, and only the second says anything about fire:
- loopback: the emulator is one Python process, so it serves at most one core's worth of
  requests (the GIL), and the sequential loop alone keeps it busy most of the time (measured:
  about 60% of the wall time, 85% under fire). Parallel sends can only add the rest, so the
  ratio stays below 2x whatever the client does: a bound of the server, not of fire.
- a simulated round trip: the emulator delays every response by ROUND_TRIP_MS (an assumed
  in-region round trip to SQS), so a send spends its time waiting, as it does against AWS,
  whose SQS is not CPU bound for one client. That waiting is what parallel sends hide. fire's
  rate here still reaches the emulator's CPU bound (about its loopback rate), so on AWS the
  ratio would be higher: this one is a lower bound.
BENCH_SEND_ENDPOINT measures another endpoint instead (with BENCH_SEND_REGION, default us-east-1).
"""

import os
import statistics
import time
import uuid

from bench._emulator import serve
from bench._ratios import interleaved, judge, paired_median, verdict
from fanout.common import aws
from fanout.stages import fire

MESSAGES = int(os.environ.get("BENCH_SEND_MESSAGES", "1000"))
REPEATS = int(os.environ.get("BENCH_SEND_REPEATS", "5"))
TARGET_RATIO = 5.0
ROUND_TRIP_MS = 20

LOOPBACK_NOTE = (
    "  not fire's gain: the emulator is one Python process, CPU bound serving even the\n"
    "  sequential loop, so parallel sends cannot make it answer much faster"
)
ROUND_TRIP_NOTE = (
    f"  each response delayed {ROUND_TRIP_MS} ms, as an in-region round trip to SQS on AWS:\n"
    "  the waiting that parallel sends hide; the target applies here. fire still meets\n"
    "  the emulator's CPU bound (its loopback rate), so on AWS the ratio would be higher"
)


def main() -> None:
    endpoint = os.environ.get("BENCH_SEND_ENDPOINT")
    region = os.environ.get("BENCH_SEND_REGION", "us-east-1")
    if endpoint:
        measure(endpoint, region, "given endpoint", TARGET_RATIO)
        return
    with serve() as endpoint:
        measure(endpoint, region, "emulator on loopback", None, LOOPBACK_NOTE)
    with serve("--latency-ms", str(ROUND_TRIP_MS)) as endpoint:
        measure(endpoint, region, f"emulator {ROUND_TRIP_MS} ms round trip away", TARGET_RATIO, ROUND_TRIP_NOTE)


def measure(endpoint: str, region: str, where: str, target: float | None, note: str = "") -> None:
    """fire's rate over the loop's at `endpoint`, judged against `target` (None: for information)."""
    bodies = [(seq, fire.message_body("bench", seq, "bench", None, False)) for seq in range(MESSAGES)]

    def sequential():
        return _rate(endpoint, region, lambda sqs, url: _sequential(sqs, url, bodies))

    def parallel():
        return _rate(endpoint, region, lambda sqs, url: fire.send(sqs, url, bodies, fire.DEFAULT_WORKERS),
                     fire.DEFAULT_WORKERS)  # fmt: skip

    ours, baseline = interleaved(parallel, sequential, REPEATS)
    name = f"{where}: fire / sequential msgs/s"
    if target:
        judged = verdict(ours, baseline, target, "x", name=name)
    else:
        judged = f"median ratio {judge(name, paired_median(ours, baseline)).value:.2f}x (for information)"
    print(
        f"send_rate, {where}: {MESSAGES} messages x {REPEATS} repeats\n"
        f"  {judged}\n"
        f"  medians: fire {statistics.median(ours):,.0f} msgs/s ({fire.DEFAULT_WORKERS} workers), "
        f"sequential loop {statistics.median(baseline):,.0f} msgs/s"
    )
    if note:
        print(note)


def _rate(endpoint, region, send, pool=10) -> float:
    sqs = aws.client("sqs", region, endpoint, max_pool_connections=pool)
    url = sqs.create_queue(QueueName=f"bench-send-{uuid.uuid4().hex[:8]}")["QueueUrl"]
    try:
        started = time.perf_counter()
        send(sqs, url)
        return MESSAGES / (time.perf_counter() - started)
    finally:
        sqs.delete_queue(QueueUrl=url)


def _sequential(sqs, url, bodies) -> None:
    for i in range(0, len(bodies), fire.BATCH):
        entries = [{"Id": str(seq), "MessageBody": body} for seq, body in bodies[i : i + fire.BATCH]]
        sqs.send_message_batch(QueueUrl=url, Entries=entries)


if __name__ == "__main__":
    main()
