"""The cost estimate against the price table, computed here from first principles."""

import pytest

from fanout import costs
from fanout.workloads import latency_costs

MIB = 2**20


@pytest.mark.parametrize(
    "messages, memory_mb, object_size, gets, architecture",
    [
        (10_000, 2048, 2**30, 128, "x86_64"),
        (80, 1024, 16 * MIB, 1, "arm64"),
        (1, 128, 8 * MIB + 1, 2, "arm64"),
        (500_000, 10240, 10 * 2**30, 1, "x86_64"),
    ],
)
def test_estimate_is_the_price_table_times_the_usage(messages, memory_mb, object_size, gets, architecture):
    prices = costs.PRICES
    seconds = object_size / MIB / costs.ASSUMED_MIB_PER_S  # each download at the assumed rate
    gb_seconds = messages * seconds * memory_mb / 1024
    sqs_requests = messages / 10 + 2 * messages  # SendMessageBatch of 10; one receive, one delete each
    expected = (
        gb_seconds * prices["lambda_gb_second"][architecture]
        + messages * prices["lambda_request"]
        + sqs_requests * prices["sqs_request"]
        + messages * gets * prices["s3_get"]
    )
    estimate = costs.estimate(messages, memory_mb, object_size, gets, architecture)
    assert estimate.gb_seconds == pytest.approx(gb_seconds)
    assert estimate.total == pytest.approx(expected)
    lines = costs.describe(estimate)
    assert lines[0].startswith(f"estimated AWS cost ${expected:,.2f}")
    assert f"${prices['lambda_gb_second'][architecture]:.10f}/GB-s" in lines[2]


def refused(est, confirmed=False):
    return costs.refusal(est.messages, est.messages, est.total, confirmed)


def test_confirmation_limits():
    below = costs.estimate(costs.CONFIRM_MESSAGES, 128, MIB, 1)
    assert below.total < costs.CONFIRM_USD and refused(below) is None
    many = costs.estimate(costs.CONFIRM_MESSAGES + 1, 128, MIB, 1)
    assert "--yes" in refused(many) and refused(many, confirmed=True) is None
    # Few messages, but each a long download at the largest memory: over the dollar limit.
    few = costs.estimate(1000, 10240, 10 * 2**30, 1)
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
    gb_seconds = rounds * len(storage) * round_seconds * memory_mb / 1024
    s3 = {
        "standard": rounds * len(sizes) * (prices["s3_put"] + prices["s3_get"] + prices["s3_delete"]),
        "express": rounds * len(sizes) * (express["put"] + express["get"] + express["delete"])
        + rounds * sum(max(size - latency_costs.EXPRESS_FREE_BYTES_PER_REQUEST, 0) for size in sizes) / 2**30
        * (express["upload_gb"] + express["retrieval_gb"]),
    }  # fmt: skip
    return (gb_seconds * prices["lambda_gb_second"][architecture] + messages * prices["lambda_request"]
            + (messages / 10 + 2 * messages) * prices["sqs_request"] + sum(s3[name] for name in storage))  # fmt: skip


SIZES = [1, 1000, 600 * 1024, 10**8]  # below and above 512 KiB, the launch prices' free bytes


@pytest.mark.parametrize("storage", [("standard",), ("express",), ("express", "standard")])
@pytest.mark.parametrize("architecture", ["x86_64", "arm64"])
def test_each_storage_class_is_priced_at_its_own_prices(storage, architecture):
    estimate = latency_costs.estimate(40, 2048, SIZES, 3, storage, architecture)
    assert estimate.total == pytest.approx(latency_expected(40, 2048, SIZES, 3, storage, architecture))
    assert (estimate.s3_data > 0) == ("express" in storage)
    lines = costs.describe(estimate)
    assert any("S3 Express One Zone" in line for line in lines) == ("express" in storage)
    assert all(len(line) <= 80 for line in lines)


def test_standard_keeps_its_prices_and_express_is_not_priced_as_standard():
    standard = latency_costs.estimate(40, 2048, SIZES, 3, ("standard",))
    calls = 40 * 3 * len(SIZES)
    assert standard.s3_gets == pytest.approx(calls * costs.PRICES["s3_get"])
    assert standard.s3_puts == pytest.approx(calls * costs.PRICES["s3_put"]) and standard.s3_data == 0
    express = latency_costs.estimate(40, 2048, SIZES, 3, ("express",))
    assert express.s3_gets == pytest.approx(calls * latency_costs.EXPRESS_PRICES["get"])
    assert express.gb_seconds == pytest.approx(standard.gb_seconds)  # same calls, same assumed time
    both = latency_costs.estimate(40, 2048, SIZES, 3, ("express", "standard"))
    assert both.total == pytest.approx(standard.total + express.total - standard.lambda_requests - standard.sqs_requests)
