"""How many messages a queue holds: the one definition of an idle queue for everyone who waits on
one (wait, to call unaccounted seqs lost; the local host, to stop when drained; a sweep, before
its next cell).

A message is in the queue while it is visible, in flight (received, not yet deleted: an
invocation holds it, or a failed one left it to come back after the visibility timeout) or
delayed (sent with a delay not yet over). SQS counts each kind separately and approximately
(GetQueueAttributes, ApproximateNumberOfMessages, ...NotVisible and ...Delayed); the queue is
idle only when all three are 0.
"""

COUNTS = ("ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed")


def messages(sqs, queue_url: str) -> int:
    """Messages in the queue at `queue_url`: visible, in flight or delayed."""
    attributes = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=list(COUNTS))["Attributes"]
    return sum(int(attributes.get(name, 0)) for name in COUNTS)


def is_idle(sqs, queue_url: str) -> bool:
    """Nothing in the queue, nothing in flight, nothing delayed."""
    return messages(sqs, queue_url) == 0
