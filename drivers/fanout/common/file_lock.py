"""An exclusive lock on a file, held for a block: what two terminals or a test suite's workers
running the same command take before they change shared state (the emulator's pid file, a zip
in the build directory). flock(2): the kernel releases it if the holder dies."""

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def exclusive(path: Path) -> Iterator[None]:
    """Wait for, then hold, the lock on `path` (created, with its folder, if missing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
