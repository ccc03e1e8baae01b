"""The byte-arrival timeline of one download, and the figures derived from it.

Pure Python, no AWS: the function records and encodes the series, and the drivers decode it
and derive from it with this same module (fanout.workloads.download.timeline loads this file), so both sides read
one definition.

The series: bytes received per fixed interval, counted when each read of the download hands
its bytes over (a read is 256 KiB for both modes, see measure.py), in the interval of the
moment it did, from the download's start. The resolution is INTERVAL_MS (10 ms), coarsened by
merging pairs of intervals until the encoding fits ENCODED_LIMIT characters, so that the
longest download a function can run (900 s) still fits one CloudWatch log event (256 KB) with
room for the rest of the record: at most 5 bytes per interval (a varint below 2^35 bytes) make
900 s at 40 ms 22,500 x 5 = 112,500 bytes, 150,000 characters of base64; so a download keeps
10 ms up to 225 s at any rate, and at least 40 ms at 900 s.

Encoding: each count as an unsigned LEB128 varint, the bytes in standard base64 (JSON-safe).

Derived figures (all rates decimal MB/s = 10^6 bytes/s), from the series c[0..n-1] of interval
d, the download's `seconds`, with C(i) = c[0] + ... + c[i-1] the bytes received by the
boundary i*d, and m = floor(seconds / d) the number of complete intervals:
- peak_mb_per_s: the most bytes in PEAK_WINDOW_S (1 s, k = round(1 s / d) intervals) of
  complete intervals, max over i of (C(i+k) - C(i)) / (k d); when m < k, bytes / seconds.
- sustained_mb_per_s: the tail's rate: the least-squares slope of C(i) against i d over the
  boundaries of the last quarter, floor((1 - TAIL_FRACTION) m) <= i <= m (at least two; else
  the peak). A slope, not bytes over time: the reads in progress on each connection when the
  tail begins add up to one read (256 KiB) per connection to the tail's bytes, an offset that
  a ratio would count as rate (6% of a 7 MB tail on four connections) and a slope ignores.
- burst_excess_bytes: the most bytes received above the sustained rate over any stretch of
  the download from the first interval with bytes (f) on. With D(i) = C(i) - S i d and A(i)
  the mean of D over the RISE_WINDOW_S before i (0.1 s, w = round(0.1 s / d) boundaries; D is
  D(f) before f): the stretch j <= i with the largest rise A(i) - A(j) (f <= j <= i <= m, first
  found), both ends moved back to their window's middle (h = (w - 1) // 2 boundaries, not
  before f), and its rise on D itself. The averages find the stretch, D measures it: bytes
  land one read (256 KiB per connection) at a time, so the largest rise of D alone starts in a
  gap between reads and ends on a bunch of them (1.05 of the bucket on 8 connections), while
  the averages' own rise cuts the stretch's corners (0.97 of it after a sharp slow start,
  0.98 measured on D: the middle of a window is not quite where a lopsided corner is). Under a
  token bucket that starts full this is the bucket's size: the bytes above the refill rate in
  any stretch are at most the credit at its start, and a full bucket gives them all once the
  draw exceeds the refill rate, even when it does so only after a slower start (parallel GETs
  whose responses begin one after another: counted from the first byte instead, the slow
  start's shortfall below the sustained rate came off the bucket, 0.59 of it on 8 connections).
- burst_bytes: bytes received before the rate falls to the sustained level: C(i) at the first
  boundary (the knee) where the averages' rise A(i) - min over f <= j <= i of A(j) comes within
  max(2% of the largest, 256 KiB) of the largest, moved back h boundaries. The slack keeps one
  late read from moving the knee far into the sustained part; it makes the knee early by at
  most that many bytes of excess.
These describe a burst only for a download that outlasts it; one that ends inside its burst has
a "sustained" rate that is its burst rate and burst_bytes close to all its bytes.
"""

import base64

INTERVAL_MS = 10
MAX_COUNTS = 90_000  # 900 s at 10 ms: a longer series (only a stepping test clock makes one) is merged
ENCODED_LIMIT = 192 * 1024
PEAK_WINDOW_S = 1.0
TAIL_FRACTION = 0.25
RISE_WINDOW_S = 0.1
KNEE_FRACTION = 0.98
KNEE_SLACK_BYTES = 256 * 1024  # one read: the series moves in steps of one read (measure.CHUNK_SIZE)


class Recorder:
    """Bytes per `interval_ms` (INTERVAL_MS, doubled while the series would exceed MAX_COUNTS)
    from `started` (a time.monotonic() value); not thread-safe, the caller (measure.Progress)
    holds its lock."""

    def __init__(self, started: float):
        self.started = started
        self.interval_ms = INTERVAL_MS
        self.counts: list[int] = []

    def add(self, at: float, count: int) -> None:
        index = max(0, int((at - self.started) * 1000 // self.interval_ms))
        while index >= MAX_COUNTS:
            self.counts = _merge_pairs(self.counts)
            self.interval_ms *= 2
            index //= 2
        if index >= len(self.counts):
            self.counts.extend([0] * (index + 1 - len(self.counts)))
        self.counts[index] += count


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
    """The record's derived fields of a series (see the module docstring for the definitions)."""
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
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        if n:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)
