"""The dead-letter queue, as the run's accounting reads it: which seqs of a run sit there.

`fanout wait` counts them as accounted for and the reports list them, whatever the workload. The
DLQ is read without consuming it, and no more than the run needs. How, and why a visibility
timeout of 0 cannot do it: docs/experiment.md, *wait*.
"""

import json
from typing import TYPE_CHECKING

from fanout.local import backends

if TYPE_CHECKING:
    from botocore.client import BaseClient  # no types of its own: Any to mypy, named for the reader

    from fanout.cloud.stack import Stack

PEEK_VISIBILITY = 30  # longer than a scan takes; only if restoring fails do messages stay hidden this long
DLQ_COUNTS = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]

def peek(stack: "Stack", run_id: str, wanted: set[int] | None = None) -> set[int]:
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
                WaitTimeSeconds=backends.get(stack.backend).dlq_wait_seconds,
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

def _empty(sqs: "BaseClient", queue_url: str) -> bool:
    """No message in the queue, visible or not (approximate counts: a scan follows otherwise)."""
    counts = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=DLQ_COUNTS)["Attributes"]
    return all(int(counts.get(name, 0)) == 0 for name in DLQ_COUNTS)

def _restore(sqs: "BaseClient", queue_url: str, handles: list[str]) -> None:
    for i in range(0, len(handles), 10):
        entries = [{"Id": str(n), "ReceiptHandle": h, "VisibilityTimeout": 0} for n, h in enumerate(handles[i : i + 10])]
        sqs.change_message_visibility_batch(QueueUrl=queue_url, Entries=entries)

def _json(text: str) -> dict:
    try:
        body = json.loads(text)
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}
