"""`destroy` after an apply that failed half-way removes what the apply did create.

The apply is made to fail by a log group that already exists under the stack's name (created
outside Terraform, as a leftover from another tool would be): CreateLogGroup fails while the
bucket, role and queues are being created alongside it.
"""

from fanout import aws, terraform

from .test_stack import fanout

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
    }


def test_destroy_after_a_failed_apply_leaves_nothing(emulator):
    logs = aws.client("logs", REGION, emulator)
    leftover = f"/aws/lambda/{STACK}-downloader"
    logs.create_log_group(logGroupName=leftover)
    try:
        assert fanout("deploy", "--backend", "local", "--stack", STACK, *INPUTS) != 0
        assert terraform.has_state("local", STACK)
        assert any(stack_resources(emulator).values())  # the apply did create part of the stack

        assert fanout("destroy", "--backend", "local", "--stack", STACK) == 0

        assert stack_resources(emulator) == {"buckets": [], "queues": [], "functions": [], "roles": []}
        assert not terraform.has_state("local", STACK)
    finally:
        logs.delete_log_group(logGroupName=leftover)
