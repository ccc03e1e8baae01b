"""Objects of random bytes, uploaded without a local file, and their server-side copies: the test
object (fanout.stages.upload) and a workload's own objects (seqread's files) share this.

The object is random bytes streamed straight into a parallel multipart upload: no local file of
the object's size (objects reach many GiB) and memory bounded by the transfer manager's
in-memory part limit.
"""

import io
import math
import os

from boto3.s3.transfer import TransferConfig
from botocore.exceptions import ClientError

from fanout.common.errors import FanoutError

MIN_PART_SIZE = 8 * 1024 * 1024  # the transfer manager's default part size
MAX_PARTS = 10_000  # S3's limit on the parts of one multipart upload
COPY_OBJECT_LIMIT = 5 * 2**30  # the largest object one CopyObject copies


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


def put_random(s3, bucket: str, key: str, size: int, callback=None) -> None:
    """s3://bucket/key := `size` random bytes, through the transfer manager (`callback`: its byte counts)."""
    config = TransferConfig(multipart_chunksize=part_size(size))
    s3.upload_fileobj(RandomBytes(size), bucket, key, Config=config, Callback=callback)


def server_copy(s3, source: dict, bucket: str, key: str, size: int, source_client=None) -> None:
    """s3://bucket/key := a server-side copy of `source` ({"Bucket", "Key"}) of `size` bytes:
    CopyObject up to S3's COPY_OBJECT_LIMIT, a multipart copy (UploadPartCopy) above. The bytes
    never pass through this machine. `source_client` reads the source's size (a client of the
    source's region when that is another; None: `s3`)."""
    config = TransferConfig(multipart_threshold=COPY_OBJECT_LIMIT, multipart_chunksize=part_size(size))
    s3.copy(source, bucket, key, Config=config, ExtraArgs={"ChecksumAlgorithm": "CRC32"}, SourceClient=source_client)


def size_of(s3, bucket: str, key: str) -> int | None:
    """The object's size, or None when there is no such object."""
    try:
        return s3.head_object(Bucket=bucket, Key=key)["ContentLength"]
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey"):
            return None
        raise FanoutError(f"cannot read s3://{bucket}/{key}: {exc}") from None
