"""Local Logs Insights evaluator vs DuckDB on the download-percentiles aggregation.

Both engines get the same input: one JSONL file of the function's log records (written before
the clock starts), which each reads from disk inside its timed run, the evaluator as one
FilterLogEvents-shaped event per line, DuckDB with read_json. Each parses the JSON and computes
the same percentile table (checked equal); the ratio of their times is the figure of merit
(target: the evaluator within 5x of DuckDB). The grouping keys are the saved query's own.

The evaluator runs on one core, so the baseline is DuckDB on one thread (SET threads=1); the
ratio against DuckDB's default (all cores) is printed for information, since it varies with the
machine's cores and load. Each repeat times the evaluator and each DuckDB, alternating which goes
first (bench._ratios.interleaved), REPEATS times; the figure is the median of the paired ratios.
Set BENCH_INSIGHTS_EVENTS to change the 1,000,000 and BENCH_INSIGHTS_REPEATS the 5.
"""

import json
import math
import os
import random
import statistics
import tempfile
from pathlib import Path

import duckdb

from bench._ratios import interleaved, judge, paired_median, timer
from fanout import insights
from fanout.insights import syntax

EVENTS = int(os.environ.get("BENCH_INSIGHTS_EVENTS", 1_000_000))
REPEATS = int(os.environ.get("BENCH_INSIGHTS_REPEATS", 5))
TARGET_RATIO = 5.0
PERCENTILES = (25, 50, 75, 90, 99)
QUERY = "download-percentiles"


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
            "concurrency_limit": 500, "memory_size": memory, "object_size": 268435456,
            "strategy": rng.choice(("download_file", "stream")),
            "bytes": 268435456, "seconds": seconds, "ttfb_seconds": seconds / 50,
            "mbps": 268435456 * 8 / seconds / 1e6, "mib_per_s": 256 / seconds,
            "start_ms": base_ms + seq, "end_ms": base_ms + seq + int(seconds * 1000),
            "cold_start": seq % 50 == 0, "env_id": f"env-{seq % 500}", "receive_count": 1,
            "message_id": f"m-{seq}", "request_id": f"r-{seq}", "s3_request_id": f"s3-{seq}",
        }  # fmt: skip


def group_by(query: str) -> list[str]:
    """The names the query's stats command groups by, in its order."""
    [stats] = [command for command in syntax.parse(query).commands if isinstance(command, syntax.Stats)]
    return [name for _, name in stats.groups]


def duckdb_sql(path: Path, keys: list[str]) -> str:
    stats = ["count(*) AS downloads"]
    for column, expr in (("seconds", "seconds"), ("mb_per_s", "bytes / seconds / 1000000")):
        stats += [f"min({expr}) AS {column}_min", f"avg({expr}) AS {column}_avg", f"max({expr}) AS {column}_max"]
        stats += [f"quantile_cont({expr}, {p / 100}) AS {column}_p{p}" for p in PERCENTILES]
    keys = ", ".join(keys)
    return (f"SELECT {keys}, {', '.join(stats)} FROM read_json('{path}', format='newline_delimited') "
            f"WHERE event = 'download' GROUP BY {keys} ORDER BY {keys}")  # fmt: skip


def evaluator_runner(query: str, path: Path):
    """A function reading the JSONL file as FilterLogEvents-shaped events and evaluating `query`."""

    def run():
        with path.open() as lines:
            events = [{"timestamp": number, "message": line} for number, line in enumerate(lines)]
        return insights.evaluate(query, events).rows

    return run


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
    query = insights.load_query(QUERY)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "messages.jsonl"
        path.write_text("".join(json.dumps(record) + "\n" for _, record in records(EVENTS)))
        sql = duckdb_sql(path, group_by(query))
        ours = evaluator_runner(query, path)
        single, default = duckdb_runner(sql, threads=1), duckdb_runner(sql, threads=None)
        check_same(ours(), single())
        check_same(ours(), default())
        mine, theirs = interleaved(timer(ours), timer(single), REPEATS)
        mine_again, all_cores = interleaved(timer(ours), timer(default), REPEATS)
    ratio = judge("evaluator / DuckDB 1 thread, seconds", paired_median(mine, theirs), at_most=TARGET_RATIO)
    information = judge(f"evaluator / DuckDB {os.cpu_count()} threads, seconds", paired_median(mine_again, all_cores))
    print(f"insights_vs_duckdb: {EVENTS:,} events through {QUERY} from one JSONL file, "
          f"{REPEATS} interleaved pairs per baseline")
    for name, seconds in (("local evaluator", mine + mine_again), ("duckdb, 1 thread", theirs),
                          (f"duckdb, {os.cpu_count()} threads", all_cores)):  # fmt: skip
        median = statistics.median(seconds)
        print(f"  {name:<18} median {median:6.2f} s  ({EVENTS / median:,.0f} events/s)")
    print(f"  median paired ratio {ratio.value:.2f}x of DuckDB on 1 thread (target: within {TARGET_RATIO:.0f}x) -> "
          f"{'OK' if ratio.met else 'SLOWER THAN TARGET'}")
    print(f"  for information: {information.value:.2f}x of DuckDB on its default {os.cpu_count()} threads")


if __name__ == "__main__":
    main()
