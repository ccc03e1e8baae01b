"""`fanout insights` / `fanout export`, and `run` on the local backend through the emulator."""

import argparse
import csv
import io
import json
import random
import time
import uuid

import pytest

from fanout import aws, insights
from fanout.errors import FanoutError, UsageError
from fanout.insights import cli
from fanout.stack import Stack

from .support import download_record, event, json_event, report_line

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
    stack = Stack(
        backend="local", stack="t", region=REGION, endpoint=emulator, bucket="b", object_key="k", object_size=1,
        queue_url="q", queue_arn="arn:aws:sqs:us-east-1:123456789012:q", dlq_url="d", dlq_arn="d",
        function_name=group.rsplit("/", 1)[1], log_group=group, concurrency=1, memory=1024, timeout=60,
        batch_size=1, max_receive_count=5, architecture="x86_64", download_mode="download_file",
    )  # fmt: skip
    return stack, events, now


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


def test_export_then_offline_query(deployed, tmp_path, monkeypatch, capsys):
    stack, events, now = deployed
    monkeypatch.setattr(cli.stack, "from_args", lambda args: stack)
    out = tmp_path / "sub" / "events.jsonl"
    assert invoke(["export", "--out", str(out), "--start", str(now - 1000), "--end", str(now + 10_000)]) == 0
    assert [json.loads(line)["message"] for line in out.read_text().splitlines()] == [e["message"] for e in events]
    assert list(out.parent.iterdir()) == [out]  # no temporary file left behind
    capsys.readouterr()
    assert invoke(["insights", "cold-starts", "--events", str(out), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"memory_mb": 1024, "invocations": 30, "cold_starts": 0}]


def test_formats(tmp_path, capsys):
    path = tmp_path / "e.jsonl"
    path.write_text("".join(json.dumps(json_event({"event": "download", "k": k, "v": v})) + "\n"
                            for k, v in (("a", 1), ("b", 2.5), ("a", 3))))  # fmt: skip
    query = tmp_path / "q.logsinsights"
    query.write_text("# sums\nstats sum(v) as total by k | sort k asc")
    invoke(["insights", str(query), "--events", str(path), "--format", "json"])
    assert json.loads(capsys.readouterr().out) == [{"k": "a", "total": 4}, {"k": "b", "total": 2.5}]
    invoke(["insights", str(query), "--events", str(path), "--format", "csv"])
    assert list(csv.DictReader(io.StringIO(capsys.readouterr().out))) == [{"k": "a", "total": "4"}, {"k": "b", "total": "2.5"}]
    invoke(["insights", str(query), "--events", str(path)])
    table = capsys.readouterr().out
    assert "total" in table and "2.5000" in table and "3 records matched of 3 scanned" in table


@pytest.mark.parametrize(
    "argv, message",
    [
        (["insights", "no-such-query", "--events", "x.jsonl"], "no saved query"),
        (["insights", "missing.logsinsights", "--events", "x.jsonl"], "does not exist"),
        (["insights", "errors", "--events", "missing.jsonl"], "does not exist"),
        (["export", "--out", "x.jsonl", "--start", "yesterday"], "not a time"),
        (["export", "--out", "x.jsonl", "--hours", "0"], "must be positive"),
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
    gone = Stack(**{**stack.__dict__, "log_group": "/aws/lambda/never-ran"})
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
