"""A host killed outright (SIGKILL) loses no result: a message is deleted only once its records
are in the log group, so every message ends up either logged or back in the queue."""

import contextlib
import glob
import json
import os
import signal
from pathlib import Path

from botocore.exceptions import ClientError

from .support import messages, queue_depth
from .test_interrupt import HostCommand, wait_until

COUNT = 300
SLOW_FROM = 2 * COUNT // 3
# The last third's messages take 2.5 s each (within the 3 s function timeout): the host is still on
# them when the test kills it, however late a loaded machine sees the first third logged (with
# every message fast, the host had sometimes finished them all by then).
HANDLER = f"""
import json
import time

def handler(event, context):
    for record in event["Records"]:
        seq = json.loads(record["body"])["seq"]
        if seq >= {SLOW_FROM}:
            time.sleep(2.5)
        print(json.dumps({{"seq": seq}}))
"""


def logged_seqs(fn) -> set[int]:
    try:
        events = messages(fn)
    except ClientError:  # no log group yet
        return set()
    return {json.loads(m)["seq"] for m in events if m.startswith("{")}


def loops_under(folder: Path) -> list[str]:
    """The loop devices backed by a file under `folder`: the environments' /tmp file systems,
    mounted in their own namespaces, out of this process's sight."""
    backing = []
    for path in glob.glob("/sys/block/loop*/loop/backing_file"):
        with contextlib.suppress(OSError):  # detached while listed
            backing.append(Path(path).read_text().strip())
    return [file for file in backing if file.startswith(f"{folder}/")]


def test_a_killed_host_loses_no_result(deploy, tmp_path):
    fn = deploy(HANDLER, reserved=4, visibility=2, max_receive=10)
    fn.send_batches(COUNT)
    host = HostCommand(fn, tmp_path / "home")
    wait_until(lambda: len(logged_seqs(fn)) >= COUNT // 3)
    os.killpg(host.process.pid, signal.SIGKILL)
    host.exit_status()
    # the environments' /tmp file systems end with them, though the host ran no clean-up
    wait_until(lambda: not loops_under(tmp_path), seconds=30)

    logged = logged_seqs(fn)
    assert len(logged) < COUNT  # killed mid-run
    requeued: set[int] = set()

    def drained() -> bool:  # the dead host's messages come back after their visibility timeout
        requeued.update(body["seq"] for body in fn.drain(fn.queue_url))
        return queue_depth(fn) == 0

    wait_until(drained, seconds=30)
    assert set(range(COUNT)) - logged - requeued == set()
