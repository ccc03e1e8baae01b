"""The function's timeline module (functions/downloader/timeline.py), for the drivers.

Loaded from its file rather than copied, so the function and the report encode, decode and
derive byte-arrival timelines with one definition. The function's folder is not a package
(its zip's root is the handler's import path), hence the import by path.
"""

import importlib.util

from fanout import paths

_spec = importlib.util.spec_from_file_location("fanout_function_timeline", paths.FUNCTIONS / "downloader" / "timeline.py")
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)

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
