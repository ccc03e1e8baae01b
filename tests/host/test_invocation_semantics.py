"""Batches, partial failures, retries, the DLQ and timeouts, as Lambda's SQS mapping handles them."""

import re

import pytest
from botocore.exceptions import ClientError

from .support import REPORT, START

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
    assert float(seconds) >= timeout
    for events in (first, second):
        reports = [REPORT.match(m) for _, m in events if m.startswith("REPORT")]
        assert len(reports) == 1 and reports[0].group(3)  # one invocation each, both cold
    assert any(m == "retry ok\n" for _, m in second)
    assert sum(1 for _, m in second if START.match(m)) == 1


def test_a_queue_error_stops_the_host_with_that_error(deploy):
    fn = deploy("""
        import boto3

        def handler(event, context):
            sqs = boto3.client("sqs")
            sqs.delete_queue(QueueUrl=sqs.get_queue_url(QueueName=context.function_name)["QueueUrl"])
        """)
    fn.send([{"seq": 1}])

    with pytest.raises(ClientError) as failure:
        fn.host()
    assert "NonExistentQueue" in str(failure.value) or "QueueDoesNotExist" in str(failure.value)
