"""`destroy` after an apply that failed half-way removes what the apply did create.

The apply is made to fail by a dead-letter queue that already exists under the stack's name
with other attributes (created outside Terraform, as a leftover from another tool would be):
SQS refuses it at once, while the bucket, role, log group and function are created alongside,
and what waits for that queue (the request queue, the queue mapping) is never started. Failing
on the first queue keeps the test short: each queue Terraform does create costs ~25 s of the
provider's confirmation, and test_stack.py already destroys created queues.
"""

import pytest

from fanout.common import aws
from fanout.cloud import terraform

from .test_stack import fanout

pytestmark = pytest.mark.slow

STACK = "partial-test"
REGION = "us-east-1"
INPUTS = ["--concurrency", "2", "--memory", "128", "--object-size", "1MiB"]


def stack_resources(endpoint: str) -> dict:
    """Everything of the stack's that can be listed, by kind."""
    client = lambda service: aws.client(service, REGION, endpoint)  # noqa: E731
    return {
        "buckets": [b["Name"] for b in client("s3").list_buckets()["Buckets"] if b["Name"].startswith(STACK)],
        "queues": client("sqs").list_queues(QueueNamePrefix=STACK).get("QueueUrls", []),
        "functions": [f["FunctionName"] for f in client("lambda").list_functions()["Functions"]
                      if f["FunctionName"].startswith(STACK)],  # fmt: skip
        "roles": [r["RoleName"] for r in client("iam").list_roles()["Roles"] if r["RoleName"].startswith(STACK)],
        "log groups": [g["logGroupName"] for g in
                       client("logs").describe_log_groups(logGroupNamePrefix=f"/aws/lambda/{STACK}")["logGroups"]],
    }  # fmt: skip


def test_destroy_after_a_failed_apply_leaves_nothing(emulator):
    sqs = aws.client("sqs", REGION, emulator)
    leftover = sqs.create_queue(QueueName=f"{STACK}-dlq")["QueueUrl"]  # default retention: not the module's
    try:
        assert fanout("deploy", "--backend", "local", "--stack", STACK, *INPUTS) != 0
        assert terraform.has_state("local", STACK)
        created = stack_resources(emulator)
        assert created["queues"] == [leftover]  # the request queue was never started
        assert all(created[kind] for kind in ("buckets", "functions", "roles", "log groups")), created

        assert fanout("destroy", "--backend", "local", "--stack", STACK) == 0

        assert stack_resources(emulator) == {
            "buckets": [], "queues": [leftover], "functions": [], "roles": [], "log groups": []
        }  # fmt: skip
        assert not terraform.has_state("local", STACK)
    finally:
        sqs.delete_queue(QueueUrl=leftover)
