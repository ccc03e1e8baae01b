"""The token bucket and the rate caps, driven by a fake clock (the times passed in)."""

import pytest

from fanout.local.network.limits import RateLimit, TokenBucket, release

CHUNK = 64 * 1024


def send(limits, total: int, chunk: int = CHUNK, start: float = 0.0) -> list[tuple[float, int]]:
    """(release time, cumulative bytes) of each chunk of `total` bytes sent back to back."""
    sent, at, out = 0, start, []
    while sent < total:
        n = min(chunk, total - sent)
        at = release(limits, n, at)
        sent += n
        out.append((at, sent))
    return out


def bytes_by(timeline, t: float) -> int:
    """Bytes released by time t."""
    return max((b for at, b in timeline if at <= t), default=0)


def test_rate_limit_spaces_chunks_by_their_size_over_the_rate():
    rate = 3e6
    timeline = send([RateLimit(rate)], 50 * CHUNK)
    for i, (at, _) in enumerate(timeline):
        assert at == pytest.approx(i * CHUNK / rate)


def test_bucket_bursts_at_peak_until_its_credit_is_spent_then_refills_at_the_sustained_rate():
    capacity, sustained, peak = 4e6, 1e6, 8e6
    timeline = send([TokenBucket(capacity, sustained, peak, now=0.0)], 20_000_000)
    burst_seconds = capacity / (peak - sustained)  # credit drains at peak - refill
    for t in (0.1, 0.3, burst_seconds * 0.9, burst_seconds * 1.5, 5.0, 10.0):
        expected = min(peak * t, capacity + sustained * t)  # the bucket's envelope
        assert bytes_by(timeline, t) == pytest.approx(expected, abs=2 * CHUNK), t
    tail = [(at, b) for at, b in timeline if at > 2 * burst_seconds]
    (t0, b0), (t1, b1) = tail[0], tail[-1]
    assert (b1 - b0) / (t1 - t0) == pytest.approx(sustained, rel=0.01)


def test_bucket_refills_while_idle_up_to_its_capacity():
    bucket = TokenBucket(1e6, 1e5, None, now=0.0)
    bucket.take(1_000_000, 0.0)
    assert bucket.level(2.0) == pytest.approx(2e5)
    assert bucket.level(100.0) == 1e6
    assert bucket.earliest(500_000, 2.0) == pytest.approx(5.0)


def test_chunk_larger_than_the_bucket_waits_for_a_full_bucket_and_keeps_the_long_run_rate():
    bucket = TokenBucket(10_000, 1e5, None, now=0.0)
    timeline = send([bucket], 1_000_000, chunk=25_000)
    at, total = timeline[-1]
    assert total / at == pytest.approx(1e5, rel=0.05)


def test_two_connections_share_one_bucket_and_each_keeps_its_cap():
    """Two capped connections on one environment: together above one connection's cap, never
    above what the environment's bucket allows."""
    cap, sustained, peak, capacity = 2e6, 3e6, 10e6, 1e6
    bucket = TokenBucket(capacity, sustained, peak, now=0.0)
    connections = [[RateLimit(cap), bucket], [RateLimit(cap), bucket]]
    at, sent, events = [0.0, 0.0], [0, 0], []
    while min(sent) < 10_000_000:
        i = 0 if at[0] <= at[1] else 1  # the connection whose chunk is due first asks first
        at[i] = release(connections[i], CHUNK, at[i])
        sent[i] += CHUNK
        events.append((at[i], CHUNK))
    events.sort()
    end = max(at)
    total = sum(n for _, n in events)
    assert total / end > cap * 1.2  # more than one connection's worth
    assert total <= capacity + sustained * end + 2 * CHUNK  # never more than the bucket allows
    assert total / end == pytest.approx(sustained, rel=0.1)  # after its short burst, the sustained rate


def test_release_waits_for_the_slowest_limit():
    fast, slow = RateLimit(10e6), RateLimit(1e6)
    assert release([fast, slow], 1_000_000, 0.0) == 0.0
    assert release([fast, slow], 1_000_000, 0.0) == pytest.approx(1.0)
