"""The test object upload against the emulator: streamed multipart, skip when present, errors."""

import hashlib
import io
import uuid
import zlib

import boto3
import pytest
from rich.console import Console

from fanout.workloads import registry
from fanout.common.errors import FanoutError
from fanout.cloud.stack import Stack
from fanout.cloud.random_objects import MAX_PARTS, MIN_PART_SIZE, RandomBytes, part_size
from fanout.stages.upload import ensure_object

MIB = 1024 * 1024


@pytest.fixture(scope="module")
def s3(emulator):
    return boto3.client(
        "s3", endpoint_url=emulator, region_name="us-east-1", aws_access_key_id="test", aws_secret_access_key="test"
    )


@pytest.fixture
def make_stack(emulator, s3):
    """A Stack pointing at a fresh bucket in the emulator; only the S3 fields matter here."""
    bucket = f"upload-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=bucket)

    def make(object_size: int, bucket: str = bucket, **more) -> Stack:
        outputs = {
            "region": "us-east-1", "endpoint": emulator, "stack": "t", "bucket": bucket, "object_key": "object.bin",
            "object_size": object_size, "queue_url": "", "queue_arn": "", "dlq_url": "", "dlq_arn": "",
            "function_name": "f", "log_group": "/aws/lambda/f", "concurrency": 1, "memory": 128, "timeout": 60,
            "batch_size": 1, "max_receive_count": 5, "architecture": "x86_64", "default_strategy": "stream",
            **more,
        }  # fmt: skip
        return Stack.from_outputs("local", outputs, registry.stack_fields)

    return make


def head(s3, stack):
    return s3.head_object(Bucket=stack.bucket, Key=stack.object_key)


def test_uploads_random_bytes_in_parallel_parts(s3, make_stack, capsys):
    stack = make_stack(2 * MIN_PART_SIZE + 12345)
    ensure_object(stack)

    meta = head(s3, stack)
    assert meta["ContentLength"] == stack.object_size
    assert meta["ETag"].strip('"').endswith("-3")  # multipart: 3 parts of the transfer manager's size
    data = s3.get_object(Bucket=stack.bucket, Key=stack.object_key)["Body"].read()
    assert len(zlib.compress(data[: 4 * MIB], 1)) > 4 * MIB  # random: does not compress
    assert "uploaded" in capsys.readouterr().err


def test_keys_copies_hold_the_objects_bytes_and_are_made_once(s3, make_stack, capsys):
    copies = ["copies/1/object.bin", "copies/2/object.bin"]
    stack = make_stack(MIN_PART_SIZE + 7, object_keys=["object.bin", *copies])
    ensure_object(stack)
    original = s3.get_object(Bucket=stack.bucket, Key=stack.object_key)["Body"].read()
    for key in copies:
        assert s3.get_object(Bucket=stack.bucket, Key=key)["Body"].read() == original
    assert capsys.readouterr().err.count("copied the test object") == 2
    ensure_object(stack)  # a second deploy: everything already there
    assert "copied" not in capsys.readouterr().err


def test_output_off_a_terminal_is_plain_lines(s3, make_stack, capsys):
    stack = make_stack(MIB)
    ensure_object(stack)
    lines = capsys.readouterr().err.splitlines()  # stderr is not a terminal here
    assert lines == [lines[0], f"  s3://{stack.bucket}/{stack.object_key}", lines[2]]
    assert lines[0].startswith("uploading") and lines[2].startswith("uploaded 1 MiB in ")


def test_the_progress_bar_fits_80_columns(s3, make_stack):
    terminal = io.StringIO()
    ensure_object(make_stack(2 * MIN_PART_SIZE), Console(file=terminal, force_terminal=True, width=80))
    screen = terminal.getvalue()
    assert "━" in screen  # the bar was drawn
    assert "…" not in screen  # and no column was cut short to fit


def test_present_object_of_the_right_size_is_kept(s3, make_stack, capsys):
    stack = make_stack(3 * MIB)
    ensure_object(stack)
    before = hashlib.sha256(s3.get_object(Bucket=stack.bucket, Key=stack.object_key)["Body"].read()).digest()
    capsys.readouterr()

    ensure_object(stack)

    after = hashlib.sha256(s3.get_object(Bucket=stack.bucket, Key=stack.object_key)["Body"].read()).digest()
    assert after == before  # new random bytes would differ
    assert "not uploading" in capsys.readouterr().err


def test_object_of_another_size_is_replaced(s3, make_stack):
    stack = make_stack(MIB + 1)
    s3.put_object(Bucket=stack.bucket, Key=stack.object_key, Body=b"short")
    ensure_object(stack)
    assert head(s3, stack)["ContentLength"] == MIB + 1


def test_missing_bucket_is_one_line_error(make_stack):
    stack = make_stack(MIB, bucket=f"absent-{uuid.uuid4().hex[:12]}")
    with pytest.raises(FanoutError, match=f"upload to s3://{stack.bucket}/object.bin failed") as info:
        ensure_object(stack)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("reads", [[1, 10, 1000], [7] * 50, [-1]])
def test_random_bytes_yields_exactly_size_then_eof(reads):
    size = 4096 + 3
    stream = RandomBytes(size)
    total = sum(len(stream.read(n)) for n in reads) + len(stream.read())
    assert total == size
    assert stream.read(10) == b""
    assert not stream.seekable()


@pytest.mark.parametrize("size", [1, MIN_PART_SIZE * MAX_PARTS, MIN_PART_SIZE * MAX_PARTS + 1, 5 * 1024**4])
def test_part_size_respects_s3_part_limit(size):
    chunk = part_size(size)
    assert chunk >= MIN_PART_SIZE and chunk % MIB == 0
    assert -(-size // chunk) <= MAX_PARTS
    assert chunk == MIN_PART_SIZE or -(-size // (chunk - MIB)) > MAX_PARTS  # the smallest that fits
