"""How many messages a queue holds: the one definition of an idle queue for everyone who waits on
one (wait, to call unaccounted seqs lost; the local host, to stop when drained; a sweep, before
its next cell).

Idle means SQS's three approximate counts (visible, in flight, delayed) are all 0; details:
docs/experiment.md (its opening section).
"""

from botocore.client import BaseClient  # no types of its own: Any to mypy, named for the reader

COUNTS = ("ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed")


def messages(sqs: BaseClient, queue_url: str) -> int:
    """Messages in the queue at `queue_url`: visible, in flight or delayed."""
    attributes = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=list(COUNTS))["Attributes"]
    return sum(int(attributes.get(name, 0)) for name in COUNTS)


def is_idle(sqs: BaseClient, queue_url: str) -> bool:
    """Nothing in the queue, nothing in flight, nothing delayed."""
    return messages(sqs, queue_url) == 0
