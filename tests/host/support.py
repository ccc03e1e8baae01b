"""Helpers for the host tests beyond tests.harness.host_testing (which the benchmark shares)."""


def queue_depth(fn) -> int:
    """Messages in the function's queue, visible or not."""
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    attributes = fn.client("sqs").get_queue_attributes(QueueUrl=fn.queue_url, AttributeNames=names)["Attributes"]
    return sum(int(attributes[name]) for name in names)


def running(pid: int) -> bool:
    """Whether a process exists and has not exited (a zombie waiting to be reaped has)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rpartition(")")[2].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def messages(fn) -> list[str]:
    """Every log event message of the function, stream after stream."""
    return [m for events in fn.streams().values() for _, m in events]
