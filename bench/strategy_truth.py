"""Strategies against known truth: each strategy's download under a known model, next to what
the model predicts from its parameters alone (fanout.local.network.truth.predicted_seconds).

The model: one connection carries 5 MB/s, the environment 24 MB/s sustained, an 8 MiB bucket
spent at up to 80 MB/s. A 64 MiB object (67 MB) in 8 MiB parts, one download per strategy in a
fresh environment: stream (5 MB/s, 13 s), ranged with 2 and 4 connections (10 and 20 MB/s, below
the sustained rate: they never spend the bucket) and 8 connections (40 MB/s until the bucket is
spent, 0.5 s, then 24 MB/s). Each pair of neighbours is predicted at least 1.4x apart, so the
ranking is unambiguous. Printed per strategy, as estimated/injected:
- seconds: measured over predicted from the model alone (no first-byte latency in it);
- seconds with the waits: measured over predicted with each GET's first-byte wait set to the
  median of the download's own request_ttfb_ms (the emulator's answer: 5-35 ms under load, now
  that a ranged GET reads only its range, fanout.local.emulator.patches; 50-250 ms when moto read
  the whole object per GET), which the model's prediction counts once per part and connection
  (fanout.local.network.truth.predicted_seconds);
- sustained: the record's sustained_mb_per_s over min(connections x per-connection, sustained);
- burst: burst_excess_bytes over the bucket, for the strategies that spend it (draw above the
  sustained rate): the largest rise above the sustained line, so a staggered start of the
  parallel GETs does not count against it;
and whether the report's strategy table ranks them as predicted. Targets: 5% for the estimates
(the issue's); seconds are printed, not judged.

Two loaded runs (load average about 2), model alone: stream 1.017-1.019; 2 connections
1.024-1.026; 4 connections 1.038-1.051; 8 connections 1.019-1.030; the bucket of 8 connections
0.895 and 0.981: bytes counted where each 256 KiB read ended, and the parallel GETs start
staggered, so the rise came out short by a few reads; each read is now spread over the time
it took: 1.000, 0.988 and 0.997 in three runs (docs/network-model.md, "The bucket of parallel
GETs"). Before the emulator read only the range of a ranged GET (fanout.local.emulator.patches),
2 and 4 connections took 1.21x and 1.30x;
before the proxy booked the environment's shared limits only once a connection's own wait was
over (ClientSide._schedule_next), still 1.11x and 1.15x: a piece booked ahead held back the
other connections' pieces due sooner.
Measured on a shared 2-core machine: other load stretches the figures. BENCH_TRUTH_SHRINK divides
the object, the burst and the parts (so a download keeps its number of GETs), BENCH_TRUTH_CONNECTIONS
(default "2 4 8") lists the ranged strategies beside stream, each a fresh environment (the suite
runs 1/16 with stream and 8 connections).
"""

import os
import statistics

from bench._ratios import judge
from fanout.workloads.download import prediction, strategies
from fanout.local.emulator import control
from tests.harness.hosted import Downloader, each_strategy, strategy_order
from fanout.local.network import NetworkModel, model, truth

MIB = 2**20
SHRINK = int(os.environ.get("BENCH_TRUTH_SHRINK", "1"))  # divides the object and the burst (the suite's tiny run)
VALUES = {"burst": 8 * MIB // SHRINK, "peak_mb_per_s": 80, "sustained_mb_per_s": 24, "connection_mb_per_s": 5}
OBJECT_SIZE = 64 * MIB // SHRINK
CONNECTIONS = os.environ.get("BENCH_TRUTH_CONNECTIONS", "2 4 8").split()
TEXTS = ["stream", *(f"ranged connections={n} chunk_size={8 * 1024 // SHRINK}KiB" for n in CONNECTIONS)]
TARGET = 0.05


def main() -> None:
    known = NetworkModel("bench-strategies", 1.0, model.parameters(VALUES, "bench"))
    shape = known.at(1024)
    choices = [strategies.definition.parse(text) for text in TEXTS]
    with control.private(prefix="bench-strategy-truth-") as endpoint:
        downloader = Downloader(endpoint)
        downloader.put("object", OBJECT_SIZE)
        runs = each_strategy(downloader, "object", [str(c) for c in choices], known)
    predicted = dict(prediction.predicted_ranking(shape, OBJECT_SIZE, choices))
    for choice in choices:
        [record] = runs[str(choice)].records
        for name, estimated, injected in _figures(shape, choice, record, predicted[str(choice)]):
            if name.startswith("seconds"):
                judged = ""
            else:
                figure = judge(f"{choice} {name}: estimated / injected", estimated / injected, 1 - TARGET, 1 + TARGET)
                judged = " ok" if figure.met else " OFF"
            print(f"strategy truth {choice} {name}: estimated/injected {estimated / injected:.3f} "
                  f"({estimated:.4g} / {injected:.4g}){judged}")
    order, expected = strategy_order(list(runs.values())), sorted(predicted, key=predicted.get)
    judge("ranking as predicted (1 yes, 0 no)", float(order == expected), at_least=1)
    print(f"strategy truth ranking: report {'matches' if order == expected else 'DIFFERS FROM'} the "
          f"model's prediction ({' > '.join(order)})")


def _figures(shape, choice, record: dict, seconds: float) -> list[tuple[str, float, float]]:
    """(parameter, estimated, injected) of one strategy's download."""
    draw = shape.connection_rate * truth.connections(choice, OBJECT_SIZE)
    with_waits = truth.predicted_seconds(shape, OBJECT_SIZE, truth.connections(choice, OBJECT_SIZE),
                                         choice.gets(OBJECT_SIZE), statistics.median(record["request_ttfb_ms"]) / 1000,
                                         heads=choice.heads(OBJECT_SIZE))  # fmt: skip
    figures = [("seconds", record["seconds"], seconds), ("seconds with the waits", record["seconds"], with_waits),
               ("sustained MB/s", record["sustained_mb_per_s"], min(draw, shape.sustained_rate) / 1e6)]
    if min(draw, shape.peak_rate) > shape.sustained_rate:
        figures.append(("burst bytes", record["burst_excess_bytes"], shape.burst_bytes))
    return figures


if __name__ == "__main__":
    main()
