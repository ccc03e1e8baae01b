"""Tracing the AWS calls made with the function's role: FANOUT_HOST_TRACE_CALLS=FILE.

With the variable set, the host appends one line `signing-name:Operation` to FILE for every
successful AWS call made on the function's behalf: the handler's own (botocore's after-call
event, registered on the environment's default boto3 session before the handler is imported,
so every client the handler creates from it is traced) and the event source mapping's and log
delivery's, which Lambda makes with the same role. A test compares what a run used with what
infra/iam.tf grants. Calls that fail (e.g. CreateLogGroup on a group that exists) are not
traced: they are not actions the role needs. A handler that builds its own boto3.Session is
not traced.
"""

import functools
import os

VARIABLE = "FANOUT_HOST_TRACE_CALLS"


def trace_path() -> str | None:
    """The trace file the host's environment names. Environments get it in their spec: the fork
    server's environment is fixed when it starts."""
    return os.environ.get(VARIABLE) or None


def open_trace(path: str | None) -> int | None:
    """A descriptor appending to `path` (the trace file, or the fault layer's log), or None when
    there is none. An environment opens it before it isolates itself: its private /tmp may hide
    the file's directory."""
    return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644) if path else None


def trace(events, fd: int | None) -> None:
    """Trace the successful calls of clients using this botocore event emitter into `fd`."""
    if fd is not None:
        events.register("after-call", functools.partial(_record, fd), unique_id="fanout-trace-calls")


def trace_default_session(fd: int | None) -> None:
    """Trace every client later made by boto3's default session (what `boto3.client()` uses)."""
    if fd is not None:
        trace(default_session().events, fd)


def default_session():
    """boto3's default session (the runtime's boto3, inside an environment), created if needed:
    hooks registered on it reach every client `boto3.client()` makes afterwards."""
    import boto3

    if boto3.DEFAULT_SESSION is None:
        boto3.setup_default_session()
    return boto3.DEFAULT_SESSION


def _record(fd: int, http_response, model, **_) -> None:
    if http_response.status_code < 300:
        os.write(fd, f"{model.service_model.signing_name}:{model.name}\n".encode())  # O_APPEND: one write, one line
