"""Settling ended invocations: delete their messages once their log events are in the log group.

One thread settles in rounds. A round takes every invocation that ended since the last, waits
once for the log group to hold every event put so far (LogWriter.sync), then deletes their
successful messages ten to a DeleteMessageBatch. Settled one by one, on the invocation's own
thread, each message cost a log flush and a delete of its own: requests to the emulator made
just as the slot's next message is received and its download starts, on the same cores. In
rounds, invocations that end close together share them; a round lasts as long as one flush and
its deletes, so the backlog it leaves is what ended meanwhile. The rule is unchanged: a message
is deleted only after its records are in the log group, so a host killed at any moment loses
no result.
"""

import threading
from dataclasses import dataclass

SQS_MAX_DELETE = 10  # entries of one DeleteMessageBatch


@dataclass(frozen=True)
class Ended:
    """An invocation's batch and how it ended: the ids of its failed messages (left for a retry)."""

    batch: list[dict]
    failed: list[str]
    status: str
    cold: bool

    @property
    def done(self) -> list[dict]:
        return [m for m in self.batch if m["MessageId"] not in self.failed]


class Settler:
    """Settles ended invocations on a thread of its own until closed; `settled(ended, deleted)`
    is called for each once its messages are deleted, `failed(exc)` if a round fails (its
    messages stay in the queue and come back after their visibility timeout)."""

    def __init__(self, sqs, queue_url: str, log, settled, failed):
        self._sqs, self._queue_url, self._log = sqs, queue_url, log
        self._settled, self._failed = settled, failed
        self._pending: list[Ended] = []
        self._closed = False
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="settle", daemon=True)
        self._thread.start()

    def add(self, ended: Ended) -> None:
        with self._changed:
            self._pending.append(ended)
            self._changed.notify()

    def close(self) -> None:
        """Settle what is pending, then stop."""
        with self._changed:
            self._closed = True
            self._changed.notify()
        self._thread.join()

    def _run(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._pending or self._closed)
                ended, self._pending = self._pending, []
            if not ended:
                return  # closed, and nothing left
            try:
                self._round(ended)
            except Exception as exc:  # noqa: BLE001 - the host raises it (Host._check_failures)
                self._failed(exc)
                return

    def _round(self, ended: list[Ended]) -> None:
        done = [(item, message) for item in ended for message in item.done]
        if done:
            self._log.sync()
        deleted = {id(item): 0 for item in ended}
        for first in range(0, len(done), SQS_MAX_DELETE):
            chunk = done[first:first + SQS_MAX_DELETE]
            entries = [{"Id": str(n), "ReceiptHandle": m["ReceiptHandle"]} for n, (_, m) in enumerate(chunk)]
            response = self._sqs.delete_message_batch(QueueUrl=self._queue_url, Entries=entries)
            for success in response.get("Successful", []):
                deleted[id(chunk[int(success["Id"])][0])] += 1
        for item in ended:
            self._settled(item, deleted[id(item)])
