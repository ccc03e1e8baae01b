"""The deploy summary fits an 80-column terminal."""

import pytest

from fanout.workloads import registry
from fanout.stages import deploy
from fanout.cloud.stack import Stack

WIDTH = 80
ACCOUNT = "123456789012"
LONGEST_STACK = "s" * 30  # the longest name infra/variables.tf accepts
LONGEST_REGION = "us-isof-south-1"


def outputs(stack: str, region: str, endpoint: str = "", size: int = 16 * 2**20) -> dict:
    """A stack's outputs, its names derived as infra/names.tf derives them."""
    queue_host = endpoint or f"https://sqs.{region}.amazonaws.com"
    return {
        "region": region, "endpoint": endpoint, "stack": stack, "bucket": f"{stack}-{ACCOUNT}-{region}",
        "object_key": f"objects/{size}-bytes.bin", "object_size": size,
        "queue_url": f"{queue_host}/{ACCOUNT}/{stack}-requests", "queue_arn": "qa", "dlq_url": "d", "dlq_arn": "da",
        "function_name": f"{stack}-downloader", "log_group": f"/aws/lambda/{stack}-downloader",
        "concurrency": 1000, "memory": 1024, "timeout": 60, "batch_size": 1, "max_receive_count": 5,
        "architecture": "x86_64", "default_strategy": "stream",
    }  # fmt: skip


def summary(backend: str, stack_outputs: dict) -> list[str]:
    return deploy.summary(Stack.from_outputs(backend, stack_outputs, registry.stack_fields), 95.0).splitlines()


@pytest.mark.parametrize("backend, stack_outputs", [
    ("aws", outputs("s3fanout", "us-east-1")),
    ("local", outputs("demo", "us-east-1", "http://127.0.0.1:38973")),
])  # fmt: skip
def test_the_default_and_demo_summaries_fit(backend, stack_outputs):
    lines = summary(backend, stack_outputs)
    assert [line for line in lines if len(line) > WIDTH] == []
    assert f"  bucket    {stack_outputs['bucket']}" in lines
    assert f"  strategy  {stack_outputs['default_strategy']}" in lines  # the download workload's line


def test_object_and_bucket_fit_for_the_longest_names():
    """Whatever the stack name and region, the object's lines fit (others grow with the names)."""
    stack_outputs = outputs(LONGEST_STACK, LONGEST_REGION, size=1023 * 2**30)
    lines = summary("aws", stack_outputs)
    mine = [line for line in lines if line.startswith(("  object ", "  bucket "))]
    assert len(mine) == 2 and all(len(line) <= WIDTH for line in mine)
    assert any(stack_outputs["object_key"] in line for line in mine)
