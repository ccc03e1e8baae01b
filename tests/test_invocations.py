"""A resumed sweep's wait for the abandoned run's invocations after a purge, against CloudWatch's
answers as botocore's Stubber plays them (real client, real request validation, no network) and
a clock that advances only when the wait sleeps."""

from datetime import datetime, timezone

import boto3
import pytest
from botocore.stub import ANY, Stubber

from fanout.cloud import invocations

FUNCTION = "s3fanout-sweep-us-east-1-downloader"
PURGED_AT = 1_800_000_000.0  # epoch seconds


class Clock:
    """time.time and time.sleep of a wait that takes no time."""

    def __init__(self):
        self.now, self.slept = PURGED_AT, []

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def points(*maxima: tuple[float, float]) -> dict:
    """ConcurrentExecutions datapoints: (seconds after the purge the minute begins, Maximum)."""
    return {"Datapoints": [{"Timestamp": datetime.fromtimestamp(PURGED_AT + at, timezone.utc), "Maximum": value,
                            "Unit": "Count"} for at, value in maxima], "Label": "ConcurrentExecutions"}  # fmt: skip


EXPECTED = {"Namespace": "AWS/Lambda", "MetricName": "ConcurrentExecutions", "Statistics": ["Maximum"], "Period": 60,
            "Dimensions": [{"Name": "FunctionName", "Value": FUNCTION}], "StartTime": ANY, "EndTime": ANY}  # fmt: skip


def wait(answers: list, timeout: float, least: float = 60):
    """wait_ended against `answers` (a dict: a GetMetricStatistics answer; a str: that error code);
    (seconds waited, lines said, the clock)."""
    cloudwatch = boto3.client("cloudwatch", region_name="us-east-1", aws_access_key_id="k", aws_secret_access_key="s")
    clock, said = Clock(), []
    with Stubber(cloudwatch) as stub:
        for answer in answers:
            if isinstance(answer, str):
                stub.add_client_error("get_metric_statistics", answer, "no", expected_params=EXPECTED)
            else:
                stub.add_response("get_metric_statistics", answer, EXPECTED)
        waited = invocations.wait_ended(cloudwatch, FUNCTION, PURGED_AT, timeout, said.append, least, clock.sleep,
                                        clock.time)  # fmt: skip
        stub.assert_no_pending_responses()
    return waited, said, clock


def test_the_wait_ends_at_the_first_minute_after_the_purge_that_shows_none_running():
    """Invocations ran in the minute of the purge and the next; the one after shows 0: the wait
    ends there, at 180 s of a 900 s timeout, and says how long it may wait and waited."""
    waited, said, _ = wait([points((-30, 4)), points((-30, 4), (60, 2)), points((-30, 4), (60, 2), (120, 0))], 900)
    assert waited == 180
    assert "up to 900 s" in said[0] and "ConcurrentExecutions" in said[0]
    assert said[-1].endswith("waited 180 s")


@pytest.mark.parametrize("answers", [[points()] * 14, ["AccessDenied"]], ids=["no points", "denied"])
def test_without_a_zero_after_the_purge_the_wait_runs_to_the_function_timeout(answers):
    """An idle function writes no points, and a caller denied the metric cannot see them: the
    wait runs to the function timeout after the purge (asking every minute, or once when denied)."""
    waited, said, clock = wait(answers, 900)
    assert waited == 900 and clock.now == PURGED_AT + 900
    assert "function timeout has passed" in said[-1]
    assert ("cannot read" in " ".join(said)) is (answers == ["AccessDenied"])


def test_a_zero_from_before_the_purge_does_not_end_the_wait():
    waited, _, _ = wait([points((-60, 0))] * 2 + [points((-60, 0), (90, 0))], 300)
    assert waited == 180


def test_a_short_timeout_still_waits_for_sqs_to_finish_the_purge():
    """SQS may take 60 s to purge: a 30 s function timeout waits 60 s, without asking CloudWatch."""
    waited, said, clock = wait([], 30)
    assert waited == 60 and clock.slept == [60]
    assert "up to 60 s" in said[0]
