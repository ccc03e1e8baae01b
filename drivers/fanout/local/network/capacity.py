"""What this machine sustains, and the scale that keeps a model faithful on it.

A model is faithful while the emulator, the proxy and the environments can deliver every byte it
allows: the rule (docs/network-model.md) keeps the total modelled rate, every environment at
once at its sustained rate, at most half of the loopback throughput the emulator serves here.
The sustained rate, not the peak: bursts are short and credit is spent only as bytes flow, so a
burst the machine cannot deliver at full peak lasts longer but keeps its size in bytes, while a
scale set for all environments at peak at once would leave their sustained rates tiny (lambda-2024
peaks at 4.5x its sustained rate) and every run needlessly long. A model without a sustained
rate counts each environment at its highest rate.
"""

import math
import threading
import time

from fanout.local.network.model import NetworkModel

HEADROOM = 0.5  # the modelled total may use at most this share of the measured capacity
PROBE_SECONDS = 2.0
PROBE_CONNECTIONS = 4
TRANSFER_CONNECTIONS = 10  # boto3's transfer manager default: the most one environment opens
_READ = 256 * 1024


def measure(client, bucket: str, key: str, seconds: float = PROBE_SECONDS,
            connections: int = PROBE_CONNECTIONS) -> float:
    """Aggregate MB/s the endpoint served to `connections` threads reading `key` for `seconds`."""
    deadline = time.monotonic() + seconds
    received = [0] * connections

    def read(slot: int) -> None:
        while time.monotonic() < deadline:
            body = client.get_object(Bucket=bucket, Key=key)["Body"]
            for chunk in body.iter_chunks(_READ):
                received[slot] += len(chunk)
                if time.monotonic() >= deadline:
                    body.close()
                    return

    started = time.monotonic()
    threads = [threading.Thread(target=read, args=(i,)) for i in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(received) / (time.monotonic() - started) / 1e6


def total_rate(model: NetworkModel, memory: int, environments: int) -> float | None:
    """MB/s the model lets `environments` environments draw together once their bursts are spent
    (None: unlimited)."""
    shape = model.at(memory)
    each = shape.sustained_rate or shape.max_rate(TRANSFER_CONNECTIONS)
    totals = [r for r in (None if each is None else each * environments, shape.aggregate_rate) if r is not None]
    return min(totals) / 1e6 if totals else None


def scale_for(model: NetworkModel, memory: int, environments: int, capacity_mb_per_s: float) -> float:
    """The smallest scale (to two significant digits, at least 1) at which the model's total
    rate is at most HEADROOM of the capacity."""
    total = total_rate(model.with_scale(1.0), memory, environments)
    if total is None:
        return 1.0
    needed = total / (HEADROOM * capacity_mb_per_s)
    if needed <= 1:
        return 1.0
    digits = 10 ** (math.floor(math.log10(needed)) - 1)
    return math.ceil(needed / digits) * digits
