"""The settler (fanout.host.settle) deletes a message only after the log group holds its events,
ten to a DeleteMessageBatch, and never a failed one; a failed log sync deletes nothing."""

import threading

from fanout.host.settle import Ended, Settler


class Calls:
    """A log writer and an SQS client that record what the settler asks of them, in order."""

    def __init__(self, sync_error: Exception | None = None):
        self.calls: list[tuple] = []
        self.sync_error = sync_error
        self.release = threading.Event()  # sync() waits for it, so that invocations pile up
        self.release.set()
        self.entered = threading.Event()  # set once a round is in sync()

    def sync(self) -> None:
        self.entered.set()
        self.release.wait()
        self.calls.append(("sync",))
        if self.sync_error:
            raise self.sync_error

    def delete_message_batch(self, QueueUrl, Entries):  # noqa: N803 - boto3's names
        self.calls.append(("delete", QueueUrl, [e["ReceiptHandle"] for e in Entries]))
        return {"Successful": [{"Id": e["Id"]} for e in Entries]}


def batch(*ids: str) -> list[dict]:
    return [{"MessageId": i, "ReceiptHandle": f"handle-{i}"} for i in ids]


def test_messages_are_deleted_after_the_log_sync_ten_at_a_time_and_failed_ones_never():
    calls, settled, failures = Calls(), [], []
    calls.release.clear()
    settler = Settler(calls, "queue", calls, lambda ended, deleted: settled.append((ended, deleted)), failures.append)
    first = Ended(batch("a"), [], "ok", True)
    settler.add(first)
    assert calls.entered.wait(10)  # the round is in sync(), waiting while the others end
    ended = [Ended(batch(*(f"m{n}-{k}" for k in range(3))), [f"m{n}-1"] if n == 2 else [], "ok", False)
             for n in range(6)]  # fmt: skip
    for item in ended:
        settler.add(item)
    calls.release.set()
    settler.close()
    assert failures == []
    assert calls.calls[0] == ("sync",) and calls.calls[1] == ("delete", "queue", ["handle-a"])
    assert calls.calls[2] == ("sync",)  # one sync for the six that ended during the first round
    deletes = [c[2] for c in calls.calls[3:]]
    assert [len(d) for d in deletes] == [10, 7]  # 18 messages less the failed one
    assert "handle-m2-1" not in sum(deletes, [])
    assert [(e, d) for e, d in settled] == [(first, 1), *((e, 2 if e is ended[2] else 3) for e in ended)]


def test_a_failed_log_sync_deletes_nothing_and_is_reported():
    problem = RuntimeError("log group unreachable")
    calls, settled, failures = Calls(sync_error=problem), [], []
    settler = Settler(calls, "queue", calls, lambda ended, deleted: settled.append(deleted), failures.append)
    settler.add(Ended(batch("a", "b"), [], "ok", False))
    settler.close()
    assert failures == [problem] and settled == []
    assert [c[0] for c in calls.calls] == ["sync"]


def test_an_invocation_whose_messages_all_failed_needs_no_sync():
    calls, settled = Calls(), []
    settler = Settler(calls, "queue", calls, lambda ended, deleted: settled.append(deleted), print)
    settler.add(Ended(batch("a"), ["a"], "error", False))
    settler.close()
    assert calls.calls == [] and settled == [0]
