"""Start, stop and find the embedded emulator (the local backend's AWS endpoint).

The server runs as a detached process (its own session, so a Ctrl-C in the terminal that
started it does not kill it) and outlives the command that started it: `make deploy`, `make
fire` and `make run` all talk to the same one. Its pid, port and log live in
`paths.emulator_dir()`; every check also asks the server itself, so a stale pid file (a crash,
a reboot, a reused pid) is never mistaken for a running emulator.
"""

import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager

from fanout.common import file_lock, paths
from fanout.common.errors import FanoutError

HOST = "127.0.0.1"
START_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0
MODULE = "fanout.local.emulator.server"

# No proxy: the emulator is on the loopback interface even when the shell sets HTTP_PROXY.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def pid_file():
    return paths.emulator_dir() / "pid"


def port_file():
    return paths.emulator_dir() / "port"


def log_file():
    return paths.emulator_dir() / "emulator.log"


def endpoint_url(port: int) -> str:
    return f"http://{HOST}:{port}"


def start() -> str:
    """Endpoint of the running emulator, starting one first if none answers."""
    with _lock():
        endpoint = running_endpoint()
        if endpoint:
            return endpoint
        _stop_process(running_pid())
        _remove_files()
        return _spawn()


@contextmanager
def private(prefix: str = "fanout-"):
    """A throwaway emulator whose state lives in a temporary FANOUT_HOME; yields its endpoint.

    For tests and benchmarks: they must neither find nor disturb the user's emulator and stacks.
    The build directory stays where it was (FANOUT_BUILD): its zips and installed dependencies are
    keyed by their inputs, and installing them takes tens of seconds per fresh home. Both
    variables are restored afterwards.
    """
    previous = {name: os.environ.get(name) for name in ("FANOUT_HOME", "FANOUT_BUILD")}
    os.environ["FANOUT_BUILD"] = str(paths.build_dir())
    with tempfile.TemporaryDirectory(prefix=prefix) as home:
        os.environ["FANOUT_HOME"] = home
        try:
            yield start()
        finally:
            stop()
            for name, value in previous.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


def stop() -> bool:
    """Stop the emulator; False when none was running. Its state (queues, logs...) is lost."""
    with _lock():
        pid = running_pid()
        _stop_process(pid)
        _remove_files()
        return pid is not None


def running_pid() -> int | None:
    """pid of the emulator process recorded in the pid file, if that process is still ours."""
    pid = _read_int(pid_file())
    if pid is None or not _alive(pid) or MODULE not in _command_line(pid):
        return None
    return pid


def running_endpoint() -> str | None:
    """Endpoint URL of the running emulator, or None when no emulator answers."""
    port = _read_int(port_file())
    if port is None or running_pid() is None or not _healthy(port):
        return None
    return endpoint_url(port)


def _spawn() -> str:
    paths.emulator_dir().mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", MODULE, "--host", HOST, "--port-file", str(port_file())]
    with open(log_file(), "wb") as log:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    pid_file().write_text(f"{process.pid}\n")
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            _remove_files()
            raise FanoutError(
                f"emulator exited with status {process.returncode} while starting; see {log_file()}"
            )
        port = _read_int(port_file())
        if port is not None and _healthy(port):
            return endpoint_url(port)
        time.sleep(0.1)
    _stop_process(process.pid)
    _remove_files()
    raise FanoutError(f"emulator did not answer within {START_TIMEOUT:.0f} s; see {log_file()}")


def _stop_process(pid: int | None) -> None:
    """SIGTERM, then SIGKILL if the server has not exited after STOP_TIMEOUT."""
    if pid is None:
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + STOP_TIMEOUT
        while time.monotonic() < deadline:
            if not _alive(pid):
                return
            time.sleep(0.05)
    raise FanoutError(f"emulator process {pid} did not exit after SIGKILL")


def _alive(pid: int) -> bool:
    """True while the process exists; reaps it first when it is our own exited child."""
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    except ChildProcessError:
        pass  # not our child: another command started it
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _command_line(pid: int) -> str:
    """The process's command line; guards against a pid reused by an unrelated process."""
    result = subprocess.run(
        ["ps", "-p", str(pid), "-o", "command="], capture_output=True, text=True, check=False
    )
    return result.stdout


def _healthy(port: int) -> bool:
    try:
        with _OPENER.open(f"{endpoint_url(port)}/moto-api/", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def _read_int(path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None


def _remove_files() -> None:
    for path in (pid_file(), port_file()):
        path.unlink(missing_ok=True)


def _lock():
    """Serialise start/stop between concurrent commands (two terminals, parallel make)."""
    return file_lock.exclusive(paths.emulator_dir() / "lock")
