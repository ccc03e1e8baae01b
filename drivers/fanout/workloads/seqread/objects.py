"""The seqread workload's objects: one per job and size, `seqread/<size>-bytes/<job>.bin` in the
bucket a run reads (the stack's, or the remote region's), uploaded by the first run that needs
them and kept, as the stack's test objects are: `make destroy` empties both buckets.

An object already there with the right size is kept. The function reads them only, and only
those the stack declares (declared.py, infra/seqread.tf): fire refuses a run that reads others
before this uploads anything.
"""

from collections.abc import Callable

from botocore.exceptions import BotoCoreError, ClientError

from fanout.cloud.random_objects import put_random, size_of
from fanout.common.errors import FanoutError
from fanout.common.sizes import format_size
from fanout.common import aws, function_modules
from fanout.workloads.seqread import region

definition = function_modules.load("seqread")


def bucket_of(stack, source: str) -> tuple[str, str]:
    """(bucket, region) that `source` reads on `stack`."""
    if source == "remote":
        fields = region.stack_fields(stack.workload_outputs)
        return fields["remote_bucket"], fields["remote_region"]
    return stack.bucket, stack.region


def ensure(stack, source: str, size: int, jobs: int, say: Callable[[str], None]) -> list[str]:
    """Upload every missing object of `jobs` jobs of `size` bytes, saying so with `say`; the keys
    uploaded."""
    bucket, where = bucket_of(stack, source)
    s3 = aws.client("s3", where, stack.endpoint)
    uploaded = []
    for job in range(jobs):
        key = definition.object_key(size, job)
        if size_of(s3, bucket, key) == size:
            continue
        try:
            put_random(s3, bucket, key, size)
        except (ClientError, BotoCoreError) as exc:
            raise FanoutError(f"upload to s3://{bucket}/{key} failed: {exc}") from None
        uploaded.append(key)
    if uploaded:
        say(f"seqread: uploaded {len(uploaded)} object(s) of {format_size(size)} to s3://{bucket} "
            f"({where}); kept for later runs")  # fmt: skip
    return uploaded

