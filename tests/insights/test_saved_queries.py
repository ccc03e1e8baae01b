"""The saved queries parse, and evaluate to what the sample records say (numpy as the reference)."""

import numpy as np
import pytest

from fanout import insights
from fanout.errors import UsageError
from fanout.insights.syntax import parse

PCTS = (25, 50, 75, 90, 99)


def test_every_saved_query_parses_and_starts_with_a_comment():
    names = insights.saved_queries()
    assert {"download-percentiles", "throughput-timeline", "cold-starts", "errors", "lambda-report"} <= set(names)
    for name in names:
        text = insights.load_query(name)
        assert text.lstrip().startswith("#"), name
        assert parse(text).commands, name


def test_unknown_saved_query_is_a_usage_error():
    with pytest.raises(UsageError, match="no saved query"):
        insights.load_query("no-such-query")


def test_download_percentiles(sample):
    events, downloads, _ = sample
    result = insights.evaluate(insights.load_query("download-percentiles"), events)
    groups = {}
    for _, r in downloads:
        key = (r["experiment_tag"], r["memory_size"], r["concurrency_limit"], r["mode"])
        groups.setdefault(key, []).append((r["seconds"], r["bytes"] / r["seconds"] / 1e6))
    assert [tuple(row[k] for k in ("experiment_tag", "memory_size", "concurrency_limit", "mode"))
            for row in result.rows] == sorted(groups)  # fmt: skip
    for row in result.rows:
        values = np.array(groups[(row["experiment_tag"], row["memory_size"], row["concurrency_limit"], row["mode"])])
        assert row["downloads"] == len(values)
        for column, name in ((0, "seconds"), (1, "mb_per_s")):
            data = values[:, column]
            assert row[f"{name}_min"] == pytest.approx(data.min())
            assert row[f"{name}_max"] == pytest.approx(data.max())
            assert row[f"{name}_avg"] == pytest.approx(data.mean())
            for p in PCTS:
                assert row[f"{name}_p{p}"] == pytest.approx(np.percentile(data, p)), (name, p)
    assert result.statistics["recordsMatched"] == len(downloads)
    assert result.statistics["recordsScanned"] == len(events)


def test_throughput_timeline(sample):
    events, downloads, _ = sample
    result = insights.evaluate(insights.load_query("throughput-timeline"), events)
    expected = {}
    for ts, r in downloads:
        key = (r["experiment_tag"], ts // 1000 * 1000)
        count, total = expected.get(key, (0, 0))
        expected[key] = (count + 1, total + r["bytes"])
    got = {}
    for row in result.rows:
        second = np.datetime64(row["second"].replace(" ", "T"), "ms").astype("int64").item()
        got[(row["experiment_tag"], second)] = (row["completions"], row["bytes_total"])
    assert got == expected
    assert [(r["experiment_tag"], r["second"]) for r in result.rows] == sorted(
        (r["experiment_tag"], r["second"]) for r in result.rows
    )


def test_cold_starts_from_report_lines(sample):
    events, _, reports = sample
    result = insights.evaluate(insights.load_query("cold-starts"), events)
    assert [row["memory_mb"] for row in result.rows] == sorted({r["memory"] for r in reports})
    for row in result.rows:
        mine = [r for r in reports if r["memory"] == row["memory_mb"]]
        inits = [r["init"] for r in mine if r["init"] is not None]
        assert row["invocations"] == len(mine)
        assert row["cold_starts"] == len(inits)
        assert row["init_ms_avg"] == pytest.approx(np.mean(np.round(inits, 2)))
        assert row["init_ms_max"] == pytest.approx(np.max(np.round(inits, 2)))


def test_cold_vs_warm(sample):
    events, downloads, _ = sample
    result = insights.evaluate(insights.load_query("cold-vs-warm"), events)
    for row in result.rows:
        data = [r["seconds"] for _, r in downloads
                if r["memory_size"] == row["memory_size"] and int(r["cold_start"]) == row["cold_start"]]  # fmt: skip
        assert row["downloads"] == len(data)
        assert row["seconds_p50"] == pytest.approx(np.percentile(data, 50))
        assert row["seconds_p99"] == pytest.approx(np.percentile(data, 99))
    assert {row["cold_start"] for row in result.rows} == {0, 1}


def test_errors(sample):
    events, _, _ = sample
    result = insights.evaluate(insights.load_query("errors"), events)
    errors = [e for e in events if '"event": "error"' in e["message"]]
    assert sum(row["errors"] for row in result.rows) == len(errors)
    counts = [row["errors"] for row in result.rows]
    assert counts == sorted(counts, reverse=True)
    for row in result.rows:
        assert row["sample_message"].startswith("boom ")
        assert row["messages"] == row["errors"]  # one message id per error here


def test_lambda_report(sample):
    events, _, reports = sample
    result = insights.evaluate(insights.load_query("lambda-report"), events)
    for row in result.rows:
        mine = [r for r in reports if r["memory"] == row["memory_mb"]]
        durations = [r["duration"] for r in mine]
        assert row["invocations"] == len(mine)
        assert row["duration_ms_p90"] == pytest.approx(np.percentile(durations, 90))
        assert row["billed_ms_max"] == max(r["billed"] for r in mine)
        assert row["memory_used_mb_p50"] == pytest.approx(np.percentile([r["used"] for r in mine], 50))


def test_restrict_limits_a_saved_query_to_one_value(sample):
    events, downloads, _ = sample
    text = insights.restrict(insights.load_query("download-percentiles"), 'memory_size = 2048 and mode = "stream"')
    assert text.splitlines()[0].startswith("#")
    result = insights.evaluate(text, events)
    assert {(row["memory_size"], row["mode"]) for row in result.rows} == {(2048, "stream")}
    expected = sum(1 for _, r in downloads if r["memory_size"] == 2048 and r["mode"] == "stream")
    assert sum(row["downloads"] for row in result.rows) == expected
