"""The measurement core: one SQS message in, one download timed, one log record out.

Plain Python over a boto3 S3 client, so it runs and is tested without Lambda. handler.py only
adapts the Lambda event and context to it. What each field of the record means and how it is
measured: docs/strategies.md, *Record fields*.
"""

import json
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import cputime
import endpoints
import envelope
import strategies
import timeline
from envelope import InjectedFailure, MalformedMessage, error_record

# The S3 connections one message may use at once (workloads.py sizes the handler's client's pool
# to the largest workload's). The client validates response checksums (botocore's default):
# `fanout deploy` uploads an object over 8 MiB in parts, whose composite checksum botocore does
# not validate, so those downloads do not pay for it; a smaller, single-part object has its
# CRC32 computed by the function, a CPU cost per byte that is then part of the figure.
CONNECTIONS = strategies.MAX_CONNECTIONS
REQUESTS_KEPT = 100  # request_ttfb_ms items a record carries (docs/strategies.md, Record fields)


class SizeMismatch(Exception):
    """The download returned a different number of bytes than the deployed object has."""


@dataclass(frozen=True)
class Settings:
    """What the function was deployed with for downloads (its environment variables; the
    settings every workload shares are invocation.Settings)."""

    bucket: str
    key: str
    expected_size: int
    default_strategy: strategies.Choice
    keys: tuple[str, ...] = ()  # KEYS copies, `key` first: message seq reads keys[seq % len]

    def key_for(self, seq: int) -> str:
        """The copy message `seq` reads: round robin over the copies, so N messages spread evenly."""
        return self.keys[seq % len(self.keys)] if self.keys else self.key

    @classmethod
    def from_env(cls, environ) -> "Settings":
        """Raises KeyError/ValueError naming the variable: a deployment bug, so the invocation fails."""
        text = environ.get("DOWNLOAD_DEFAULT_STRATEGY", strategies.DEFAULT)
        try:
            default = strategies.parse(text)
        except strategies.StrategyError as exc:
            raise ValueError(f"DOWNLOAD_DEFAULT_STRATEGY={text!r}: {exc}") from None
        return cls(
            bucket=environ["FANOUT_BUCKET"],
            key=environ["FANOUT_KEY"],
            expected_size=int(environ["FANOUT_EXPECTED_SIZE"]),
            default_strategy=default,
            keys=tuple(json.loads(environ.get("FANOUT_KEYS", "[]"))),  # absent before KEYS existed
        )


@dataclass(frozen=True)
class Message:
    """A parsed SQS body: which run it belongs to and how to download."""

    run_id: str
    seq: int
    experiment_tag: str
    strategy: strategies.Choice
    inject_failure: bool
    pin: str | None = None  # endpoints.parse_pin: none, auto or an address

    def fields(self) -> dict:
        return {"run_id": self.run_id, "seq": self.seq, "experiment_tag": self.experiment_tag,
                **self.strategy.fields(), **({"pin": self.pin} if self.pin else {})}  # fmt: skip


def parse_body(body: str, default_strategy: strategies.Choice) -> Message:
    """The message in `body`, or MalformedMessage listing every problem found."""
    data = envelope.load(body)
    known, problems = envelope.check(data)
    try:
        known["strategy"] = strategies.parse(data["strategy"]) if "strategy" in data else default_strategy
    except strategies.StrategyError as exc:
        problems.append(str(exc))
    try:
        if data.get("pin") is not None:
            known["pin"] = endpoints.parse_pin(data["pin"])
    except endpoints.PinError as exc:
        problems.append(str(exc))
    if problems:
        known.pop("inject_failure", None)
        strategy = known.pop("strategy", None)
        raise MalformedMessage("; ".join(problems), {**known, **(strategy.fields() if strategy else {})})
    return Message(**known)


class Progress:
    """Counts bytes and notes when the first ones arrived.

    Called as the transfer manager's progress callback, which runs on its worker threads, hence
    the lock. A thread reads a response's body after botocore's response-received on that same
    thread (`answered`), so each read's bytes arrived since that moment or since the thread's
    previous read: the timeline spreads them over that stretch, not on the moment the read ends
    (docs/network-model.md, "The timeline of one download"). A thread that saw no response
    (crt's own) counts its bytes when they are handed over. A negative count takes back the
    bytes of a body that broke off and is read again (s3transfer's retry, and ranged's): they
    leave the byte count but stay in the timeline, because they did arrive.
    """

    def __init__(self):
        self.started = time.monotonic()
        self.first_chunk_at = None
        self.bytes = 0
        self.timeline = timeline.Recorder(self.started)
        self._lock = threading.Lock()
        self._reading = threading.local()  # .since: when the thread's current read began

    def answered(self, **_) -> None:
        self._reading.since = time.monotonic()

    def __call__(self, count: int) -> None:
        now = time.monotonic()
        since = getattr(self._reading, "since", None)
        if since is not None:
            self._reading.since = now
        with self._lock:
            if self.first_chunk_at is None and count > 0:
                self.first_chunk_at = now
            self.bytes += count
            if count >= 0:
                self.timeline.add(now, count, since)

    def attached(self, s3):
        """Told of `s3`'s responses while in the block."""
        return strategies.listening(s3, {"response-received.s3": self.answered})


class RequestLog:
    """The S3 requests of one download: first-byte time of each, GetObject request ids, and the
    connections that served them (docs/strategies.md, Record fields). botocore emits before-send and
    response-received on the thread that sends the request, so a thread-local holds its start.
    """

    def __init__(self):
        self.ttfb_ms: list[float] = []  # the first REQUESTS_KEPT
        self.requests = 0
        self.sends = 0  # HTTP attempts
        self.calls: dict[tuple, int] = {}  # (operation, Range) -> API calls
        self.slowdowns = 0
        self.get_request_ids: list[str] = []
        self.sockets: set = set()
        self.ips: list[str | None] = []  # the first REQUESTS_KEPT, as ttfb_ms
        self.addresses: set = set()  # of every request (None: unknown)
        self._sent = threading.local()
        self._lock = threading.Lock()

    def called(self, model, params: dict, **_) -> None:
        key = (model.name, params.get("headers", {}).get("Range"))
        with self._lock:
            self.calls[key] = self.calls.get(key, 0) + 1

    def sent(self, **_) -> None:
        self._sent.at = time.monotonic()
        with self._lock:
            self.sends += 1

    def received(self, event_name: str, parsed_response=None, response_dict=None, **_) -> None:
        now = time.monotonic()
        if parsed_response is None:  # no response at all (connection error): no first byte
            return
        if _throttled(response_dict, parsed_response):
            with self._lock:
                self.slowdowns += 1
        sock = _socket_of(parsed_response.get("Body"))
        with self._lock:
            self.requests += 1
            peer = endpoints.take_peer()
            self.addresses.add(peer)
            if len(self.ttfb_ms) < REQUESTS_KEPT:
                self.ttfb_ms.append(round((now - self._sent.at) * 1000, 3))
                self.ips.append(peer)
            if event_name.endswith(".GetObject") and not self.get_request_ids:  # the record names the first
                self.get_request_ids.append(parsed_response.get("ResponseMetadata", {}).get("RequestId", ""))
            if sock is not None:
                self.sockets.add(sock)  # kept until the download ends, so identities stay unique

    @contextmanager
    def attached(self, s3):
        """Listen to `s3`'s requests while in the block (every request then is this download's)."""
        with strategies.listening(s3, {"before-call.s3": self.called, "before-send.s3": self.sent,
                                       "response-received.s3": self.received}):
            yield self

    def retries(self) -> int:
        """botocore's (attempts beyond one per call) plus s3transfer's (a range called again)."""
        calls = self.calls.values()
        return self.sends - sum(calls) + sum(count - 1 for count in calls)

    def fields(self) -> dict:
        """request_ttfb_ms, requests, connections, request_ips, endpoint_ip, retries, slowdowns;
        null where botocore saw no request (crt). request_ips is one string (the addresses of the requests of
        request_ttfb_ms, separated by spaces, "-" for an unknown one) so that Insights discovers
        one field, not one per request; endpoint_ip counts every request."""
        seen = bool(self.ttfb_ms)
        one = next(iter(self.addresses)) if len(self.addresses) == 1 else None  # over every request
        return {"request_ttfb_ms": self.ttfb_ms if seen else None, "requests": self.requests if seen else None,
                "connections": len(self.sockets) if seen else None,
                "request_ips": " ".join(ip or "-" for ip in self.ips) if seen else None,
                "endpoint_ip": one, "retries": self.retries() if seen else None,
                "slowdowns": self.slowdowns if seen else None}  # fmt: skip


def _throttled(response_dict: dict | None, parsed_response: dict) -> bool:
    """S3 asks to slow down: HTTP 503 (SlowDown, its documented answer to too many requests per
    prefix) or the SlowDown code on another status."""
    status = (response_dict or {}).get("status_code")
    return status == 503 or parsed_response.get("Error", {}).get("Code") == "SlowDown"


def _socket_of(body):
    """The socket a streaming body arrives on: the urllib3 connection's while it stays open,
    else the one http.client's reader holds (a connection the server will close has already
    handed its socket over). None for a body that is not a live HTTP response."""
    raw = getattr(body, "_raw_stream", None)
    sock = getattr(getattr(raw, "connection", None), "sock", None)
    reader = getattr(getattr(raw, "_fp", None), "fp", None)
    return sock or getattr(getattr(reader, "raw", None), "_sock", None)


@dataclass(frozen=True)
class Download:
    bytes: int
    seconds: float
    ttfb_seconds: float
    start_ms: int
    end_ms: int
    s3_request_id: str
    requests: dict  # RequestLog.fields()
    timeline: timeline.Recorder
    cpu_seconds: float  # process CPU time over the download (every thread)
    pin: dict = field(default_factory=lambda: dict(endpoints.UNPINNED))  # pinned_ip, pin_addresses


def download(s3, bucket: str, key: str, strategy: strategies.Choice, directory: str | None = None,
             pin: str | None = None, seq: int = 0) -> Download:
    """Fetch the object once with `strategy` and time it; the bytes are discarded. `pin`
    (endpoints.py) connects to one address of the endpoint, resolved before the clock starts."""
    pinning = endpoints.pinned_download(s3, bucket, key, pin, seq, strategy.strategy.own_http)
    with tempfile.TemporaryDirectory(dir=directory) as scratch, pinning as where, RequestLog().attached(s3) as requests:
        target = strategies.Target(fileobj=strategies.Discard(), path=str(Path(scratch) / "object"))
        start_ms = time.time_ns() // 1_000_000
        progress, cpu_started = Progress(), cputime.now()
        with progress.attached(s3):
            strategy.download(s3, bucket, key, progress, target)
        ended, cpu_ended = time.monotonic(), cputime.now()
        end_ms = time.time_ns() // 1_000_000
    first_chunk_at = ended if progress.first_chunk_at is None else progress.first_chunk_at  # empty object
    return Download(
        bytes=progress.bytes,
        seconds=ended - progress.started,
        ttfb_seconds=first_chunk_at - progress.started,
        start_ms=start_ms,
        end_ms=end_ms,
        s3_request_id=requests.get_request_ids[0] if requests.get_request_ids else "",
        requests=requests.fields(),
        timeline=progress.timeline,
        cpu_seconds=cpu_ended - cpu_started,
        pin=where,
    )


def measure_message(s3, settings: Settings, body: str, context: dict, directory: str | None = None) -> dict:
    """The log record for one message: event="download" on success, event="error" otherwise.

    Any exception becomes an error record instead of propagating, so one bad message or failed
    download never hides the records of the others in its batch.
    """
    fields = {}
    context = {"object_size": settings.expected_size, **context}  # a cell field, on every record
    try:
        message = parse_body(body, settings.default_strategy)
        fields = message.fields()
        key = settings.key_for(message.seq)
        fields["key"] = key  # the object read, so that a report can count them
        if message.inject_failure:
            raise InjectedFailure("the message asked to fail (inject_failure)")
        result = download(s3, settings.bucket, key, message.strategy, directory, message.pin, message.seq)
        expected = settings.expected_size * message.strategy.reads()  # repeated reads it `requests` times
        if result.bytes != expected:
            raise SizeMismatch(f"downloaded {result.bytes} bytes, expected {expected}")
    except MalformedMessage as exc:
        return error_record(exc, {**exc.known, **context})
    except Exception as exc:  # noqa: BLE001 - see the docstring
        return error_record(exc, {**fields, **context})
    return success_record(message, result, {"key": key, **context})


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
        "requests_per_s": requests / result.seconds if (requests := result.requests["requests"]) else None,
        "start_ms": result.start_ms,
        "end_ms": result.end_ms,
        "s3_request_id": result.s3_request_id,
        **cputime.fields(result.cpu_seconds, result.seconds),
        **result.requests,
        **result.pin,
        "first_byte_seconds": result.requests["request_ttfb_ms"][0] / 1000 if result.requests["request_ttfb_ms"] else None,
        **timeline.record_fields(result.timeline, result.seconds),
        **context,
    }
