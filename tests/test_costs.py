"""The cost estimate against the price table, computed here from first principles."""

import ast
import inspect
import math

import pytest

from fanout import insights
from fanout.cloud import costs
from fanout.common import ramp
from fanout.local import backends
from fanout.results import run_record, summary as summaries
from fanout.stages import wait
from fanout.workloads.download import report
from fanout.workloads.latency import costs as latency_costs

MIB = 2**20


def every_run_adds(messages, memory_mb, concurrency, seconds_each, ephemeral_mib, log_bytes, architecture):
    """What every run costs beside its S3 requests, from the price table: Lambda compute and
    requests, SQS, the cold starts' INIT (one per environment), /tmp beyond 512 MB over the billed
    seconds, log ingestion, and the Insights scans of report (8 queries over the run's logs) and
    wait (one query over them at its end; every 10 s, one query per 4,000 seqs, each over half
    the logs on average)."""
    prices = costs.PRICES
    gb_second = prices["lambda_gb_second"][architecture]
    cold = min(concurrency, messages)
    billed = messages * seconds_each + cold * costs.ASSUMED_INIT_SECONDS
    log_gb = messages * log_bytes / 1e9
    polls = math.ceil(simulated_run_seconds(messages * seconds_each, concurrency) / 10)
    scans = 8 + 1 + polls * math.ceil(messages / 4000) / 2
    return (billed * memory_mb / 1024 * gb_second + messages * prices["lambda_request"]
            + (messages / 10 + 2 * messages) * prices["sqs_request"]
            + billed * (ephemeral_mib - 512) / 1024 * prices["lambda_ephemeral_gb_second"]
            + log_gb * prices["logs_ingestion_gb"] + scans * log_gb * prices["insights_scan_gb"])  # fmt: skip


def simulated_run_seconds(work_seconds, target, step=0.01):
    """The mapping's ramp stepped through time: 5 at once, 300 more a minute, until `target`
    runs at once; then the rest of the work at the target."""
    t = done = 0.0
    while done < work_seconds and 5 + 300 * t / 60 < target:
        done += (5 + 300 * t / 60) * step
        t += step
    return t + max(0.0, work_seconds - done) / target


@pytest.mark.parametrize(
    "messages, memory_mb, concurrency, object_size, gets, heads, architecture",
    [
        (10_000, 2048, 500, 2**30, 128, 1, "x86_64"),
        (80, 1024, 8, 16 * MIB, 1, 0, "arm64"),
        (1, 128, 2, 8 * MIB + 1, 2, 1, "arm64"),
        (500_000, 10240, 1000, 10 * 2**30, 1, 0, "x86_64"),
    ],
)
def test_estimate_is_the_price_table_times_the_usage(messages, memory_mb, concurrency, object_size, gets, heads,
                                                     architecture):  # fmt: skip
    prices = costs.PRICES
    seconds = object_size / MIB / costs.ASSUMED_MIB_PER_S  # each download at the assumed rate
    ephemeral = min(10240, max(512, math.ceil(object_size / MIB) + 64))  # infra/lambda.tf's /tmp
    expected = (every_run_adds(messages, memory_mb, concurrency, seconds, ephemeral, costs.LOG_BYTES_PER_MESSAGE,
                               architecture)
                + messages * (gets + heads) * prices["s3_get"])  # fmt: skip
    deployment = costs.Deployment(memory_mb, concurrency, architecture, ephemeral)
    estimate = costs.estimate(messages, deployment, object_size, gets, heads)
    assert estimate.gb_seconds == pytest.approx(messages * seconds * memory_mb / 1024)
    assert estimate.total == pytest.approx(expected, rel=1e-3)  # the ramp simulated in steps of 10 ms
    assert estimate.run_seconds == pytest.approx(simulated_run_seconds(messages * seconds, concurrency), abs=0.02)
    lines = costs.describe(estimate)
    assert lines[0].startswith(f"estimated AWS cost ${estimate.total:,.2f}")
    assert any(f"${prices['lambda_gb_second'][architecture]:.10f}/GB-s" in line for line in lines)


@pytest.mark.parametrize("target", [1, 5, 6, 100, 500, 1000])
def test_the_ramp_reaches_its_target_at_300_a_minute(target):
    assert ramp.seconds_to_reach(target) == pytest.approx(max(0, target - 5) / 5)  # 300 a minute: 5 a second
    assert ramp.concurrency_at(ramp.seconds_to_reach(target), target) == target
    for work in (1.0, 100.0, 10_000.0, 1e6):
        assert ramp.run_seconds(work, target) == pytest.approx(simulated_run_seconds(work, target), abs=0.02)


def test_the_report_runs_the_queries_the_estimate_prices():
    """costs.REPORT_QUERIES is the number of saved queries fanout.workloads.download.report.build runs
    (its own and the one every report's collection runs, fanout.results.summary.collect)."""
    trees = [ast.parse(inspect.getsource(function)) for function in (report.build, summaries.collect)]
    calls = [node for tree in trees for node in ast.walk(tree)
             if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "run_saved"]  # fmt: skip
    assert len(calls) == costs.REPORT_QUERIES


@pytest.mark.parametrize("messages", [1, 4000, 4001, 100_000])
def test_the_estimate_counts_the_queries_wait_runs(messages, monkeypatch):
    """The queries wait sends at one poll (its count of the run's outcomes, one per slice of seqs)
    and at its end (the platform's errors), counted as they are sent: the estimate prices each as
    a scan of the run's logs, those of a poll over half of them on average. At 100,000 messages a
    poll is 25 queries, not one."""
    sent = []
    monkeypatch.setattr(insights, "run", lambda stack, text, *window: sent.append(text) or insights.Result([], {}))
    record = run_record.RunRecord.from_json({"run_id": "r", "stack": {"backend": "aws", "stack": "s"},
                                             "parameters": {"messages": messages}, "first_send_ms": 1})  # fmt: skip
    wait.outcome_rows(None, record)
    per_poll, sent[:] = len(sent), []
    wait.platform_errors(None, record)
    at_end = len(sent)
    assert per_poll == math.ceil(messages / 4000)
    deployment = costs.Deployment(1024, 100)
    est = costs.estimate(messages, deployment, MIB, 1)
    polls = math.ceil(est.run_seconds / backends.get("aws").poll_seconds)  # wait's polls on AWS
    scans = costs.REPORT_QUERIES + at_end + polls * per_poll / 2
    assert est.insights_scans == pytest.approx(scans * est.log_gb * costs.PRICES["insights_scan_gb"])


def refused(est, confirmed=False):
    return costs.refusal(est.messages, est.messages, est.total, confirmed)


def test_confirmation_limits():
    small = costs.Deployment(128, 10)
    below = costs.estimate(costs.CONFIRM_MESSAGES, small, MIB, 1)
    assert below.total < costs.CONFIRM_USD and refused(below) is None
    many = costs.estimate(costs.CONFIRM_MESSAGES + 1, small, MIB, 1)
    assert "--yes" in refused(many) and refused(many, confirmed=True) is None
    # Few messages, but each a long download at the largest memory: over the dollar limit.
    few = costs.estimate(1000, costs.Deployment(10240, 10), 10 * 2**30, 1)
    assert few.total > costs.CONFIRM_USD and f"${few.total:,.2f}" in refused(few)
    # Above the cap even --yes does not send.
    assert "even with --yes" in costs.refusal(1, costs.MAX_MESSAGES + 1, 0.0, confirmed=True)


def latency_expected(messages, memory_mb, sizes, reps, storage, architecture):
    """The latency workload's cost from the price table, class by class: every round is a PUT, a
    GET and a DELETE per size; Express adds its per-GB charges on each PUT's and GET's bytes past
    the free ones."""
    prices, express = costs.PRICES, latency_costs.EXPRESS_PRICES
    rounds = messages * reps
    round_seconds = sum(2 * latency_costs.ASSUMED_REQUEST_SECONDS + 2 * size / MIB / costs.ASSUMED_MIB_PER_S for size in sizes)
    s3 = {
        "standard": rounds * len(sizes) * (prices["s3_put"] + prices["s3_get"] + prices["s3_delete"]),
        "express": rounds * len(sizes) * (express["put"] + express["get"] + express["delete"])
        + rounds * sum(max(size - latency_costs.EXPRESS_FREE_BYTES_PER_REQUEST, 0) for size in sizes) / 2**30
        * (express["upload_gb"] + express["retrieval_gb"]),
    }  # fmt: skip
    seconds_each = reps * len(storage) * round_seconds
    log_bytes = 2 * reps * len(sizes) * len(storage) * latency_costs.LOG_BYTES_PER_RECORD  # a PUT and a GET record
    return (every_run_adds(messages, memory_mb, CONCURRENCY, seconds_each, 512, log_bytes, architecture)
            + sum(s3[name] for name in storage))


SIZES = [1, 1000, 600 * 1024, 10**8]  # below and above 512 KiB, the launch prices' free bytes
CONCURRENCY = 10


def deployed(architecture="x86_64"):
    return costs.Deployment(2048, CONCURRENCY, architecture)


@pytest.mark.parametrize("storage", [("standard",), ("express",), ("express", "standard")])
@pytest.mark.parametrize("architecture", ["x86_64", "arm64"])
def test_each_storage_class_is_priced_at_its_own_prices(storage, architecture):
    estimate = latency_costs.estimate(40, deployed(architecture), SIZES, 3, storage)
    assert estimate.total == pytest.approx(latency_expected(40, 2048, SIZES, 3, storage, architecture), rel=1e-3)
    assert (estimate.s3_data > 0) == ("express" in storage)
    lines = costs.describe(estimate)
    assert any("S3 Express One Zone" in line for line in lines) == ("express" in storage)
    assert all(len(line) <= 80 for line in lines)


def test_standard_keeps_its_prices_and_express_is_not_priced_as_standard():
    standard = latency_costs.estimate(40, deployed(), SIZES, 3, ("standard",))
    calls = 40 * 3 * len(SIZES)
    assert standard.s3_gets == pytest.approx(calls * costs.PRICES["s3_get"])
    assert standard.s3_puts == pytest.approx(calls * costs.PRICES["s3_put"]) and standard.s3_data == 0
    express = latency_costs.estimate(40, deployed(), SIZES, 3, ("express",))
    assert express.s3_gets == pytest.approx(calls * latency_costs.EXPRESS_PRICES["get"])
    assert express.gb_seconds == pytest.approx(standard.gb_seconds)  # same calls, same assumed time
    both = latency_costs.estimate(40, deployed(), SIZES, 3, ("express", "standard"))
    for part in ("s3_gets", "s3_puts", "s3_data", "gb_seconds", "log_gb"):
        assert getattr(both, part) == pytest.approx(getattr(standard, part) + getattr(express, part))
