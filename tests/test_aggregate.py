"""A cell's aggregate figures over its steady window (fanout.results.aggregate): bytes and GETs
of every download within the window over its length, a download straddling an edge pro rata by
its byte-arrival timeline where it has one, else by time; the expected figures worked by hand."""

import pytest

from fanout.common import function_modules
from fanout.results import aggregate
from fanout.workloads.download import report

TIMELINE = function_modules.load("timeline")


def download(start_ms: int, end_ms: int, size: int, requests: int | None = 3, **fields) -> dict:
    return {"start_ms": start_ms, "end_ms": end_ms, "bytes": size, "seconds": (end_ms - start_ms) / 1000,
            "requests": requests, "strategy": "download_file", "concurrency_limit": 2, **fields}  # fmt: skip


def test_a_download_straddling_the_window_counts_by_the_share_of_its_time_inside_it():
    # Target 2: both run from 500 ms, and B, the last to start, starts then: the window runs to
    # the first end, A's at 1000 ms. Half of each download falls inside it.
    a, b = download(0, 1000, 100_000_000), download(500, 1500, 200_000_000)
    found = aggregate.of([a, b], 2, report.gets)
    assert found["aggregate_window_s"] == pytest.approx(0.5)
    assert found["aggregate_gb_per_s"] == pytest.approx((50_000_000 + 100_000_000) / 0.5 / 1e9)
    # download_file sends a HeadObject, then two GETs here: one GET of each inside the window.
    assert found["aggregate_gets_per_s"] == pytest.approx(2 / 0.5)


def test_a_timeline_says_which_bytes_arrived_inside_the_window():
    interval, text = TIMELINE.encode([100, 0, 300], 10)  # 10 ms intervals from its start
    timed = download(0, 30, 400, timeline=text, timeline_interval_ms=interval)
    assert aggregate.bytes_within(timed, 10, 25) == pytest.approx(150)  # nothing in [10, 20), half of 300 after
    assert aggregate.bytes_within(dict(timed, timeline=None), 10, 25) == pytest.approx(400 * 15 / 30)  # by time


def test_without_requests_in_the_records_there_is_no_request_rate():
    crt = [download(0, 1000, 10, requests=None), download(0, 1000, 10, requests=None)]
    found = aggregate.of(crt, 2, report.gets)
    assert found["aggregate_gets_per_s"] is None and found["aggregate_gb_per_s"] == pytest.approx(20 / 1e9)


def test_a_cell_of_several_runs_pools_their_windows():
    parts = [{"aggregate_gb_per_s": 1.0, "aggregate_gets_per_s": 10.0, "aggregate_window_s": 1.0},
             {"aggregate_gb_per_s": 4.0, "aggregate_gets_per_s": None, "aggregate_window_s": 3.0},
             dict.fromkeys(aggregate.COLUMNS)]  # fmt: skip
    assert aggregate.pooled(parts) == {"aggregate_gb_per_s": pytest.approx(13 / 4), "aggregate_gets_per_s": None,
                                       "aggregate_window_s": 4.0}  # fmt: skip
    assert aggregate.pooled([dict.fromkeys(aggregate.COLUMNS)]) == dict.fromkeys(aggregate.COLUMNS)


def test_gets_leave_out_the_head_object_a_strategy_sends_first():
    assert report.gets(download(0, 1, 16 << 20, requests=3)) == 2  # download_file: HeadObject, two parts
    assert report.gets(download(0, 1, 16 << 20, requests=1, strategy="stream")) == 1
    assert report.gets(download(0, 1, 16 << 20, requests=None, strategy="crt")) is None
