"""The seed's scale on the local backend: does the host hold its target, and do the downloads take
what the model predicts, with many environments under lambda-2024 at the automatic scale?

CONCURRENCY=200 MEMORY=1024 OBJECT_SIZE=4MiB MULTIPLIER=5 (1,000 messages), the stack's default
strategy, in a throwaway emulator; the scale is the automatic one (fanout.local.network.capacity:
bytes and requests this machine's emulator serves, measured first), printed with its figures.
The host ramps up as the queue mapping does (fanout.common.ramp), as a real run would, and that
ramp is spent on a warm-up wave first: one message per environment, the 1,000 measured messages
sent once it is done. Without it the 1,000 would be the ramp: from 5 to 200 at 300 a minute takes
39 s, room for about 4,000 environment-seconds of work against the 1,000 downloads' 3,200, so
the queue runs dry before the mapping reaches 200 and the steady window held only its tail
(measured that way: 0.886 and 0.832, docs/network-model.md). Printed:
- steady/target: the report's steady mean concurrency (fanout.results.concurrency.steady_window:
  from when the target was first reached, which leaves out the mapping's ramp, to the last
  download start) over the target; target >= 0.9. Beside it, the seconds from the first
  measured start to the target;
- measured/predicted: the median download seconds over every measured download, over the
  model's median for the cell (fanout.local.network.truth.predicted_median: each environment's
  warm-up download and its share of the measured ones back to back from a full bucket, so the
  bucket the warm-up drained is in the prediction; the idle time before the measured wave, which
  refills it, is not); target within 0.8-1.25. Beside it, the downloads' median
  first-byte latency against the model's median.
BENCH_SEED_CONCURRENCY (default 200) and BENCH_SEED_MULTIPLIER (default 5) change the size,
BENCH_SEED_PROBE_SECONDS (default: the capacity probe's own, per figure) the probe's length.
Local figures are simulations (lambda-2024 at the printed scale). Measured on a shared 2-core
machine: other work lowers the capacity probe and stretches the downloads.
"""

import os
import statistics

from bench._ratios import Figure, judge
from fanout.common import aws
from fanout.workloads.download import strategies
from fanout.workloads.download import report
from fanout.local.emulator import control
from tests.harness.hosted import MEMORY, Downloader
from fanout.local.network import capacity, model, options, truth

CONCURRENCY = int(os.environ.get("BENCH_SEED_CONCURRENCY", "200"))
MULTIPLIER = int(os.environ.get("BENCH_SEED_MULTIPLIER", "5"))
PROBE_SECONDS = float(os.environ.get("BENCH_SEED_PROBE_SECONDS", capacity.PROBE_SECONDS))
OBJECT_SIZE = 4 * 2**20
STEADY_TARGET = 0.9
PREDICTION_TARGET = (0.8, 1.25)


def main() -> None:
    choice = strategies.parse(strategies.DEFAULT)
    draw = capacity.Draw(CONCURRENCY, MEMORY, strategies.strategy_demand(choice, OBJECT_SIZE))
    with control.private(prefix="bench-seed-") as endpoint:
        downloader = Downloader(endpoint)
        downloader.put("object", OBJECT_SIZE)
        probe = aws.client("s3", "us-east-1", endpoint, max_pool_connections=capacity.PROBE_CLIENTS)
        measured = capacity.measure(probe, downloader.bucket, "object", OBJECT_SIZE, PROBE_SECONDS)
        lambda_2024 = model.load("lambda-2024")
        scale = capacity.scale_for(lambda_2024, draw, measured)
        print(f"seed scale: {options.auto_text(lambda_2024, draw, measured, scale)}")
        modelled = lambda_2024.with_scale(scale)
        run = downloader.run("object", str(choice), CONCURRENCY, modelled, messages_per_env=MULTIPLIER, warm=True)
    records = run.records
    achieved = report.achieved_concurrency(records)  # the report's figures, its window with them
    steady, (reached, _) = achieved["steady_mean_concurrency"], achieved["steady_window_ms"]
    held = judge("steady / target concurrency", steady / CONCURRENCY, at_least=STEADY_TARGET)
    print(f"seed scale: steady/target {steady / CONCURRENCY:.3f} ({_met(held)} "
          f">= {STEADY_TARGET}; steady mean {steady:.1f} of {CONCURRENCY}, {len(records)} downloads after the "
          f"warm-up; {(reached - min(r['start_ms'] for r in records)) / 1000:.1f} s from their first start to the target)")
    shape = modelled.at(MEMORY)
    predicted = truth.predicted_median(shape, OBJECT_SIZE, choice, len(records) + CONCURRENCY, CONCURRENCY)
    median = statistics.median(r["seconds"] for r in records)
    low, high = PREDICTION_TARGET
    faithful = judge("measured / predicted median seconds", median / predicted, at_least=low, at_most=high)
    first_byte = statistics.median(r["first_byte_seconds"] for r in records if r.get("first_byte_seconds") is not None)
    print(f"seed scale: measured/predicted median seconds {median / predicted:.3f} "
          f"({_met(faithful)} {low}-{high}; {median:.3f} / {predicted:.3f} s; "
          f"first byte median {first_byte * 1000:.1f} ms against the model's {shape.first_byte_s * 1000:g} ms)")


def _met(figure: Figure) -> str:
    return "met:" if figure.met else "NOT met:"


if __name__ == "__main__":
    main()
