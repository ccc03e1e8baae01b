"""fire's send rate against a plain sequential SendMessageBatch loop, on the same endpoint.

Both send the same bodies to a fresh queue each (the emulator's SendMessageBatch slows down as
a queue fills, so sharing one would favour whichever goes first). The figure is the ratio of
the two rates, measured in the same run. Target: >= 5x.

Two endpoints are measured. On loopback both loops compete with the one emulator process for
two cores, so the emulator's CPU caps the ratio near 2x whatever the client does. A real SQS
endpoint is a network round trip away, which is what parallel sends hide: the second
measurement runs the emulator with every response delayed by ROUND_TRIP_MS (an assumed
in-region round trip, stated with the result). BENCH_SEND_ENDPOINT measures another endpoint
instead (with BENCH_SEND_REGION, default us-east-1).
"""

import os
import time
import uuid

from bench._emulator import serve
from fanout import aws, fire

MESSAGES = int(os.environ.get("BENCH_SEND_MESSAGES", "1000"))
TARGET_RATIO = 5.0


ROUND_TRIP_MS = 20


def main() -> None:
    endpoint = os.environ.get("BENCH_SEND_ENDPOINT")
    region = os.environ.get("BENCH_SEND_REGION", "us-east-1")
    if endpoint:
        measure(endpoint, region, "given endpoint")
        return
    with serve() as endpoint:
        measure(endpoint, region, "emulator on loopback")
    with serve("--latency-ms", str(ROUND_TRIP_MS)) as endpoint:
        measure(endpoint, region, f"emulator {ROUND_TRIP_MS} ms round trip away")


def measure(endpoint: str, region: str, where: str) -> None:
    bodies = [(seq, fire.message_body("bench", seq, "bench", None, False)) for seq in range(MESSAGES)]
    baseline = _rate(endpoint, region, lambda sqs, url: _sequential(sqs, url, bodies))
    ours = _rate(
        endpoint, region, lambda sqs, url: fire.send(sqs, url, bodies, fire.DEFAULT_WORKERS), fire.DEFAULT_WORKERS
    )
    ratio = ours / baseline
    verdict = "meets" if ratio >= TARGET_RATIO else "below"
    print(
        f"send_rate: {MESSAGES} messages, {where}: fire {ours:,.0f} msgs/s ({fire.DEFAULT_WORKERS} workers), "
        f"sequential SendMessageBatch loop {baseline:,.0f} msgs/s: {ratio:.2f}x ({verdict} the {TARGET_RATIO:g}x target)"
    )


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
