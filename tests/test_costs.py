"""The cost estimate against the price table, computed here from first principles."""

import pytest

from fanout import costs

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
