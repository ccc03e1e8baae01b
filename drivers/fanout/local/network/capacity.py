"""What this machine serves, and the scale that keeps a model faithful on it.

What the emulator serves is measured (bytes per second to a few connections, requests per
second to many clients, and for a run that uploads, bytes per second taken in); what a run asks
is its messages' Demand, which each workload's driver gives. The smallest scale at which the
run's share of each, added, stays within HEADROOM (less the share other work keeps busy) is
found by bisection. The scale divides the environments' CPU shares too (fanout.local.host.limits),
so it is at least the one at which their sum fits this machine's CPUs within the same headroom.
The rule, term by term: docs/network-model.md, *Options* (default scale).
"""

import math
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from fanout.common import vcpu
from fanout.local.network import truth
from fanout.local.network.model import SCALE_RANGE, NetworkModel, Shape

HEADROOM = 0.5  # on an idle machine the run may use at most this share of the measured capacity
MIN_FREE = 0.25  # the least share of HEADROOM kept however busy the machine is found
PROBE_SECONDS = 2.0
PROBE_CONNECTIONS = 4  # readers of the byte probe
PROBE_CLIENTS = 16  # askers of the request probe: many at once, as environments are
PROBE_MIN_BYTES = 2**20  # a test object below this is read for requests only
PROBE_OBJECT_BYTES = 8 * 2**20  # ... and the bytes from an object of this size
PROBE_PREFIX = "network-probe/"
CGROUP = Path("/sys/fs/cgroup")  # where this process's CPU quota is read (available_cpus)
PROBE_KEY = f"{PROBE_PREFIX}bytes.bin"
HOST_REQUESTS = 3  # emulator requests the host makes per message: receive, delete, log delivery
_READ = 256 * 1024


@dataclass(frozen=True)
class Capacity:
    """What this machine's emulator served: decimal MB/s read and requests/s, and MB/s written
    (None: not measured, the run uploads nothing; an upload costs the emulator about three times
    a download's CPU per byte)."""

    mb_per_s: float
    requests_per_s: float
    upload_mb_per_s: float | None = None
    busy: float = 0.0  # the share of this machine's CPUs other work kept busy then (busy_share)
    cpus: float = math.inf  # the CPUs this process may use (available_cpus; inf: CPU not counted)

    @property
    def headroom(self) -> float:
        """The share of the capacity a run may use: HEADROOM less what other work takes. The probe
        saw the emulator's answers under that work; the host's environments and the shaping
        proxy, which it did not measure, share the same cores with it, so a busy machine that
        gave the run all of HEADROOM would miss the model (at most MIN_FREE of it is taken)."""
        return HEADROOM * max(MIN_FREE, 1.0 - self.busy)


@dataclass(frozen=True)
class Flow:
    """What one message moves in one direction: its bytes and the requests that carry them (a
    request with no body to move, a HEAD or a DELETE, still waits for its answer)."""

    bytes: int = 0
    requests: int = 0


@dataclass(frozen=True)
class Demand:
    """What one message of a workload asks of the network: `connections` open at once,
    downloading `down` and uploading `up` (each workload's driver says, from a run's or a sweep
    cell's parameters: fanout.workloads.base.Driver.demand); `what` names it for the one line the
    automatic scale prints."""

    what: str
    connections: int
    down: Flow = Flow()
    up: Flow = Flow()

    @property
    def requests(self) -> int:
        """Emulator requests per message: the workload's and the host's."""
        return self.down.requests + self.up.requests + HOST_REQUESTS


@dataclass(frozen=True)
class Draw:
    """What a run asks of the machine: `environments` environments of `memory` MB, each running
    messages that ask `demand`."""

    environments: int
    memory: int
    demand: Demand


def measure(client, bucket: str, key: str, size: int, seconds: float = PROBE_SECONDS,
            uploads: bool = False) -> Capacity:  # fmt: skip
    """Bytes, then requests, that the endpoint serves (`client` with PROBE_CLIENTS connections),
    reading `key` of `size` bytes, and (`uploads`) the bytes it takes in. A key smaller than
    PROBE_MIN_BYTES would measure requests twice (its GETs are mostly their handling): the bytes
    are then read from an object of PROBE_OBJECT_BYTES put beside it for the probe and deleted after.
    The machine's busy share is read first, before the probe adds its own load."""
    busy = busy_share()
    if size >= PROBE_MIN_BYTES:
        served = measure_bytes(client, bucket, key, seconds)
    else:
        client.put_object(Bucket=bucket, Key=PROBE_KEY, Body=os.urandom(PROBE_OBJECT_BYTES))
        try:
            served = measure_bytes(client, bucket, PROBE_KEY, seconds)
        finally:
            client.delete_object(Bucket=bucket, Key=PROBE_KEY)
    taken = measure_uploads(client, bucket, seconds) if uploads else None
    return Capacity(served, measure_requests(client, bucket, key, seconds), taken, busy, available_cpus())


def busy_share() -> float:
    """The share of this machine's CPUs busy with other work: the one-minute load average over
    the CPU count, at most 1 (0 where the system keeps no load average)."""
    try:
        running = os.getloadavg()[0]
    except OSError:
        return 0.0
    return min(1.0, running / (os.cpu_count() or 1))


def available_cpus(cgroup: Path = CGROUP) -> float:
    """The CPUs this process may use: those its affinity allows, fewer where its cgroup's CFS
    quota allows less (cgroup v2's cpu.max, or v1's cpu/cpu.cfs_quota_us over its period)."""
    cpus = float(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    for quota_file, period_file in (("cpu.max", None), ("cpu/cpu.cfs_quota_us", "cpu/cpu.cfs_period_us")):
        try:
            fields = (cgroup / quota_file).read_text().split()
            period = (cgroup / period_file).read_text() if period_file else fields[1]
        except (OSError, IndexError):
            continue
        if fields[0] not in ("max", "-1"):
            return min(cpus, int(fields[0]) / int(period))
    return cpus


def measure_uploads(client, bucket: str, seconds: float = PROBE_SECONDS, connections: int = PROBE_CONNECTIONS) -> float:
    """Aggregate MB/s the endpoint took in from `connections` threads each putting an object of
    PROBE_OBJECT_BYTES again and again for `seconds` (under PROBE_PREFIX, deleted after)."""
    body, sent = os.urandom(PROBE_OBJECT_BYTES), [0] * connections
    keys = [f"{PROBE_PREFIX}upload-{slot}.bin" for slot in range(connections)]

    def put(slot: int, deadline: float) -> None:
        while time.monotonic() < deadline:
            client.put_object(Bucket=bucket, Key=keys[slot], Body=body)
            sent[slot] += len(body)

    try:
        elapsed = _threads(put, connections, seconds)
    finally:
        client.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": key} for key in keys], "Quiet": True})
    return sum(sent) / elapsed / 1e6


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
    """MB/s the run's environments may draw together at the model's scale, both directions
    added (None: the model limits neither direction the run moves bytes in)."""
    limited = [rate for rate in direction_rates(model, draw) if rate is not None]
    return sum(limited) if limited else None


def direction_rates(model: NetworkModel, draw: Draw) -> list[float | None]:
    """MB/s the run's environments may draw together, downloads then uploads (None: no bytes
    that way, or a rate the model leaves unlimited, which no scale changes)."""
    return [None if not flow.bytes else _direction_rate(shape, flow, draw) for shape, flow in _directions(model, draw)]


def _direction_rate(shape: Shape, flow: Flow, draw: Draw) -> float | None:
    """The most one direction draws over every environment (MB/s; None: not limited): the
    peak the message's connections carry, within the aggregate cap (downloads only), and no
    faster than the first-byte waits let its bytes come (each connection's requests wait one
    after another: 50 objects of 1 KB on 10 connections wait five times, whatever the peak)."""
    each = shape.max_rate(draw.demand.connections)
    if each is None:
        return None if shape.aggregate_rate is None else shape.aggregate_rate / 1e6
    waits = _waits(shape, flow, draw.demand.connections)
    if waits:
        each = min(each, flow.bytes / waits)
    return min(each * draw.environments, shape.aggregate_rate or math.inf) / 1e6


def _directions(model: NetworkModel, draw: Draw) -> tuple[tuple[Shape, Flow], tuple[Shape, Flow]]:
    """(shape, flow) of the downloads and of the uploads (request bodies have limits of their own)."""
    shape = model.at(draw.memory)
    return (shape, draw.demand.down), (shape.uploads(), draw.demand.up)


def request_rate(model: NetworkModel, draw: Draw) -> float | None:
    """Requests/s the run's environments send together at the model's scale (None: a message
    whose time the model does not predict: bytes it does not limit, or no time at all)."""
    seconds = message_seconds(model, draw)
    return draw.environments * draw.demand.requests / seconds if seconds else None


def message_seconds(model: NetworkModel, draw: Draw) -> float | None:
    """The model's seconds for one message that starts with full buckets: its download, then its
    upload (truth.predicted_seconds, each connection's requests one after another, each waiting
    the first-byte latency); a direction with requests but no bytes takes its waits alone.
    None when the model does not limit a direction the message moves bytes in."""
    connections, total = draw.demand.connections, 0.0
    for shape, flow in _directions(model, draw):
        if flow.bytes:
            shape = truth.shared(shape, draw.environments, connections)
            if shape.max_rate(connections) is None:
                return None
            total += truth.predicted_seconds(shape, flow.bytes, connections, max(1, flow.requests))
        elif flow.requests:
            total += _waits(shape, flow, connections)
    return total


def _waits(shape: Shape, flow: Flow, connections: int) -> float:
    """Seconds a connection spends waiting for first bytes: its share of the flow's requests,
    one after another, each the model's median first-byte latency."""
    return math.ceil(flow.requests / connections) * (shape.first_byte_s or 0.0)


def load(model: NetworkModel, draw: Draw, capacity: Capacity) -> float:
    """The run's share of the machine: the bytes it reads over the bytes served, those it
    writes over the bytes taken in (over those served when not measured), plus its requests
    over the requests answered (0 for what the model leaves unlimited)."""
    down, up = direction_rates(model, draw)
    rates = ((down, capacity.mb_per_s), (up, capacity.upload_mb_per_s or capacity.mb_per_s),
             (request_rate(model, draw), capacity.requests_per_s))  # fmt: skip
    return sum(rate / served for rate, served in rates if rate is not None)


def cpu_need(draw: Draw) -> float:
    """vCPUs the run's environments may use together at scale 1: each is allowed its memory's
    share (fanout.common.vcpu), which the scale divides."""
    return draw.environments * vcpu.share(draw.memory)


def scale_for(model: NetworkModel, draw: Draw, capacity: Capacity) -> float:
    """The smallest scale (two significant digits, at least 1) at which load() is within the
    capacity's headroom and the environments' CPU shares, cpu_need() / scale, within the same
    headroom of its CPUs; the largest allowed scale when none is."""
    low, high = SCALE_RANGE
    for_cpu = cpu_need(draw) / (capacity.cpus * capacity.headroom)
    return min(high, max(_network_scale(model, draw, capacity), round_up(max(low, for_cpu))))


def _network_scale(model: NetworkModel, draw: Draw, capacity: Capacity) -> float:
    """scale_for, counting the network alone."""
    low, high = SCALE_RANGE

    def fits(scale: float) -> bool:
        return load(model.with_scale(scale), draw, capacity) <= capacity.headroom

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
