"""Strategies against known truth: each strategy's download under a known model, next to what
the model predicts from its parameters alone (fanout.network.truth.predicted_seconds).

The model: one connection carries 5 MB/s, the environment 24 MB/s sustained, an 8 MiB bucket
spent at up to 80 MB/s. A 64 MiB object (67 MB) in 8 MiB parts, one download per strategy in a
fresh environment: stream (5 MB/s, 13 s), ranged with 2 and 4 connections (10 and 20 MB/s, below
the sustained rate: they never spend the bucket) and 8 connections (40 MB/s until the bucket is
spent, 0.5 s, then 24 MB/s). Each pair of neighbours is predicted at least 1.4x apart, so the
ranking is unambiguous. Printed per strategy, as estimated/injected:
- seconds: measured over predicted from the model alone (no first-byte latency in it);
- seconds with the waits: measured over predicted with each GET's first-byte wait set to the
  median of the download's own request_ttfb_ms (the emulator's answer: 5-35 ms under load, now
  that a ranged GET reads only its range, fanout.emulator.patches; 50-250 ms when moto read
  the whole object per GET), which the model's prediction counts once per part and connection
  (fanout.network.truth.predicted_seconds);
- sustained: the record's sustained_mb_per_s over min(connections x per-connection, sustained);
- burst: burst_excess_bytes over the bucket, for the strategies that spend it (draw above the
  sustained rate): the largest rise above the sustained line, so a staggered start of the
  parallel GETs does not count against it;
and whether the report's strategy table ranks them as predicted. Targets: 5% for the estimates
(the issue's); seconds are printed, not judged.

Two loaded runs with ranged GETs read from the range only (load average 1.1-2.6), model alone /
with the waits: stream 1.004 / 1.001; 2 connections 1.109-1.115 / 1.103-1.107; 4 connections
1.146-1.150 / 1.136-1.137; 8 connections 1.027-1.030 / 1.014-1.022. In the same session with
moto's whole-object read: 1.213 / 1.163, 1.297 / 1.212, 1.103 / 1.031. So 8 connections
(environment-bound) now match within 5%; 2 and 4 (connection-bound) do not, and no longer
because of the emulator's wait: `ranged connections=1` (one connection reading the 8 parts one
after another, run separately) took 1.004x, while 2 and 4 connections in parallel carry
0.913-0.920 and 0.875-0.889 of their cap (sustained), short of it even in their best second
(peak_mb_per_s 9.4-9.7 of 10 MB/s, 18.4 of 20), and 2 connections 0.84 with the environment's
bucket and sustained rate lifted out of the way (the bucket still there, only larger). The
loss comes with parallel connections, not with the emulator's read. Likely cause, not fixed
here: the environment's TokenBucket (and its peak RateLimit) take their latest booking as the
earliest time for the next, and a connection books its next piece up to one piece (10 ms)
ahead, so another connection's piece that falls due sooner waits for it; with timers firing
late by a few ms the phases keep colliding. A fake-clock replay of the proxy's schedule over
fanout.network.limits (3 ms of timer jitter, 256 KiB reads) lost 12% for 2 connections and 14%
for 4 with the bucket, 2% without it. The
burst of 8 connections came out 0.91-0.92 of the bucket in those runs (1.03 with the staggered
whole-object reads): all eight now start within milliseconds of each other.
Measured on a shared 2-core machine: other load stretches the figures.
"""

import statistics

from fanout import strategies
from fanout.emulator import control
from fanout.host.hosted import Downloader, each_strategy, strategy_order
from fanout.network import NetworkModel, model, truth

MIB = 2**20
VALUES = {"burst": 8 * MIB, "peak_mb_per_s": 80, "sustained_mb_per_s": 24, "connection_mb_per_s": 5}
OBJECT_SIZE = 64 * MIB
TEXTS = ["stream", *(f"ranged connections={n} chunk_size=8MiB" for n in (2, 4, 8))]
TARGET = 0.05


def main() -> None:
    known = NetworkModel("bench-strategies", 1.0, model.parameters(VALUES, "bench"))
    shape = known.at(1024)
    choices = [strategies.definition.parse(text) for text in TEXTS]
    with control.private(prefix="bench-strategy-truth-") as endpoint:
        downloader = Downloader(endpoint)
        downloader.put("object", OBJECT_SIZE)
        runs = each_strategy(downloader, "object", [str(c) for c in choices], known)
    predicted = dict(truth.predicted_ranking(shape, OBJECT_SIZE, choices))
    for choice in choices:
        [record] = runs[str(choice)].records
        for name, estimated, injected in _figures(shape, choice, record, predicted[str(choice)]):
            close = abs(estimated / injected - 1) <= TARGET
            judged = "" if name.startswith("seconds") else (" ok" if close else " OFF")
            print(f"strategy truth {choice} {name}: estimated/injected {estimated / injected:.3f} "
                  f"({estimated:.4g} / {injected:.4g}){judged}")
    order, expected = strategy_order(list(runs.values())), sorted(predicted, key=predicted.get)
    print(f"strategy truth ranking: report {'matches' if order == expected else 'DIFFERS FROM'} the "
          f"model's prediction ({' > '.join(order)})")


def _figures(shape, choice, record: dict, seconds: float) -> list[tuple[str, float, float]]:
    """(parameter, estimated, injected) of one strategy's download."""
    draw = shape.connection_rate * truth.connections(choice, OBJECT_SIZE)
    with_waits = truth.predicted_seconds(shape, OBJECT_SIZE, truth.connections(choice, OBJECT_SIZE),
                                         choice.gets(OBJECT_SIZE), statistics.median(record["request_ttfb_ms"]) / 1000)
    figures = [("seconds", record["seconds"], seconds), ("seconds with the waits", record["seconds"], with_waits),
               ("sustained MB/s", record["sustained_mb_per_s"], min(draw, shape.sustained_rate) / 1e6)]
    if min(draw, shape.peak_rate) > shape.sustained_rate:
        figures.append(("burst bytes", record["burst_excess_bytes"], shape.burst_bytes))
    return figures


if __name__ == "__main__":
    main()
