"""The host's slots follow the queue mapping's scale-out: 5 at first, then 300 more a minute."""

import threading

import pytest

from fanout.common import ramp
from fanout.local.host import scaling


def free(slots: threading.Semaphore) -> int:
    """How many slots can be taken now (taken back afterwards)."""
    taken = 0
    while slots.acquire(blocking=False):
        taken += 1
    for _ in range(taken):
        slots.release()
    return taken


@pytest.fixture
def clock(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(scaling.time, "monotonic", lambda: now[0])
    return now


def test_five_slots_first_then_five_more_a_second_up_to_the_limit(clock):
    slots = threading.BoundedSemaphore(40)
    ramping = scaling.Scaling(slots, 40)
    assert free(slots) == ramp.INITIAL_CONCURRENCY == 5
    clock[0] += 100
    ramping.release_due()
    assert free(slots) == 5  # nothing received yet: no scaling
    ramping.start()
    for seconds, expected in ((0.1, 5), (1.0, 10), (2.5, 17), (7.0, 40), (60.0, 40)):
        clock[0] = 1100 + seconds
        ramping.release_due()
        assert free(slots) == min(40, 5 + int(300 * seconds / 60)) == expected
    assert ramp.SCALE_PER_MINUTE == 300


def test_a_limit_within_the_first_slots_and_no_scaling_have_every_slot_at_once(clock):
    for limit, per_minute in ((3, ramp.SCALE_PER_MINUTE), (50, None)):
        slots = threading.BoundedSemaphore(limit)
        scaling.Scaling(slots, limit, per_minute=per_minute)
        assert free(slots) == limit
