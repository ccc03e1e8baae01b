"""The execution environment: one OS process per Lambda sandbox, forked from a preloaded server.

It isolates itself, imports the handler (the cold start) and serves the host's invocations one
at a time until the host closes the pipe; its stdout and stderr are a pipe the host reads
(output.py). Details: docs/local-backend.md, *The function host*.
"""

import ctypes
import importlib
import json
import logging
import os
import resource
import sys
import sysconfig
import time
import traceback
import warnings

from fanout.local.host import calls, faults, limits, output, resolver, runtime

# Loaded by the fork server once, so each environment starts with boto3 already imported
# (the Lambda runtime also ships it) and botocore's data files already parsed, instead of
# paying for both in every process. The warm-up goes last: it freezes what is loaded.
PRELOAD = (__name__, "fanout.local.host.warmup")
# A parent run with -m is preloaded by its name (environment._context), and multiprocessing still
# runs it again in each environment with runpy, which warns that it is imported already: expected.
warnings.filterwarnings("ignore", r"'.*' found in sys.modules after import of package", RuntimeWarning)
SHARED_TMP_VARIABLE = "FANOUT_HOST_SHARED_TMP"

# The Lambda Python runtime's text log format (awslambdaric), its timestamps in UTC.
LOG_FORMAT = "[%(levelname)s]\t%(asctime)s.%(msecs)03dZ\t%(aws_request_id)s\t%(message)s\n"
LOG_DATE_FORMAT = "%Y-%m-%dT%H:%M:%S"

CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE, MS_RELATIME = 0x1, 0x20, 0x1000, 0x4000, 0x40000, 0x200000

_request_id = ""  # of the invocation running, for the log records' aws_request_id


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


def main(conn, output_pipe, spec: dict) -> None:
    """Process entry point: isolate, initialise, then serve invocations until the pipe closes."""
    for cgroup in spec["cgroups"]:  # first: all it allocates and runs is charged to its limits
        limits.join_path(cgroup)
    os.setsid()  # Ctrl-C in the host's terminal is the host's to handle; kill() takes the group
    for fd in (1, 2):
        os.dup2(output_pipe.fileno(), fd)
    output_pipe.close()
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(line_buffering=True)  # type: ignore[union-attr]  # typed TextIO; a TextIOWrapper
    trace_fd = calls.open_trace(spec["trace_calls"])
    fault_fd = faults.open_log(spec["faults"])
    try:
        tmp_problem, size_problem = isolate(spec)
    except OSError as exc:
        _init_failed(conn, f"[ERROR] Host.IsolationError: the environment's private mounts failed half-way: "
                           f"{exc.strerror} ({exc.filename})")
        return
    enter_runtime(spec)
    calls.trace_default_session(trace_fd)
    faults.install(spec["faults"], fault_fd)
    resolver.install(spec["resolve"])
    started = time.perf_counter()
    try:
        handler = load_handler(spec["handler"])
    except InitError as exc:
        _init_failed(conn, str(exc))
        return
    init_ms = (time.perf_counter() - started) * 1000
    end_phase()
    conn.send(("ready", init_ms, tmp_problem, size_problem))
    serve(conn, handler, spec)


def _init_failed(conn, message: str) -> None:
    end_phase()
    conn.send(("init_error", message))


def enter_runtime(spec: dict) -> None:
    """What the Lambda runtime gives the handler: the function's environment variables, the task
    root as working directory, its import path (runtime.py) and its root logging handler."""
    os.environ.clear()
    os.environ.update(spec["environment"])
    time.tzset()  # TZ=:UTC; the fork server had read the host's time zone
    os.chdir(spec["task_root"])
    sys.path[:] = [spec["task_root"], spec["runtime_dir"], *_stdlib_path()]
    forget_host_modules(runtime.module_names(spec["runtime_dir"]))
    install_logging()


def _stdlib_path() -> list[str]:
    """The standard library's entries of sys.path (its directory, zip and lib-dynload)."""
    stdlib = sysconfig.get_path("stdlib")
    stdlib_zip = f"python{sys.version_info.major}{sys.version_info.minor}.zip"
    return [path for path in sys.path if os.path.basename(path) == stdlib_zip
            or ((path == stdlib or path.startswith(stdlib + os.sep)) and "-packages" not in path)]


def forget_host_modules(runtime_modules: set[str]) -> None:
    """Drop the loaded modules the Lambda runtime would not have (the host's own, rich, pytest...)
    so that importing one fails as on AWS. The standard library and the runtime's packages stay
    loaded: boto3 and botocore's warmed-up data are the fork server's whole point."""
    kept = set(sys.stdlib_module_names) | set(sys.builtin_module_names) | runtime_modules
    kept |= {"__main__", "__mp_main__"}  # the host's entry point, which multiprocessing preloads

    def foreign(name: str) -> bool:
        return name.partition(".")[0] not in kept

    for name in [name for name in sys.modules if foreign(name)]:
        del sys.modules[name]
    sys.meta_path[:] = [finder for finder in sys.meta_path if not foreign(finder.__module__)]
    sys.path_importer_cache.clear()
    importlib.invalidate_caches()


class RuntimeLogHandler(logging.Handler):
    """The root handler the Lambda runtime installs. Each record is one framed write, so it
    becomes one log event even when it spans lines (a traceback), as on Lambda. (A pipe keeps
    only writes up to 4 KiB whole: a longer record can interleave with another thread's print.)"""

    def emit(self, record: logging.LogRecord) -> None:
        frame = output.record_frame(self.format(record))
        _flush_output()  # what the handler printed before this record comes first
        while frame:
            frame = frame[os.write(1, frame):]


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.aws_request_id = _request_id
        return True


def install_logging() -> None:
    """The runtime's logging: its handler and format on the root logger, times in UTC, the root
    level left at WARNING unless AWS_LAMBDA_LOG_LEVEL names another (TRACE means DEBUG)."""
    logging.Formatter.converter = time.gmtime
    handler = RuntimeLogHandler()
    handler.setFormatter(logging.Formatter(LOG_FORMAT, LOG_DATE_FORMAT))
    handler.addFilter(RequestIdFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]  # a fresh interpreter's root logger, whatever the host's did
    level = os.environ.get("AWS_LAMBDA_LOG_LEVEL", "").upper()
    level = {"TRACE": "DEBUG"}.get(level, level)
    root.setLevel(level if level in logging.getLevelNamesMapping() else logging.WARNING)


def serve(conn, handler, spec: dict) -> None:
    global _request_id
    while True:
        try:
            request_id, event, deadline = conn.recv()
        except EOFError:
            return
        _request_id = request_id
        context = LambdaContext(spec, request_id, deadline)
        started = time.perf_counter()
        try:
            result, error = json.loads(json.dumps(handler(event, context))), None
        except Exception as exc:  # noqa: BLE001 - any handler error is the invocation's failure
            result, error = None, error_event(exc)
        elapsed_ms = (time.perf_counter() - started) * 1000
        end_phase()
        max_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        conn.send((result, error, elapsed_ms, max_rss_mb))


def _flush_output() -> None:
    sys.stdout.flush()
    sys.stderr.flush()


def end_phase() -> None:
    """Flush what the handler wrote and mark the end of this phase's output for the host."""
    _flush_output()
    os.write(1, output.PHASE_END)


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


def isolate(spec: dict) -> tuple[str | None, str | None]:
    """Give this process its own /tmp of its ephemeral size and a read-only task root, as each
    Lambda sandbox has.

    Returns why /tmp is shared (the OS offers no private mount namespace, or
    FANOUT_HOST_SHARED_TMP asks for none; the task root then stays writable too) and why its size
    is not enforced, each None when it is not so. Once the namespace exists a failure raises
    OSError: a half-isolated environment must not run. Root creates the namespace directly; other
    users go through a user namespace. The standard library has no mount() (and os.unshare only
    from 3.12), hence ctypes.
    """
    if spec["shared_tmp"]:
        return _shared(f"{SHARED_TMP_VARIABLE} is set")
    libc = ctypes.CDLL(None, use_errno=True)
    kept = _paths_under_tmp([spec["task_root"], spec["runtime_dir"], sys.prefix, sys.base_prefix, *sys.path])
    problem = _enter_mount_namespace(libc)
    if problem:
        return _shared(problem)
    _mount(libc, None, "/", MS_REC | MS_PRIVATE)
    size_problem = limits.mount_tmp(spec["tmp_image"], spec["tmp_dir"]) if spec["tmp_image"] else None
    _cover_tmp(libc, spec["tmp_dir"], kept)
    _bind_read_only(libc, spec["task_root"])
    return None, size_problem


def _shared(reason: str) -> tuple[str, str]:
    return reason, f"/tmp is shared ({reason})"


def _paths_under_tmp(paths) -> list[str]:
    """The task root and the runtime (interpreter, venv, site-packages) where they lie under /tmp:
    covering /tmp must not hide them (a checkout or venv under /tmp is common in CI)."""
    kept: list[str] = []
    for path in sorted({os.path.realpath(p) for p in paths if p and os.path.isdir(p)}):
        if path.startswith("/tmp/") and not any(path.startswith(k + "/") for k in kept):
            kept.append(path)
    return kept


def _enter_mount_namespace(libc) -> str | None:
    """A private mount namespace for this process; None once in it, else why it cannot be had."""
    if libc.unshare(CLONE_NEWNS) == 0:
        return None
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0:
        return f"{os.strerror(ctypes.get_errno())} (unshare)"
    uid, gid = os.getuid(), os.getgid()
    for path, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{path}", "w") as f:
            f.write(text)
    return None


def _cover_tmp(libc, private_dir: str, kept: list[str]) -> None:
    """Mount `private_dir` on /tmp, then the `kept` paths back at their places inside it."""
    fds = {path: os.open(path, os.O_PATH) for path in kept}  # to reach them once /tmp is covered
    try:
        _mount(libc, private_dir, "/tmp", MS_BIND)
        for path, fd in fds.items():
            os.makedirs(path)
            _mount(libc, f"/proc/self/fd/{fd}", path, MS_BIND)
    finally:
        for fd in fds.values():
            os.close(fd)


def _bind_read_only(libc, path: str) -> None:
    """Mount `path` on itself read-only (file modes would not stop root, which the host often is).

    The remount repeats the flags the mount already has that a user namespace may not drop."""
    flags = os.statvfs(path).f_flag
    locked = flags & (os.ST_NOSUID | os.ST_NODEV | os.ST_NOEXEC | os.ST_NOATIME | os.ST_NODIRATIME)  # = MS_*
    locked |= MS_RELATIME if flags & os.ST_RELATIME else 0
    _mount(libc, path, path, MS_BIND)
    _mount(libc, None, path, MS_REMOUNT | MS_BIND | MS_RDONLY | locked)


def _mount(libc, source: str | None, target: str, flags: int) -> None:
    src = source.encode() if source else None
    if libc.mount(src, target.encode(), None, flags, None) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()), f"mount {target}")
