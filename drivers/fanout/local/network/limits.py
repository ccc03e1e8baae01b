"""Rate limits that schedule bytes: when may the next chunk go, and what does sending it cost.

Pure arithmetic over times passed in (no clock is read here): each limit answers
`earliest(n, at)` and is charged with `take(n, at)`; a chunk goes when every limit that applies
allows it (`release`). Written by hand: rate-limiting libraries (aiolimiter, pyrate-limiter)
count requests, not bytes scheduled ahead, and none has a bucket that drains at a peak rate and
refills at a sustained one, Lambda's shape (docs/network-model.md, *How traffic is shaped*).
"""

from collections.abc import Iterable

_SLACK = 1e-6  # bytes: rounding in level() must not make a chunk wait for a billionth of a byte


class RateLimit:
    """At most `rate` bytes/s: a chunk of n bytes occupies the link for n / rate seconds."""

    def __init__(self, rate: float):
        self.rate = rate
        self._free_at = 0.0

    def earliest(self, n: float, at: float) -> float:
        return max(at, self._free_at)

    def take(self, n: int, at: float) -> None:
        self._free_at = max(at, self._free_at) + n / self.rate


class TokenBucket:
    """`capacity` bytes of credit, full at `now`, refilled at `refill` bytes/s, spent at up to
    `peak` bytes/s (None: unlimited). Empty, it passes bytes at the refill rate.

    A chunk larger than the credit left goes once the credit has refilled to its size, or, when
    it exceeds the whole capacity, once the bucket is full: the credit then goes negative and
    the next chunk waits for it to come back, so the long-run rate is still `refill`.
    """

    def __init__(self, capacity: float, refill: float, peak: float | None, now: float):
        self.capacity, self.refill = capacity, refill
        self._level, self._stamp = capacity, now
        self._peak = RateLimit(peak) if peak else None

    def level(self, at: float) -> float:
        """Credit at `at` (for a time not before the last take)."""
        return min(self.capacity, self._level + self.refill * (at - self._stamp))

    def earliest(self, n: float, at: float) -> float:
        at = max(at, self._stamp)
        if self._peak:
            at = self._peak.earliest(n, at)
        needed = min(n, self.capacity)
        level = self.level(at)
        return at if level >= needed - _SLACK else at + (needed - level) / self.refill

    def take(self, n: int, at: float) -> None:
        at = max(at, self._stamp)
        self._level, self._stamp = self.level(at) - n, at
        if self._peak:
            self._peak.take(n, at)


def release(limits: Iterable, n: float, now: float) -> float:
    """When `n` bytes may go under all `limits` (charged for them): the latest of their earliest
    times, found again until stable because a later start can only help a bucket refill."""
    limits = list(limits)
    at = now
    while True:
        latest = max((limit.earliest(n, at) for limit in limits), default=at)
        if latest <= at:
            break
        at = latest
    for limit in limits:
        limit.take(n, at)
    return at
