"""What a transfer message's requests did, counted from botocore's events: requests by kind,
attempts, retries, 503 SlowDown answers, and each data request's start, end and bytes.

A call's start is kept in the `context` dict botocore passes to its events, so no thread-local
state is needed however many threads the transfer manager runs; the handlers are registered on
the environment's shared client for one message and removed after it. Fields:
drivers/fanout/workloads/transfer/README.md. Stdlib plus botocore only (it runs in the Lambda
runtime).
"""

import io
import threading
import time
from collections import Counter
from contextlib import contextmanager

# Requests whose bytes are the data moved, timed one by one (the record's `parts`).
DATA_REQUESTS = {"PutObject", "UploadPart", "UploadPartCopy", "GetObject", "CopyObject"}
MAX_PARTS_KEPT = 1000  # timings a record keeps: 1,000 x ~30 bytes stays far below a log event's 256 KB
_STARTED = "transfer_started"


class Requests:
    """The counts and timings of one message, from `started` (time.monotonic) on."""

    def __init__(self):
        self.started = time.monotonic()
        self.calls: Counter = Counter()  # operation name -> API calls
        self.attempts = 0
        self.slowdowns = 0  # HTTP 503 answers (S3's SlowDown), retried or not
        self.timings: list[tuple[float, float, int]] = []  # (start, end, bytes) in seconds since `started`
        self.moved: Counter = Counter()  # data request name -> bytes its completed calls carried
        self._lock = threading.Lock()

    def before_call(self, model, params, context, **_):
        # The body's size now, before the request reads it: after-call is given no parameters.
        context[_STARTED] = (time.monotonic(), _request_bytes(params))

    def after_call(self, model, context, parsed=None, **_):
        if _STARTED not in context:
            return
        end = time.monotonic()
        started, sent = context[_STARTED]
        size = sent if sent is not None else _response_bytes(parsed or {})
        with self._lock:
            self.calls[model.name] += 1
            if model.name in DATA_REQUESTS:
                self.timings.append((started - self.started, end - self.started, size))
                self.moved[model.name] += size

    def response_received(self, response_dict=None, **_):
        with self._lock:
            self.attempts += 1
            self.slowdowns += bool(response_dict) and response_dict.get("status_code") == 503

    def fields(self) -> dict:
        """The record's request fields: calls by kind, attempts, retries, 503s, bounded part timings."""
        timings = sorted(self.timings)
        return {
            "requests": dict(sorted(self.calls.items())),
            "attempts": self.attempts,
            "retries": self.attempts - sum(self.calls.values()),
            "slowdowns": self.slowdowns,
            "parts": [[round(s, 4), round(e, 4), n] for s, e, n in timings[:MAX_PARTS_KEPT]],
            "parts_dropped": max(0, len(timings) - MAX_PARTS_KEPT),
        }

    def bytes_of(self, *names: str) -> int:
        """Bytes the completed data requests named carried (a retried call counts once)."""
        return sum(self.moved[name] for name in names)


def _request_bytes(params: dict) -> int | None:
    """Bytes a request carries up: a PUT's or part's body (one in memory, which botocore has
    turned into a BytesIO by now, or the transfer manager's chunk of a stream, a ReadFileChunk),
    a part copy's range; None for a request with neither."""
    body = params.get("Body")
    if isinstance(body, io.BytesIO):
        return body.getbuffer().nbytes
    if body is not None and hasattr(body, "__len__"):
        return len(body)
    if "CopySourceRange" in params:  # bytes=first-last
        first, last = params["CopySourceRange"].removeprefix("bytes=").split("-")
        return int(last) - int(first) + 1
    return None


def _response_bytes(parsed: dict) -> int:
    """Bytes a GET's answer announces (its Content-Length); 0 for CopyObject (S3 does not say)."""
    return int(parsed.get("ContentLength") or 0) if "Body" in parsed else 0


@contextmanager
def counted(client, requests: Requests):
    """`requests` counts what `client` sends inside the block."""
    events = client.meta.events
    handlers = [("before-parameter-build.s3", requests.before_call), ("after-call.s3", requests.after_call),
                ("response-received.s3", requests.response_received)]  # fmt: skip
    for event, handler in handlers:
        events.register(event, handler, unique_id=f"transfer-{id(requests)}-{event}")
    try:
        yield requests
    finally:
        for event, handler in handlers:
            events.unregister(event, handler, unique_id=f"transfer-{id(requests)}-{event}")
