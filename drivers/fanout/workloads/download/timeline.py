"""The function's timeline module (functions/runner/download/timeline.py), for the drivers.

Loaded from its file (fanout.common.function_modules) rather than copied, so the function and the
report encode, decode and derive byte-arrival timelines with one definition.
"""

from fanout.common import function_modules

_module = function_modules.load("timeline")

decode = _module.decode


def cumulative(record: dict) -> tuple[list[float], list[int]]:
    """(times in s, cumulative bytes) at each interval boundary of a download record's timeline."""
    interval = record["timeline_interval_ms"] / 1000
    times, totals, total = [0.0], [0], 0
    for i, count in enumerate(decode(record["timeline"]), start=1):
        total += count
        times.append(i * interval)
        totals.append(total)
    return times, totals
