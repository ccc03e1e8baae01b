"""Batches, partial failures, retries, the DLQ and timeouts, as Lambda's SQS mapping handles them."""

import re
from datetime import datetime

import pytest
from botocore.exceptions import ClientError

from fanout.common.errors import FanoutError
from fanout.local.host.event import failed_message_ids
from tests.harness.host_testing import REPORT, START, allow

from .support import messages, running

FAIL_SOME = """
import json

def handler(event, context):
    failed = [r["messageId"] for r in event["Records"] if json.loads(r["body"]).get("fail")]
    print("batch", len(event["Records"]), "failed", len(failed))
    return {"batchItemFailures": [{"itemIdentifier": i} for i in failed]}
"""


def test_partial_batch_failure_keeps_only_the_reported_messages(deploy):
    fn = deploy(FAIL_SOME, batch_size=3, report_failures=True, max_receive=2)
    bodies = [{"seq": i, "fail": i % 3 == 0} for i in range(9)]
    fn.send(bodies)

    summary = fn.host()

    failing = [b for b in bodies if b["fail"]]
    assert sorted(fn.drain(fn.dlq_url), key=lambda b: b["seq"]) == failing
    assert fn.drain(fn.queue_url) == []
    assert summary.messages_deleted == len(bodies) - len(failing)
    batch_sizes = [int(m.split()[1]) for events in fn.streams().values() for _, m in events
                   if m.startswith("batch ")]
    assert max(batch_sizes) <= 3 and sum(batch_sizes) == summary.messages_received


def test_invalid_item_failure_reply_fails_the_whole_batch(deploy):
    fn = deploy("def handler(event, context):\n    return {'batchItemFailures': [{'itemIdentifier': 'not-in-batch'}]}\n",
                batch_size=2, report_failures=True, max_receive=1)
    bodies = [{"seq": i} for i in range(4)]
    fn.send(bodies)

    summary = fn.host()

    assert summary.messages_deleted == 0
    assert sorted(fn.drain(fn.dlq_url), key=lambda b: b["seq"]) == bodies


def test_without_report_batch_item_failures_a_return_deletes_the_batch(deploy):
    fn = deploy(FAIL_SOME, batch_size=3, report_failures=False)
    fn.send([{"seq": i, "fail": True} for i in range(3)])

    fn.host()

    assert fn.drain(fn.queue_url) == [] and fn.drain(fn.dlq_url) == []


def test_exception_retries_until_the_dlq(deploy):
    max_receive = 3
    fn = deploy("""
        def handler(event, context):
            for record in event["Records"]:
                print("receive", record["attributes"]["ApproximateReceiveCount"])
            raise ValueError("boom")
        """, max_receive=max_receive)
    bodies = [{"seq": i} for i in range(2)]
    fn.send(bodies)

    summary = fn.host()

    messages = [m for events in fn.streams().values() for _, m in events]
    receives = sorted(int(m.split()[1]) for m in messages if m.startswith("receive "))
    assert receives == sorted(list(range(1, max_receive + 1)) * len(bodies))
    assert sum(m.startswith("[ERROR] ValueError: boom\nTraceback") for m in messages) == len(receives)
    assert summary.errors == len(receives) and summary.messages_deleted == 0
    assert sorted(fn.drain(fn.dlq_url), key=lambda b: b["seq"]) == bodies


@pytest.mark.timing
def test_timeout_kills_the_environment_and_the_retry_starts_cold(deploy):
    timeout = 1
    fn = deploy("""
        import time

        def handler(event, context):
            if event["Records"][0]["attributes"]["ApproximateReceiveCount"] == "1":
                print("sleeping past the timeout")
                time.sleep(30)
            print("retry ok")
        """, timeout=timeout, reserved=1, max_receive=3)
    margin = 2  # seconds the kill may take, generously
    fn.send([{"seq": 0}])

    summary = fn.host()

    assert summary.timeouts == 1 and summary.succeeded == 1 and summary.messages_deleted == 1
    streams = fn.streams()
    assert len(streams) == 2  # the killed environment is never reused
    first, second = sorted(streams.values(), key=lambda events: events[0][0])
    timed_out = [m for _, m in first if "Task timed out" in m]
    assert len(timed_out) == 1
    stamp, _, seconds = re.fullmatch(r"(\S+Z) ([0-9a-f-]{36}) Task timed out after (\d+\.\d\d) seconds\n",
                                     timed_out[0]).groups()
    assert timeout <= float(seconds) <= timeout + margin
    started = next(ts for ts, m in first if START.match(m))
    killed = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%f%z").timestamp() * 1000
    assert timeout * 1000 <= killed - started <= (timeout + margin) * 1000
    first_report = next(REPORT.match(m) for _, m in first if REPORT.match(m))
    assert timeout * 1000 <= float(first_report["duration"]) <= (timeout + margin) * 1000
    for events in (first, second):
        reports = [REPORT.match(m) for _, m in events if m.startswith("REPORT")]
        assert len(reports) == 1 and reports[0]["init"]  # one invocation each, both cold
    assert any(m == "retry ok\n" for _, m in second)
    assert sum(1 for _, m in second if START.match(m)) == 1


def test_a_queue_error_stops_the_host_with_that_error(deploy):
    fn = deploy("""
        import boto3

        def handler(event, context):
            sqs = boto3.client("sqs")
            sqs.delete_queue(QueueUrl=sqs.get_queue_url(QueueName=context.function_name)["QueueUrl"])
        """, allowed=[allow(["sqs:GetQueueUrl", "sqs:DeleteQueue"], "*")])
    fn.send([{"seq": 1}])

    with pytest.raises(ClientError) as failure:
        fn.host()
    assert "NonExistentQueue" in str(failure.value) or "QueueDoesNotExist" in str(failure.value)


def test_timeout_kills_the_handlers_child_processes_and_reports_its_peak_memory(deploy):
    fn = deploy("""
        import subprocess, time

        def handler(event, context):
            child = subprocess.Popen(["sleep", "60"])
            ballast = b"x" * (100 * 1024 * 1024)  # written, so resident
            print("child", child.pid)
            time.sleep(30)
        """, timeout=1, max_receive=1)
    fn.send([{"seq": 0}])

    summary = fn.host()

    assert summary.timeouts == 1
    events = messages(fn)
    (child,) = [int(m.split()[1]) for m in events if m.startswith("child ")]
    assert not running(child)
    (report,) = [REPORT.match(m) for m in events if REPORT.match(m)]
    assert int(report["max_memory"]) >= 100


def test_an_environment_that_exits_during_init_logs_why(deploy):
    fn = deploy("import os\nos._exit(3)\n")
    fn.send([{"seq": 0}])

    with pytest.raises(FanoutError) as failure:
        fn.host()

    line = "[ERROR] Runtime.ExitError: Runtime exited with error: exit status 3 during init"
    assert str(failure.value).endswith(f"failed to initialise: {line}")
    assert messages(fn) == [line + "\n"]


IDS = ["a", "b", "c"]


@pytest.mark.parametrize("reply, failed", [
    (None, []),
    ({}, []),
    ({"batchItemFailures": None}, []),
    ({"batchItemFailures": []}, []),
    ({"batchItemFailures": [{"itemIdentifier": "b"}]}, ["b"]),
    ({"batchItemFailures": [{"itemIdentifier": i} for i in ("c", "a", "c")]}, ["a", "c"]),  # batch order, once
    ("not a dict", IDS),
    (["a"], IDS),
    ({"batchItemFailures": "a"}, IDS),
    ({"batchItemFailures": ["a"]}, IDS),
    ({"batchItemFailures": [{"itemIdentifier": ""}]}, IDS),
    ({"batchItemFailures": [{"itemIdentifier": None}]}, IDS),
    ({"batchItemFailures": [{"id": "a"}]}, IDS),
    ({"batchItemFailures": [{"itemIdentifier": "b"}, {"itemIdentifier": "not-in-batch"}]}, IDS),
])
def test_batch_item_failures_reply(reply, failed):
    """Null or empty replies are full success; a malformed reply or an unknown id fails the whole batch."""
    assert failed_message_ids(reply, IDS, report_failures=True) == failed


def test_without_report_batch_item_failures_any_reply_is_success():
    assert failed_message_ids({"batchItemFailures": [{"itemIdentifier": "a"}]}, IDS, report_failures=False) == []
