"""SQS throughput of the embedded emulator at a given queue depth: stock moto vs patched moto.

Both servers run as separate processes, started from the same entry point (`--stock` skips the
patches), and are driven the same way through HTTP with one boto3 client: SendMessageBatch of
10, then ReceiveMessage (10 at a time) + DeleteMessageBatch. The queue is first filled to the
depth, so every measured call pays for it. Each repeat measures both servers on the same number
of messages, alternating which goes first (bench._ratios.interleaved); the figure is the median
of the paired ratios patched / stock, per phase (target >= 5x: stock walks the whole queue several
times per message, tests/emulator/test_work_per_call.py). The depth is 2,000 by default: stock
moto's cost per message grows with the depth, and filling its queue to 5,000 took about ten
minutes on two cores. BENCH_SQS_DEPTH, BENCH_SQS_MESSAGES and BENCH_SQS_REPEATS (or the options)
change the run.
"""

import argparse
import os
import statistics
import time
from functools import partial

import boto3

from bench._emulator import serve
from bench._ratios import interleaved, verdict

DEPTH = int(os.environ.get("BENCH_SQS_DEPTH", "2000"))
MESSAGES = int(os.environ.get("BENCH_SQS_MESSAGES", "100"))
REPEATS = int(os.environ.get("BENCH_SQS_REPEATS", "5"))
TARGET_RATIO = 5.0
PHASES = ("send (batch 10)", "receive+delete (10)")
CREDENTIALS = {"aws_access_key_id": "test", "aws_secret_access_key": "test"}


def make_queue(sqs) -> str:
    """A queue shaped like the deployed one: a DLQ with a redrive policy, long visibility."""
    dlq = sqs.create_queue(QueueName="bench-dlq")["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])
    policy = f'{{"deadLetterTargetArn":"{dlq_arn["Attributes"]["QueueArn"]}","maxReceiveCount":5}}'
    attributes = {"RedrivePolicy": policy, "VisibilityTimeout": "900"}
    return sqs.create_queue(QueueName="bench", Attributes=attributes)["QueueUrl"]


def send(sqs, queue_url: str, count: int) -> float:
    """Seconds to send `count` messages in batches of 10."""
    started = time.perf_counter()
    for first in range(0, count, 10):
        entries = [
            {"Id": str(i), "MessageBody": f'{{"run_id":"bench","seq":{first + i}}}'}
            for i in range(min(10, count - first))
        ]
        sqs.send_message_batch(QueueUrl=queue_url, Entries=entries)
    return time.perf_counter() - started


def receive_and_delete(sqs, queue_url: str, count: int) -> float:
    """Seconds to receive and delete `count` messages, 10 at a time."""
    started = time.perf_counter()
    done = 0
    while done < count:
        wanted = min(10, count - done)
        messages = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=wanted)["Messages"]
        entries = [{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(messages)]
        sqs.delete_message_batch(QueueUrl=queue_url, Entries=entries)
        done += len(messages)
    return time.perf_counter() - started


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.sqs_throughput", description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=DEPTH, help=f"messages in each queue (default {DEPTH})")
    parser.add_argument("--messages", type=int, default=MESSAGES,
                        help=f"messages sent, then received and deleted, per repeat and server (default {MESSAGES})")
    parser.add_argument("--repeats", type=int, default=REPEATS, help=f"alternations (default {REPEATS})")
    args = parser.parse_args(argv)
    print(f"SQS through the emulator at depth {args.depth}: {args.messages} messages per phase, "
          f"{args.repeats} interleaved repeats (msgs/s, one boto3 client per server)", flush=True)
    with serve() as patched_endpoint, serve("--stock") as stock_endpoint:
        patched, stock = Filled(patched_endpoint, args.depth, "patched"), Filled(stock_endpoint, args.depth, "stock")
        for phase in PHASES:
            mine, theirs = interleaved(partial(patched.rate, phase, args.messages),
                                       partial(stock.rate, phase, args.messages), args.repeats)  # fmt: skip
            print(f"  {phase:<20} patched {statistics.median(mine):8.0f}   stock {statistics.median(theirs):8.1f}   "
                  f"{verdict(mine, theirs, TARGET_RATIO, 'x', name=f'{phase}, patched / stock msgs/s')}")


class Filled:
    """A queue of one server, filled to `depth` once; each measured phase returns to it."""

    def __init__(self, endpoint: str, depth: int, label: str):
        self.sqs = boto3.client("sqs", endpoint_url=endpoint, region_name="us-east-1", **CREDENTIALS)
        self.url = make_queue(self.sqs)
        print(f"  filling the {label} queue to {depth}...", flush=True)
        send(self.sqs, self.url, depth)

    def rate(self, phase: str, count: int) -> float:
        """Messages per second of `phase` over `count` messages: sending them, or receiving and
        deleting as many. Every repeat of the send phase runs before the first receive, so the
        queue stays at or above its depth, and both servers' queues hold as many at each step."""
        if phase == PHASES[0]:
            return count / send(self.sqs, self.url, count)
        return count / receive_and_delete(self.sqs, self.url, count)


if __name__ == "__main__":
    main()
