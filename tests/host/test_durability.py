"""A host killed outright (SIGKILL) loses no result: a message is deleted only once its records
are in the log group, so every message ends up either logged or back in the queue."""

import json
import os
import signal
import subprocess
from pathlib import Path

from botocore.exceptions import ClientError

from .support import messages, queue_depth
from .test_interrupt import HostCommand, wait_until

COUNT = 300
FAST = """
import json

def handler(event, context):
    for record in event["Records"]:
        print(json.dumps({"seq": json.loads(record["body"])["seq"]}))
"""


def logged_seqs(fn) -> set[int]:
    try:
        events = messages(fn)
    except ClientError:  # no log group yet
        return set()
    return {json.loads(m)["seq"] for m in events if m.startswith("{")}


def unmount_left_under(folder: Path) -> None:
    """Lazily unmount the environments' /tmp file systems a killed host could not (a SIGKILL runs
    no clean-up): left mounted, the test's folder could not be removed by this or a later run."""
    with open("/proc/mounts") as mounts:
        points = [line.split()[1] for line in mounts]
    for point in points:
        if point.startswith(f"{folder}/"):
            subprocess.run(["umount", "-l", point], check=False)


def test_a_killed_host_loses_no_result(deploy, tmp_path):
    fn = deploy(FAST, reserved=4, visibility=2, max_receive=10)
    fn.send_batches(COUNT)
    host = HostCommand(fn, tmp_path / "home")
    wait_until(lambda: len(logged_seqs(fn)) >= COUNT // 3)
    os.killpg(host.process.pid, signal.SIGKILL)
    host.exit_status()
    unmount_left_under(tmp_path)

    logged = logged_seqs(fn)
    assert len(logged) < COUNT  # killed mid-run
    requeued: set[int] = set()

    def drained() -> bool:  # the dead host's messages come back after their visibility timeout
        requeued.update(body["seq"] for body in fn.drain(fn.queue_url))
        return queue_depth(fn) == 0

    wait_until(drained, seconds=30)
    assert set(range(COUNT)) - logged - requeued == set()
