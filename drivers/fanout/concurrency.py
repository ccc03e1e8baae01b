"""How many downloads overlapped: the concurrency a run achieved, from its records' timestamps.

Each download record carries start_ms and end_ms (epoch ms). A download counts as running on the
half-open interval [start_ms, end_ms): one that ends at the instant another starts does not
overlap it. Hand-written because the computation is a sort and a running sum; no library offers
this exact definition.

Steady part: the middle STEADY_FRACTION (80%) of a cell's span, from its first start to its
last end. It leaves out the ramp-up while the event source mapping scales out and the tail
while the last downloads finish; the mean over it is the concurrency the run sustained.
"""

STEADY_FRACTION = 0.8
STEADY_DEFINITION = "middle 80% of the span from first download start to last end"


def steps(intervals: list[tuple[float, float]]) -> list[tuple[float, int]]:
    """(time, downloads running from that time on), at every time the count changes."""
    # At equal times ends (-1) sort before starts (+1): touching intervals do not overlap.
    changes = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals])
    result, running = [], 0
    for time, delta in changes:
        running += delta
        if result and result[-1][0] == time:
            result[-1] = (time, running)
        else:
            result.append((time, running))
    return result


def peak(intervals: list[tuple[float, float]]) -> int:
    """The largest number of downloads running at the same time."""
    return max((count for _, count in steps(intervals)), default=0)


def mean(intervals: list[tuple[float, float]], start: float, end: float) -> float:
    """Time-weighted mean number of downloads running during [start, end)."""
    if end <= start:
        return 0.0
    total, running, previous = 0.0, 0, start
    for time, count in steps(intervals):
        if time > start:
            total += running * (min(time, end) - previous)
            previous = min(time, end)
        if time >= end:
            break
        running = count
    total += running * (end - previous)
    return total / (end - start)


def steady_window(intervals: list[tuple[float, float]], fraction: float = STEADY_FRACTION) -> tuple[float, float]:
    """The middle `fraction` of the span from the first start to the last end."""
    first = min(start for start, _ in intervals)
    last = max(end for _, end in intervals)
    margin = (last - first) * (1 - fraction) / 2
    return first + margin, last - margin
