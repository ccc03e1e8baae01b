"""The byte-arrival timeline of one download, and the figures derived from it.

Pure Python, no AWS: the function records and encodes the series, and the drivers decode it
and derive from it with this same module (fanout.workloads.download.timeline loads this file), so
both sides read one definition. The series, its encoding and each figure's definition:
docs/network-model.md, "The timeline of one download".
"""

import base64

INTERVAL_MS = 10
MAX_COUNTS = 90_000  # 900 s at 10 ms: a longer series (only a stepping test clock makes one) is merged
ENCODED_LIMIT = 192 * 1024
PEAK_WINDOW_S = 1.0
TAIL_FRACTION = 0.25
RISE_WINDOW_S = 0.1
KNEE_FRACTION = 0.98
KNEE_SLACK_BYTES = 256 * 1024  # one read (strategies.READ_SIZE): the series is recorded read by read


class Recorder:
    """Bytes per `interval_ms` (INTERVAL_MS, doubled while the series would exceed MAX_COUNTS)
    from `started` (a time.monotonic() value); not thread-safe, the caller (measure.Progress)
    holds its lock."""

    def __init__(self, started: float):
        self.started = started
        self.interval_ms = INTERVAL_MS
        self.counts: list[int] = []

    def add(self, at: float, count: int, since: float | None = None) -> None:
        """`count` bytes handed over at `at`, which arrived evenly from `since` on (None, or not
        before `at`: all at `at`): each interval gets its share of the stretch, rounded so that
        the shares add up to `count` (docs/network-model.md, "The timeline of one download")."""
        last = self._index(at)  # once per read, as each read calls this: its CPU is part of the figures
        while last >= MAX_COUNTS:
            self.counts = _merge_pairs(self.counts)
            self.interval_ms *= 2
            last = self._index(at)
        if last >= len(self.counts):
            self.counts.extend([0] * (last + 1 - len(self.counts)))
        given = 0
        if since is not None and since < at and count > 0:
            d = self.interval_ms / 1000
            for i in range(self._index(since), last):
                share = round(count * (self.started + (i + 1) * d - since) / (at - since)) - given
                self.counts[i] += share
                given += share
        self.counts[last] += count - given

    def _index(self, at: float) -> int:
        return max(0, int((at - self.started) * 1000 // self.interval_ms))


def encode(counts: list[int], interval_ms: int) -> tuple[int, str]:
    """(interval in ms, text) of the series, coarsened until the text fits ENCODED_LIMIT."""
    while True:
        text = base64.b64encode(b"".join(_varint(n) for n in counts)).decode("ascii")
        if len(text) <= ENCODED_LIMIT:
            return interval_ms, text
        counts = _merge_pairs(counts)
        interval_ms *= 2


def decode(text: str) -> list[int]:
    counts, value, shift = [], 0, 0
    for byte in base64.b64decode(text):
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            counts.append(value)
            value, shift = 0, 0
    return counts


def derive(counts: list[int], interval_ms: int, seconds: float) -> dict:
    """The record's derived fields of a series (defined in docs/network-model.md, "The timeline of one download")."""
    d = interval_ms / 1000
    cumulative = [0]
    for n in counts:
        cumulative.append(cumulative[-1] + n)
    total = cumulative[-1]
    complete = min(int(seconds / d), len(counts))
    k = max(1, round(PEAK_WINDOW_S / d))
    if complete >= k:
        peak = max(cumulative[i + k] - cumulative[i] for i in range(complete - k + 1)) / (k * d)
    else:
        peak = total / seconds if seconds > 0 else 0.0
    sustained = _slope(range(int((1 - TAIL_FRACTION) * complete), complete + 1), cumulative, d, peak)
    first = next((i for i, n in enumerate(counts) if n), 0)
    levels = [cumulative[i] - sustained * i * d for i in range(first, complete + 1)]
    window = max(1, round(RISE_WINDOW_S / d))
    rises, lows = _rises(_trailing_means(levels, window))
    most = max(rises, default=0.0)
    near = most - max((1 - KNEE_FRACTION) * most, KNEE_SLACK_BYTES)
    middle = (window - 1) // 2
    top = rises.index(most) if rises else 0
    excess = levels[max(0, top - middle)] - levels[max(0, lows[top] - middle)] if levels else 0.0
    knee = first + max(0, next((i for i, r in enumerate(rises) if r >= near), 0) - middle)
    return {
        "peak_mb_per_s": peak / 1e6,
        "sustained_mb_per_s": sustained / 1e6,
        "burst_excess_bytes": round(excess),
        "burst_bytes": cumulative[knee],
    }


def record_fields(recorder: Recorder, seconds: float) -> dict:
    """The timeline fields of a download record: the encoded series and what derives from it."""
    interval, text = encode(recorder.counts, recorder.interval_ms)
    return {"timeline_interval_ms": interval, "timeline": text,
            **derive(decode(text), interval, seconds)}


def _trailing_means(levels: list[float], window: int) -> list[float]:
    """Each level averaged with the `window` - 1 before it, the first level standing in for
    those before the start."""
    padded = [levels[0]] * (window - 1) + levels if levels else []
    running = [0.0]
    for level in padded:
        running.append(running[-1] + level)
    return [(running[i + window] - running[i]) / window for i in range(len(levels))]


def _rises(levels: list[float]) -> tuple[list[float], list[int]]:
    """Each level's rise above the lowest level before it (itself included), and where that
    lowest level is (its first index)."""
    rises, lows, low = [], [], 0
    for i, level in enumerate(levels):
        if level < levels[low]:
            low = i
        rises.append(level - levels[low])
        lows.append(low)
    return rises, lows


def _slope(boundaries: range, cumulative: list[int], d: float, default: float) -> float:
    """Least-squares bytes per second of cumulative[i] against i * d over `boundaries`."""
    if len(boundaries) < 2:
        return default
    mean_i = sum(boundaries) / len(boundaries)
    mean_c = sum(cumulative[i] for i in boundaries) / len(boundaries)
    spread = sum((i - mean_i) ** 2 for i in boundaries)
    return sum((i - mean_i) * (cumulative[i] - mean_c) for i in boundaries) / spread / d


def _merge_pairs(counts: list[int]) -> list[int]:
    return [sum(counts[i:i + 2]) for i in range(0, len(counts), 2)]


def _varint(n: int) -> bytes:
    if n < 0:  # unsigned: a negative count would never end the loop below
        raise ValueError(f"a timeline count is bytes received, never negative: {n}")
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        if n:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)
