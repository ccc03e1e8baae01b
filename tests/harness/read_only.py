"""A folder nothing can be written into, the superuser included: chmod alone does not stop root
(who runs the tests in some containers), the immutable attribute does."""

import os
import shutil
import subprocess
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def read_only(folder: Path):
    """`folder` unwritable for the block: its mode 0o555, and for root the immutable attribute
    (chattr +i); skipped where neither holds (a file system without that attribute)."""
    mode = folder.stat().st_mode
    folder.chmod(0o555)
    immutable = os.geteuid() == 0
    if immutable and (shutil.which("chattr") is None
                      or subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode):
        folder.chmod(mode)
        pytest.skip("root, and no immutable attribute on this file system: nothing here is read-only")
    try:
        yield folder
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        folder.chmod(mode)
