"""What the path adds to a first-byte wait the proxy enforces, measured on the host and kept
current while it runs.

The model's first-byte latency is what the function sees, from sending a request to having its
response headers. The path adds to any wait the proxy enforces: botocore's sending and parsing,
the relay, the proxy loop's timer. So the proxy holds each first byte for the drawn latency
less that addition, which the host measures: GetObjects (of a bucket that does not exist: an
immediate error answer, nothing created) through a calibration endpoint that waits a known
CALIBRATION_WAIT_S, timed with botocore's `before-send`/`response-received` as the function
times its requests; the addition is the median less that wait.

Measured once, a busy machine moved the result: one measurement during a load spike took 5-10 ms
off every later wait (estimates 0.75-0.83 of the latency), and a machine that became busier
after it added 2-4 ms (1.06-1.19). So after a first measurement (CALIBRATION_REQUESTS, before
the first endpoint with a latency opens) a thread keeps sampling, one GetObject every
SAMPLE_EVERY_S, and the proxy subtracts the median of the last WINDOW samples: the machine's
load of the last few seconds, robust to a spike. Four small requests a second cost the emulator
and the proxy next to nothing.

Why from the host and not per request: the proxy cannot see the function's side of a request;
and the addition is a property of the machine and its load, not of one environment.
"""

import statistics
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable

# The calibration endpoint's known wait: the emulator's answer (a missing bucket) is absorbed
# inside it as long as it takes less, which it does by far even on a busy machine (a 20 ms wait
# would not: under load the answer alone can take that long, and would count as the path's).
CALIBRATION_WAIT_S = 0.05
CALIBRATION_REQUESTS = 12  # counted, after one that opens the connection
SAMPLE_EVERY_S = 0.25
WINDOW = 24  # samples: the last 6 s
REPUBLISH_S = 0.0001  # a change smaller than this is not sent to the proxy


class PathCost:
    """The path's addition, measured through `endpoint` (waiting CALIBRATION_WAIT_S) and sent
    to the proxy with `publish(seconds)` whenever it changes."""

    def __init__(self, endpoint: str, publish: Callable[[float], None]):
        from fanout.common import aws

        self._s3 = aws.client("s3", "us-east-1", endpoint)
        self._publish = publish
        self._samples: deque[float] = deque(maxlen=WINDOW)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, name="path-cost", daemon=True)
        self.seconds = 0.0

    def measure(self) -> float:
        """The first measurement; then the thread keeps it current."""
        first_byte_wait(self._s3)  # opens the connection
        self._samples.extend(first_byte_wait(self._s3) for _ in range(CALIBRATION_REQUESTS))
        self.seconds = self._median()
        self._thread.start()
        return self.seconds

    def stop(self) -> None:
        self._stop.set()
        if self._thread.ident:
            self._thread.join()

    def _sample(self) -> None:
        try:
            while not self._stop.wait(SAMPLE_EVERY_S):
                self._samples.append(first_byte_wait(self._s3))
                current = self._median()
                if abs(current - self.seconds) >= REPUBLISH_S:
                    self.seconds = current
                    self._publish(current)
        except Exception:  # noqa: BLE001 - the proxy stopped: the host's next command reports it, not this thread
            return

    def _median(self) -> float:
        return max(0.0, statistics.median(self._samples) - CALIBRATION_WAIT_S)


def first_byte_wait(s3) -> float:
    """Seconds from botocore handing one GetObject to the HTTP layer until its response was
    parsed, as the function's request log times it (a missing bucket: an error answer)."""
    stamps: dict[str, float] = {}
    hook = f"calibration-{uuid.uuid4().hex}"
    s3.meta.events.register("before-send.s3", lambda **_: stamps.update(sent=time.monotonic()), unique_id=f"{hook}-s")
    s3.meta.events.register("response-received.s3", lambda **_: stamps.update(parsed=time.monotonic()),
                            unique_id=f"{hook}-r")
    try:
        s3.get_object(Bucket=f"fanout-calibration-{uuid.uuid4().hex[:12]}", Key="none")
    except s3.exceptions.ClientError:
        pass
    finally:
        for event, suffix in (("before-send.s3", "s"), ("response-received.s3", "r")):
            s3.meta.events.unregister(event, unique_id=f"{hook}-{suffix}")
    return stamps["parsed"] - stamps["sent"]
