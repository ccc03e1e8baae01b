"""Bytes of one connection in one direction, released piece by piece when the limits allow.

Responses to the function and request bodies to the emulator are paced alike: pieces of about
CHUNK_SECONDS at the connection's rate, each written when the connection's cap and its
environment's shared limits allow, with the source paused while pieces wait. The shared limits
are booked only once the connection's own wait is over. Why, and what booking ahead cost:
docs/network-model.md, *How traffic is shaped* and *Strategies against the model*.
"""

import asyncio
import math
from collections import deque
from collections.abc import Callable

from fanout.local.network.limits import RateLimit, release

CHUNK_SECONDS = 0.01
CHUNK_RANGE = (16 * 1024, 256 * 1024)


def chunk_size(*rates: float | None) -> int:
    """About CHUNK_SECONDS worth of the slowest of `rates` (None: unlimited), within CHUNK_RANGE."""
    slowest = min((r for r in rates if r), default=math.inf)
    return int(min(max(slowest * CHUNK_SECONDS, CHUNK_RANGE[0]), CHUNK_RANGE[1]))


class Pacer:
    """One direction of one connection: `write(piece)` is called when the limits allow it.

    `cap` is the connection's own limit, `shared` its environment's; `cost` is the limit bytes
    charged per byte (1 / the rate factor of the address the connection reached).
    `source_paused(bool)` is told when pieces start and stop waiting here."""

    def __init__(self, cap: float | None, shared: list, chunk: int, write: Callable[[memoryview], None],
                 source_paused: Callable[[bool], None], cost: float = 1.0):
        self.loop = asyncio.get_running_loop()
        self.cap = RateLimit(cap) if cap else None
        self.limits = [self.cap, *shared] if cap else list(shared)
        self.chunk, self.write, self.source_paused, self.cost = chunk, write, source_paused, cost
        self.hold: float | None = None  # the next piece goes no sooner than this (a first byte's due time)
        self._queue: deque[memoryview] = deque()
        self._scheduled = False  # the head of the queue waits for its release time
        self._blocked = False  # the destination asked us to stop writing

    @property
    def idle(self) -> bool:
        """Nothing waits to be written."""
        return not self._queue and not self._scheduled

    def push(self, data) -> None:
        """Pace `data` out after whatever waits; unlimited bytes with no hold go at once."""
        if not data:
            return
        self._queue.append(memoryview(data))
        if self._scheduled or self._blocked:
            return
        if not self.limits and self.hold is None:
            self._flush()
        else:
            self.source_paused(True)
            self._schedule_next()

    def pause(self) -> None:
        """The destination's buffer is full."""
        self._blocked = True
        self.source_paused(True)

    def resume(self) -> None:
        self._blocked = False
        if self._queue and not self._scheduled:
            self._schedule_next() if self.limits or self.hold is not None else self._flush()
        elif self.idle:
            self.source_paused(False)

    def _flush(self) -> None:
        """Unlimited: write what waits, piece by piece, until done or the destination is full."""
        while self._queue and not self._blocked:
            self.write(self._take())
        if not self._queue and not self._blocked:
            self.source_paused(False)

    def _take(self) -> memoryview:
        head = self._queue[0]
        if len(head) <= self.chunk:
            return self._queue.popleft()
        self._queue[0] = head[self.chunk:]
        return head[:self.chunk]

    def _schedule_next(self) -> None:
        now = self.loop.time()
        due = now
        if self.hold is not None:
            due, self.hold = max(due, self.hold), None
        size = min(len(self._queue[0]), self.chunk) * self.cost
        if self.cap:
            due = self.cap.earliest(size, due)
        self._scheduled = True
        if due > now:
            self.loop.call_at(due, self._book, due, True)
        else:
            self._book(now)

    def _book(self, since: float, timer: bool = False) -> None:
        """Charge the next piece to every limit from `since` (the end of the connection's own
        wait: a timer firing late must not push its cap back by the delay, piece after piece),
        and write it when they allow: at once when the timer already got there, so a first
        byte is not a loop iteration later than its latency."""
        at = release(self.limits, min(len(self._queue[0]), self.chunk) * self.cost, since)
        if timer and at <= self.loop.time():
            self._deliver()
        else:
            self.loop.call_at(at, self._deliver)

    def _deliver(self) -> None:
        self._scheduled = False
        self.write(self._take())
        if self._blocked:
            return
        if self._queue:
            self._schedule_next()
        else:
            self.source_paused(False)
