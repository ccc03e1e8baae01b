"""The host's side of one execution environment: start it, invoke it, read its output, kill it.

Processes come from a multiprocessing fork server that has preloaded boto3 and botocore's data
files (see warmup.py): forking a warm parent costs a few milliseconds and shares its memory, so
hundreds of environments fit on a small machine where hundreds of fresh interpreters would not.
"""

import multiprocessing
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from multiprocessing.connection import wait

from fanout.host import logs, sandbox
from fanout.host.config import FunctionConfig
from fanout.host.logs import LogWriter

# Lambda gives the init phase 10 s, or the function timeout when that is longer.
INIT_TIMEOUT = 10.0


class InitFailed(Exception):
    """The handler module could not be imported; the message is the runtime's error line."""


@dataclass(frozen=True)
class Outcome:
    status: str  # "ok", "error" (the handler raised or the process died) or "timeout"
    result: object
    duration_ms: float
    init_ms: float | None  # set on the environment's first (cold) invocation


def _context():
    """The fork server context. The parent's __main__ is preloaded too: multiprocessing imports
    it in every child otherwise (so, as usual with multiprocessing, it must be import-safe)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["__main__", *sandbox.PRELOAD])
    return context


def lambda_environment(config: FunctionConfig, task_root: str, stream: str) -> dict:
    """The function's variables plus those Lambda reserves (which win), pointed at the emulator.

    Nothing is inherited from the host: its credentials and AWS config files must not leak into
    the function, which gets the emulator's test credentials instead.
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
        env.update(AWS_ENDPOINT_URL=config.endpoint, AWS_ACCESS_KEY_ID="test", AWS_SECRET_ACCESS_KEY="test")
    return env


class Environment:
    """One sandbox process and its log stream."""

    def __init__(self, config: FunctionConfig, task_root: str, scratch: str, log: LogWriter):
        """`scratch` is where this environment's private /tmp directory is created."""
        self.config, self._log = config, log
        self.stream = logs.stream_name(time.time())
        self.tmp_dir = tempfile.mkdtemp(prefix="tmp-", dir=scratch)
        spec = {
            "handler": config.handler, "task_root": task_root, "tmp_dir": self.tmp_dir,
            "function_name": config.name, "version": config.version, "arn": config.arn,
            "memory": config.memory, "log_group": config.log_group, "log_stream": self.stream,
            "environment": lambda_environment(config, task_root, self.stream),
        }
        context = _context()
        self._conn, child_conn = context.Pipe()
        self._output, child_output = context.Pipe(duplex=False)
        self.process = context.Process(target=sandbox.main, args=(child_conn, child_output, spec),
                                       name=f"lambda-env-{self.stream[-8:]}")
        self.process.start()
        child_conn.close()
        child_output.close()
        self._pending = b""
        self._init_ms: float | None = None
        self._max_memory_mb = 0.0

    def initialise(self) -> str | None:
        """Wait for the cold start; returns why /tmp is shared, or None when it is private."""
        try:
            reply = self._await(time.monotonic() + max(INIT_TIMEOUT, self.config.timeout))
        except TimeoutError:
            self.kill()
            raise InitFailed(f"[ERROR] Runtime.InitTimeout: initialisation exceeded "
                             f"{max(INIT_TIMEOUT, self.config.timeout):.0f} seconds") from None
        except EOFError:
            raise InitFailed("[ERROR] Runtime.ExitError: the runtime exited during init") from None
        if reply[0] == "init_error":
            self._log.put(self.stream, reply[1] + "\n")
            raise InitFailed(reply[1])
        _, self._init_ms, tmp_problem = reply
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
            self.kill()
            now = time.time()
            self._log.put(self.stream, logs.timeout_line(request_id, now, now - started), now)
            status, result, duration_ms = "timeout", None, timeout * 1000.0
        except EOFError:
            status, result, duration_ms = "error", None, (time.time() - started) * 1000
            self._log.put(self.stream, f"RequestId: {request_id} Error: Runtime exited without providing "
                                       f"a reason\nRuntime.ExitError\n")
        self._log.put(self.stream, logs.end_line(request_id))
        self._log.put(self.stream, logs.report_line(
            request_id, duration_ms, self.config.memory, self._max_memory_mb, init_ms))
        return Outcome(status, result, duration_ms, init_ms)

    @property
    def alive(self) -> bool:
        return self.process.is_alive()

    def close(self) -> None:
        """Let the process exit (its pipe closes), kill it if it lingers, remove its /tmp."""
        self._conn.close()
        self.process.join(1.0)
        self.kill()

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        shutil.rmtree(self.tmp_dir, ignore_errors=True)

    def _await(self, deadline: float):
        """The process's reply, after all the output it wrote before replying has been logged.

        TimeoutError when the deadline passes, EOFError when the process dies.
        """
        reply, output_complete = None, False
        while reply is None or not output_complete:
            remaining = deadline - time.monotonic()
            ready = wait([self._conn, self._output], remaining) if remaining > 0 else []
            if not ready:
                raise TimeoutError
            if self._output in ready:
                chunk = os.read(self._output.fileno(), 65536)
                if not chunk:
                    raise EOFError
                output_complete = self._log_output(chunk) or output_complete
            if self._conn in ready and reply is None:
                reply = self._conn.recv()
        return reply

    def _log_output(self, chunk: bytes) -> bool:
        """One log event per line; True once the end-of-output marker has been read."""
        data = self._pending + chunk
        marker = data.find(sandbox.OUTPUT_END)
        if marker >= 0:
            lines, self._pending = data[:marker], data[marker + len(sandbox.OUTPUT_END):]
        else:
            cut = data.rfind(b"\n") + 1
            lines, self._pending = data[:cut], data[cut:]
        now = time.time()
        *complete, last = lines.split(b"\n")
        for line in complete:
            self._log.put(self.stream, line.decode("utf-8", "replace") + "\n", now)
        if last:  # output that did not end with a newline before the marker
            self._log.put(self.stream, last.decode("utf-8", "replace"), now)
        return marker >= 0
