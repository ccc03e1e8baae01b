"""How many downloads overlapped: the concurrency a run achieved, from its records' timestamps.

Peak and steady concurrency over half-open intervals [start_ms, end_ms), and per download the
concurrency it ran at (`ran_at`) and whether that was at target. Definitions: docs/statistics.md,
*Downloads at target* and *What each figure is*. Hand-written because the computation is a sort
and a running sum; no library offers this exact definition.
"""

import bisect
import itertools
import math

from fanout.common import ramp
from fanout.common.errors import UsageError

AT_TARGET_FRACTION = 0.9

STEADY_DEFINITION = "from first reaching the target (or the peak) to the last start"
STEADY_LABEL = "steady part (from first reaching the target)"


def steps(intervals: list[tuple[float, float]]) -> list[tuple[float, int]]:
    """(time, downloads running from that time on), at every time the count changes."""
    # At equal times ends (-1) sort before starts (+1): touching intervals do not overlap.
    changes = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals])
    result: list[tuple[float, int]] = []
    running = 0
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


def steady_window(intervals: list[tuple[float, float]], target: int | None) -> tuple[float, float]:
    """From the first moment `target` downloads ran at once (the peak, if lower) to the last start.

    Before it the queue mapping was still scaling out and environments starting; after the last
    start the queue was empty and slots fell idle for want of work. Neither is the steady state.
    A run whose last download started as the target was reached (a single wave) keeps the window
    to the first end after that moment, during which every slot was busy. `intervals` must not be
    empty; a target of None (records without concurrency_limit) or 0 means the peak.
    """
    changes = steps(intervals)
    level = min(target or math.inf, max(count for _, count in changes))
    reached = next(time for time, count in changes if count >= level)
    last_start = max(start for start, _ in intervals)
    if last_start > reached:
        return reached, last_start
    return reached, min((end for _, end in intervals if end > reached), default=reached)


def ran_at(intervals: list[tuple[float, float]]) -> list[float]:
    """The concurrency each interval ran at (module docstring), in the order given: one pass
    over the running count's integral, then two lookups per interval."""
    changes = steps(intervals)
    times = [time for time, _ in changes]
    # area[i]: the integral of the running count from the first change to times[i].
    area = [0.0, *itertools.accumulate((t1 - t0) * count for (t0, count), (t1, _) in zip(changes, changes[1:]))]

    def integral(t: float) -> float:
        i = bisect.bisect_right(times, t) - 1
        return area[i] + changes[i][1] * (t - times[i])

    return [(integral(end) - integral(start)) / (end - start) if end > start else _running_at(changes, start) + 1.0
            for start, end in intervals]  # fmt: skip


def ran_at_of(downloads: list[dict]) -> list[float | None]:
    """ran_at of download records, over all of them (a run's); None for a record without
    start_ms/end_ms, which cannot be placed."""
    timed = [d for d in downloads if "start_ms" in d and "end_ms" in d]
    ran = dict(zip(map(id, timed), ran_at([(d["start_ms"], d["end_ms"]) for d in timed])))
    return [ran.get(id(d)) for d in downloads]


def _running_at(changes: list[tuple[float, int]], t: float) -> int:
    """The other downloads running at instant `t` (for a download of zero length, which the
    running count does not hold: [t, t) is empty)."""
    i = bisect.bisect_right([time for time, _ in changes], t) - 1
    return changes[i][1] if i >= 0 else 0


def at_target_definition(fraction: float) -> str:
    """Which downloads the tables at target keep, in words short enough for an 80-column note."""
    return f"downloads that ran at {fraction:.0%} of the target or more (mean overlap)"


def held_target(ran: float, target: int, fraction: float = AT_TARGET_FRACTION) -> bool:
    """Whether a message that ran at `ran` (ran_at's mean overlap) held at least `fraction` of its
    `target` concurrency. Generic, like the rest of this module: it weighs intervals against a
    run's concurrency limit, which every workload's run has; the download workload is the one that
    keeps its records by it today (its tables at target), so the name is not that workload's."""
    return ran >= fraction * target


ENOUGH_AT_TARGET = 30  # downloads at target a cell's percentiles and CIs need


def few_at_target(label: str, n: int, n_all: int, target: int, fraction: float, most: float, span_s: float) -> str | None:
    """What to do about a cell with fewer than ENOUGH_AT_TARGET downloads at target, or None:
    more messages per concurrency slot (MULTIPLIER). A run shorter than the queue mapping's ramp
    to its target (`span_s`: first start to last end) left out the ramp's downloads, which stay
    as many: they are added to the 30. One that outlasted the ramp kept its downloads at target
    in proportion (n of n_all), and more messages keep them in the same proportion; none at all
    then means the deployment did not sustain its target (`most`: the highest concurrency a
    download ran at), and more messages cannot help."""
    if n >= ENOUGH_AT_TARGET:
        return None
    outlasted = span_s > ramp.seconds_to_reach(target)
    if n == 0 and outlasted:
        return (f"cell {label}: no download ran at target: the most one ran at was {most:.3g} of {target}, in a "
                f"run that outlasted the queue mapping's ramp: more messages would not help (docs/statistics.md)")
    messages = ENOUGH_AT_TARGET * n_all / n if outlasted else ENOUGH_AT_TARGET + n_all - n
    multiplier = math.ceil(messages / target)
    return (f"cell {label}: {n} of {n_all} downloads ran at target; MULTIPLIER={multiplier} would give about "
            f"{ENOUGH_AT_TARGET}")


def reach(downloads: list[dict], ran: list[float | None]) -> dict:
    """The highest concurrency a download ran at (`ran`: ran_at_of's, None for one not placed)
    and the span from the first start to the last end, in s: what few_at_target weighs."""
    timed = [d for d in downloads if "start_ms" in d and "end_ms" in d]
    span_ms = max((d["end_ms"] for d in timed), default=0) - min((d["start_ms"] for d in timed), default=0)
    return {"most_ran_at": max((r for r in ran if r is not None), default=0.0), "span_s": span_ms / 1000}


def fraction(text: str) -> float:
    """`--at-target`'s value: a fraction of the target above 0 and at most 1; UsageError otherwise."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= 1:
        raise UsageError(f"invalid --at-target {text!r}: expected a fraction of the target above 0 and at most 1, "
                         f"such as {AT_TARGET_FRACTION} (a download ran at target at {AT_TARGET_FRACTION:.0%} of it)")
    return value


