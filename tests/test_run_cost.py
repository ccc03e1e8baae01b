"""A run's cost after the fact: Lambda's bill from REPORT lines, beside the estimate."""

import math

import pytest

from fanout.cloud import costs
from fanout.common.errors import FanoutError
from fanout import insights
from fanout.results import run_cost, run_record
from fanout.workloads.download import strategies
from fanout.local.host import logs
from fanout.workloads.download import costs as download

INVOCATIONS = [(1000.4, 800.2), (2000.0, None), (499.1, None)]  # (duration ms, init ms of a cold start)


def report_rows(memory_mb: int) -> list[dict]:
    """The host's REPORT lines for INVOCATIONS, through the saved lambda-report query."""
    events = [{"timestamp": 1_700_000_000_000 + i, "message": logs.report_line(str(i), duration, memory_mb, 90, init)}
              for i, (duration, init) in enumerate(INVOCATIONS)]  # fmt: skip
    return insights.evaluate(insights.load_query("lambda-report"), events).rows


def test_a_cold_start_bills_its_init_in_the_report_line():
    line = logs.report_line("r", 100.2, 1024, 80, 250.5)
    assert "Billed Duration: 351 ms" in line and "Init Duration: 250.50 ms" in line
    assert "Billed Duration: 101 ms" in logs.report_line("r", 100.2, 1024, 80, None)


@pytest.mark.parametrize("architecture, object_size", [("x86_64", 2**20), ("arm64", 2 * 2**30)])
def test_the_bill_is_billed_duration_times_memory_and_the_requests(architecture, object_size):
    billed_seconds = sum(math.ceil(d + (i or 0)) for d, i in INVOCATIONS) / 1000
    extra_tmp_gb = (math.ceil(object_size / 2**20) + 64 - 512) / 1024 if object_size > 2**30 else 0
    bill = run_cost.billed(report_rows(2048), architecture, object_size)
    assert bill["invocations"] == 3
    assert bill["gb_seconds"] == pytest.approx(billed_seconds * 2)
    expected = (billed_seconds * 2 * costs.PRICES["lambda_gb_second"][architecture] + 3 * 0.20 / 1e6
                + billed_seconds * extra_tmp_gb * costs.PRICES["lambda_ephemeral_gb_second"])  # fmt: skip
    assert bill["usd"] == pytest.approx(expected)


def record(backend: str) -> run_record.RunRecord:
    return run_record.RunRecord.from_json({"backend": backend, "sent": 30,
            "stack": {"memory": 2048, "concurrency": 10, "object_size": 2**30, "architecture": "x86_64"},
            "parameters": {"strategy": "ranged connections=8 chunk_size=8MiB", "workload": "download"}})  # fmt: skip


def test_the_estimate_is_the_cells_as_fire_prices_it():
    run = record("aws")
    cell_like = type("Cell", (), {"memory": 2048, "concurrency": 10, "object_size": 2**30, "architecture": "x86_64"})
    expected = download.estimate(30, cell_like, strategies.parse(run.parameters.workload_options["strategy"]))
    assert run_cost.estimate(run, download.cell_estimate) == expected


def test_local_bills_are_labelled_as_simulations():
    local, aws = (run_cost.summary(record(b), report_rows(2048), download.cell_estimate) for b in ("local", "aws"))
    assert "(simulated durations)" in run_cost.lines(local)[0] and "simulated" not in run_cost.lines(aws)[0]
    assert f"${aws['billed']['usd']:,.4f}" in run_cost.lines(aws)[0]
    assert all(len(line) <= 80 for line in run_cost.lines(aws))
    assert "no REPORT lines" in run_cost.lines(run_cost.summary(record("aws"), [], download.cell_estimate))[0]


def test_a_record_lacking_the_stacks_size_is_one_error_naming_the_run():
    data = record("aws").to_json()
    del data["stack"]["memory"]
    run = run_record.RunRecord.from_json(data | {"run_id": "r-1"})
    with pytest.raises(FanoutError, match=r"^run r-1: run.json lacks the stack's memory"):
        run_cost.estimate(run, download.cell_estimate)


def test_the_whole_run_is_never_less_than_its_lambda_bill():
    """A run slower than the cost model assumes bills more Lambda than estimated: the whole run
    is that bill plus the rest of the estimate (S3, SQS, logs), never the estimate alone."""
    cost = run_cost.summary(record("local"), report_rows(2048), download.cell_estimate)
    est = run_cost.estimate(record("local"), download.cell_estimate)
    cost["billed"]["usd"] = 4 * cost["estimated_usd"]  # far beyond the whole estimate
    rest = est.requests - est.lambda_requests + est.logs
    whole = run_cost.lines(cost)[2]
    assert whole.endswith(f"${cost['billed']['usd'] + rest:,.4f}") and len(whole) <= 80
