"""The queue mapping's scale-out on the local host: the ramp of fanout.common.ramp applied to the host's
invocation slots, so that the local backend rehearses what a run on AWS goes through (its first
downloads at lower concurrency than the target).

Slots beyond the first `initial` are held back and let go at `per_minute`, counted from the first
message the host receives. Tests that need every slot at once pass a `per_minute` of None.
"""

import threading
import time

from fanout.common import ramp


class Scaling:
    def __init__(self, slots: threading.Semaphore, limit: int, initial: int = ramp.INITIAL_CONCURRENCY,
                 per_minute: float | None = ramp.SCALE_PER_MINUTE):  # fmt: skip
        self._slots, self._limit, self._initial, self._per_minute = slots, limit, initial, per_minute
        self._held = 0 if per_minute is None else max(0, limit - initial)
        for _ in range(self._held):
            slots.acquire()
        self._started: float | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        """Messages arrived: the ramp starts now (once)."""
        with self._lock:
            if self._started is None:
                self._started = time.monotonic()

    def release_due(self) -> None:
        """Let go of the held slots the ramp allows by now."""
        with self._lock:
            if not self._held or self._started is None or self._per_minute is None:
                return
            minutes = (time.monotonic() - self._started) / 60
            allowed = min(self._limit, self._initial + int(self._per_minute * minutes))
            due = self._held - (self._limit - allowed)
            for _ in range(max(0, due)):
                self._slots.release()
                self._held -= 1
