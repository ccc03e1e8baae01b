"""`fanout insights` / `fanout export`, and `run` on the local backend through the emulator."""

import argparse
import csv
import dataclasses
import io
import json
import random
import time
import uuid

import pytest

from fanout.common import aws
from fanout import insights
from fanout.common.errors import FanoutError, UsageError
from fanout.stages import query as cli

from .support import download_record, event, json_event, make_stack, report_line

REGION = "us-east-1"


def invoke(argv):
    parser = argparse.ArgumentParser(prog="fanout")
    cli.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


@pytest.fixture(scope="module")
def deployed(emulator):
    """A log group in the emulator holding a small run's events, and the Stack naming it."""
    group = f"/aws/lambda/insights-{uuid.uuid4().hex[:8]}"
    logs = aws.client("logs", REGION, emulator)
    logs.create_log_group(logGroupName=group)
    logs.create_log_stream(logGroupName=group, logStreamName="2024/05/01/[$LATEST]e1")
    now, rng = int(time.time() * 1000) - 60_000, random.Random(3)
    events = []
    for seq in range(30):
        events.append(json_event(download_record(rng, seq), now + seq * 10))
        events.append(event(report_line(f"r{seq}", 100.0 + seq, 101 + seq, 1024, 90), now + seq * 10 + 1))
    logs.put_log_events(logGroupName=group, logStreamName="2024/05/01/[$LATEST]e1",
                        logEvents=[{"timestamp": e["timestamp"], "message": e["message"]} for e in events])  # fmt: skip
    stack = make_stack(region=REGION, endpoint=emulator, function_name=group.rsplit("/", 1)[1], log_group=group)
    return stack, events, now


@pytest.fixture
def on_deployed(deployed, monkeypatch):
    """The CLI's stack is the deployed one."""
    monkeypatch.setattr(cli.stack, "acted_on", lambda backend, name, fields: deployed[0])
    return deployed


def test_local_run_equals_evaluating_the_same_events(deployed):
    stack, events, now = deployed
    query = insights.load_query("download-percentiles")
    result = insights.run(stack, query, now - 1000, now + 10_000)
    assert result.rows and result.rows == insights.evaluate(query, events).rows
    assert result.statistics["recordsScanned"] == len(events)
    (row,) = insights.run(stack, "fields @log | limit 1", now - 1000, now + 10_000).rows
    assert row["@log"] == f"123456789012:{stack.log_group}"


def test_local_run_window_excludes_events_outside_it(deployed):
    stack, _, now = deployed
    result = insights.run(stack, "stats count(*) as n", now + 100, now + 10_000)
    assert result.rows == [{"n": 2 * (30 - 10)}]


def test_insights_command_runs_a_saved_query_on_the_deployed_stack(on_deployed, capsys):
    stack, events, now = on_deployed
    window = ["--start", str(now - 1000), "--end", str(now + 10_000)]
    assert invoke(["insights", "download-percentiles", *window, "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows and rows == insights.evaluate(insights.load_query("download-percentiles"), events).rows
    assert invoke(["insights", "queries/cold-starts.logsinsights", *window, "--format", "csv"]) == 0
    reports = [e for e in events if e["message"].startswith("REPORT")]
    assert list(csv.DictReader(io.StringIO(capsys.readouterr().out))) == [
        {"memory_mb": "1024", "invocations": str(len(reports)), "cold_starts": "0"}
    ]


def test_insights_command_runs_every_saved_query_by_name(tmp_path, capsys):
    """Generic and workload queries alike (insights.query_files), offline over one event."""
    path = tmp_path / "e.jsonl"
    path.write_text(json.dumps(event(report_line("r1", 100.0, 101, 1024, 90))) + "\n")
    for name in insights.saved_queries():
        assert invoke(["insights", name, "--events", str(path), "--format", "json"]) == 0, name
        assert isinstance(json.loads(capsys.readouterr().out), list), name
    with pytest.raises(UsageError) as unknown:
        invoke(["insights", "no-such-query", "--events", str(path)])
    assert str(unknown.value).endswith("choose one of: " + ", ".join(insights.saved_queries()))


def test_export_then_offline_query(on_deployed, tmp_path, capsys):
    stack, events, now = on_deployed
    out = tmp_path / "sub" / "events.jsonl"
    assert invoke(["export", "--out", str(out), "--start", str(now - 1000), "--end", str(now + 10_000)]) == 0
    exported = [json.loads(line) for line in out.read_text().splitlines()]
    assert [e["message"] for e in exported] == [e["message"] for e in events]
    assert {e["log"] for e in exported} == {f"{stack.queue_arn.split(':')[4]}:{stack.log_group}"}
    assert list(out.parent.iterdir()) == [out]  # no temporary file left behind
    capsys.readouterr()
    assert invoke(["insights", "cold-starts", "--events", str(out), "--format", "json"]) == 0
    reports = [e for e in events if e["message"].startswith("REPORT")]
    assert json.loads(capsys.readouterr().out) == [{"memory_mb": 1024, "invocations": len(reports), "cold_starts": 0}]
    query = tmp_path / "log.logsinsights"
    query.write_text("fields @log | limit 1")
    invoke(["insights", str(query), "--events", str(out), "--format", "json"])
    assert json.loads(capsys.readouterr().out) == insights.run(stack, query.read_text(), now - 1000, now + 10_000).rows


def test_offline_window_selects_the_exported_events_in_it(tmp_path, capsys):
    path = tmp_path / "e.jsonl"
    stamps = [1_714_564_800_000 + k * 60_000 for k in range(10)]  # one a minute
    path.write_text("".join(json.dumps(json_event({"k": k}, ts)) + "\n" for k, ts in enumerate(stamps)))
    start, end = stamps[2], stamps[6]
    query = "stats count(*) as n, min(k) as first, max(k) as last"
    expected = [k for k, ts in enumerate(stamps) if start <= ts <= end]
    (tmp_path / "q.logsinsights").write_text(query)
    invoke(["insights", str(tmp_path / "q.logsinsights"), "--events", str(path), "--start", str(start),
            "--end", str(end), "--format", "json"])  # fmt: skip
    assert json.loads(capsys.readouterr().out) == [{"n": len(expected), "first": expected[0], "last": expected[-1]}]
    invoke(["insights", str(tmp_path / "q.logsinsights"), "--events", str(path), "--format", "json"])
    assert json.loads(capsys.readouterr().out) == [{"n": len(stamps), "first": 0, "last": len(stamps) - 1}]
    invoke(["insights", str(tmp_path / "q.logsinsights"), "--events", str(path), "--hours", "1", "--format", "json"])
    assert json.loads(capsys.readouterr().out) == []  # exported long ago: nothing in the last hour


def test_formats(tmp_path, capsys):
    pairs = (("a", 1), ("b", 2.5), ("a", 3))
    path = tmp_path / "e.jsonl"
    path.write_text("".join(json.dumps(json_event({"event": "download", "k": k, "v": v})) + "\n" for k, v in pairs))
    query = tmp_path / "q.logsinsights"
    query.write_text("# sums\nstats count(*) as n, sum(v) as total by k | sort k asc")
    totals, counts = {}, {}
    for k, v in pairs:
        totals[k], counts[k] = totals.get(k, 0) + v, counts.get(k, 0) + 1
    invoke(["insights", str(query), "--events", str(path), "--format", "json"])
    assert json.loads(capsys.readouterr().out) == [{"k": k, "n": counts[k], "total": totals[k]} for k in sorted(totals)]
    invoke(["insights", str(query), "--events", str(path), "--format", "csv"])
    assert list(csv.DictReader(io.StringIO(capsys.readouterr().out))) == [
        {"k": k, "n": str(counts[k]), "total": f"{totals[k]:g}"} for k in sorted(totals)
    ]
    invoke(["insights", str(query), "--events", str(path)])
    table = capsys.readouterr().out
    cells = [[c.strip() for c in line.split("│")[1:-1]] for line in table.splitlines() if line.startswith("│")]
    # one kind of figure per column: whole counts as they are, every total with four decimals
    assert cells == [[k, str(counts[k]), f"{totals[k]:,.4f}"] for k in sorted(totals)]
    assert f"{len(pairs)} records matched of {len(pairs)} scanned" in table


@pytest.mark.parametrize(
    "argv, message",
    [
        (["insights", "no-such-query", "--events", "x.jsonl"], "no saved query"),
        (["insights", "missing.logsinsights", "--events", "x.jsonl"], "does not exist"),
        (["insights", "errors", "--events", "missing.jsonl"], "does not exist"),
        (["export", "--out", "x.jsonl", "--start", "yesterday"], "not a time"),
        (["export", "--out", "x.jsonl", "--hours", "0"], "must be a positive"),
        (["export", "--out", "x.jsonl", "--start", "2024-05-02", "--end", "2024-05-01"], "starts"),
    ],
)
def test_bad_input_is_a_usage_error(argv, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match=message):
        invoke(argv)
    assert not (tmp_path / "x.jsonl").exists()


def test_bad_events_line_is_named(tmp_path):
    path = tmp_path / "e.jsonl"
    path.write_text(json.dumps(event("ok")) + "\n{\"message\": \"no timestamp\"}\n")
    with pytest.raises(UsageError, match=r"e\.jsonl:2"):
        invoke(["insights", "errors", "--events", str(path)])


def test_missing_log_group_is_a_clear_error(deployed):
    stack, _, now = deployed
    gone = dataclasses.replace(stack, log_group="/aws/lambda/never-ran")
    with pytest.raises(FanoutError, match="never-ran does not exist"):
        insights.run(gone, "stats count(*)", now - 1000, now)


def test_a_table_wider_than_the_console_shows_every_value_row_by_row(tmp_path, capsys):
    columns = [f"column_{n}" for n in range(20)]
    path = tmp_path / "e.jsonl"
    path.write_text(json.dumps(json_event({name: 1000 + n for n, name in enumerate(columns)})) + "\n")
    query = tmp_path / "q.logsinsights"
    query.write_text("fields " + ", ".join(columns))
    invoke(["insights", str(query), "--events", str(path)])
    out = capsys.readouterr().out
    assert "…" not in out
    assert all(name in out and str(1000 + n) in out for n, name in enumerate(columns))
