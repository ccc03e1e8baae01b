"""What the path adds to a first-byte wait the proxy enforces, measured on the host and kept
current while it runs.

The proxy holds each first byte for the drawn latency less what botocore, the relay and the
loop's timer add, which the host measures through a calibration endpoint that waits a known
CALIBRATION_WAIT_S, then keeps sampling (one GetObject every SAMPLE_EVERY_S, the median of the
last WINDOW) so that it follows the machine's load. Why, and the figures that led here:
docs/network-model.md, *First-byte latency: what the function sees*.
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
