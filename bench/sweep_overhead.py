"""Local sweep: what a cell costs beyond its downloads, and what a redeploy costs.

A 2 x 2 sweep (memory 512/1024 MB x concurrency 2/4, an 8 MiB object, 5 messages per slot)
runs on a private emulator through the same library calls as `make sweep`. For each cell:

- downloads: the span of the cell's downloads, from the first start to the last end (the
  records' start_ms/end_ms), the baseline of the cell's ratio;
- overhead: everything else the cell took (redeploy, fresh environments, fire, waiting until
  every message is accounted for, until the queue is idle), printed as a ratio to the downloads.

Then the same memory change is applied twice more with Terraform, once with the endpoint in
the environment (as fanout runs it) and once through the provider's `endpoints` block (the
module on its own; what fanout did before), alternating, REDEPLOYS times each, and the median of
the first is printed as a ratio to the median of the second (target <= 1: the endpoint in the
environment is the faster path). Figures from a shared machine are noisy: compare ratios, not
seconds, across runs. BENCH_SWEEP_CONCURRENCY (default "2 4"), BENCH_SWEEP_MULTIPLIER (default 5)
and BENCH_SWEEP_REDEPLOYS (default 2) shrink it (the suite runs one concurrency, one message per
slot and one redeploy each way).
"""

import json
import os
import statistics
import tempfile
import time

from rich.console import Console

from bench._ratios import judge
from fanout.stages import sweep_axes as axes, sweep
from fanout.results import run_folders as runs, sweep_folders as sweeps
from fanout.cloud import terraform
from fanout.local.emulator import control

STACK = "bench-sweep"
AXES = {"memory": "512 1024", "concurrency": os.environ.get("BENCH_SWEEP_CONCURRENCY", "2 4"), "object_size": "8MiB",
        "architecture": "x86_64"}  # fmt: skip
DOWNLOAD = ({"strategy": "download_file", "pin": None},)  # the download workload's one combination of options
MULTIPLIER = int(os.environ.get("BENCH_SWEEP_MULTIPLIER", "5"))
REDEPLOYS = int(os.environ.get("BENCH_SWEEP_REDEPLOYS", "2"))
CELL_STEPS = ("deploy", "fire", "wait", "idle")  # the cell's own time; the per-run report is not counted
NETWORK_NOTE = "local backend: downloads from the embedded emulator over loopback, no network model"


def main() -> None:
    saved = dict(os.environ)  # FANOUT_HOME and FANOUT_RESULTS are the benchmark's own
    try:
        with tempfile.TemporaryDirectory(prefix="bench-sweep-results-") as results:
            os.environ["FANOUT_RESULTS"] = results
            _run()
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _run() -> None:
    with control.private(prefix="bench-sweep-"):
        # Loopback: the overhead of a cell is the tool's, not a network model's (a stack's default).
        settings = sweep.SweepParams("local", STACK, "us-east-1", axes.Axes.parse(AXES, options=DOWNLOAD), MULTIPLIER, "bench", timeout=600,
                                     network="none")  # fmt: skip
        console = Console()
        manifest = sweep.start(settings, confirmed=False, console=console)
        with terraform.output_to_log("local", STACK):
            sweep.execute(manifest, console)
        _cells(sweeps.load(manifest.sweep_id))
        _redeploy_paths()


def _cells(manifest: sweeps.Manifest) -> None:
    print(f"sweep_overhead: {NETWORK_NOTE}")
    print(f"{'cell':>4} {'memory':>6} {'conc':>4} {'redeploy s':>10} {'downloads s':>11} {'overhead s':>10} {'ratio':>6}")
    ratios = []
    for cell in manifest.cells:
        spent = sum(cell.timings[step] for step in CELL_STEPS)
        downloads = _download_span(cell.run_id)
        overhead = spent - downloads
        first = cell.index == 0  # its deploy created the stack: not a redeploy
        if not first:
            ratios.append(overhead / downloads)
        print(f"{cell.index:>4} {cell.params['memory']:>6} {cell.params['concurrency']:>4} "
              f"{'(create)' if first else format(cell.timings['deploy'], '.1f'):>10} {downloads:>11.2f} "
              f"{overhead:>10.1f} {overhead / downloads:>6.1f}")  # fmt: skip
    median = judge("cell overhead / downloads, seconds", statistics.median(ratios)).value
    print(f"median overhead / downloads over the redeployed cells: {median:.1f}x")


def _download_span(run_id: str) -> float:
    lines = (runs.run_dir(run_id) / "records.jsonl").read_text().splitlines()
    downloads = [record for record in map(json.loads, lines) if record["event"] == "download"]
    return (max(d["end_ms"] for d in downloads) - min(d["start_ms"] for d in downloads)) / 1000


def _redeploy_paths() -> None:
    """The same memory change through each way of reaching the endpoint; ratio of the two."""
    variables = terraform.recorded_inputs("local", STACK)
    seconds = {}
    memories = (2048, 1536, 1024, 512)
    for step in range(2 * REDEPLOYS):  # each way in turn, each to another memory size
        in_environment, memory = step % 2 == 0, memories[step % len(memories)]
        started = time.monotonic()
        with terraform.output_to_log("local", STACK):
            terraform.apply("local", STACK, variables | {"memory": memory, "endpoint_in_environment": in_environment})
        seconds.setdefault(in_environment, []).append(time.monotonic() - started)
    fast, slow = statistics.median(seconds[True]), statistics.median(seconds[False])
    judge("redeploy, endpoint in the environment / endpoints block, s", fast / slow, at_most=1.0)
    print(f"redeploy of a memory change: endpoint in the environment {fast:.1f} s, endpoints block {slow:.1f} s "
          f"(median of {REDEPLOYS} each): ratio {fast / slow:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
