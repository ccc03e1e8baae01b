"""Ctrl-C on `fanout host`, in a terminal's process group: the first lets the invocation in flight
finish, the second kills it; either way the logs are sent and nothing is left behind."""

import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from botocore.exceptions import ClientError

from fanout.common import paths
from fanout.local.host import Host
from tests.harness.host_testing import END, REPORT, START

from .support import messages, queue_depth, running

SLOW = """
import os, time

def handler(event, context):
    print("started", os.getpid())
    time.sleep(float(os.environ["SLEEP"]))
    print("finished")
"""


class HostCommand:
    """`fanout host` started in its own session, so that a Ctrl-C reaches its whole group."""

    def __init__(self, fn, home):
        command = [sys.executable, "-m", "fanout.cli", "host", "--function", fn.name, "--endpoint", fn.endpoint,
                   "--idle", "60"]
        self.process = subprocess.Popen(command, env={**os.environ, "FANOUT_HOME": str(home)}, text=True,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        self.stderr: list[str] = []
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stderr(self) -> None:
        for line in self.process.stderr:
            self.stderr.append(line)

    def ctrl_c(self) -> None:
        os.killpg(self.process.pid, signal.SIGINT)

    def exit_status(self) -> int:
        try:
            return self.process.wait(60)
        finally:
            self.process.kill()


def wait_until(condition, seconds: float = 60):
    deadline = time.monotonic() + seconds
    while not (found := condition()):
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.2)
    return found


def started_pid(fn) -> int:
    """The environment's pid, once the handler has logged it."""

    def logged_pid() -> int | None:
        try:
            events = messages(fn)
        except ClientError:  # the host has not created the log group yet
            return None
        return next((int(m.split()[1]) for m in events if m.startswith("started ")), None)

    return wait_until(logged_pid, seconds=240)  # a cold start on a loaded machine can take a minute


def hosted(deploy, home, sleep: int):
    """(function, `fanout host` command, environment pid) once the first of two messages is being
    handled by a handler that sleeps `sleep` seconds; a concurrency of 1 keeps the second queued."""
    fn = deploy(SLOW, reserved=1, timeout=sleep + 60, visibility=60, environment={"SLEEP": str(sleep)})
    fn.send([{"seq": 0}, {"seq": 1}])
    host = HostCommand(fn, home)
    return fn, host, started_pid(fn)


def test_first_ctrl_c_lets_the_invocation_in_flight_finish(deploy, tmp_path):
    fn, host, pid = hosted(deploy, tmp_path, sleep=2)

    host.ctrl_c()

    assert host.exit_status() == 0
    assert any("stopping after the invocations in flight" in line for line in host.stderr)
    events = messages(fn)
    assert [m for m in events if m.startswith(("START", "finished", "END", "REPORT"))][1:] == [
        "finished\n", *[m for m in events if END.match(m) or REPORT.match(m)]]
    assert sum(bool(START.match(m)) for m in events) == 1
    assert queue_depth(fn) == 1  # the finished message was deleted; the other was never received
    assert not running(pid)
    assert list((tmp_path / "host").iterdir()) == []


def test_second_ctrl_c_kills_the_environment_and_still_sends_the_logs(deploy, tmp_path):
    fn, host, pid = hosted(deploy, tmp_path, sleep=60)
    host.ctrl_c()
    wait_until(lambda: any("stopping after" in line for line in host.stderr))

    host.ctrl_c()
    status = host.exit_status()

    assert status == 130 and host.stderr[-1] == "fanout: interrupted\n"
    assert not running(pid)
    events = messages(fn)
    (request_id,) = [START.match(m).group(1) for m in events if START.match(m)]
    assert events[-3:-1] == [f"RequestId: {request_id} Error: Runtime exited with error: signal: killed\n"
                             "Runtime.ExitError\n", f"END RequestId: {request_id}\n"]
    assert REPORT.match(events[-1])["id"] == request_id and "finished\n" not in events
    assert queue_depth(fn) == 2  # the killed invocation's message comes back after its visibility timeout
    assert list((tmp_path / "host").iterdir()) == []


def test_keyboard_interrupt_while_stopping_in_python_kills_and_still_sends_the_logs(deploy, ctrl_c_raises):
    """The library path (`fanout wait` hosts this way): stop(), then Ctrl-C as a KeyboardInterrupt."""
    fn = deploy(SLOW, reserved=1, timeout=600, visibility=60, environment={"SLEEP": "250"})
    fn.send([{"seq": 0}])
    host = Host(fn.config(), idle_seconds=60)
    pid = []

    def stop_then_interrupt():
        pid.append(started_pid(fn))
        host.stop()
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=stop_then_interrupt, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        host.run()

    assert not running(pid[0])
    events = messages(fn)
    assert "finished\n" not in events  # killed, not waited out: the handler had 250 s to sleep
    assert "Runtime.ExitError" in events[-3] and END.match(events[-2]) and REPORT.match(events[-1])
    assert list((paths.home() / "host").glob(f"{fn.name}-*")) == []
