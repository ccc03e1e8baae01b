"""One function host per stack: `make run` and `make wait` both host on the local backend, and
two hosts at once would double the concurrency the run is meant to measure.

The lock is an flock(2) on `host.lock` in the stack's state directory. The kernel releases it
when its holder exits, however it exits, so a crashed host never leaves a stale lock; the file
also names the holder's pid for the error message.
"""

import fcntl
import os
from contextlib import contextmanager

from fanout.common import paths
from fanout.common.errors import FanoutError

LOCK_FILE = "host.lock"


@contextmanager
def held(backend: str, stack: str):
    """Hold the stack's host lock for the block; a one-line error when another process holds it."""
    path = paths.stack_dir(backend, stack) / LOCK_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            raise FanoutError(
                f"stack {stack!r} is already hosted by process {holder} (`make run` or `make wait`); "
                "use `make wait HOST=0` (wait --no-host) to wait without hosting"
            ) from None
        handle.truncate(0)
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        try:
            yield
        finally:
            handle.truncate(0)
            fcntl.flock(handle, fcntl.LOCK_UN)


def is_held(backend: str, stack: str) -> bool:
    """Does a process hold the stack's host lock now?"""
    path = paths.stack_dir(backend, stack) / LOCK_FILE
    if not path.exists():
        return False
    with open(path) as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
        return False
