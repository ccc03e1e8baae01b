"""`fanout upload`: put the test object the functions download into the stack's bucket.

Random bytes streamed into a parallel multipart upload, with no local file of the object's size
(objects reach many GiB); an object already there with the right size is kept, so deploying
again does not re-upload gigabytes. Details: docs/aws.md, *Where state lives, and teams*.
"""

import argparse
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from botocore.exceptions import BotoCoreError, ClientError
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn, TransferSpeedColumn
from s3transfer.exceptions import S3UploadFailedError
from botocore.client import BaseClient  # no types of its own: Any to mypy, named for the reader

from fanout.cloud import stack as stacks
from fanout.local import backends
from fanout.stages import command_line
from fanout.workloads import registry as workloads
from fanout.cloud.stack import Stack
from fanout.cloud.random_objects import put_random, server_copy, size_of
from fanout.common.errors import FanoutError
from fanout.common.sizes import format_size


def ensure_object(stack: Stack, console: Console | None = None) -> None:
    """Make s3://bucket/object_key hold object_size bytes, uploading only when it does not, and
    each of its copies (KEYS) a copy of it. Progress goes to `console` (None: stderr)."""
    console = console or Console(stderr=True)
    s3 = stack.client("s3")
    _ensure_original(s3, stack, console)
    for key in stack.object_keys[1:]:
        _ensure_copy(s3, stack, key, console)


def _ensure_original(s3: BaseClient, stack: Stack, console: Console) -> None:
    where = f"s3://{stack.bucket}/{stack.object_key}"
    size = format_size(stack.object_size)
    existing = size_of(s3, stack.bucket, stack.object_key)
    if existing == stack.object_size:
        _say(console, f"test object ({size}) already in place; not uploading", where)
        return
    if existing is not None:
        _say(console, f"replacing the test object: it holds {existing} bytes, not {stack.object_size}", where)
    _say(console, f"uploading the test object ({size} of random bytes) to", where)
    started = time.monotonic()
    _upload(s3, stack, where, console)
    uploaded = size_of(s3, stack.bucket, stack.object_key)
    if uploaded != stack.object_size:
        raise FanoutError(f"{where} holds {uploaded} bytes after the upload, expected {stack.object_size}")
    seconds = time.monotonic() - started
    _say(console, f"uploaded {size} in {seconds:.1f} s ({stack.object_size / max(seconds, 1e-3) / 1e6:,.0f} MB/s)")


def _ensure_copy(s3: BaseClient, stack: Stack, key: str, console: Console) -> None:
    """A server-side copy of the test object at `key` (CopyObject up to S3's 5 GiB limit for it,
    a multipart copy above), unless one of the right size is there. A copy left from an earlier
    object of the same size is random bytes too, which is all a download needs."""
    if size_of(s3, stack.bucket, key) == stack.object_size:
        return
    try:
        server_copy(s3, {"Bucket": stack.bucket, "Key": stack.object_key}, stack.bucket, key, stack.object_size)
    except (ClientError, BotoCoreError) as exc:
        raise FanoutError(f"copy to s3://{stack.bucket}/{key} failed: {exc}") from None
    _say(console, "copied the test object to", f"s3://{stack.bucket}/{key}")


def _upload(s3: BaseClient, stack: Stack, where: str, console: Console) -> None:
    with _progress(console, stack.object_size) as advance:
        try:
            put_random(s3, stack.bucket, stack.object_key, stack.object_size, advance)
        except (S3UploadFailedError, ClientError, BotoCoreError) as exc:
            raise FanoutError(f"upload to {where} failed: {exc}") from None


@contextmanager
def _progress(console: Console, total: int) -> Iterator[Callable[[int], object]]:
    """A callback taking byte counts: it advances a progress bar on a terminal, else does nothing."""
    if not console.is_terminal:
        yield lambda sent: None
        return
    columns = ("{task.description}", BarColumn(), DownloadColumn(), TransferSpeedColumn(), TimeRemainingColumn())
    with Progress(*columns, console=console) as progress:
        task = progress.add_task("upload", total=total)
        yield lambda sent: progress.advance(task, sent)


def _say(console: Console, line: str, where: str = "") -> None:
    """A line of output, and the object's URL on a line of its own (it is long)."""
    console.print(line, highlight=False)
    if where:
        console.print(f"  {where}", highlight=False)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("upload", help="upload the test object to the deployed stack's bucket (if missing)")
    command_line.stack_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    ensure_object(stacks.acted_on(backends.get(args.backend), args.stack, workloads.stack_fields), Console(stderr=True))
    return 0
