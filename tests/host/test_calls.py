"""FANOUT_HOST_TRACE_CALLS: the calls made with the function's role, by its handler and by the
host on its behalf (queue mapping, log delivery), are traced; nothing else is."""

import boto3

from tests.harness.host_testing import allow

TOUCHES_S3 = """
import boto3

s3 = boto3.client("s3")  # at import, as the downloader does

def handler(event, context):
    s3.list_buckets()
    boto3.client("sts").get_caller_identity()
"""
LISTS_BUCKETS = [allow("s3:ListAllMyBuckets", "*")]  # GetCallerIdentity needs no permission


def test_the_handlers_and_the_mappings_calls_are_traced(deploy, tmp_path, monkeypatch):
    trace = tmp_path / "calls.txt"
    monkeypatch.setenv("FANOUT_HOST_TRACE_CALLS", str(trace))
    fn = deploy(TOUCHES_S3, reserved=2, visibility=30, allowed=LISTS_BUCKETS)
    fn.send([{"seq": n} for n in range(3)])
    summary = fn.host()
    boto3.client("s3", region_name="us-east-1")  # a host-side client outside the host: not traced
    lines = trace.read_text().splitlines()
    assert summary.messages_deleted == 3
    assert lines.count("s3:ListBuckets") == lines.count("sts:GetCallerIdentity") == summary.invocations
    assert {"sqs:ReceiveMessage", "sqs:DeleteMessageBatch", "sqs:GetQueueAttributes", "logs:CreateLogStream",
            "logs:PutLogEvents"} <= set(lines)
    assert not [line for line in lines if line.startswith("lambda:")]  # reading the config is not the role's


def test_nothing_is_traced_without_the_variable(deploy, tmp_path, monkeypatch):
    monkeypatch.delenv("FANOUT_HOST_TRACE_CALLS", raising=False)
    fn = deploy(TOUCHES_S3, allowed=LISTS_BUCKETS)
    fn.send([{"seq": 0}])
    assert fn.host().messages_deleted == 1
    assert not list(tmp_path.iterdir())
