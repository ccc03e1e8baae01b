"""A cell's aggregate figures over its steady window, as warp reports them: the bytes all its
downloads received within the window over the window's length (decimal GB/s), and the GET
requests they made within it per second.

The fan-out question is whether the total keeps scaling with the functions; the per-download
percentiles cannot say, since they fall as the total rises. A download that straddles an edge of
the window counts pro rata: its bytes by its byte-arrival timeline where its record carries one
(the share of each interval inside the window), else by the share of its duration inside it; its
requests by the share of its duration. Method: docs/statistics.md, *Aggregate figures*.
"""

from collections.abc import Callable, Sequence

from fanout.common import function_modules
from fanout.results import concurrency

GB = 1e9  # decimal, as warp's and the tables' MB/s
UNITS = "GB/s = bytes / s / 10^9 (decimal); GET/s: GetObject requests per second, ranged parts included"
COLUMNS = ("aggregate_gb_per_s", "aggregate_gets_per_s", "aggregate_window_s")


def window(downloads: Sequence[dict], target: int | None) -> tuple[float, float] | None:
    """The cell's steady window in ms (concurrency.steady_window), None when it has no length."""
    intervals = [(d["start_ms"], d["end_ms"]) for d in downloads if "start_ms" in d and "end_ms" in d]
    if not intervals:
        return None
    low, high = concurrency.steady_window(intervals, target)
    return (low, high) if high > low else None


def of(downloads: Sequence[dict], target: int | None, gets: Callable[[dict], int | None]) -> dict:
    """COLUMNS of a cell's downloads: aggregate GB/s, GETs per second (None when a download's
    record says nothing of its requests, as `crt`'s) and the window's length in seconds; all
    None without a steady window. `gets(download)`: the GetObject requests it made."""
    found = window(downloads, target)
    if found is None:
        return dict.fromkeys(COLUMNS)
    low, high = found
    seconds = (high - low) / 1000
    received = sum(bytes_within(d, low, high) for d in downloads)
    counts = [gets(d) for d in downloads]
    known = [c for c in counts if c is not None]
    requests = sum(c * _share(d, low, high) for c, d in zip(known, downloads)) if len(known) == len(counts) else None
    return {"aggregate_gb_per_s": received / seconds / GB,
            "aggregate_gets_per_s": None if requests is None else requests / seconds,
            "aggregate_window_s": seconds}  # fmt: skip


def bytes_within(download: dict, low: float, high: float) -> float:
    """The bytes `download` received within [low, high) (ms): from its timeline, each interval's
    bytes pro rata to the part of it inside the window; without one, pro rata by time."""
    if not download.get("timeline"):
        return download["bytes"] * _share(download, low, high)
    step = download["timeline_interval_ms"]
    total = 0.0
    for i, count in enumerate(function_modules.load("timeline").decode(download["timeline"])):
        start = download["start_ms"] + i * step
        total += count * _overlap(start, start + step, low, high) / step
    return total


def _share(download: dict, low: float, high: float) -> float:
    """The share of the download's duration inside [low, high)."""
    start, end = download["start_ms"], download["end_ms"]
    if end <= start:
        return 1.0 if low <= start < high else 0.0
    return _overlap(start, end, low, high) / (end - start)


def _overlap(start: float, end: float, low: float, high: float) -> float:
    return max(0.0, min(end, high) - max(start, low))


def pooled(parts: Sequence[dict]) -> dict:
    """COLUMNS of a cell made of several runs (each with a steady window of its own, of()): the
    bytes and requests of every window over their summed length."""
    timed = [part for part in parts if part.get("aggregate_window_s")]
    if not timed:
        return dict.fromkeys(COLUMNS)
    seconds = sum(part["aggregate_window_s"] for part in timed)
    rates = {name: None if any(part[name] is None for part in timed)
             else sum(part[name] * part["aggregate_window_s"] for part in timed) / seconds
             for name in COLUMNS[:2]}  # fmt: skip
    return rates | {"aggregate_window_s": seconds}
