"""`fanout upload`: put the test object the functions download into the stack's bucket.

The object is random bytes streamed straight into a parallel multipart upload: no local file of
the object's size (objects reach many GiB) and memory bounded by the transfer manager's
in-memory part limit. An object already there with the right size is kept, so deploying again
does not re-upload gigabytes.
"""

import io
import math
import os

from boto3.s3.transfer import TransferConfig
from botocore.exceptions import BotoCoreError, ClientError
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn, TransferSpeedColumn
from s3transfer.exceptions import S3UploadFailedError

from fanout import stack as stacks
from fanout.errors import FanoutError
from fanout.sizes import format_size

MIN_PART_SIZE = 8 * 1024 * 1024  # the transfer manager's default part size
MAX_PARTS = 10_000  # S3's limit on the parts of one multipart upload

console = Console(stderr=True)


class RandomBytes(io.RawIOBase):
    """A read-only, non-seekable stream of `size` random bytes made as they are read.

    os.urandom rather than random.randbytes: it measured faster here (both far above upload
    bandwidth) and its output is incompressible for certain, so no layer between S3 and the
    function can shrink the transfer and flatter the throughput figures.
    """

    def __init__(self, size: int):
        super().__init__()
        self.remaining = size

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        count = self.remaining if size is None or size < 0 else min(size, self.remaining)
        self.remaining -= count
        return os.urandom(count)


def part_size(object_size: int) -> int:
    """Smallest whole-MiB part size, at least the default, that keeps within S3's part limit.

    The stream's size is unknown to the transfer manager, so it cannot adjust this itself.
    """
    mib = 1024 * 1024
    return max(MIN_PART_SIZE, math.ceil(object_size / MAX_PARTS / mib) * mib)


def ensure_object(stack) -> None:
    """Make s3://bucket/object_key hold object_size bytes, uploading only when it does not."""
    s3 = stack.client("s3")
    where = f"s3://{stack.bucket}/{stack.object_key}"
    existing = _size_of(s3, stack.bucket, stack.object_key)
    if existing == stack.object_size:
        console.print(f"{where} already holds {format_size(stack.object_size)}; not uploading")
        return
    if existing is not None:
        console.print(f"{where} holds {existing} bytes, not {stack.object_size}; replacing it")
    _upload(s3, stack, where)
    uploaded = _size_of(s3, stack.bucket, stack.object_key)
    if uploaded != stack.object_size:
        raise FanoutError(f"{where} holds {uploaded} bytes after the upload, expected {stack.object_size}")
    console.print(f"uploaded {format_size(stack.object_size)} to {where}")


def _upload(s3, stack, where: str) -> None:
    config = TransferConfig(multipart_chunksize=part_size(stack.object_size))
    columns = (
        "[progress.description]{task.description}",
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console) as progress:
        task = progress.add_task(f"uploading {where}", total=stack.object_size)
        try:
            s3.upload_fileobj(
                RandomBytes(stack.object_size),
                stack.bucket,
                stack.object_key,
                Config=config,
                Callback=lambda sent: progress.advance(task, sent),
            )
        except (S3UploadFailedError, ClientError, BotoCoreError) as exc:
            raise FanoutError(f"upload to {where} failed: {exc}") from None


def _size_of(s3, bucket: str, key: str) -> int | None:
    """The object's size, or None when there is no such object."""
    try:
        return s3.head_object(Bucket=bucket, Key=key)["ContentLength"]
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey"):
            return None
        raise FanoutError(f"cannot read s3://{bucket}/{key}: {exc}") from None


def register(subparsers) -> None:
    parser = subparsers.add_parser("upload", help="upload the test object to the deployed stack's bucket (if missing)")
    stacks.add_arguments(parser)
    parser.set_defaults(func=lambda args: ensure_object(stacks.from_args(args)))
