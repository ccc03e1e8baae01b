"""The host's side of one execution environment: start it, invoke it, read its output, kill it.

Processes come from a multiprocessing fork server that has preloaded boto3 and botocore's data
files (see warmup.py): forking a warm parent costs a few milliseconds and shares its memory, so
hundreds of environments fit on a small machine where hundreds of fresh interpreters would not.
"""

import contextlib
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass
from multiprocessing.connection import wait
from pathlib import Path

from fanout.local.host import config as function_config
from fanout.local.host import calls, credentials, limits, logs, runtime, sandbox
from fanout.local.host.config import FunctionConfig
from fanout.local.host.faults import Faults
from fanout.local.host.logs import LogWriter
from fanout.local.host.output import OutputReader

# Lambda gives the init phase 10 s, or the function timeout when that is longer.
INIT_TIMEOUT = 10.0


class InitFailed(Exception):
    """The environment could not start; the message is the error line it logged."""


@dataclass(frozen=True)
class Outcome:
    status: str  # "ok", "error" (the handler raised or the process died) or "timeout"
    result: object
    init_ms: float | None  # set on the environment's first (cold) invocation


def prepare(config: FunctionConfig, workdir: Path) -> None:
    """Lay out a host run's directory: a link to the function's code and the runtime's packages,
    shared by its environments; each environment adds its private /tmp there."""
    function_config.unpack_code(config, workdir / "task")
    runtime.build_view(workdir / "runtime")


def _context():
    """The fork server context. The parent's __main__ is preloaded too: multiprocessing imports
    it in every child otherwise (so, as usual with multiprocessing, it must be import-safe). A
    parent run as `python -m package.module` is preloaded by that name: the fork server cannot
    import such a __main__ by path, and each child would then run the module again with imports
    of its own (numpy and the rest, about 90 MB an environment: 200 of them filled 24 GB)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([*_main_module(), "__main__", *sandbox.PRELOAD])
    return context


def _main_module() -> list[str]:
    """The name the parent's __main__ was run by with -m (none for a script, or `-m pkg`, whose
    children multiprocessing does not re-run)."""
    spec = getattr(sys.modules["__main__"], "__spec__", None)
    name = getattr(spec, "name", None)
    return [name] if name and not name.endswith("__main__") else []


def lambda_environment(config: FunctionConfig, task_root: str, stream: str, s3_endpoint: str | None = None) -> dict:
    """The function's variables plus those Lambda reserves (which win), pointed at the emulator.

    Nothing is inherited from the host: its credentials and AWS config files must not leak into
    the function, which gets its role's session credentials instead (credentials.py). `s3_endpoint` (the
    environment's shaping proxy, see fanout.local.network) takes the function's S3 traffic only.
    """
    env = {"PATH": os.environ.get("PATH", os.defpath), "LANG": "en_US.UTF-8", "TZ": ":UTC"}
    env.update(config.environment)
    env.update({
        "AWS_LAMBDA_FUNCTION_NAME": config.name,
        "AWS_LAMBDA_FUNCTION_VERSION": config.version,
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(config.memory),
        "AWS_LAMBDA_LOG_GROUP_NAME": config.log_group,
        "AWS_LAMBDA_LOG_STREAM_NAME": stream,
        "AWS_LAMBDA_INITIALIZATION_TYPE": "on-demand",
        "AWS_EXECUTION_ENV": f"AWS_Lambda_{config.runtime}",
        "AWS_REGION": config.region,
        "AWS_DEFAULT_REGION": config.region,
        "_HANDLER": config.handler,
        "LAMBDA_TASK_ROOT": task_root,
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    })
    if config.endpoint:
        env.update(AWS_ENDPOINT_URL=config.endpoint, **credentials.role_variables(config))
    if s3_endpoint:
        env["AWS_ENDPOINT_URL_S3"] = s3_endpoint
    return env


class Environment:
    """One sandbox process and its log stream."""

    def __init__(self, config: FunctionConfig, workdir: Path, log: LogWriter, abort_fd: int,
                 injected: Faults | None = None, s3_endpoint: str | None = None, resolve: dict | None = None,
                 scale: float = 1.0):
        """`workdir` was laid out by prepare(); `abort_fd` turns readable when the host aborts,
        which kills the environment if it is starting or running an invocation; `injected`: the
        fault layer's faults (fanout.local.host.faults), if any; `s3_endpoint`: the environment's
        shaped path to S3 (fanout.local.network), if any, and `resolve` how its name resolves there
        (fanout.local.host.resolver); `scale`: the network model's, which divides its CPU share."""
        self.config, self._log, self._abort_fd = config, log, abort_fd
        self.s3_endpoint = s3_endpoint
        self.stream = logs.stream_name(time.time())
        self.tmp_dir = tempfile.mkdtemp(prefix="tmp-", dir=workdir)
        self._killed = False
        self.tmp = limits.TmpStorage(self.tmp_dir, config.ephemeral_storage)
        cgroup = f"fanout-env-{os.getpid()}-{os.path.basename(self.tmp_dir)}"
        self.memory = limits.MemoryLimit(cgroup, config.memory)
        self.cpu = limits.CpuLimit(cgroup, config.memory, scale)
        task_root = os.path.realpath(workdir / "task")  # the package's tree, as mounted (config.unpack_code)
        variables = lambda_environment(config, task_root, self.stream, s3_endpoint)
        if injected:
            variables |= injected.environment()
        spec = {
            "handler": config.handler, "task_root": task_root, "runtime_dir": str(workdir / "runtime"),
            "tmp_dir": self.tmp_dir, "tmp_image": self.tmp.image, "shared_tmp": bool(os.environ.get(sandbox.SHARED_TMP_VARIABLE)),
            "trace_calls": calls.trace_path(),
            "faults": injected.spec(config.timeout) if injected else None,
            "function_name": config.name, "version": config.version, "arn": config.arn,
            "memory": config.memory, "log_group": config.log_group, "log_stream": self.stream,
            "environment": variables, "resolve": resolve,
            "cgroups": limits.joined(self.memory, self.cpu),
        }
        context = _context()
        self._conn, child_conn = context.Pipe()
        self._output, child_output = context.Pipe(duplex=False)
        self.process = context.Process(target=sandbox.main, args=(child_conn, child_output, spec),
                                       name=f"lambda-env-{self.stream[-8:]}")
        self.process.start()
        child_conn.close()
        child_output.close()
        self._reader = OutputReader()
        self._init_ms: float | None = None
        self._max_memory_mb = 0.0

    def initialise(self) -> str | None:
        """Wait for the cold start; returns why /tmp is shared, or None when it is private.

        When the environment cannot start, the reason is logged to its stream (as Lambda logs
        init errors) and InitFailed raised."""
        limit = max(INIT_TIMEOUT, self.config.timeout)
        try:
            reply = self._await(time.monotonic() + limit)
        except TimeoutError:
            self.kill()
            reply = ("init_error", f"[ERROR] Runtime.InitTimeout: initialisation exceeded {limit:.0f} seconds")
        except EOFError:
            reply = ("init_error", f"[ERROR] Runtime.ExitError: Runtime exited with error: {self._exit_reason()} "
                                   "during init")
        if reply[0] == "init_error":
            self._log.put(self.stream, reply[1] + "\n")
            raise InitFailed(reply[1])
        _, self._init_ms, tmp_problem, size_problem = reply
        self.tmp.mounted(size_problem)
        self.cpu.invoking()
        return tmp_problem

    def invoke(self, request_id: str, event: dict) -> Outcome:
        """One invocation with START/END/REPORT around the handler's own output."""
        init_ms, self._init_ms = self._init_ms, None
        timeout = self.config.timeout
        self._log.put(self.stream, logs.start_line(request_id, self.config.version))
        started = time.time()
        self._conn.send((request_id, event, started + timeout))
        try:
            result, error, duration_ms, self._max_memory_mb = self._await(time.monotonic() + timeout)
            status = "error" if error else "ok"
            if error:
                self._log.put(self.stream, error + "\n")
        except TimeoutError:
            # /proc knows the peak memory only while the process lives: read it before the kill.
            self._max_memory_mb = _peak_memory_mb(self.process.pid) or self._max_memory_mb
            self.kill()
            now = time.time()
            self._log.put(self.stream, logs.timeout_line(request_id, now, now - started), now)
            status, result, duration_ms = "timeout", None, timeout * 1000.0
        except EOFError:
            status, result, duration_ms = "error", None, (time.time() - started) * 1000
            self._log.put(self.stream, f"RequestId: {request_id} Error: Runtime exited with error: "
                                       f"{self._exit_reason()}\nRuntime.ExitError\n")
        out_of_memory = status == "error" and self.memory.exceeded()
        self._max_memory_mb = self.memory.peak_mb() or self._max_memory_mb
        self._log.put(self.stream, logs.end_line(request_id))
        self._log.put(self.stream, logs.report_line(
            request_id, duration_ms, self.config.memory, self._max_memory_mb, init_ms,
            "Runtime.OutOfMemory" if out_of_memory else None))
        return Outcome(status, result, init_ms)

    def limits(self) -> dict:
        """Lambda's limits on this environment by name, each saying how it is enforced."""
        return {f"memory ({self.config.memory} MB)": self.memory, "CPU share": self.cpu,
                f"/tmp ({self.config.ephemeral_storage} MB)": self.tmp}

    @property
    def alive(self) -> bool:
        return self.process.is_alive()

    def close(self) -> None:
        """Let the process exit (its pipe closes), kill what lingers, remove its /tmp."""
        self._conn.close()
        self.process.join(1.0)
        self.kill()
        self._output.close()

    def kill(self) -> None:
        """Kill the process and every process its handler started, and remove its /tmp.

        The environment leads its own session, so its children share its process group; the
        process itself is also killed directly, in case it has not become the group's leader yet.
        Only once: after the join its pid, and so its group id, may belong to another process.
        """
        if self._killed:
            return
        self._killed = True
        if self.process.is_alive():
            self.process.kill()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.join()
        self.tmp.remove()
        shutil.rmtree(self.tmp_dir, ignore_errors=True)
        self.memory.remove()
        self.cpu.remove()

    def _exit_reason(self) -> str:
        """How the process ended, in Lambda's words ("exit status 1", "signal: killed"). It is
        killed first: with its output closed it cannot serve again, even if it still runs."""
        self.kill()
        code = self.process.exitcode
        return f"exit status {code}" if code >= 0 else f"signal: {(signal.strsignal(-code) or str(-code)).lower()}"

    def _await(self, deadline: float):
        """The process's reply, after all the output it wrote before replying has been logged.

        TimeoutError when the deadline passes, EOFError when the process dies or the host aborts
        (which kills it).
        """
        reply, phase_ended = None, False
        while reply is None or not phase_ended:
            remaining = deadline - time.monotonic()
            ready = wait([self._conn, self._output, self._abort_fd], self._wait_for(remaining)) if remaining > 0 else []
            if self.memory.watching and self.memory.over(self.process.pid):
                self.kill()
                raise EOFError
            if not ready:
                if time.monotonic() < deadline:
                    continue
                raise TimeoutError
            if self._abort_fd in ready:
                self.kill()
                raise EOFError
            if self._conn in ready and reply is None:
                reply = self._conn.recv()
            if self._output in ready:
                chunk = os.read(self._output.fileno(), 65536)
                if not chunk:
                    return self._reply_at_exit(reply, phase_ended)
                phase_ended = self._log_output(chunk) or phase_ended
        return reply

    def _wait_for(self, remaining: float) -> float:
        """How long to wait for the process: the watchdog's interval when it samples memory."""
        return min(remaining, limits.WATCH_INTERVAL) if self.memory.watching else remaining

    def _reply_at_exit(self, reply, phase_ended: bool):
        """The reply of a process whose output just closed: it sends its reply before it exits
        (an init error, then it returns), so a reply not read yet is waiting in the pipe. Under
        load the output's end can be seen first, and the init error was then reported as the
        runtime exiting. EOFError when it died without a reply or before ending its phase."""
        if reply is None and self._conn.poll():
            reply = self._conn.recv()
        if reply is None or not phase_ended:
            raise EOFError
        return reply

    def _log_output(self, chunk: bytes) -> bool:
        """Log the events `chunk` completes; True once the phase's end marker has been read."""
        events, phase_ended = self._reader.feed(chunk)
        now = time.time()
        for message in events:
            self._log.put(self.stream, message, now)
        return phase_ended


def _peak_memory_mb(pid: int) -> float | None:
    """A live process's peak resident memory (VmHWM, what ru_maxrss reports from inside)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None
