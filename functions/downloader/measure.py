"""The measurement core: one SQS message in, one download timed, one log record out.

Plain Python over a boto3 S3 client, so it runs and is tested without Lambda. handler.py only
adapts the Lambda event and context to it.

What the numbers mean:
- `seconds`: time.monotonic() from just before the first request of the download until the
  last byte was read (download_file: written to /tmp). Wall-clock time would jump with NTP.
- `ttfb_seconds`: from the same start until the first chunk of the body was in hand. The
  transfer manager only reports progress after each read of `io_chunksize` (256 KiB by default),
  so its first progress callback marks the first chunk; stream mode reads chunks of the same
  size so both modes measure the same thing. download_file's figure includes the HeadObject
  the transfer manager sends before its GETs, because that is part of what the mode costs.
- `start_ms`/`end_ms`: epoch milliseconds, to line records up across functions.
- `mbps`: decimal megabits per second (bytes * 8 / seconds / 1e6); `mib_per_s`: MiB per second.
"""

import json
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

MODES = ("download_file", "stream")
# Same as the transfer manager's default io_chunksize; see the module docstring.
CHUNK_SIZE = 256 * 1024


class MalformedMessage(ValueError):
    """The body is not what `fanout fire` sends; `known` holds the fields that were valid."""

    def __init__(self, problem: str, known: dict):
        super().__init__(problem)
        self.known = known


class InjectedFailure(Exception):
    """The message asked to fail (inject_failure), to exercise the failure path end to end."""


class SizeMismatch(Exception):
    """The download returned a different number of bytes than the deployed object has."""


@dataclass(frozen=True)
class Settings:
    """What the function was deployed with (its environment variables)."""

    bucket: str
    key: str
    expected_size: int
    default_mode: str
    concurrency_limit: int

    @classmethod
    def from_env(cls, environ) -> "Settings":
        """Raises KeyError/ValueError naming the variable: a deployment bug, so the invocation fails."""
        settings = cls(
            bucket=environ["FANOUT_BUCKET"],
            key=environ["FANOUT_KEY"],
            expected_size=int(environ["FANOUT_EXPECTED_SIZE"]),
            default_mode=environ.get("FANOUT_DOWNLOAD_MODE", "download_file"),
            concurrency_limit=int(environ["FANOUT_CONCURRENCY_LIMIT"]),
        )
        if settings.default_mode not in MODES:
            raise ValueError(f"FANOUT_DOWNLOAD_MODE={settings.default_mode!r} is not {' or '.join(MODES)}")
        return settings


@dataclass(frozen=True)
class Message:
    """A parsed SQS body: which run it belongs to and how to download."""

    run_id: str
    seq: int
    experiment_tag: str
    mode: str
    inject_failure: bool

    def fields(self) -> dict:
        return {"run_id": self.run_id, "seq": self.seq, "experiment_tag": self.experiment_tag, "mode": self.mode}


def parse_body(body: str, default_mode: str) -> Message:
    """The message in `body`, or MalformedMessage listing every problem found."""
    try:
        data = json.loads(body)
    except (TypeError, ValueError):
        raise MalformedMessage(f"body is not JSON: {str(body)[:80]!r}", {}) from None
    if not isinstance(data, dict):
        raise MalformedMessage(f"body is not a JSON object: {str(body)[:80]!r}", {})
    checks = {
        "run_id": (lambda v: isinstance(v, str) and v != "", "a non-empty string", None),
        "seq": (lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer", None),
        "experiment_tag": (lambda v: isinstance(v, str), "a string", ""),
        "mode": (lambda v: v in MODES, " or ".join(MODES), default_mode),
        "inject_failure": (lambda v: isinstance(v, bool), "true or false", False),
    }
    known, problems = {}, []
    for name, (valid, allowed, default) in checks.items():
        value = data.get(name, default)
        if value is not None and valid(value):
            known[name] = value
        elif name in data:
            problems.append(f"{name}={data[name]!r} is not {allowed}")
        else:
            problems.append(f"{name} is missing")
    if problems:
        known.pop("inject_failure", None)
        raise MalformedMessage("; ".join(problems), known)
    return Message(**known)


class Environment:
    """One execution environment: a random id and whether its first invocation has happened.

    The handler keeps one at module level, which Lambda initialises once per environment.
    """

    def __init__(self):
        self.env_id = uuid.uuid4().hex
        self.invocations = 0

    def invocation_fields(self, request_id: str, memory_size: int, concurrency_limit: int) -> dict:
        """Fields every record of this invocation carries; the first call is the cold start."""
        self.invocations += 1
        return {
            "request_id": request_id,
            "env_id": self.env_id,
            "cold_start": self.invocations == 1,
            "memory_size": memory_size,
            "concurrency_limit": concurrency_limit,
        }


class Progress:
    """Counts bytes and notes when the first ones arrived.

    Called as the transfer manager's progress callback, which runs on its worker threads, hence
    the lock.
    """

    def __init__(self):
        self.started = time.monotonic()
        self.first_chunk_at = None
        self.bytes = 0
        self._lock = threading.Lock()

    def __call__(self, count: int) -> None:
        now = time.monotonic()
        with self._lock:
            if self.first_chunk_at is None and count > 0:
                self.first_chunk_at = now
            self.bytes += count


@dataclass(frozen=True)
class Download:
    bytes: int
    seconds: float
    ttfb_seconds: float
    start_ms: int
    end_ms: int
    s3_request_id: str


def download(s3, bucket: str, key: str, mode: str, directory: str | None = None) -> Download:
    """Fetch the object once with `mode` and time it; the bytes are discarded."""
    request_ids = []
    hook_id = f"fanout-{uuid.uuid4().hex}"
    # Every GetObject's request id, whether sent by us or by the transfer manager's threads;
    # the first one is reported. One environment runs one invocation at a time, so only ours.
    s3.meta.events.register(
        "after-call.s3.GetObject",
        lambda parsed, **_: request_ids.append(parsed.get("ResponseMetadata", {}).get("RequestId", "")),
        unique_id=hook_id,
    )
    try:
        start_ms = time.time_ns() // 1_000_000
        progress = Progress()
        _DOWNLOADERS[mode](s3, bucket, key, progress, directory)
        ended = time.monotonic()
        end_ms = time.time_ns() // 1_000_000
    finally:
        s3.meta.events.unregister("after-call.s3.GetObject", unique_id=hook_id)
    first_chunk_at = ended if progress.first_chunk_at is None else progress.first_chunk_at  # empty object
    return Download(
        bytes=progress.bytes,
        seconds=ended - progress.started,
        ttfb_seconds=first_chunk_at - progress.started,
        start_ms=start_ms,
        end_ms=end_ms,
        s3_request_id=request_ids[0] if request_ids else "",
    )


def _download_file(s3, bucket, key, progress, directory):
    """The transfer manager (parallel ranged GETs for large objects) to a file that is then deleted."""
    with tempfile.TemporaryDirectory(dir=directory) as scratch:
        s3.download_file(bucket, key, str(Path(scratch) / "object"), Callback=progress)


def _stream(s3, bucket, key, progress, directory):
    """One GetObject read in fixed chunks and dropped: network only, no disk."""
    body = s3.get_object(Bucket=bucket, Key=key)["Body"]
    for chunk in body.iter_chunks(CHUNK_SIZE):
        progress(len(chunk))


_DOWNLOADERS = {"download_file": _download_file, "stream": _stream}


def measure_message(s3, settings: Settings, body: str, context: dict, directory: str | None = None) -> dict:
    """The log record for one message: event="download" on success, event="error" otherwise.

    Any exception becomes an error record instead of propagating, so one bad message or failed
    download never hides the records of the others in its batch.
    """
    fields = {}
    context = {"object_size": settings.expected_size, **context}  # a cell field, on every record
    try:
        message = parse_body(body, settings.default_mode)
        fields = message.fields()
        if message.inject_failure:
            raise InjectedFailure("the message asked to fail (inject_failure)")
        result = download(s3, settings.bucket, settings.key, message.mode, directory)
        if result.bytes != settings.expected_size:
            raise SizeMismatch(f"downloaded {result.bytes} bytes, expected {settings.expected_size}")
    except MalformedMessage as exc:
        return error_record(exc, {**exc.known, **context})
    except Exception as exc:  # noqa: BLE001 - see the docstring
        return error_record(exc, {**fields, **context})
    return success_record(message, result, context)


def success_record(message: Message, result: Download, context: dict) -> dict:
    """The event="download" record (the "Function log record" contract)."""
    return {
        "event": "download",
        **message.fields(),
        "bytes": result.bytes,
        "seconds": result.seconds,
        "ttfb_seconds": result.ttfb_seconds,
        "mbps": result.bytes * 8 / result.seconds / 1e6,
        "mib_per_s": result.bytes / result.seconds / 2**20,
        "start_ms": result.start_ms,
        "end_ms": result.end_ms,
        "s3_request_id": result.s3_request_id,
        **context,
    }


def error_record(exc: Exception, fields: dict) -> dict:
    """The event="error" record: what failed, plus every field known at that point."""
    return {"event": "error", "error_type": type(exc).__name__, "error_message": str(exc), **fields}
