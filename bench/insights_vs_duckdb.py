"""Local Logs Insights evaluator vs DuckDB on the download-percentiles aggregation.

Both engines get the same JSON log records: the evaluator as FilterLogEvents-shaped events in
memory, DuckDB as the same messages in a JSONL file (written before the clock starts). Each parses
the JSON and computes the same percentile table; the ratio of their times is the figure of merit
(target: the evaluator within 5x of DuckDB).

The evaluator runs on one core, so the baseline is DuckDB on one thread (SET threads=1); the
ratio against DuckDB's default (all cores) is printed for information, since it varies with the
machine's cores and load. The three are run in turn, REPEATS times, and each one's median time
is compared, so that a disturbance hits all three alike and one slow run does not decide.
Set BENCH_INSIGHTS_EVENTS to change the 1,000,000.
"""

import json
import math
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

import duckdb

from fanout import insights

EVENTS = int(os.environ.get("BENCH_INSIGHTS_EVENTS", 1_000_000))
REPEATS = 5
TARGET_RATIO = 5.0
PERCENTILES = (25, 50, 75, 90, 99)
GROUP_BY = ("experiment_tag", "memory_size", "concurrency_limit", "mode")


def records(count: int, seed: int = 7):
    """Download records shaped like the function's log lines (Powertools keys included)."""
    rng = random.Random(seed)
    base_ms = 1_714_564_800_000
    for seq in range(count):
        seconds = rng.lognormvariate(0.5, 0.4)
        memory = rng.choice((1024, 2048))
        yield base_ms + seq, {
            "level": "INFO", "location": "record:57", "message": "download",
            "timestamp": "2024-05-01 12:00:00,123+0000", "service": "s3-fanout", "event": "download",
            "run_id": "20240501T120000-abc123", "seq": seq, "experiment_tag": rng.choice(("base", "tuned")),
            "concurrency_limit": 500, "memory_size": memory, "mode": rng.choice(("download_file", "stream")),
            "bytes": 268435456, "seconds": seconds, "ttfb_seconds": seconds / 50,
            "mbps": 268435456 * 8 / seconds / 1e6, "mib_per_s": 256 / seconds,
            "start_ms": base_ms + seq, "end_ms": base_ms + seq + int(seconds * 1000),
            "cold_start": seq % 50 == 0, "env_id": f"env-{seq % 500}", "receive_count": 1,
            "message_id": f"m-{seq}", "request_id": f"r-{seq}", "s3_request_id": f"s3-{seq}",
        }  # fmt: skip


def duckdb_sql(path: Path) -> str:
    stats = ["count(*) AS downloads"]
    for column, expr in (("seconds", "seconds"), ("mb_per_s", "bytes / seconds / 1000000")):
        stats += [f"min({expr}) AS {column}_min", f"avg({expr}) AS {column}_avg", f"max({expr}) AS {column}_max"]
        stats += [f"quantile_cont({expr}, {p / 100}) AS {column}_p{p}" for p in PERCENTILES]
    keys = ", ".join(GROUP_BY)
    return (f"SELECT {keys}, {', '.join(stats)} FROM read_json('{path}', format='newline_delimited') "
            f"WHERE event = 'download' GROUP BY {keys} ORDER BY {keys}")  # fmt: skip


def interleaved_medians(contenders: dict, repeats: int) -> tuple[dict, dict]:
    """Median seconds of each contender, run in turn `repeats` times, and each one's last value."""
    times, values = {name: [] for name in contenders}, {}
    for _ in range(repeats):
        for name, fn in contenders.items():
            started = time.perf_counter()
            values[name] = fn()
            times[name].append(time.perf_counter() - started)
    return {name: statistics.median(seconds) for name, seconds in times.items()}, values


def duckdb_runner(sql: str, threads: int | None):
    """A function running `sql` on its own DuckDB connection (`threads` None: DuckDB's default)."""
    connection = duckdb.connect()
    if threads is not None:
        connection.execute(f"SET threads = {threads}")

    def run():
        cursor = connection.sql(sql)
        return [dict(zip(cursor.columns, values)) for values in cursor.fetchall()]

    return run


def check_same(ours: list, theirs: list) -> None:
    """Both engines must produce the same table, or the timing comparison means nothing."""
    assert len(ours) == len(theirs), (len(ours), len(theirs))
    for row, other in zip(ours, theirs):
        for name, value in other.items():
            if isinstance(value, float):
                assert math.isclose(row[name], value, rel_tol=1e-9), (name, row[name], value)
            else:
                assert row[name] == value, (name, row[name], value)


def main() -> None:
    events, messages = [], []
    for timestamp, record in records(EVENTS):
        message = json.dumps(record)
        messages.append(message)
        events.append({"timestamp": timestamp, "message": message, "logStreamName": "s", "ingestionTime": timestamp})
    query = insights.load_query("download-percentiles")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "messages.jsonl"
        path.write_text("\n".join(messages) + "\n")
        del messages
        sql = duckdb_sql(path)
        contenders = {
            "local evaluator": lambda: insights.evaluate(query, events).rows,
            "duckdb, 1 thread": duckdb_runner(sql, threads=1),
            f"duckdb, {os.cpu_count()} cores": duckdb_runner(sql, threads=None),
        }
        seconds, values = interleaved_medians(contenders, REPEATS)
    ours, single, default = contenders
    check_same(values[ours], values[single])
    check_same(values[ours], values[default])
    ratio = seconds[ours] / seconds[single]
    print(f"insights_vs_duckdb: {EVENTS:,} events through download-percentiles, median of {REPEATS} interleaved runs")
    for name, median in seconds.items():
        print(f"  {name:<18} {median:6.2f} s  ({EVENTS / median:,.0f} events/s)")
    print(f"  ratio {ratio:.2f}x of DuckDB on 1 thread (target: within {TARGET_RATIO:.0f}x) -> "
          f"{'OK' if ratio <= TARGET_RATIO else 'SLOWER THAN TARGET'}")
    print(f"  for information: {seconds[ours] / seconds[default]:.2f}x of DuckDB on its default "
          f"{os.cpu_count()} threads")


if __name__ == "__main__":
    main()
