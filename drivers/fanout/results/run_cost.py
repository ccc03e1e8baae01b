"""What a run cost: the estimate of its cell (the cost model fire prints before sending) beside
the Lambda bill its REPORT lines give after it ran.

The bill is exact for what the REPORT lines cover: Lambda charges Billed Duration x memory (the
INIT phase of a cold start is inside Billed Duration since 2025-08-01), the requests and /tmp
beyond the free 512 MB over the same duration. S3, SQS and CloudWatch charges have no per-run
record here; they stay estimates. On the local backend the REPORT lines are the host's, so the
"bill" is what AWS would charge for the simulated durations, and says so.
"""

from collections.abc import Callable

from fanout.results import sweep_folders
from fanout.cloud import costs
from fanout.local import backends
from fanout.results import run_folders as runs, run_record
from fanout.cloud.params import ephemeral_mib
from fanout.common.errors import FanoutError

NOTE = ("The bill is Lambda's, from the REPORT lines (Billed Duration x memory, INIT included, the requests, "
        "/tmp beyond 512 MB); the estimate is the cost model `fanout fire` prints (drivers/fanout/cloud/costs.py).")


def cell(record: run_record.RunRecord) -> sweep_folders.CellParams:
    """The run as the sweep cell it would be; FanoutError naming the run when its run.json lacks
    what a cost needs (fire records it all: such a record was truncated or written by hand)."""
    stack, parameters = record.stack, record.parameters
    if stack.memory is None or stack.concurrency is None or stack.object_size is None or stack.architecture is None:
        raise FanoutError(f"run {record.run_id}: run.json lacks the stack's memory, concurrency, object_size or "
                          "architecture, so its cost cannot be estimated; fire a new run")
    return sweep_folders.CellParams(stack.memory, stack.concurrency, stack.object_size, stack.architecture,
                                    parameters.workload, parameters.workload_options)  # fmt: skip


# A workload's cost model (fanout.workloads.base.Driver.cell_estimate): the cost of `count`
# messages of a cell on a deployment (the stack's region and deploy-level options, by name).
CellEstimate = Callable[[int, sweep_folders.CellParams, dict], costs.Estimate]


def estimate(record: run_record.RunRecord, cell_estimate: CellEstimate) -> costs.Estimate:
    """The estimate of the run's workload's cost model (`cell_estimate`) for its sent messages,
    priced as its sweep cell would be."""
    # The stack as its outputs name it (region, the workloads' deploy-level options).
    return cell_estimate(record.sent, cell(record), record.stack.to_json())


def billed(report_rows: list[dict], architecture: str, object_size: int) -> dict:
    """Lambda's charges from the lambda-report query's rows (one per memory size): invocations,
    billed GB-seconds and USD (compute, requests and /tmp beyond the free part)."""
    extra_tmp_gb = max(0, ephemeral_mib(object_size) - costs.FREE_EPHEMERAL_MIB) / 1024
    invocations = sum(int(row["invocations"]) for row in report_rows)
    seconds = {row["memory_mb"]: int(row["invocations"]) * row["billed_ms_avg"] / 1000 for row in report_rows}
    gb_seconds = sum(s * memory / 1024 for memory, s in seconds.items())
    usd = (gb_seconds * costs.gb_second_price(architecture) + invocations * costs.PRICES["lambda_request"]
           + sum(seconds.values()) * extra_tmp_gb * costs.PRICES["lambda_ephemeral_gb_second"])  # fmt: skip
    return {"invocations": invocations, "gb_seconds": gb_seconds, "usd": usd}


def summary(record: run_record.RunRecord, report_rows: list[dict], cell_estimate: CellEstimate) -> dict:
    """The run's cost, estimated (by `cell_estimate`, its workload's cost model) and billed, as
    the report's summary.json keeps it."""
    est, sized = estimate(record, cell_estimate), cell(record)
    return {
        "estimated_usd": est.total,
        "estimated_lambda_usd": est.lambda_compute + est.lambda_init + est.lambda_ephemeral + est.lambda_requests,
        "estimated_gb_seconds": est.gb_seconds + est.cold_starts * costs.ASSUMED_INIT_SECONDS * sized.memory / 1024,
        "billed": billed(report_rows, sized.architecture, sized.object_size),
        "simulated": backends.simulated(record.backend),
    }


def lines(cost: dict) -> list[str]:
    """The cost in three lines of at most 80 columns: billed Lambda, its estimate, then the whole
    run (the bill and the rest estimated)."""
    bill = cost["billed"]
    if not bill["invocations"]:
        return ["Lambda bill: no REPORT lines in the run's time window (logs still arriving?)"]
    ratio = f"; bill/estimate {bill['usd'] / cost['estimated_lambda_usd']:.2f}" if cost["estimated_lambda_usd"] else ""
    what = " (simulated durations)" if cost["simulated"] else ""
    return [
        f"Lambda bill{what}: ${bill['usd']:,.4f}, {bill['gb_seconds']:,.1f} GB-s, {bill['invocations']:,} invocations",
        f"  estimated before the run: ${cost['estimated_lambda_usd']:,.4f}, {cost['estimated_gb_seconds']:,.1f} GB-s"
        f"{ratio}",
        f"  the whole run on AWS: this bill + S3, SQS, logs estimated: ${whole_run_usd(cost):,.4f}",
    ]


def whole_run_usd(cost: dict) -> float:
    """The run on AWS: the Lambda bill and the estimate of the rest (S3, SQS, logs). The estimate's
    own Lambda part assumes a throughput the run may not have had; a total built from it could
    come out below the bill it contains."""
    return cost["billed"]["usd"] + cost["estimated_usd"] - cost["estimated_lambda_usd"]


def saved(run_id: str) -> dict | None:
    """The cost a run's saved report holds (summary.json), or None: not reported yet, or
    reported before the cost existed."""
    path = runs.run_dir(run_id) / runs.SUMMARY_FILE
    return runs.read_summary(run_id).get("cost") if path.is_file() else None


def pooled(run_ids: list[str]) -> dict:
    """The Lambda bill and its estimate summed over runs (a cell of several runs), with the bill
    over the estimate; None figures when a run has no saved cost."""
    found = [saved(run_id) for run_id in run_ids]
    costs = [cost for cost in found if cost is not None]
    if not costs or len(costs) < len(found):
        return {"lambda_billed_usd": None, "lambda_estimated_usd": None, "bill_over_estimate": None}
    billed = sum(cost["billed"]["usd"] for cost in costs)
    estimated = sum(cost["estimated_lambda_usd"] for cost in costs)
    return {"lambda_billed_usd": billed, "lambda_estimated_usd": estimated,
            "bill_over_estimate": billed / estimated if estimated else None}  # fmt: skip
