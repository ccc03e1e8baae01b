"""The dead-letter queue, as the run's accounting reads it: which seqs of a run sit there.

`fanout wait` counts them as accounted for and the reports list them, whatever the workload
(a message body carries the envelope's run_id and seq, docs/workloads.md).

The DLQ is inspected without consuming it: one scan receives every message with a visibility
timeout, then makes them all visible again at once (also on Ctrl-C). A scan cannot receive with
a visibility timeout of 0 instead: SQS would hand back the same messages again and again, so
the scan could neither see every message nor tell when it had. Nothing consumes the DLQ, so
the messages are hidden only from another scan running at that moment, for the scan's length
(PEEK_VISIBILITY if the process dies mid-scan); `wait` then sees them on its next poll.

SQS cannot select messages on receive (ReceiveMessage has no filter, botocore's sqs model), and
the DLQ keeps every earlier run's dead letters, so a scan reads as little as it can instead:
none when the DLQ is empty (GetQueueAttributes) or when no seq of the run can still be there
(`wanted`: wait asks only about the seqs without a done record), and it stops as soon as it has
found every wanted seq.
"""

import json

PEEK_VISIBILITY = 30  # longer than a scan takes; only if restoring fails do messages stay hidden this long
DLQ_COUNTS = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]


def peek(stack, run_id: str, wanted: set[int] | None = None) -> set[int]:
    """Seqs of the run in the DLQ (with `wanted`, the scan ends once it has found those). Every
    message received is made visible again at once."""
    if wanted is not None and not wanted:
        return set()
    sqs = stack.client("sqs")
    if _empty(sqs, stack.dlq_url):
        return set()
    seqs, handles = set(), []
    try:
        while True:
            messages = sqs.receive_message(
                QueueUrl=stack.dlq_url,
                MaxNumberOfMessages=10,
                VisibilityTimeout=PEEK_VISIBILITY,
                WaitTimeSeconds=1 if stack.backend == "aws" else 0,  # long poll: ask every SQS server
            ).get("Messages", [])
            if not messages:
                break
            for message in messages:
                handles.append(message["ReceiptHandle"])
                body = _json(message["Body"])
                if body.get("run_id") == run_id and isinstance(body.get("seq"), int):
                    seqs.add(body["seq"])
            if wanted is not None and wanted <= seqs:
                break
    finally:
        _restore(sqs, stack.dlq_url, handles)
    return seqs


def _empty(sqs, queue_url: str) -> bool:
    """No message in the queue, visible or not (approximate counts: a scan follows otherwise)."""
    counts = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=DLQ_COUNTS)["Attributes"]
    return all(int(counts.get(name, 0)) == 0 for name in DLQ_COUNTS)


def _restore(sqs, queue_url: str, handles: list[str]) -> None:
    for i in range(0, len(handles), 10):
        entries = [{"Id": str(n), "ReceiptHandle": h, "VisibilityTimeout": 0} for n, h in enumerate(handles[i : i + 10])]
        sqs.change_message_visibility_batch(QueueUrl=queue_url, Entries=entries)


def _json(text: str) -> dict:
    try:
        body = json.loads(text)
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}
