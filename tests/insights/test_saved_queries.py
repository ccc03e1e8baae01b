"""The saved queries parse, and evaluate to what the sample records say (numpy as the reference)."""

import json
import re

import numpy as np
import pytest

from fanout import insights
from fanout.workloads.download import strategies
from fanout.common import paths
from fanout.workloads import registry
from fanout.common.errors import FanoutError, UsageError
from fanout.insights.syntax import Sort, parse

STAT_COLUMN = re.compile(r"(?P<prefix>.+)_(?P<stat>min|avg|max|p\d+)")


def expected_statistic(stat: str, values) -> float:
    """numpy's figure for a statistic column: min, avg, max or pNN (numpy's default percentile)."""
    if stat.startswith("p"):
        return np.percentile(values, int(stat[1:]))
    return {"min": np.min, "avg": np.mean, "max": np.max}[stat](values)


def assert_statistics(row: dict, prefix: str, values) -> None:
    """Every `<prefix>_<stat>` column of `row` against numpy on `values`."""
    stats = {m["stat"]: column for column in row if (m := STAT_COLUMN.fullmatch(column)) and m["prefix"] == prefix}
    assert stats, prefix
    for stat, column in stats.items():
        assert row[column] == pytest.approx(expected_statistic(stat, values)), column


def test_every_saved_query_parses_and_starts_with_a_comment():
    names = insights.saved_queries()
    assert {"download-percentiles", "throughput-timeline", "cold-starts", "errors", "lambda-report"} <= set(names)
    for name in names:
        text = insights.load_query(name)
        assert text.lstrip().startswith("#"), name
        assert parse(text).commands, name


def test_every_saved_query_writes_its_sort_directions():
    """Logs Insights sorts descending by default; a saved query says what it means instead."""
    for name in insights.saved_queries():
        for command in parse(insights.load_query(name)).commands:
            if isinstance(command, Sort):
                assert all(key.written for key in command.keys), (name, command.keys)


# The query definitions a deployed stack holds are named <stack>/<name>: a name that disappeared
# or changed would make the next deploy delete a definition and create another.
DEPLOYED_NAMES = {
    "cold-starts", "cold-vs-warm", "download-bursts", "download-percentiles", "download-pressure", "download-timeline",
    "endpoint-ips", "errors", "lambda-report", "latency-percentiles", "message-outcomes", "platform-errors",
    "seqread-percentiles", "strategy-comparison", "strategy-parameters", "throughput-timeline", "transfer-percentiles",
}  # fmt: skip
GENERIC = {"cold-starts", "errors", "lambda-report", "message-outcomes", "platform-errors"}


def test_the_generic_queries_are_in_queries_and_each_workloads_in_its_folder():
    files = insights.query_files()
    assert DEPLOYED_NAMES <= set(files)
    assert {name for name, path in files.items() if path.parent == paths.REPO / "queries"} == GENERIC
    for name, workload in ((name, driver.workload) for name, driver in registry.DRIVERS.items()):
        folder = paths.REPO / "drivers" / "fanout" / "workloads" / name / "queries"
        assert files[workload.query].parent == folder, name


def test_terraform_collects_the_same_globs():
    """infra/queries.tf saves the files fanout reads: its query_globs are paths.QUERY_GLOBS."""
    text = (paths.INFRA / "queries.tf").read_text()
    written = re.search(r"^\s*query_globs\s*=\s*\[(.*?)\]", text, re.M).group(1)
    assert tuple(re.findall(r'"([^"]+)"', written)) == paths.QUERY_GLOBS


def test_a_workloads_query_is_found_beside_the_generic_ones(tmp_path, monkeypatch):
    (tmp_path / "queries").mkdir()
    (tmp_path / "queries" / "shared.logsinsights").write_text("# shared\nstats count(*)")
    folder = tmp_path / "drivers" / "fanout" / "workloads" / "toy" / "queries"
    folder.mkdir(parents=True)
    (folder / "toy-percentiles.logsinsights").write_text("# toy\nfilter event = 'toy'")
    (folder / "notes.txt").write_text("not a query")
    monkeypatch.setattr(paths, "REPO", tmp_path)
    assert insights.saved_queries() == ["shared", "toy-percentiles"]
    assert insights.load_query("toy-percentiles") == "# toy\nfilter event = 'toy'"


def test_two_queries_of_one_name_are_refused_naming_both_files(tmp_path, monkeypatch):
    """AWS would save both under one name (infra/queries.tf refuses them as a duplicate key)."""
    for folder in ("queries", "drivers/fanout/workloads/toy/queries"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "errors.logsinsights").write_text("stats count(*)")
    monkeypatch.setattr(paths, "REPO", tmp_path)
    with pytest.raises(FanoutError) as refused:
        insights.load_query("errors")
    message = str(refused.value)
    assert "'errors'" in message and "\n" not in message
    assert "queries/errors.logsinsights" in message and "drivers/fanout/workloads/toy/queries/errors.logsinsights" in message


def test_unknown_saved_query_is_a_usage_error():
    with pytest.raises(UsageError, match="no saved query"):
        insights.load_query("no-such-query")


def test_download_percentiles(sample):
    events, downloads, _ = sample
    result = insights.evaluate(insights.load_query("download-percentiles"), events)
    groups = {}
    for _, r in downloads:
        key = (r["experiment_tag"], r["memory_size"], r["concurrency_limit"], r["strategy"])
        groups.setdefault(key, []).append((r["seconds"], r["bytes"] / r["seconds"] / 1e6))
    assert [tuple(row[k] for k in ("experiment_tag", "memory_size", "concurrency_limit", "strategy"))
            for row in result.rows] == sorted(groups)  # fmt: skip
    for row in result.rows:
        key = (row["experiment_tag"], row["memory_size"], row["concurrency_limit"], row["strategy"])
        values = np.array(groups[key])
        assert row["downloads"] == len(values)
        for column, name in ((0, "seconds"), (1, "mb_per_s")):
            assert_statistics(row, name, values[:, column])
        assert len(row) == 4 + 1 + 2 * 8  # the group, the count, 8 statistics of each metric
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
    groups = {}
    for _, r in downloads:
        groups.setdefault((r["memory_size"], int(r["cold_start"])), []).append(r["seconds"])
    assert [(row["memory_size"], row["cold_start"]) for row in result.rows] == sorted(groups, key=lambda k: (k[0], -k[1]))
    for row in result.rows:
        data = groups[(row["memory_size"], row["cold_start"])]
        assert set(row) == {"memory_size", "cold_start", "downloads", "seconds_avg", "seconds_p50", "seconds_p99",
                            "seconds_max"}  # fmt: skip
        assert row["downloads"] == len(data)
        assert_statistics(row, "seconds", data)
    assert {row["cold_start"] for row in result.rows} == {0, 1}


def test_errors(sample):
    events, _, _ = sample
    result = insights.evaluate(insights.load_query("errors"), events)
    classes = {}
    for e in events:
        record = json.loads(e["message"]) if e["message"].startswith("{") else {}
        if record.get("event") == "error":
            classes.setdefault(record["error_type"], []).append((e["timestamp"], record))
    assert len(classes) > 1
    counts = [row["errors"] for row in result.rows]
    assert counts == sorted(counts, reverse=True)
    for row in result.rows:
        mine = classes[row["error_type"]]
        assert row["errors"] == len(mine)
        assert row["messages"] == len({r["message_id"] for _, r in mine})
        assert row["sample_message"] == max(mine, key=lambda item: item[0])[1]["error_message"]  # the latest
    assert {row["error_type"] for row in result.rows} == set(classes)


def test_lambda_report(sample):
    events, _, reports = sample
    result = insights.evaluate(insights.load_query("lambda-report"), events)
    assert [row["memory_mb"] for row in result.rows] == sorted({r["memory"] for r in reports})
    for row in result.rows:
        mine = [r for r in reports if r["memory"] == row["memory_mb"]]
        assert row["invocations"] == len(mine)
        for prefix, key in (("duration_ms", "duration"), ("billed_ms", "billed"), ("memory_used_mb", "used")):
            assert_statistics(row, prefix, [r[key] for r in mine])
        assert len(row) == 2 + 3 * 6  # memory_mb, invocations and six statistics of each metric


def test_restrict_limits_a_saved_query_to_one_value(sample):
    events, downloads, _ = sample
    stream = str(strategies.parse("stream"))
    text = insights.restrict(insights.load_query("download-percentiles"), f'memory_size = 2048 and strategy = "{stream}"')
    assert text.splitlines()[0].startswith("#")
    result = insights.evaluate(text, events)
    assert {(row["memory_size"], row["strategy"]) for row in result.rows} == {(2048, stream)}
    expected = sum(1 for _, r in downloads if r["memory_size"] == 2048 and r["strategy"] == stream)
    assert sum(row["downloads"] for row in result.rows) == expected


def timeline_sample(sample):
    """The sample's downloads with the timeline's derived fields (random, seeded), as events."""
    import random

    from .support import json_event

    rng = random.Random(11)
    _, downloads, _ = sample
    records = []
    for ts, record in downloads:
        records.append((ts, dict(record, sustained_mb_per_s=rng.uniform(5, 80), burst_bytes=rng.randrange(1, 3 * 10**8),
                                 burst_excess_bytes=rng.randrange(1, 10**8), peak_mb_per_s=rng.uniform(80, 340),
                                 first_byte_seconds=rng.uniform(0.005, 0.05))))  # fmt: skip
    return [json_event(record, ts) for ts, record in records], records


def test_download_timeline(sample):
    events, records = timeline_sample(sample)
    result = insights.evaluate(insights.load_query("download-timeline"), events)
    groups = {}
    for _, r in records:
        groups.setdefault((r["experiment_tag"], r["memory_size"], r["concurrency_limit"], r["strategy"]), []).append(r)
    assert [tuple(row[k] for k in ("experiment_tag", "memory_size", "concurrency_limit", "strategy"))
            for row in result.rows] == sorted(groups)  # fmt: skip
    for row in result.rows:
        mine = groups[tuple(row[k] for k in ("experiment_tag", "memory_size", "concurrency_limit", "strategy"))]
        assert row["downloads"] == len(mine)
        for field in ("sustained_mb_per_s", "burst_bytes", "peak_mb_per_s", "first_byte_seconds", "ttfb_seconds"):
            assert_statistics(row, field, [r[field] for r in mine])


def test_download_bursts(sample):
    events, records = timeline_sample(sample)
    result = insights.evaluate(insights.load_query("download-bursts"), events)
    largest = sorted((r for _, r in records), key=lambda r: r["burst_bytes"], reverse=True)[:100]
    assert [row["seq"] for row in result.rows] == [r["seq"] for r in largest]
    assert result.rows[0]["burst_excess_bytes"] == largest[0]["burst_excess_bytes"]


def test_strategy_comparison(sample):
    """One row per memory size, object size and strategy, fastest median first; statistics as numpy's."""
    events, downloads, _ = sample
    result = insights.evaluate(insights.load_query("strategy-comparison"), events)
    groups = {}
    for _, r in downloads:
        groups.setdefault((r["memory_size"], r["bytes"], r["strategy"]), []).append(r)
    assert {(row["memory_size"], row["bytes"], row["strategy"]) for row in result.rows} == set(groups)
    order = [(row["memory_size"], row["bytes"], -row["mb_per_s_p50"]) for row in result.rows]
    assert order == sorted(order)
    for row in result.rows:
        mine = groups[(row["memory_size"], row["bytes"], row["strategy"])]
        assert row["downloads"] == len(mine)
        assert_statistics(row, "mb_per_s", [r["bytes"] / r["seconds"] / 1e6 for r in mine])
        assert_statistics(row, "ttfb_ms", [r["ttfb_seconds"] * 1000 for r in mine])
        if mine[0]["requests"] is None:  # crt: no request figures at all
            assert row.get("requests_avg") is None and row.get("connections_avg") is None
        else:
            assert row["requests_avg"] == pytest.approx(np.mean([r["requests"] for r in mine]))
            assert row["connections_avg"] == pytest.approx(np.mean([r["connections"] for r in mine]))


def test_download_pressure(sample):
    """One row per cell and SDK; keys distinct, retries and 503s summed (none for crt), CPU/wall
    percentiles as numpy's."""
    events, downloads, _ = sample
    result = insights.evaluate(insights.load_query("download-pressure"), events)
    fields = ("experiment_tag", "memory_size", "concurrency_limit", "object_size", "strategy", "boto3_version",
              "sdk_source")  # fmt: skip
    groups = {}
    for _, r in downloads:
        groups.setdefault(tuple(r.get(name) for name in fields), []).append(r)
    assert sorted((tuple(row.get(name) for name in fields) for row in result.rows), key=str) == sorted(groups, key=str)
    for row in result.rows:
        mine = groups[tuple(row.get(name) for name in fields)]
        assert (row["downloads"], row["keys"]) == (len(mine), len({r["key"] for r in mine}))
        if "retries" in mine[0]:
            assert (row["retries"], row["slowdowns"]) == (sum(r["retries"] for r in mine), sum(r["slowdowns"] for r in mine))
        else:
            assert row.get("retries") is None and row.get("slowdowns") is None
        assert_statistics(row, "cpu_share", [r["cpu_share"] for r in mine])


def test_endpoint_ips(sample):
    """One row per cell and endpoint address, downloads with one address only, fastest median first
    within a cell; statistics as numpy's."""
    events, downloads, _ = sample
    result = insights.evaluate(insights.load_query("endpoint-ips"), events)
    cell = ("experiment_tag", "memory_size", "concurrency_limit", "object_size", "strategy")
    groups = {}
    for _, r in downloads:
        if "endpoint_ip" in r:
            groups.setdefault((*(r.get(f) for f in cell), r["endpoint_ip"]), []).append(r)
    assert len(groups) > 3 and any("endpoint_ip" not in r and r["requests"] for _, r in downloads)
    got = {(*(row.get(f) for f in cell), row["endpoint_ip"]): row for row in result.rows}
    assert set(got) == set(groups)
    order = [(*(str(row.get(f)) for f in cell), -row["mb_per_s_p50"]) for row in result.rows]
    assert order == sorted(order)
    for key, row in got.items():
        assert row["downloads"] == len(groups[key])
        assert_statistics(row, "mb_per_s", [r["bytes"] / r["seconds"] / 1e6 for r in groups[key]])


def test_strategy_parameters_group_by_every_parameter(sample):
    events, downloads, _ = sample
    result = insights.evaluate(insights.load_query("strategy-parameters"), events)
    parameters = ("strategy_connections", "strategy_max_concurrency", "strategy_chunk_size", "strategy_threshold")
    groups = {}
    for _, r in downloads:
        key = (r["strategy_name"], r["memory_size"], r["bytes"], *(r.get(p) for p in parameters))
        groups.setdefault(key, []).append(r["bytes"] / r["seconds"] / 1e6)
    got = {(row["strategy_name"], row["memory_size"], row["bytes"], *(row.get(p) for p in parameters)): row
           for row in result.rows}  # fmt: skip
    assert set(got) == set(groups)
    for key, row in got.items():
        assert row["downloads"] == len(groups[key])
        assert_statistics(row, "mb_per_s", groups[key])


def test_a_tag_with_spaces_is_one_group():
    """A tag may hold spaces (`experiment 01`): `by experiment_tag` keeps it whole."""
    import random

    from .support import download_record, json_event

    rng = random.Random(7)
    events = [json_event(download_record(rng, seq, experiment_tag=f"experiment 0{1 + seq % 2}", memory_size=1024,
                                         concurrency_limit=10)) for seq in range(20)]  # fmt: skip
    rows = insights.evaluate(insights.load_query("download-percentiles"), events).rows
    by_tag = {}
    for row in rows:
        by_tag[row["experiment_tag"]] = by_tag.get(row["experiment_tag"], 0) + row["downloads"]
    assert by_tag == {"experiment 01": 10, "experiment 02": 10}
