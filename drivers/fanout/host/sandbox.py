"""The execution environment: one OS process per Lambda sandbox, forked from a preloaded server.

The process isolates /tmp, takes the function's environment, imports the handler (the cold
start) and then serves invocations from the host one at a time until the host closes the pipe.
Its stdout and stderr are a pipe the host reads, so everything the handler prints becomes log
events; after each invocation a marker on that pipe tells the host the output is complete.
"""

import ctypes
import importlib
import json
import os
import resource
import sys
import time
import traceback

# Loaded by the fork server once, so each environment starts with boto3 already imported
# (the Lambda runtime also ships it) and botocore's data files already parsed, instead of
# paying for both in every process. The warm-up goes last: it freezes what is loaded.
PRELOAD = (__name__, "fanout.host.warmup")

OUTPUT_END = b"\0fanout-output-end\0\n"

CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
MS_BIND, MS_REC, MS_PRIVATE = 0x1000, 0x4000, 0x40000


class LambdaContext:
    """The context object the Python runtime passes to handlers."""

    def __init__(self, spec: dict, request_id: str, deadline: float):
        self.function_name = spec["function_name"]
        self.function_version = spec["version"]
        self.invoked_function_arn = spec["arn"]
        self.memory_limit_in_mb = str(spec["memory"])
        self.aws_request_id = request_id
        self.log_group_name = spec["log_group"]
        self.log_stream_name = spec["log_stream"]
        self.identity = None
        self.client_context = None
        self._deadline = deadline

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.time()) * 1000))


def main(conn, output, spec: dict) -> None:
    """Process entry point: isolate, initialise, then serve invocations until the pipe closes."""
    os.setsid()  # Ctrl-C in the host's terminal is the host's to handle, not the handler's
    tmp_problem = isolate_tmp(spec["tmp_dir"], spec["task_root"])
    for fd in (1, 2):
        os.dup2(output.fileno(), fd)
    output.close()
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(line_buffering=True)
    os.environ.clear()
    os.environ.update(spec["environment"])
    os.chdir(spec["task_root"])
    sys.path.insert(0, spec["task_root"])
    started = time.perf_counter()
    try:
        handler = load_handler(spec["handler"])
    except InitError as exc:
        end_output()
        conn.send(("init_error", str(exc)))
        return
    init_ms = (time.perf_counter() - started) * 1000
    end_output()
    conn.send(("ready", init_ms, tmp_problem))
    serve(conn, handler, spec)


def serve(conn, handler, spec: dict) -> None:
    while True:
        try:
            request_id, event, deadline = conn.recv()
        except EOFError:
            return
        context = LambdaContext(spec, request_id, deadline)
        started = time.perf_counter()
        try:
            result, error = json.loads(json.dumps(handler(event, context))), None
        except Exception as exc:  # noqa: BLE001 - any handler error is the invocation's failure
            result, error = None, error_event(exc)
        elapsed_ms = (time.perf_counter() - started) * 1000
        end_output()
        max_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        conn.send((result, error, elapsed_ms, max_rss_mb))


def end_output() -> None:
    """Flush what the handler wrote and mark the end of this phase's output for the host."""
    sys.stdout.flush()
    sys.stderr.flush()
    os.write(1, OUTPUT_END)


class InitError(Exception):
    """The handler could not be loaded; the message is the runtime's log line."""


def load_handler(handler: str):
    """Import "path/module.function" like the Python runtime does."""
    module_path, _, name = handler.rpartition(".")
    module_name = module_path.replace("/", ".")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - every import failure is reported the same way
        raise InitError(f"[ERROR] Runtime.ImportModuleError: Unable to import module '{module_name}': {exc}") from exc
    if not callable(getattr(module, name, None)):
        raise InitError(f"[ERROR] Runtime.HandlerNotFound: Handler '{name}' missing on module '{module_name}'")
    return getattr(module, name)


def error_event(exc: Exception) -> str:
    """The single log event the runtime writes for an uncaught exception."""
    stack = "".join(traceback.format_tb(exc.__traceback__)).rstrip("\n")
    return f"[ERROR] {type(exc).__name__}: {exc}\nTraceback (most recent call last):\n{stack}"


def isolate_tmp(private_dir: str, task_root: str) -> str | None:
    """Give this process its own /tmp; None on success, else why /tmp stays shared.

    A private mount namespace with `private_dir` bind-mounted on /tmp, as each Lambda sandbox
    has its own /tmp. Root can create the namespace directly; other users try a user namespace.
    The standard library has no mount() (and os.unshare only from 3.12), hence ctypes.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    kept = _paths_under_tmp([task_root, sys.prefix, sys.base_prefix, *sys.path])
    try:
        _unshare(libc)
        _mount(libc, None, "/", MS_REC | MS_PRIVATE)
        fds = {path: os.open(path, os.O_PATH) for path in kept}  # reach them once /tmp is covered
        try:
            _mount(libc, private_dir, "/tmp", MS_BIND)
            for path, fd in fds.items():
                os.makedirs(path)
                _mount(libc, f"/proc/self/fd/{fd}", path, MS_BIND)
        finally:
            for fd in fds.values():
                os.close(fd)
    except OSError as exc:
        return f"{exc.strerror} ({exc.filename})"
    return None


def _paths_under_tmp(paths) -> list[str]:
    """The task root and the runtime (interpreter, venv, site-packages) where they lie under /tmp:
    covering /tmp must not hide them (a checkout or venv under /tmp is common in CI)."""
    kept: list[str] = []
    for path in sorted({os.path.realpath(p) for p in paths if p and os.path.isdir(p)}):
        if path.startswith("/tmp/") and not any(path.startswith(k + "/") for k in kept):
            kept.append(path)
    return kept


def _unshare(libc) -> None:
    if libc.unshare(CLONE_NEWNS) == 0:
        return
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()), "unshare")
    for path, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{path}", "w") as f:
            f.write(text)


def _mount(libc, source: str | None, target: str, flags: int) -> None:
    src = source.encode() if source else None
    if libc.mount(src, target.encode(), None, flags, None) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()), f"mount {target}")
