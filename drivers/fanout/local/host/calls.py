"""Tracing the AWS calls made with the function's role: FANOUT_HOST_TRACE_CALLS=FILE.

One line `signing-name:Operation` per successful call made on the function's behalf (the
handler's, the queue mapping's and log delivery's), so a test can compare what a run used with
what infra/iam.tf grants. What is and is not traced: docs/experiment.md, *Failure paths on the
local backend*.
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
