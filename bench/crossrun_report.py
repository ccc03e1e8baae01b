"""The cross-run report at the reference study's size: what the bootstrap intervals, files and
plots cost on top of the plain percentile tables.

12 runs (concurrency 1, 5, 10, 50, 100, 500 x memory 1024, 2048 MB, 10 messages per
concurrency slot: 13,320 downloads, 5,000 in the largest cell) are written as run folders into
a temporary results directory. Two contenders: the baseline reads the runs and computes every
cell's percentile table (fanout.results.stats.describe); the full report (fanout.workloads.download.across.build) adds
the 24 bootstrap intervals, the concurrency and accounting columns, cells.csv/json, report.md
and the plots. Each repeat times both, alternating which goes first (bench._ratios.interleaved),
REPEATS times; the figure is the median paired ratio of seconds, full / baseline (target <=
TARGET_RATIO: the report's extras must stay within a few times the tables they annotate).
BENCH_CROSSRUN_PER_SLOT (default 10) and BENCH_CROSSRUN_REPEATS (default 5) change the run.
"""

import json
import os
import statistics
import tempfile
from pathlib import Path

import numpy as np

from bench._ratios import interleaved, judge, paired_median, timer
from fanout.workloads.download import across as crossrun
from fanout.results import run_folders as runs, run_record, stats

REPEATS = int(os.environ.get("BENCH_CROSSRUN_REPEATS", "5"))
CONCURRENCY = (1, 5, 10, 50, 100, 500)
MEMORY = (1024, 2048)
PER_SLOT = int(os.environ.get("BENCH_CROSSRUN_PER_SLOT", "10"))
TARGET_RATIO = 30.0  # a regression guard: 17.9x measured at the full size, load average about 2
OBJECT_SIZE = 64 * 2**20


def write_runs(rng) -> list[str]:
    """One run folder per cell, its downloads lognormal around 1 s (2 s at 1024 MB)."""
    run_ids = []
    for number, (memory, limit) in enumerate(((m, c) for m in MEMORY for c in CONCURRENCY), start=1):
        run_id = f"20260101T{number:06d}Z-{number:06x}"
        seconds = rng.lognormal(np.log(2048 / memory), 0.3, limit * PER_SLOT)
        starts = 1_700_000_000_000 + (np.arange(seconds.size) // limit) * 2500
        lines = [
            json.dumps({"event": "download", "run_id": run_id, "seq": i, "memory_size": memory,
                        "concurrency_limit": limit, "strategy": "stream", "experiment_tag": "bench",
                        "object_size": OBJECT_SIZE, "bytes": OBJECT_SIZE, "seconds": float(s),
                        "start_ms": int(t), "end_ms": int(t + s * 1000), "cold_start": i < limit})
            for i, (s, t) in enumerate(zip(seconds, starts))
        ]  # fmt: skip
        sent = len(lines)
        runs.save(run_record.RunRecord.from_json({
            "run_id": run_id, "backend": "local", "version": "bench", "sent": sent, "failed_seqs": [],
            "first_send_ms": None, "send_rate_per_s": None,
            "parameters": {"messages": sent, "strategy": "stream", "experiment_tag": "bench"},
            "stack": {"stack": "bench", "backend": "local", "memory": memory, "concurrency": limit, "object_size": OBJECT_SIZE,
                      "architecture": "x86_64"},
            "accounting": {"done": sent, "failed": [], "dead_lettered": [], "in_flight": []},
        }))  # fmt: skip
        (runs.run_dir(run_id) / "records.jsonl").write_text("\n".join(lines) + "\n")
        run_ids.append(run_id)
    return run_ids


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["FANOUT_RESULTS"] = str(Path(tmp) / "results")  # read at each call, not at import
        run_ids = write_runs(np.random.default_rng(1))

        def tables_only():
            by_cell, _ = crossrun.group([crossrun.load(run_id) for run_id in run_ids])
            for members in by_cell.values():
                sample = crossrun.samples(crossrun.downloads_of(members))
                stats.describe(sample["seconds"])
                stats.describe(sample["mb_per_s"])

        def full_report():
            crossrun.build(run_ids, Path(tmp) / "out", "bench")

        full, baseline = interleaved(timer(full_report), timer(tables_only), REPEATS)
    ratio = judge("full report / tables only, seconds", paired_median(full, baseline), at_most=TARGET_RATIO)
    downloads = sum(CONCURRENCY) * PER_SLOT * len(MEMORY)
    print(f"crossrun_report: {len(run_ids)} runs, {downloads:,} downloads, {REPEATS} interleaved repeats")
    print(f"  tables only (baseline) median {statistics.median(baseline):6.2f} s, full report {statistics.median(full):6.2f} s")
    print(f"  median paired ratio {ratio.value:.1f}x the baseline ({stats.RESAMPLES:,} resamples per interval, "
          f"2 per cell; target <= {TARGET_RATIO:g}x: {'met' if ratio.met else 'MISSED'})")


if __name__ == "__main__":
    main()
