"""The local backend's fault layer: FANOUT_HOST_FAULTS makes the host's environments misbehave
at chosen rates, to test that every message is still accounted for.

    FANOUT_HOST_FAULTS="s3_500=0.03,s3_503=0.03,slow=0.05,slow_s=0.5,crash=0.02,hang=0.02,log=FILE"

The faults and how they are injected: docs/experiment.md, *Failure paths on the local backend*.
Hand-written: fault-injection libraries patch sockets or proxies, not one botocore event inside a
Lambda-like sandbox.
"""

import os
import random
import signal
import time
from dataclasses import dataclass

from fanout.common import numerals as numbers
from fanout.common.errors import UsageError
from fanout.local.host import calls

VARIABLE = "FANOUT_HOST_FAULTS"
KINDS = ("s3_500", "s3_503", "slow", "crash", "hang")  # in the order a draw is compared with them
S3_ERRORS = {"s3_500": (500, "InternalError", "We encountered an internal error. Please try again."),
             "s3_503": (503, "SlowDown", "Please reduce your request rate.")}


@dataclass(frozen=True)
class Faults:
    rates: dict  # kind -> probability per GetObject attempt
    slow_s: float = 0.5
    log: str | None = None

    def spec(self, function_timeout: float) -> dict:
        """What an environment needs (plain data: it crosses to the fork server)."""
        return {"rates": dict(self.rates), "slow_s": self.slow_s, "log": self.log, "hang_s": 2 * function_timeout + 1}

    def environment(self) -> dict:
        """Variables the function gets while these faults are on (see the module docstring)."""
        return {"AWS_MAX_ATTEMPTS": "1"} if self.rates.get("s3_500") or self.rates.get("s3_503") else {}


def from_environment() -> Faults | None:
    """The faults FANOUT_HOST_FAULTS asks for, or None; UsageError naming a bad part."""
    text = os.environ.get(VARIABLE, "").strip()
    if not text:
        return None
    rates, slow_s, log = {}, 0.5, None
    for part in text.split(","):
        name, _, value = part.strip().partition("=")
        number = numbers.decimal(value)
        if name == "log" and value:
            log = value
        elif name == "slow_s" and number is not None and number >= 0:
            slow_s = number
        elif name in KINDS and number is not None and 0 <= number <= 1:
            rates[name] = number
        else:
            raise UsageError(f"invalid {VARIABLE} part {part!r}: expected KIND=RATE (0-1) with KIND one of "
                             f"{', '.join(KINDS)}, slow_s=SECONDS or log=FILE")
    if sum(rates.values()) > 1:
        raise UsageError(f"invalid {VARIABLE} {text!r}: the rates add up to more than 1")
    return Faults(rates, slow_s, log)


def open_log(spec: dict | None) -> int | None:
    """The fault log, opened before the environment isolates itself (its private /tmp may hide
    the log's directory)."""
    return calls.open_trace(spec["log"]) if spec else None


def install(spec: dict | None, log_fd: int | None) -> None:
    """Inside an environment, before the handler is imported: inject the faults of `spec`
    (Faults.spec()), logging each to `log_fd`."""
    if not spec:
        return
    draw = random.Random(os.urandom(16))

    def inject(request, **_):
        kind = _choose(spec["rates"], draw.random())
        if kind is None:
            return None
        if log_fd is not None:
            os.write(log_fd, f"{kind}\n".encode())
        if kind == "slow":
            time.sleep(spec["slow_s"])
            return None
        if kind == "crash":
            os.kill(os.getpid(), signal.SIGKILL)
        if kind == "hang":
            time.sleep(spec["hang_s"])  # past the timeout: the host kills the environment first
            return None
        return _error_response(request, *S3_ERRORS[kind])

    calls.default_session().events.register("before-send.s3.GetObject", inject, unique_id="fanout-faults")


def _choose(rates: dict, u: float) -> str | None:
    for kind in KINDS:
        u -= rates.get(kind, 0)
        if u < 0:
            return kind
    return None


def _error_response(request, status: int, code: str, message: str):
    from botocore.awsrequest import AWSResponse

    body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code><Message>{message}</Message>'
            f"<RequestId>fanout-fault</RequestId></Error>").encode()
    return AWSResponse(request.url, status, {"Content-Type": "application/xml"}, _Raw(body))


class _Raw:
    """The raw stream AWSResponse reads its content from."""

    def __init__(self, body: bytes):
        self._body = body

    def stream(self, **_):
        yield self._body
