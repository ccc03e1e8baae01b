"""Report computations against expectations computed independently with numpy, and the report's
console and files read as a user would."""

import csv
import io
import json
from dataclasses import replace
from types import SimpleNamespace

import markupsafe
import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

import fanout.local.network
import fanout.workloads.download.timeline
from fanout.results import cells, concurrency, figures, markdown, run_cost, log_records as run_logs, run_folders as runs, run_record, sections, stats, summary as summaries, tables, terminal
from fanout.workloads.download import pressure
from fanout import cli, insights
from fanout.workloads.download import costs as download_costs, plots, report
from fanout.stages import report as reporting
from fanout.local import backends
from fanout.workloads import registry as workloads
from fanout.cloud import stack as stacks
from fanout.local.network import late, truth
from fanout.common.sizes import format_size
from tests.harness.read_only import read_only

RUN = "20250101T000000Z-abc123"
MIB = 2**20
DOWNLOAD = cells.of(workloads.get("download").workload)
CELLS = [DOWNLOAD.Cell(512, 4, MIB, "download_file", "a"), DOWNLOAD.Cell(1024, 4, MIB, "download_file", "a"),
         DOWNLOAD.Cell(1024, 8, 64 * MIB, "stream", "b"), DOWNLOAD.Cell(1024, 8, MIB, "stream", "b")]


def overlap_counts(starts, ends, times):
    """Downloads running at each time, by brute force over a grid: [start, end) intervals."""
    return ((starts[:, None] <= times) & (times < ends[:, None])).sum(axis=0)


@pytest.mark.parametrize("seed", range(20))
def test_peak_and_mean_overlap_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    starts = rng.integers(0, 500, n)
    ends = starts + rng.integers(1, 120, n)
    grid = np.arange(0, 700)  # integer-ms intervals: the per-ms counts are exact
    counts = overlap_counts(starts, ends, grid)
    intervals = list(zip(starts.tolist(), ends.tolist()))
    assert concurrency.peak(intervals) == counts.max()
    low, high = sorted(rng.integers(0, 650, 2).tolist())
    high += 1
    assert concurrency.mean(intervals, low, high) == pytest.approx(counts[low:high].mean())


def test_touching_downloads_do_not_overlap():
    assert concurrency.peak([(0, 10), (10, 20), (20, 30)]) == 1
    assert concurrency.peak([(0, 10), (9, 20)]) == 2


def test_steady_window_leaves_out_the_ramp_and_the_drain():
    # Target 3: the third download starts at 40 (the ramp before), the last one at 100 (the drain after).
    intervals = [(0, 60), (20, 90), (40, 80), (80, 130), (90, 150), (100, 120)]
    assert concurrency.steady_window(intervals, 3) == (40, 100)
    # 3 running over [40, 60), then 2 until 100 (one ends as the next starts, at 80 and at 90).
    assert concurrency.mean(intervals, 40, 100) == pytest.approx((3 * 20 + 2 * 40) / 60)


def test_steady_window_of_a_target_never_reached_starts_at_the_peak():
    intervals = [(0, 50), (10, 60), (30, 90), (70, 100)]
    assert concurrency.steady_window(intervals, 8) == (30, 70)  # the peak of 3 is first reached at 30


@pytest.mark.parametrize("target", [None, 0])
def test_steady_window_without_a_target_starts_at_the_peak(target):
    intervals = [(0, 50), (10, 60), (30, 90), (70, 100)]
    assert concurrency.steady_window(intervals, target) == (30, 70)


def test_steady_window_of_a_single_wave_runs_to_the_first_end():
    intervals = [(0, 50), (5, 40), (10, 60)]
    assert concurrency.steady_window(intervals, 3) == (10, 40)
    assert concurrency.mean(intervals, *concurrency.steady_window(intervals, 3)) == 3


def synthetic_records(seed=0, per_cell=60, cell_keys=CELLS):
    """Download records of RUN for each cell, plus an error record and another run's record.
    Each cell's downloads run one after another in `concurrency_limit` busy slots, the cells
    side by side (one run, so each download ran at or above its cell's target but at the tail)."""
    rng = np.random.default_rng(seed)
    records, seq, t0 = [], 0, 1_700_000_000_000
    for cell in cell_keys:
        memory, limit, size, strategy, tag = cell.memory_size, cell.concurrency_limit, cell.object_size, cell.strategy, cell.experiment_tag
        slots = [t0 + int(rng.integers(0, 50)) for _ in range(limit)]
        for i in range(per_cell):
            seconds = float(rng.lognormal(0, 0.5))
            start = slots[i % limit]
            slots[i % limit] += int(seconds * 1000) + 5
            records.append({
                "event": "download", "run_id": RUN, "seq": seq, "experiment_tag": tag, "memory_size": memory,
                "concurrency_limit": limit, "object_size": size, "strategy": strategy, "bytes": size, "seconds": seconds,
                "ttfb_seconds": seconds / 10,
                "mbps": size * 8 / seconds / 1e6, "start_ms": start, "end_ms": start + int(seconds * 1000),
                "cold_start": bool(rng.random() < 0.2), "receive_count": 1,
            })  # fmt: skip
            seq += 1
    records.append({"event": "error", "run_id": RUN, "seq": seq, "error_type": "InjectedFailure", "receive_count": 5})
    other = dict(records[0], run_id="20250101T000000Z-ffffff", seconds=999.0)
    return records, other


def brute_at_target(cell: list[dict], run: list[dict], target: int, fraction: float = 0.9) -> list[dict]:
    """The downloads of `cell` whose mean count of the run's downloads running, over their own
    milliseconds, is at least `fraction` of `target`."""
    def mean_running(d):
        counts = [sum(o["start_ms"] <= ms < o["end_ms"] for o in run) for ms in range(d["start_ms"], d["end_ms"])]
        return sum(counts) / len(counts)

    return [d for d in cell if mean_running(d) >= fraction * target]


def as_events(records):
    lines = [json.dumps(r) for r in records] + ["START RequestId: 1 Version: $LATEST"]
    return [{"timestamp": 1_700_000_000_000 + i, "message": line} for i, line in enumerate(lines)]


def test_percentile_table_matches_numpy():
    records, other = synthetic_records()
    query = insights.restrict(insights.load_query("download-percentiles"), f'run_id = "{RUN}"')
    table = report.percentile_table(insights.evaluate(query, as_events(records + [other])).rows)
    assert sorted((DOWNLOAD.key(row) for row in table), key=DOWNLOAD.Cell.sort_key) == sorted(CELLS, key=DOWNLOAD.Cell.sort_key)
    for row in table:
        cell = [r for r in records if r["event"] == "download" and DOWNLOAD.key(r) == DOWNLOAD.key(row)]
        seconds = np.array([r["seconds"] for r in cell])
        mb_per_s = np.array([r["bytes"] for r in cell]) / seconds / 1e6
        assert row["n"] == len(cell)
        for values, prefix in ((seconds, "seconds"), (mb_per_s, "mb_per_s"), (mb_per_s * 8, "mbit_per_s")):
            expected = {"min": values.min(), "max": values.max(), "avg": values.mean()}
            expected |= {f"p{p}": np.percentile(values, p) for p in (25, 50, 75, 90, 99)}
            for stat, value in expected.items():
                assert row[f"{prefix}_{stat}"] == pytest.approx(value, rel=1e-9), (prefix, stat)


def test_run_records_keep_only_the_runs_records():
    records, other = synthetic_records(per_cell=5)
    found = run_logs.run_records(as_events([other] + records[::-1]), RUN)
    assert [r["seq"] for r in found] == sorted(r["seq"] for r in records)
    assert all(r["run_id"] == RUN for r in found)


def test_achieved_concurrency_and_cold_starts():
    records, _ = synthetic_records(seed=3)
    cell = [r for r in records if DOWNLOAD.key(r) == CELLS[2]]
    starts = np.array([r["start_ms"] for r in cell])
    ends = np.array([r["end_ms"] for r in cell])
    result = report.achieved_concurrency(cell)
    counts = overlap_counts(starts, ends, np.arange(starts.min(), ends.max() + 1))
    assert result["peak_concurrency"] == counts.max()
    assert result["target"] == 8
    assert result["cold_start_share"] == pytest.approx(np.mean([r["cold_start"] for r in cell]), abs=1e-4)


def summary_of(records, sent, dead=(), lambda_report=(), backend="local", network=None, limits=None):
    record = {
        "network": network, "limits": limits,
        "run_id": RUN, "backend": backend, "first_send_ms": 1_700_000_000_000, "last_send_ms": 1_700_000_000_100,
        "send_rate_per_s": 100.0, "version": "test", "failed_seqs": [], "sent": sent,
        "parameters": {"messages": sent, "experiment_tag": "a", "strategy": "download_file",
                       "strategy_from": "stack default",
                       "inject_failures": None},
        "stack": {"stack": "s", "region": "us-east-1", "endpoint": "", "memory": 512, "concurrency": 4,
                  "architecture": "x86_64", "timeout": 60, "batch_size": 1, "max_receive_count": 5,
                  "bucket": "b", "object_key": "k", "object_size": 2**20},
    }  # fmt: skip
    table = percentile_rows(records)
    downloads = [r for r in records if r["event"] == "download"]
    typed = run_record.RunRecord.from_json(record)
    return summaries.from_json({
        "run": record, "network": typed.network_label(), "limits": typed.limits_label(), "timeline": [],
        "ground_truth": truth.compare(backends.simulated(typed.backend), typed.network, downloads),
        "counts": {"requested": sent, "sent": sent, "download_records": len(downloads),
                   "seqs_downloaded": len({d["seq"] for d in downloads}), "in_percentile_table": sum(c["n"] for c in table),
                   "error_records": len(records) - len(downloads)},
        "units": report.UNITS, "lambda_window_ms": [0, 0],
        "cells": report.with_predictions(report.join_cells(table, downloads, typed.cpu_scale()), typed, downloads),
        "steady_definition": concurrency.STEADY_DEFINITION, "errors": [], "dead_lettered": list(dead),
        "cold_starts": [], "platform_errors": [], "lambda_report": list(lambda_report), "records": records,
        "cost": run_cost.summary(typed, list(lambda_report), download_costs.cell_estimate),
        "strategies": insights.evaluate(insights.load_query("strategy-comparison"), as_events(records)).rows,
        "sdk": pressure.sdk_sets(records),
    }, report.Body)  # fmt: skip


def percentile_rows(records):
    """The run's percentile table as the query path gives it: the saved query, evaluated locally."""
    query = insights.restrict(insights.load_query("download-percentiles"), f'run_id = "{RUN}"')
    return report.percentile_table(insights.evaluate(query, as_events(records)).rows)


@pytest.mark.parametrize("tags", [("1", "007"), ("007", "1.50", "2e3")])
def test_numeric_looking_tags_keep_their_cells(tags):
    keys = [DOWNLOAD.Cell(1024, 8, MIB, "stream", tag) for tag in tags]
    records, _ = synthetic_records(seed=5, per_cell=15, cell_keys=keys)
    joined = report.join_cells(percentile_rows(records), [r for r in records if r["event"] == "download"])
    assert len(joined) == len(tags)
    for cell in joined:
        own = [r for r in records if r["event"] == "download" and DOWNLOAD.key(r) == DOWNLOAD.key(cell)]
        assert len(own) == cell["n"] and cell["target"] == 8
        assert cell["peak_concurrency"] == concurrency.peak([(r["start_ms"], r["end_ms"]) for r in own])


def test_cells_come_in_numeric_order():
    keys = [DOWNLOAD.Cell(10240, 8, MIB, "stream", "a"), DOWNLOAD.Cell(512, 16, MIB, "stream", "a"),
            DOWNLOAD.Cell(1024, 8, 2 * MIB, "stream", "a"), DOWNLOAD.Cell(1024, 8, MIB, "stream", "a"),
            DOWNLOAD.Cell(512, 4, MIB, "stream", "a")]
    expected = sorted(keys, key=lambda k: (k.memory_size, k.concurrency_limit, k.object_size))
    records, _ = synthetic_records(per_cell=3, cell_keys=keys)
    downloads = [r for r in records if r["event"] == "download"]
    assert [DOWNLOAD.key(c) for c in report.join_cells(percentile_rows(records), downloads)] == expected
    assert list(plots._by_cell(downloads)) == [k.label() for k in expected]


def report_lines(events):
    """REPORT lines of Lambda's plain-text log format, evaluated with the saved lambda-report query."""
    return insights.evaluate(insights.load_query("lambda-report"), events).rows


def test_one_cell_console_report_fits_80_columns(monkeypatch):
    records, _ = synthetic_records(per_cell=40, cell_keys=CELLS[:1])
    rng = np.random.default_rng(1)
    events = [
        {"timestamp": 1_700_000_000_000 + i, "message": f"REPORT RequestId: {i}\tDuration: {d:.2f} ms\tBilled Duration: "
         f"{int(d) + 1} ms\tMemory Size: 1024 MB\tMax Memory Used: {int(rng.integers(70, 95))} MB"}
        for i, d in enumerate(rng.uniform(30, 9000, 80))
    ]  # fmt: skip
    summary = summary_of(records, sent=len(records), dead=[records[-1]["seq"]], lambda_report=report_lines(events))
    assert not report.warnings(summary)
    output = io.StringIO()
    console = Console(file=output, width=200)  # wide: nothing wraps
    terminal.show(report.sections(summary), console)
    lines = [line.rstrip() for line in output.getvalue().splitlines()]
    assert max(map(len, lines)) <= 80, "\n".join(line for line in lines if len(line) > 80)
    assert sum(line.startswith("cell: ") for line in lines) == 1  # the shared cell, once
    assert not any(title in line for line in lines for title in DOWNLOAD.titles.values() if line.lstrip().startswith(title))
    assert "percentiles: at target, from the records:" in lines and f"  {stats.PERCENTILE_METHOD};" in lines
    assert f"  every download: {backends.get('local').percentile_method}" in lines


def test_a_run_that_records_no_backend_says_so_of_its_percentiles():
    """An old run.json may not say where it ran: the report says the saved query's method is not
    recorded instead of failing on the lookup."""
    records, _ = synthetic_records(per_cell=20)
    output = io.StringIO()
    terminal.show(report.sections(summary_of(records, sent=len(records), backend=None)), Console(file=output, width=200))
    assert "  every download: not recorded" in [line.rstrip() for line in output.getvalue().splitlines()]


def test_report_files(tmp_path, monkeypatch):
    monkeypatch.setenv("FANOUT_RESULTS", str(tmp_path))
    records, _ = synthetic_records(per_cell=20)
    summary = summary_of(records, sent=len(records))
    report.write(summary)
    folder = runs.run_dir(RUN)
    lines = (folder / "records.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == records
    with open(folder / "summary.csv") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["n_all"]) for r in rows] == [c["n"] for c in summary.body.cells]  # the query's count
    assert sum(int(r["n_all"]) for r in rows) == len(records) - 1
    downloads = [r for r in records if r["event"] == "download"]
    for row in rows:  # the figures at target: the downloads a brute force finds at target
        cell = [d for d in downloads if all(str(d[name]) == row[name] for name in DOWNLOAD.fields)]
        kept = brute_at_target(cell, downloads, int(row["target"]))
        assert (int(row["n"]), int(row["n_excluded"])) == (len(kept), len(cell) - len(kept))
        assert float(row["mb_per_s_p50"]) == pytest.approx(np.median([d["bytes"] / d["seconds"] / 1e6 for d in kept]))
    assert json.loads((folder / "summary.json").read_text())["counts"]["download_records"] == len(records) - 1
    for name in ("throughput.png", "concurrency.png", "seconds_cdf.png"):
        assert (folder / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"]({name})" in (folder / "report.md").read_text()
    text = (folder / "report.md").read_text()
    assert f"every download: {backends.get('local').percentile_method}." in text
    assert "## Throughput (Mbit/s)" in text and "`mbps` of records.jsonl is Mbit/s" in text


def test_strategy_tables_have_a_row_per_strategy_per_memory_and_size():
    records, _ = synthetic_records(per_cell=30)
    downloads = [r for r in records if r["event"] == "download"]
    tables = report.strategy_tables(summary_of(records, sent=len(records)).body.strategies)
    groups = {(r["memory_size"], r["bytes"]) for r in downloads}
    titles = [f"Strategies at {m} MB, object {format_size(b)}" for m, b in sorted(groups)]
    assert [title for title, _ in tables] == titles
    for (memory, size), (_, rows) in zip(sorted(groups), tables):
        header, *body = rows
        mine = [r for r in downloads if (r["memory_size"], r["bytes"]) == (memory, size)]
        assert [row[0] for row in body] == sorted({r["strategy"] for r in mine}, key=lambda s: -np.median(
            [r["bytes"] / r["seconds"] / 1e6 for r in mine if r["strategy"] == s]))  # fastest median first
        for row in body:
            speeds = [r["bytes"] / r["seconds"] / 1e6 for r in mine if r["strategy"] == row[0]]
            assert row[1] == len(speeds)
            assert row[2:5] == pytest.approx([np.percentile(speeds, p) for p in (10, 50, 90)])


def test_missing_records_are_warned_about():
    records, _ = synthetic_records(per_cell=10)
    summary = summary_of(records, sent=len(records) + 7, dead=[len(records) + 1])
    downloaded = len(records) - 1
    (warning,) = [w for w in report.warnings(summary) if "download record" in w]
    assert f"only {downloaded} of {len(records) + 7}" in warning and "1 dead-lettered" in warning
    complete = summary_of(records, sent=downloaded, dead=[len(records)])
    # ten downloads a cell: too few at target, which the report says as information, and no warning
    assert report.warnings(complete) == []
    assert len(report.notes(complete)) == len(CELLS) and all("MULTIPLIER=" in n for n in report.notes(complete))


def modelled_downloads(model, memory=1024, count=6, size=24 * 2**20, seed=5):
    """Download records whose timelines follow `model` exactly (one environment each, full bucket),
    built with the function's own timeline module from the chunk release times of the limits."""
    from fanout.local.network.limits import RateLimit, TokenBucket, release

    timeline = fanout.workloads.download.timeline._module
    rng, shape, records = np.random.default_rng(seed), model.at(memory), []
    for i in range(count):
        limits = [RateLimit(shape.connection_rate), TokenBucket(shape.burst_bytes, shape.sustained_rate,
                                                                shape.peak_rate, now=0.0)]
        recorder, at, sent = timeline.Recorder(0.0), shape.first_byte_s, 0
        while sent < size:
            at = release(limits, 256 * 1024, at)
            sent += 256 * 1024
            recorder.add(at + 256 * 1024 / shape.connection_rate, 256 * 1024)
        seconds = at + 256 * 1024 / shape.connection_rate + float(rng.uniform(0, 0.001))
        records.append({"event": "download", "run_id": RUN, "seq": i, "experiment_tag": "a", "memory_size": memory,
                        "concurrency_limit": count, "strategy": "stream", "bytes": sent, "seconds": seconds,
                        "start_ms": 1_700_000_000_000 + i, "end_ms": 1_700_000_000_000 + i + int(seconds * 1000),
                        "env_id": f"env-{i}", "request_id": f"request-{i}", "cold_start": True, "ttfb_seconds": shape.first_byte_s + 0.01,
                        "first_byte_seconds": shape.first_byte_s * (1 + 0.01 * i),
                        **timeline.record_fields(recorder, seconds)})  # fmt: skip
    return records


def test_report_of_a_modelled_run_names_the_model_and_recovers_it(tmp_path, monkeypatch):
    monkeypatch.setenv("FANOUT_RESULTS", str(tmp_path))
    # A burst far shorter than the download, so that the tail is the sustained rate.
    values = {"burst": "16MiB", "peak_mb_per_s": 128, "sustained_mb_per_s": 16, "connection_mb_per_s": 80,
              "first_byte_ms": 20}
    model = fanout.local.network.NetworkModel("what-if", 2.0, fanout.local.network.model.parameters(values, "what-if"))
    records = modelled_downloads(model)
    summary = summary_of(records, sent=len(records), network=model.describe())
    label = "simulated network: what-if, scale 2 (rates / 2, first byte not scaled)"
    assert summary.header.network == label

    truth_rows = {row["parameter"]: row for row in summary.body.ground_truth}
    assert set(truth_rows) == {"sustained_mb_per_s", "burst_bytes", "first_byte_seconds"}
    for row in truth_rows.values():
        assert row["ratio"] == pytest.approx(1, abs=0.05), row
    assert truth_rows["burst_bytes"]["injected"] == 8 * 2**20

    output = io.StringIO()
    console = Console(file=output, width=100)
    terminal.show(report.sections(summary), console)
    assert label in output.getvalue() and "Ground truth" in output.getvalue()
    report.write(summary)
    folder = runs.run_dir(RUN)
    assert json.loads((folder / "summary.json").read_text())["network"] == label
    with open(folder / "summary.csv") as f:
        assert {row["network"] for row in csv.DictReader(f)} == {label}
    assert label in (folder / "report.md").read_text() and "## Ground truth" in (folder / "report.md").read_text()
    assert (folder / "timeline.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_modelled_run_shows_measured_against_predicted_and_says_when_the_machine_fell_short(tmp_path, monkeypatch):
    monkeypatch.setenv("FANOUT_RESULTS", str(tmp_path))
    # One connection at 10 MB/s, no bucket, no latency: a 1 MiB stream takes 1,048,576 / 10^7 s.
    model = fanout.local.network.NetworkModel("slow", 1.0, fanout.local.network.model.parameters({"connection_mb_per_s": 10}, "s"))
    keys = [DOWNLOAD.Cell(1024, 4, MIB, "stream", "kept"), DOWNLOAD.Cell(1024, 4, MIB, "stream", "missed")]
    records, _ = synthetic_records(per_cell=20, cell_keys=keys)
    for record in records:
        if record["event"] == "download":
            record["seconds"] = 0.11 if record["experiment_tag"] == "kept" else 0.2  # 1.049 and 1.907 of it
    summary = summary_of(records, sent=len(records), network=model.describe())
    assert [cell["predicted_seconds_p50"] for cell in summary.body.cells] == [0.1049, 0.1049]
    [line] = [w for w in report.warnings(summary) if "did not honour the model" in w]
    assert "tag=missed" in line and "1.907" in line and "larger NETWORK_SCALE or fewer environments" in line

    output = io.StringIO()
    terminal.show(report.sections(summary), Console(file=output, width=100))
    assert "Measured against the model" in output.getvalue() and "1.91" in output.getvalue()  # 3 digits
    report.write(summary, plots_too=False)
    folder = runs.run_dir(RUN)
    with open(folder / "summary.csv") as f:
        assert [row["predicted_seconds_p50"] for row in csv.DictReader(f)] == ["0.1049", "0.1049"]
    markdown = (folder / "report.md").read_text()
    assert "## Measured against the model" in markdown and "1.907" in markdown


def test_a_run_without_a_model_has_no_prediction_column(tmp_path, monkeypatch):
    monkeypatch.setenv("FANOUT_RESULTS", str(tmp_path))
    records, _ = synthetic_records(per_cell=5)
    for backend in ("local", "aws"):
        summary = summary_of(records, sent=len(records), backend=backend)
        report.write(summary, plots_too=False)
        with open(runs.run_dir(RUN) / "summary.csv") as f:
            assert "predicted_seconds_p50" not in next(csv.reader(f))
        assert "Measured against the model" not in (runs.run_dir(RUN) / "report.md").read_text()


def test_reports_say_how_their_numbers_were_made():
    records, _ = synthetic_records(per_cell=5)
    assert summary_of(records, sent=len(records)).header.network == "simulated network: none (loopback, not modelled)"
    assert summary_of(records, sent=len(records), backend="aws").header.network == "measured on AWS"
    assert summary_of(records, sent=len(records), backend="aws").body.ground_truth == []


def test_ground_truth_says_when_the_object_fits_in_the_burst():
    values = {"burst": "64MiB", "peak_mb_per_s": 128, "sustained_mb_per_s": 16, "connection_mb_per_s": 80,
              "first_byte_ms": 20}
    model = fanout.local.network.NetworkModel("big-burst", 1.0, fanout.local.network.model.parameters(values, "big-burst"))
    records = modelled_downloads(model, size=24 * 2**20)
    rows = summary_of(records, sent=len(records), network=model.describe()).body.ground_truth
    assert rows and all(row["inside_burst"] for row in rows)
    marked = [line for line in report._truth_rows(rows)[1:] if line[1].endswith(report.INSIDE_BURST)]
    assert len(marked) == 2  # sustained rate and burst; the first-byte latency is not a burst's
    # A 24 MiB object never leaves a 64 MiB bucket: no estimate of either, and no ratio to mislead.
    assert [(line[3], line[4]) for line in marked] == [("not estimable", None)] * 2
    assert [row["ratio"] for row in rows if not row["estimable"]] == [None, None]
    [note] = [note for note in report._truth_notes(rows) if note.startswith(report.INSIDE_BURST)]
    assert "not estimable: the object is no larger than the burst" in note
    first_byte = next(line for line in report._truth_rows(rows)[1:] if line[1].startswith("first byte"))
    assert first_byte[4] == pytest.approx(1, abs=0.1)  # still estimated: a wait is no bucket's


def test_the_ground_truth_table_fits_80_columns_with_every_cell_whole(monkeypatch):
    """The widest rows a run shows (a large memory size and bucket, both notes, an address row)
    print within 80 columns, each cell's text whole."""
    values = {"burst": "300MiB", "peak_mb_per_s": 337.5, "sustained_mb_per_s": 75, "connection_mb_per_s": 90,
              "first_byte_ms": 15, "first_byte_p90_ms": 20}
    model = fanout.local.network.NetworkModel("lambda-2024", 1.0, fanout.local.network.model.parameters(values, "lambda-2024"))
    records = [dict(r, memory_size=10240) for r in modelled_downloads(model, size=24 * 2**20)]
    ids = sorted({r["request_id"] for r in records})
    events = [{"message": late.line(i, late.FirstBytes(3, 2))} for i in ids]
    rows = truth.compare(True, model.describe(), records, events)
    rows.append(dict(rows[0], parameter="rate_factor 127.0.0.16", injected=0.5, estimated=0.4))
    console = Console(width=80, record=True, file=io.StringIO())
    terminal.show(sections.Report("", "", [report.truth_table(rows)]), console)
    lines = console.export_text().splitlines()
    assert lines and max(map(len, lines)) <= 80
    text = "\n".join(lines)
    for row in report._truth_rows(rows):
        for cell in row:
            assert tables.fmt(cell) in text
    assert f"{2 * len(ids)} of {3 * len(ids)} requests" in text and "upper bound" in text


def test_a_sweep_cells_report_says_which_environments_it_started_with(tmp_path, monkeypatch):
    monkeypatch.setenv("FANOUT_RESULTS", str(tmp_path))
    records, _ = synthetic_records(per_cell=5, cell_keys=CELLS[:1])
    summary = summary_of(records, sent=len(records))
    for environments in ("fresh", "warm (kept from the previous cell)"):
        summary.header.run = replace(summary.header.run, sweep=run_record.RunSweep("20250101T000000Z-aaaaaa", 3, environments))
        report.write(summary, plots_too=False)
        text = (runs.run_dir(RUN) / "report.md").read_text()
        assert f"sweep 20250101T000000Z-aaaaaa, cell 3: {environments} execution environments" in text
        assert "![" not in text  # no plots asked for, none linked


def test_the_report_puts_the_lambda_bill_beside_the_estimate(tmp_path, monkeypatch):
    monkeypatch.setenv("FANOUT_RESULTS", str(tmp_path))
    records, _ = synthetic_records(per_cell=20)
    events = [{"timestamp": 1_700_000_000_000 + i, "message": f"REPORT RequestId: {i}\tDuration: 999.50 ms\tBilled "
               f"Duration: 1000 ms\tMemory Size: 512 MB\tMax Memory Used: 80 MB"} for i in range(40)]  # fmt: skip
    summary = summary_of(records, sent=len(records), lambda_report=report_lines(events))
    assert summary.body.cost["billed"]["gb_seconds"] == pytest.approx(40 * 1.0 * 512 / 1024)
    report.write(summary)
    text = (runs.run_dir(RUN) / "report.md").read_text()
    assert "## Cost" in text and "(simulated durations)" in text and "estimated before the run" in text
    summary.body.cost = None  # a summary saved before the cost existed still renders
    assert "## Cost" not in markdown.document(report.sections(summary))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(1, 30)), min_size=1, max_size=25))
def test_each_download_ran_at_the_mean_overlap_of_its_own_interval(spans):
    """concurrency.ran_at against a brute force: the mean, over a download's own interval in
    1 ms steps, of how many downloads ran at each step (touching intervals do not overlap)."""
    intervals = [(float(start), float(start + length)) for start, length in spans]
    for (start, end), ran in zip(intervals, concurrency.ran_at(intervals)):
        counts = [sum(s <= t < e for s, e in intervals) for t in range(int(start), int(end))]
        assert ran == pytest.approx(sum(counts) / len(counts))
        assert concurrency.held_target(ran, 10) == (ran >= 9)


def test_a_download_of_no_length_ran_beside_those_running_then():
    assert concurrency.ran_at([(0.0, 10.0), (5.0, 5.0), (2.0, 8.0)])[1] == 3.0


# ---- saved reports: redrawn from their files, refreshed only explicitly, never with fewer records ----

QUEUE_ARN = "arn:aws:sqs:us-east-1:123456789012:s"


def folder_bytes(folder) -> dict:
    """Every file of a folder and its bytes."""
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def folder_inodes(folder) -> dict:
    return {path.name: path.stat().st_ino for path in folder.iterdir()}


def save_report(records, sent, **fields) -> dict:
    """run.json and the report files an earlier `fanout report` of these records wrote, in a
    results folder with no emulator or stack anywhere (tests' FANOUT_HOME is empty)."""
    # A message whose every delivery failed is dead-lettered after its fifth receive.
    fields.setdefault("dead", [r["seq"] for r in records if r["event"] == "error"])
    summary = summary_of(records, sent=sent, **fields)
    run = summary.header.run
    summary.header.run = replace(run, stack=replace(run.stack, backend="local", queue_arn=QUEUE_ARN))
    runs.save(summary.header.run)
    reporting.render(summaries.as_saved(summary))
    return summary


@pytest.fixture
def nowhere(tmp_path, monkeypatch):
    """Results in a temporary folder, and a FANOUT_HOME with no emulator and no stack."""
    monkeypatch.setenv("FANOUT_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("FANOUT_HOME", str(tmp_path / "home"))


def report_cli(*extra: str) -> int:
    return cli.main(["report", "--backend", "local", "--stack", "s", "--run", RUN, *extra])


def wrote_line(out: str) -> list[str]:
    """The names report says it wrote (the console wraps the line at its width)."""
    _, after = out.split("\nwrote ")
    return " ".join(after.split("\n  to ")[0].split()).split(", ")


def test_a_saved_run_reports_from_its_files_without_stack_or_emulator(nowhere, capsys):
    records, _ = synthetic_records(per_cell=10)
    save_report(records, sent=len(records))
    folder = runs.run_dir(RUN)
    before, inodes = folder_bytes(folder), folder_inodes(folder)
    assert {"throughput.png", "concurrency.png", "seconds_cdf.png", "report.md", "summary.csv"} <= set(before)
    capsys.readouterr()
    assert report_cli() == 0
    out = capsys.readouterr().out
    assert f"run {RUN}: its saved report ({len(records)} records), logs not read" in out
    assert folder_bytes(folder) == before  # byte for byte, every file
    rewritten = {name for name, inode in folder_inodes(folder).items() if inode != inodes[name]}
    assert rewritten == set(before) - {runs.RUN_FILE} == set(wrote_line(out))
    # Reading the logs needs the stack, and there is none here: the report above never asked.
    assert report_cli("--refresh") == 1
    assert "no stack 's' is deployed on the local backend" in capsys.readouterr().err
    assert folder_bytes(folder) == before


def test_wrote_lists_only_the_files_written_this_time(nowhere, capsys):
    records, _ = synthetic_records(per_cell=5)
    save_report(records, sent=len(records))
    folder = runs.run_dir(RUN)
    old_plot = (folder / "throughput.png").read_bytes()
    (folder / "notes.txt").write_text("mine\n")
    errors_only = [r for r in records if r["event"] == "error"]
    save_report(errors_only, sent=len(errors_only))  # a saved report without downloads: no plots
    capsys.readouterr()
    assert report_cli() == 0
    wrote = wrote_line(capsys.readouterr().out)
    assert wrote == [runs.RECORDS_FILE, runs.SUMMARY_FILE, "summary.csv", "report.md", "index.html"]
    assert (folder / "throughput.png").read_bytes() == old_plot and (folder / "notes.txt").read_text() == "mine\n"


def fetched_from_logs(monkeypatch, records, sent):
    """The stack and its logs as `--refresh` reads them: the stack the run was fired at, whose
    log group now holds `records` (as after a redeploy, or once logs expired)."""
    monkeypatch.setattr(stacks, "load", lambda backend, name, fields: SimpleNamespace(backend=backend.name, stack=name,
                                                                                      queue_arn=QUEUE_ARN,
                                                                                      region="us-east-1", endpoint=""))
    monkeypatch.setattr(report, "build", lambda stack, record: summary_of(records, sent=sent))


def test_refresh_with_fewer_records_refuses_and_leaves_every_file_unchanged(nowhere, monkeypatch, capsys):
    records, _ = synthetic_records(per_cell=10)
    save_report(records, sent=len(records))
    folder = runs.run_dir(RUN)
    before, inodes = folder_bytes(folder), folder_inodes(folder)
    fetched_from_logs(monkeypatch, records[:7], sent=len(records))
    capsys.readouterr()
    assert report_cli("--refresh") == 1
    out, err = capsys.readouterr()
    assert err == (f"fanout: error: refusing to replace the saved report of run {RUN}: saved {len(records)} records, "
                   f"fetched 7 from the logs; every file is kept as it was\n")  # fmt: skip
    assert "wrote" not in out
    assert folder_bytes(folder) == before and folder_inodes(folder) == inodes


def test_refresh_replaces_an_incomplete_saved_report_that_said_so(nowhere, monkeypatch, capsys):
    records, _ = synthetic_records(per_cell=10)
    downloads = [r for r in records if r["event"] == "download"]
    save_report(downloads[:12], sent=len(downloads))
    saved = " ".join((runs.run_dir(RUN) / "report.md").read_text().split())
    hint = f"`make report RUN={RUN} REFRESH=1`"
    assert f"only 12 of {len(downloads)} sent messages have a download record" in saved
    assert "this report is incomplete" in saved and f"then {hint}" in saved
    fetched_from_logs(monkeypatch, downloads, sent=len(downloads))
    assert report_cli("--refresh") == 0
    assert len((runs.run_dir(RUN) / runs.RECORDS_FILE).read_text().splitlines()) == len(downloads)
    assert "incomplete" not in (runs.run_dir(RUN) / "report.md").read_text()


def test_an_incomplete_saved_report_is_never_reused(nowhere, monkeypatch, capsys):
    """`make report` before the run ended saved a report of none of its messages; once they are
    done, a plain report reads the logs again instead of redrawing the empty one."""
    records, _ = synthetic_records(per_cell=10)
    downloads = [r for r in records if r["event"] == "download"]
    save_report([], sent=len(downloads))
    fetched_from_logs(monkeypatch, downloads, sent=len(downloads))
    capsys.readouterr()
    assert report_cli() == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"its saved report is incomplete ({len(downloads)} sent messages without an outcome" in out
    assert "logs not read" not in out
    assert len((runs.run_dir(RUN) / runs.RECORDS_FILE).read_text().splitlines()) == len(downloads)
    assert report_cli() == 0 and "logs not read" in capsys.readouterr().out  # complete now: reused


def test_a_write_that_fails_leaves_the_old_file_intact(tmp_path):
    path = tmp_path / "summary.csv"
    path.write_text("old\n")
    with pytest.raises(ValueError, match="'b'"):
        runs.write_csv(path, ["a"], [{"a": 1}, {"b": 2}])  # the second row fails
    with pytest.raises(RuntimeError):
        with runs.replacing(path) as tmp:
            tmp.write_text("half a fi")
            raise RuntimeError("interrupted")
    figure, _ = plt.subplots(layout="constrained")
    (tmp_path / "plot.nope").write_bytes(b"old plot")
    with pytest.raises(ValueError, match="nope"):
        figures.save(figure, tmp_path / "plot.nope")  # matplotlib knows no such format
    assert path.read_text() == "old\n" and (tmp_path / "plot.nope").read_bytes() == b"old plot"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plot.nope", "summary.csv"]  # no temporary left
    runs.write_csv(path, ["a"], [{"a": 1}])
    assert path.read_bytes() == b"a\r\n1\r\n"


def test_at_target_is_a_flag_that_the_saved_report_keeps(nowhere, capsys):
    """`--at-target 0.5` redraws a saved run with that threshold (more downloads kept than at
    0.9), and the saved report keeps it: a later report without the flag draws the same files."""
    records, _ = synthetic_records(per_cell=20, cell_keys=CELLS[:1])
    save_report(records, sent=len(records))
    folder = runs.run_dir(RUN)
    downloads = [r for r in records if r["event"] == "download"]
    target = CELLS[0].concurrency_limit

    def csv_row():
        with open(folder / "summary.csv") as f:
            [row] = csv.DictReader(f)
        return row

    assert int(csv_row()["n"]) == len(brute_at_target(downloads, downloads, target))
    assert report_cli("--at-target", "0.5") == 0
    loose = csv_row()
    assert (loose["at_target_fraction"], int(loose["n"])) == ("0.5", len(brute_at_target(downloads, downloads, target, 0.5)))
    after = folder_bytes(folder)
    assert report_cli() == 0 and folder_bytes(folder) == after  # the saved threshold, redrawn byte for byte
    assert report_cli("--at-target", "1.5") == 2
    assert "invalid --at-target '1.5'" in capsys.readouterr().err and folder_bytes(folder) == after


SDK_A = {"boto3_version": "1.44.5", "botocore_version": "1.44.8", "s3transfer_version": "0.19.3",
         "awscrt_version": "0.38.0", "sdk_source": "bundled"}  # fmt: skip


def test_throttled_and_cpu_bound_cells_are_flagged_and_a_second_sdk_warned_about(tmp_path, monkeypatch):
    """At 512 MB a function has 512/1769 = 0.289 vCPU: a median CPU/wall of 0.28 is within 10% of
    it; at 1024 MB (0.579 vCPU) 0.2 is not. One SlowDown among a cell's downloads flags the cell."""
    monkeypatch.setenv("FANOUT_RESULTS", str(tmp_path))
    records, _ = synthetic_records(per_cell=10, cell_keys=CELLS[:2])
    first, second = DOWNLOAD.key(records[0]), DOWNLOAD.key(records[10])
    for i, r in enumerate(r for r in records if r["event"] == "download"):
        busy = DOWNLOAD.key(r) == first
        r.update(SDK_A, key=f"k/{i % 3}", retries=2 if i == 3 else 0, slowdowns=1 if i == 3 else 0,
                 cpu_share=0.28 if busy else 0.2, cpu_seconds=0.28 * r["seconds"] if busy else 0.2 * r["seconds"])
    records[-2].update(boto3_version="1.40.0")  # a second environment on another runtime release
    summary = summary_of(records, sent=len(records))
    by_cell = {DOWNLOAD.key(cell): cell for cell in summary.body.cells}
    assert by_cell[first]["flags"] == f"{pressure.THROTTLED}, {pressure.CPU_BOUND}"
    assert (by_cell[first]["retries"], by_cell[first]["slowdowns"], by_cell[first]["throttled_downloads"]) == (2, 1, 1)
    assert by_cell[first]["keys"] == 3 and by_cell[first]["cpu_share_p50"] == pytest.approx(0.28)
    assert by_cell[second]["flags"] == "" and by_cell[second]["cpu_allowance"] == pytest.approx(1024 / 1769, abs=1e-3)
    [warning] = [w for w in report.warnings(summary) if "SDK" in w]
    assert "1 records on boto3 1.40.0" in warning and "boto3 1.44.5" in warning
    report.write(summary, plots_too=False)
    text = (runs.run_dir(RUN) / "report.md").read_text()
    assert "## Throttling and CPU" in text and pressure.CPU_BOUND in text and "SDK=runtime" in text
    with open(tmp_path / RUN / "summary.csv") as f:
        assert {row["flags"] for row in csv.DictReader(f)} == {"", f"{pressure.THROTTLED}, {pressure.CPU_BOUND}"}


@pytest.mark.parametrize("memory, vcpus", [(128, 128 / 1769), (1769, 1.0), (3538, 2.0), (10240, 10240 / 1769)])
def test_cpu_allowance_is_memory_over_1769_mb_capped_at_six_vcpus(memory, vcpus):
    assert pressure.cpu_allowance(memory) == pytest.approx(vcpus)
    assert pressure.cpu_allowance(10**6) == 6


def test_cpu_bound_compares_with_the_share_the_environments_had():
    """128 MB buys 128/1769 = 0.072 vCPU; hosted at network scale 10 an environment had a tenth
    of it. A median CPU/wall of 0.007 is all of that (CPU-bound there) and a tenth of Lambda's
    allowance (not CPU-bound on AWS); 0.07 is all of Lambda's. The `none` model shapes nothing
    and caps at the full share whatever scale it names."""
    def downloads(share):
        return [{"memory_size": 128, "cpu_share": share, "retries": 0, "slowdowns": 0, "key": "k"}] * 5

    def record(backend, network=None):
        return run_record.RunRecord(run_id=RUN, backend=backend, network=network)

    scaled = record("local", {"profile": "lambda-2024", "scale": 10.0, "parameters": {}})
    aws, unshaped = record("aws"), record("local", {"profile": "none", "scale": 10.0, "parameters": {}})
    assert (scaled.cpu_scale(), aws.cpu_scale(), unshaped.cpu_scale()) == (10.0, 1.0, 1.0)
    figures = pressure.cell_figures(downloads(0.007), scaled.cpu_scale())
    assert figures["flags"] == pressure.CPU_BOUND and figures["cpu_allowance"] == pytest.approx(128 / 1769 / 10, rel=1e-3)
    assert pressure.cell_figures(downloads(0.007), aws.cpu_scale())["flags"] == ""
    assert pressure.cell_figures(downloads(0.07), aws.cpu_scale())["flags"] == pressure.CPU_BOUND
    assert pressure.cell_figures(downloads(0.007), unshaped.cpu_scale())["flags"] == ""


def test_a_run_at_a_network_scale_flags_its_cells_against_the_scaled_share(tmp_path, monkeypatch):
    """The run's report joins its cells with the CPU allowance of its scale: 0.03 CPU/wall at
    512 MB (0.289 vCPU) is CPU-bound at scale 8 (0.036 vCPU), not on AWS."""
    monkeypatch.setenv("FANOUT_RESULTS", str(tmp_path))
    records, _ = synthetic_records(per_cell=10, cell_keys=CELLS[:1])
    for r in records:
        r.update(cpu_share=0.035)
    network = {"profile": "lambda-2024", "scale": 8.0, "parameters": {}}
    [scaled] = summary_of(records, sent=len(records), network=network).body.cells
    [measured] = summary_of(records, sent=len(records), backend="aws").body.cells
    assert (scaled["flags"], measured["flags"]) == (pressure.CPU_BOUND, "")


LIMITS = {"memory (512 MB)": "enforced by cgroup", "CPU share": "not enforced: no cpu cgroup (No such file or directory)",
          "/tmp (512 MB)": "enforced by a loop-mounted file system"}  # what a host recorded (Summary.limits)
LIMITS_LINE = ("Lambda's limits: /tmp (512 MB): enforced by a loop-mounted file system; CPU share: not enforced: "
               "no cpu cgroup (No such file or directory); memory (512 MB): enforced by cgroup")


def test_the_report_states_lambdas_limits_beside_the_network(tmp_path, monkeypatch):
    """A local run's report says, under the network's line, how the host held the environments to
    Lambda's limits, a limit this machine could not enforce among them: on the terminal, in
    report.md, index.html and summary.json. On AWS, where Lambda holds them, it says nothing."""
    monkeypatch.setenv("FANOUT_RESULTS", str(tmp_path))
    records, _ = synthetic_records(per_cell=10, cell_keys=CELLS[:1])
    summary = summary_of(records, sent=len(records), limits=LIMITS)
    output = io.StringIO()
    terminal.show(report.sections(summary), Console(file=output, width=400))
    lines = output.getvalue().splitlines()
    assert lines[lines.index(summary.header.network) + 1] == LIMITS_LINE
    report.write(summary, plots_too=False)
    folder = runs.run_dir(RUN)
    assert f"**{summary.header.network}**\n\n**{LIMITS_LINE}**" in (folder / "report.md").read_text()
    assert f'<p class="network">{markupsafe.escape(LIMITS_LINE)}</p>' in (folder / "index.html").read_text()
    assert json.loads((folder / runs.SUMMARY_FILE).read_text())["limits"] == LIMITS_LINE
    measured = summary_of(records, sent=len(records), backend="aws")
    assert measured.header.limits == "" and "Lambda's limits" not in markdown.document(report.sections(measured))


def test_the_csv_and_the_plots_state_lambdas_limits_beside_the_network(tmp_path, monkeypatch):
    """summary.csv has a `limits` column beside `network` holding the run's limits line (empty on
    AWS), and every plot's caption carries that line under the network's."""
    monkeypatch.setenv("FANOUT_RESULTS", str(tmp_path))
    captions: dict[str, str] = {}
    save = plots.save

    def caption_of(fig, path):
        captions[path.name] = fig._supxlabel.get_text()
        return save(fig, path)

    monkeypatch.setattr(plots, "save", caption_of)
    records, _ = synthetic_records(per_cell=10, cell_keys=CELLS[:1])
    for backend, limits, stated in (("local", LIMITS, LIMITS_LINE), ("aws", None, "")):
        summary = summary_of(records, sent=len(records), backend=backend, limits=limits)
        report.write(summary)
        with open(runs.run_dir(RUN) / "summary.csv") as f:
            reader = csv.DictReader(f)
            [row] = list(reader)
        columns = list(reader.fieldnames or [])
        assert columns[columns.index("network") + 1] == "limits"
        assert (row["network"], row["limits"]) == (summary.header.network, stated)
        assert captions and set(captions.values()) == {"\n".join(filter(None, [summary.header.network, stated]))}
        captions.clear()


def test_crt_downloads_have_no_retry_counts_to_sum():
    crt = [{"memory_size": 1024, "retries": None, "slowdowns": None, "cpu_share": 0.1, "key": "k"}] * 3
    figures = pressure.cell_figures(crt)
    assert (figures["retries"], figures["slowdowns"], figures["throttled_downloads"], figures["flags"]) == (None, None, 0, "")


def test_a_run_with_no_download_at_target_says_so_instead_of_empty_tables(tmp_path, monkeypatch):
    """One slot at a time against a target of 4 (the downloads never overlap): the tables at
    target would be empty, so the report says why and shows the table of every download."""
    monkeypatch.setenv("FANOUT_RESULTS", str(tmp_path))
    records, _ = synthetic_records(per_cell=12, cell_keys=CELLS[:1])
    downloads = [r for r in records if r["event"] == "download"]
    for i, d in enumerate(downloads):  # one after another, 100 ms between them
        d["start_ms"], d["end_ms"] = 1_700_000_000_000 + i * 2000, 1_700_000_000_000 + i * 2000 + 1900
    summary = summary_of(records, sent=len(records))
    output = io.StringIO()
    console = Console(file=output, width=80)
    terminal.show(report.sections(summary), console)
    text = output.getvalue()
    assert report.NONE_AT_TARGET in text and report.AT_TARGET_TITLE not in text and report.EVERY_DOWNLOAD_TITLE in text
    assert "the most one ran at was 1 of 4" in " ".join(text.split())
    report.write(summary, plots_too=False)
    assert report.NONE_AT_TARGET in (runs.run_dir(RUN) / "report.md").read_text()


@pytest.mark.parametrize(("n", "n_all", "span_s", "says"), [
    (40, 60, 500.0, None),  # enough
    (10, 400, 50.0, "MULTIPLIER=1 would"),  # shorter than the ramp to 500 (99 s): (30 + 390) / 500 messages a slot
    (10, 400, 500.0, "MULTIPLIER=3 would"),  # outlasted it: 30 x 400 / 10 = 1,200 messages, 2.4 a slot
    (0, 400, 500.0, "more messages would not help"),
    (0, 400, 50.0, "MULTIPLIER=1 would"),  # none yet, but the ramp never ended: (30 + 400) / 500
])  # fmt: skip
def test_a_thin_cell_is_told_how_many_messages_would_give_30_at_target(n, n_all, span_s, says):
    line = concurrency.few_at_target("c", n, n_all, 500, 0.9, 312.0, span_s)
    assert (line is None) if says is None else (says in line)


def test_a_summary_saved_before_most_ran_at_was_kept_still_reports(nowhere, capsys):
    """Summaries saved before the cells at target kept `most_ran_at` and `span_s` report as they
    were: no few-at-target line (it needs them), no crash."""
    records, _ = synthetic_records(per_cell=5)
    save_report(records, sent=len(records))
    path = runs.run_dir(RUN) / runs.SUMMARY_FILE
    saved = json.loads(path.read_text())
    cells_ = [cell for cell in saved["at_target"]["cells"] if "most_ran_at" in cell]
    assert cells_  # the cells this test strips
    for cell in cells_:
        del cell["most_ran_at"], cell["span_s"]
    path.write_text(json.dumps(saved))
    capsys.readouterr()
    assert report_cli() == 0
    assert "no download ran at target" not in capsys.readouterr().out


@pytest.mark.parametrize("name, cut", [(runs.RECORDS_FILE, -40), (runs.SUMMARY_FILE, 100)])
def test_a_saved_report_cut_short_is_one_line_naming_the_file(nowhere, capsys, name, cut):
    """A last line of records.jsonl, or summary.json, cut short (a full disk, a copy stopped):
    report and a report across runs say which file and how to read the logs again."""
    records, _ = synthetic_records(per_cell=5, cell_keys=CELLS[:1])  # one cell: across reads its cost too
    save_report(records, sent=len(records))
    path = runs.run_dir(RUN) / name
    path.write_bytes(path.read_bytes()[:cut])
    capsys.readouterr()
    for argv in (["--run", RUN], ["--runs", RUN]):
        assert cli.main(["report", "--backend", "local", "--stack", "s", *argv]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"fanout: error: corrupt saved report {path}: ") and err.count("\n") == 1, err
        assert f"`make report RUN={RUN} REFRESH=1` reads the run's logs again" in err


def test_a_report_into_a_folder_it_cannot_write_is_one_line(nowhere, capsys):
    records, _ = synthetic_records(per_cell=5, cell_keys=CELLS[:1])
    save_report(records, sent=len(records))
    folder = runs.run_dir(RUN)
    before = folder_bytes(folder)
    capsys.readouterr()
    with read_only(folder):
        assert report_cli() == 1
    err = capsys.readouterr().err
    assert err.startswith(f"fanout: error: cannot write {folder}/") and err.count("\n") == 1, err
    assert folder_bytes(folder) == before


def test_units_keep_their_case_in_every_caption(tmp_path, monkeypatch):
    """Captions are sentences with a capital first letter; str.capitalize lowered the rest, and
    "MB/s decimal" read "mb/s decimal" (millibits) in the ground truth's and others' captions."""
    monkeypatch.setenv("FANOUT_RESULTS", str(tmp_path))
    values = {"burst": "16MiB", "peak_mb_per_s": 128, "sustained_mb_per_s": 16, "connection_mb_per_s": 80,
              "first_byte_ms": 20}
    model = fanout.local.network.NetworkModel("what-if", 2.0, fanout.local.network.model.parameters(values, "what-if"))
    records = modelled_downloads(model)
    report.write(summary_of(records, sent=len(records), network=model.describe()), plots_too=False)
    for name in ("report.md", "index.html"):
        text = (runs.run_dir(RUN) / name).read_text()
        assert "MB/s decimal" in text and "mb/s" not in text, name
