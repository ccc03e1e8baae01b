"""What this machine serves, and the scale that keeps a model faithful on it.

Two figures are measured (bytes per second to a few connections, requests per second to many
clients), and the smallest scale at which the run's share of both, added, stays within HEADROOM
is found by bisection. The rule, term by term: docs/network-model.md, *Options* (default scale).
"""

import math
import os
import threading
import time
from dataclasses import dataclass

from fanout.cloud import strategies
from fanout.local.network import truth
from fanout.local.network.model import SCALE_RANGE, NetworkModel

HEADROOM = 0.5  # the run may use at most this share of the measured capacity
PROBE_SECONDS = 2.0
PROBE_CONNECTIONS = 4  # readers of the byte probe
PROBE_CLIENTS = 16  # askers of the request probe: many at once, as environments are
PROBE_MIN_BYTES = 2**20  # a test object below this is read for requests only
PROBE_OBJECT_BYTES = 8 * 2**20  # ... and the bytes from an object of this size
PROBE_KEY = "network-probe/bytes.bin"
HOST_REQUESTS = 3  # emulator requests the host makes per message: receive, delete, log delivery
_READ = 256 * 1024


@dataclass(frozen=True)
class Capacity:
    """What this machine's emulator served: decimal MB/s and requests/s."""

    mb_per_s: float
    requests_per_s: float


@dataclass(frozen=True)
class Draw:
    """What a run asks of the machine: `environments` environments of `memory` MB downloading
    objects of `size` bytes with `choice`."""

    environments: int
    memory: int
    size: int
    choice: strategies.Choice

    @property
    def connections(self) -> int:
        return truth.connections(self.choice, self.size)

    @property
    def requests(self) -> int:
        """Emulator requests per message: the download's and the host's."""
        return self.choice.heads(self.size) + self.choice.gets(self.size) + HOST_REQUESTS


def measure(client, bucket: str, key: str, size: int, seconds: float = PROBE_SECONDS) -> Capacity:
    """Bytes, then requests, that the endpoint serves (`client` with PROBE_CLIENTS connections),
    reading `key` of `size` bytes. A key smaller than PROBE_MIN_BYTES would measure requests
    twice (its GETs are mostly their handling): the bytes are then read from an object of
    PROBE_OBJECT_BYTES put beside it for the probe and deleted after."""
    if size >= PROBE_MIN_BYTES:
        served = measure_bytes(client, bucket, key, seconds)
    else:
        client.put_object(Bucket=bucket, Key=PROBE_KEY, Body=os.urandom(PROBE_OBJECT_BYTES))
        try:
            served = measure_bytes(client, bucket, PROBE_KEY, seconds)
        finally:
            client.delete_object(Bucket=bucket, Key=PROBE_KEY)
    return Capacity(served, measure_requests(client, bucket, key, seconds))


def measure_bytes(client, bucket: str, key: str, seconds: float = PROBE_SECONDS,
                  connections: int = PROBE_CONNECTIONS) -> float:
    """Aggregate MB/s the endpoint served to `connections` threads reading `key` for `seconds`."""
    received = [0] * connections

    def read(slot: int, deadline: float) -> None:
        while time.monotonic() < deadline:
            body = client.get_object(Bucket=bucket, Key=key)["Body"]
            for chunk in body.iter_chunks(_READ):
                received[slot] += len(chunk)
                if time.monotonic() >= deadline:
                    body.close()
                    return

    elapsed = _threads(read, connections, seconds)
    return sum(received) / elapsed / 1e6


def measure_requests(client, bucket: str, key: str, seconds: float = PROBE_SECONDS,
                     clients: int = PROBE_CLIENTS) -> float:
    """Requests/s the endpoint answered to `clients` threads each asking for the first byte of
    `key` (a ranged GET: the request's handling, next to no bytes) for `seconds`."""
    answered = [0] * clients

    def ask(slot: int, deadline: float) -> None:
        while time.monotonic() < deadline:
            client.get_object(Bucket=bucket, Key=key, Range="bytes=0-0")["Body"].read()
            answered[slot] += 1

    elapsed = _threads(ask, clients, seconds)
    return sum(answered) / elapsed


def _threads(work, count: int, seconds: float) -> float:
    """Run work(slot, deadline) on `count` threads; the seconds until all have returned."""
    started = time.monotonic()
    threads = [threading.Thread(target=work, args=(i, started + seconds)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.monotonic() - started


def byte_rate(model: NetworkModel, draw: Draw) -> float | None:
    """MB/s the run's environments may draw together at the model's scale (None: unlimited)."""
    shape = model.at(draw.memory)
    each = shape.max_rate(draw.connections)
    totals = [r for r in (None if each is None else each * draw.environments, shape.aggregate_rate) if r is not None]
    return min(totals) / 1e6 if totals else None


def request_rate(model: NetworkModel, draw: Draw) -> float | None:
    """Requests/s the run's environments send together at the model's scale (None: a model
    with no rate, whose downloads take no predictable time)."""
    shape = model.at(draw.memory)
    if shape.max_rate(draw.connections) is None:
        return None
    seconds = truth.predicted_median(shape, draw.size, draw.choice, draw.environments, draw.environments)
    return draw.environments * draw.requests / seconds


def load(model: NetworkModel, draw: Draw, capacity: Capacity) -> float:
    """The run's share of the machine: its bytes over the bytes served plus its requests over
    the requests answered (0 for what the model leaves unlimited)."""
    rates = ((byte_rate(model, draw), capacity.mb_per_s), (request_rate(model, draw), capacity.requests_per_s))
    return sum(rate / served for rate, served in rates if rate is not None)


def scale_for(model: NetworkModel, draw: Draw, capacity: Capacity) -> float:
    """The smallest scale (two significant digits, at least 1) at which load() is within
    HEADROOM; the largest allowed scale when none is."""
    low, high = SCALE_RANGE

    def fits(scale: float) -> bool:
        return load(model.with_scale(scale), draw, capacity) <= HEADROOM

    if fits(low):
        return low
    if not fits(high):
        return high
    for _ in range(60):  # bisection on a load that falls as the scale grows
        middle = math.sqrt(low * high)
        low, high = (low, middle) if fits(middle) else (middle, high)
    return min(SCALE_RANGE[1], round_up(high))


def round_up(value: float) -> float:
    """`value` rounded up to two significant digits (2.61 -> 2.7, 148 -> 150)."""
    step = 10.0 ** (math.floor(math.log10(value)) - 1)
    return round(math.ceil(round(value / step, 9)) * step, 9)
