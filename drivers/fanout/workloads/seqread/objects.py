"""The seqread workload's objects: one per job and size, `seqread/<size>-bytes/<job>.bin` in the
bucket a run reads (the stack's, or the remote region's), made by the first run that needs them
and kept, as the stack's test objects are: `make destroy` empties both buckets.

An object already there with the right size is kept. The function reads them only, and only
those the stack declares (declared.py, infra/seqread.tf): fire refuses a run that reads others
before this makes anything. The remote bucket's objects are uploaded from this machine (S3
charges no transfer into it), or with `copy` copied server-side from the stack's bucket (faster:
the bytes go region to region, not through this machine's uplink; billed as inter-region
transfer out of the stack's region). Whichever is used, the line that says so states the other
and the copy's cost.
"""

from collections.abc import Callable

from botocore.exceptions import BotoCoreError, ClientError

from fanout.cloud.random_objects import put_random, server_copy, size_of
from fanout.common.errors import FanoutError
from fanout.common.sizes import format_size
from fanout.common import aws, function_modules
from fanout.workloads.seqread import costs as seqread_costs, region

definition = function_modules.load("seqread")
COPY_FLAG = "REMOTE_COPY=1"  # fire's --remote-copy as the Makefile sets it


def bucket_of(stack, source: str) -> tuple[str, str]:
    """(bucket, region) that `source` reads on `stack`."""
    if source == "remote":
        fields = region.stack_fields(stack.workload_outputs)
        return fields["remote_bucket"], fields["remote_region"]
    return stack.bucket, stack.region


def ensure(stack, source: str, size: int, jobs: int, say: Callable[[str], None], copy: bool = False) -> list[str]:
    """Make every missing object of `jobs` jobs of `size` bytes in the bucket `source` reads
    (the remote one's copied from the stack's bucket with `copy`), saying so with `say`; the
    keys made."""
    bucket, where = bucket_of(stack, source)
    s3 = aws.client("s3", where, stack.endpoint)
    keys = [definition.object_key(size, job) for job in range(jobs)]
    missing = [key for key in keys if size_of(s3, bucket, key) != size]
    if not missing:
        return []
    if source == "remote" and copy:
        ensure(stack, "local", size, jobs, say)
        _each(missing, bucket, "copy", lambda key: server_copy(s3, {"Bucket": stack.bucket, "Key": key}, bucket, key,
                                                               size, stack.client("s3")))  # fmt: skip
        say(f"seqread: copied {len(missing)} object(s) of {format_size(size)} server-side from s3://{stack.bucket} "
            f"({stack.region}) to s3://{bucket} ({where}); kept for later runs")  # fmt: skip
        say(f"  {copy_cost(stack.region, where, size * len(missing))}; an upload from here (without {COPY_FLAG}) "
            "carries no transfer charge")
        return missing
    _each(missing, bucket, "upload", lambda key: put_random(s3, bucket, key, size))
    say(f"seqread: uploaded {len(missing)} object(s) of {format_size(size)} to s3://{bucket} ({where}); kept for "
        "later runs")  # fmt: skip
    if source == "remote":
        say(f"  uploads carry no transfer charge; {COPY_FLAG} copies them from the stack's bucket server-side "
            f"instead, faster, {copy_cost(stack.region, where, size * len(missing))}")
    return missing


def _each(keys: list[str], bucket: str, what: str, make: Callable[[str], None]) -> None:
    """make(key) for every key; a failure is one line naming the object."""
    for key in keys:
        try:
            make(key)
        except (ClientError, BotoCoreError) as exc:
            raise FanoutError(f"{what} to s3://{bucket}/{key} failed: {exc}") from None


def copy_cost(from_region: str, to_region: str, size: int) -> str:
    """What a server-side copy of `size` bytes from `from_region` to `to_region` costs: S3 bills
    the bytes as data transfer out of the source region (seqread_costs.TRANSFER_PRICES; an
    unknown pair is said so, not guessed), besides a PUT-priced request per object."""
    price = seqread_costs.transfer_price(from_region, to_region)
    if price is None:
        return f"billed as inter-region transfer: {seqread_costs.unknown_pair(from_region, to_region)}"
    gb = size / seqread_costs.GB
    return f"billed as inter-region transfer: {gb:,.2f} GB x ${price}/GB = ${gb * price:,.2f}"
