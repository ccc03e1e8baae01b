"""SQS throughput of the embedded emulator at a given queue depth: stock moto vs patched moto.

Both servers run as separate processes, started from the same entry point (`--stock` skips the
patches), and are driven the same way through HTTP with one boto3 client: SendMessageBatch of
10, then ReceiveMessage (10 at a time) + DeleteMessageBatch. The queue is first filled to the
depth, so every measured call pays for it. Stock moto is slow at depth: filling its queue to
5,000 takes about ten minutes on two cores, and it is measured on fewer messages (rates are per
message either way). `--depth 1000` gives a quick, smaller comparison.
"""

import argparse
import time

import boto3

from bench._emulator import serve

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


def measure(stock: bool, depth: int, count: int) -> tuple[float, float]:
    """(send msgs/s, receive+delete msgs/s) at `depth` messages already in the queue."""
    with serve(*(["--stock"] if stock else [])) as endpoint:
        sqs = boto3.client("sqs", endpoint_url=endpoint, region_name="us-east-1", **CREDENTIALS)
        queue_url = make_queue(sqs)
        print(f"  filling the {'stock' if stock else 'patched'} queue to {depth}...", flush=True)
        send(sqs, queue_url, depth)
        send_seconds = send(sqs, queue_url, count)
        # Drain back to `depth` by the same count: both phases run at or above it.
        receive_seconds = receive_and_delete(sqs, queue_url, count)
    return count / send_seconds, count / receive_seconds


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.sqs_throughput", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--depth", type=int, default=5000, help="messages in the queue")
    parser.add_argument("--messages", type=int, default=2000, help="messages measured, patched")
    parser.add_argument("--stock-messages", type=int, default=50, help="messages measured, stock")
    args = parser.parse_args(argv)
    print(f"SQS through the emulator at depth {args.depth} (msgs/s, one boto3 client)", flush=True)
    patched = measure(False, args.depth, args.messages)
    stock = measure(True, args.depth, args.stock_messages)
    for phase, fast, slow in zip(("send (batch 10)", "receive+delete (10)"), patched, stock):
        print(f"  {phase:<20} patched {fast:8.0f}   stock {slow:8.1f}   ratio {fast / slow:6.1f}x")


if __name__ == "__main__":
    main()
