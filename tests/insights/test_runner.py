"""The AWS runner against a stubbed CloudWatch Logs client: polling, backoff, retries, errors.

botocore's Stubber stands in for AWS (it checks every request against the service model); the
code under test is the real runner and the real AWS branch of `insights.run`.
"""

import random

import boto3
import pytest
from botocore.exceptions import ClientError, EndpointConnectionError
from botocore.stub import Stubber

from fanout import insights
from fanout.common.errors import FanoutError
from fanout.insights import runner
from fanout.insights.result import Result
from fanout.cloud.stack import Stack

from .support import make_stack

QUERY = "filter event = 'download' | stats count(*) as n by mode"
START = {"logGroupNames": ["/aws/lambda/f"], "startTime": 100, "endTime": 200, "queryString": QUERY}
STATISTICS = {"recordsMatched": 3.0, "recordsScanned": 9.0, "bytesScanned": 512.0}


class UpperHalf:
    """An rng whose jitter always picks the top of the range: the undisturbed delays."""

    @staticmethod
    def uniform(low, high):
        return high


@pytest.fixture
def logs():
    client = boto3.client("logs", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    with Stubber(client) as stub:
        yield client, stub
        stub.assert_no_pending_responses()


def results(status, rows=(), statistics=STATISTICS):
    return {"status": status, "results": [[{"field": k, "value": v} for k, v in row] for row in rows],
            "statistics": statistics}  # fmt: skip


def run(client, sleeps, rng=UpperHalf, **kwargs):
    return runner.run_query(client, ["/aws/lambda/f"], QUERY, 100, 200, sleep=sleeps.append, rng=rng, **kwargs)


def doubling(count: int) -> list[float]:
    """The first `count` delays of a backoff that doubles from 0.5 s and stops growing at 8 s."""
    delays, delay = [], 0.5
    for _ in range(count):
        delays.append(delay)
        delay = min(delay * 2, 8.0)
    return delays


def test_polls_with_growing_delays_until_complete(logs):
    client, stub = logs
    stub.add_response("start_query", {"queryId": "q1"}, START)
    for status in ("Scheduled", "Running", "Running", "Running"):
        stub.add_response("get_query_results", results(status), {"queryId": "q1"})
    rows = [[("mode", "stream"), ("n", "2"), ("@ptr", "abc")], [("mode", "download_file"), ("n", "1.5e0")]]
    stub.add_response("get_query_results", results("Complete", rows), {"queryId": "q1"})
    sleeps = []
    response = run(client, sleeps)
    assert sleeps == doubling(4)
    result = Result.from_response(response)
    assert result.rows == [{"mode": "stream", "n": 2}, {"mode": "download_file", "n": 1.5}]
    assert result.columns == ["mode", "n"] and result.statistics == STATISTICS


def test_backoff_is_capped_and_jittered_within_the_upper_half(logs):
    client, stub = logs
    stub.add_response("start_query", {"queryId": "q1"}, START)
    for _ in range(9):
        stub.add_response("get_query_results", results("Running"), {"queryId": "q1"})
    stub.add_response("get_query_results", results("Complete"), {"queryId": "q1"})
    sleeps = []
    run(client, sleeps, rng=random.Random(4))
    assert len(sleeps) == 9
    assert all(full / 2 <= slept <= full for slept, full in zip(sleeps, doubling(9))), sleeps
    assert len(set(sleeps)) == len(sleeps)  # jittered: no two callers poll in step
    assert max(doubling(9)) == runner.MAX_DELAY_S


def limit_delays(count: int) -> list[float]:
    """The first `count` delays of the limits' backoff: doubling from 2 s, at most a minute."""
    delays, delay = [], 2.0
    for _ in range(count):
        delays.append(delay)
        delay = min(delay * 2, 60.0)
    return delays


def test_start_query_retries_limit_exceeded(logs):
    client, stub = logs
    for _ in range(2):
        stub.add_client_error("start_query", "LimitExceededException", "too many queries", expected_params=START)
    stub.add_response("start_query", {"queryId": "q2"}, START)
    stub.add_response("get_query_results", results("Complete"), {"queryId": "q2"})
    sleeps = []
    run(client, sleeps)
    assert sleeps == limit_delays(2)


def test_a_limit_is_waited_out_for_minutes_then_named(logs):
    """15 minutes of backing off (delays up to a minute), then one line naming the limit."""
    client, stub = logs
    attempts = next(n for n in range(1, 100) if sum(limit_delays(n - 1)) >= 15 * 60)
    for _ in range(attempts):
        stub.add_client_error("start_query", "LimitExceededException", "too many queries", expected_params=START)
    sleeps = []
    with pytest.raises(FanoutError) as caught:
        run(client, sleeps)
    assert max(sleeps) == 60.0 and sum(sleeps) >= 15 * 60 > sum(sleeps[:-1])
    message = str(caught.value)
    assert "concurrent Logs Insights queries" in message and "15 minutes" in message and "too many queries" in message
    assert "\n" not in message


def test_throttled_polls_back_off_and_the_limit_is_named(logs):
    client, stub = logs
    stub.add_response("start_query", {"queryId": "q3"}, START)
    for _ in range(2):
        stub.add_client_error("get_query_results", "ThrottlingException", "Rate exceeded", expected_params={"queryId": "q3"})
    stub.add_response("get_query_results", results("Complete"), {"queryId": "q3"})
    sleeps = []
    run(client, sleeps)
    assert sleeps == limit_delays(2)
    assert runner._limit(ClientError({"Error": {"Code": "ThrottlingException"}}, "GetQueryResults"), "GetQueryResults") \
        == "the account's requests-per-second quota of GetQueryResults"  # fmt: skip


def test_every_page_of_the_results_is_read(logs):
    """GetQueryResults pages its results (nextToken, botocore's logs model): all are returned."""
    client, stub = logs
    stub.add_response("start_query", {"queryId": "q4"}, START)
    pages = [[[("mode", "stream"), ("n", "1")]], [[("mode", "crt"), ("n", "2")]], [[("mode", "ranged"), ("n", "3")]]]
    stub.add_response("get_query_results", results("Complete", pages[0]) | {"nextToken": "t1"}, {"queryId": "q4"})
    stub.add_response("get_query_results", results("Complete", pages[1]) | {"nextToken": "t2"},
                      {"queryId": "q4", "nextToken": "t1"})  # fmt: skip
    stub.add_response("get_query_results", results("Complete", pages[2]), {"queryId": "q4", "nextToken": "t2"})
    result = Result.from_response(run(client, []))
    assert [row["mode"] for row in result.rows] == ["stream", "crt", "ranged"]


def test_malformed_query_is_not_retried_and_the_error_names_the_query(logs):
    client, stub = logs
    stub.add_client_error("start_query", "MalformedQueryException", "unexpected symbol", expected_params=START)
    with pytest.raises(FanoutError) as caught:
        run(client, [])
    message = str(caught.value)
    assert "MalformedQueryException: unexpected symbol" in message and "filter event = 'download'" in message
    assert "\n" not in message


def test_a_results_error_is_one_line_naming_the_query_and_stops_it(logs):
    client, stub = logs
    stub.add_response("start_query", {"queryId": "q6"}, START)
    stub.add_client_error("get_query_results", "AccessDeniedException", "not allowed", expected_params={"queryId": "q6"})
    stub.add_response("stop_query", {"success": True}, {"queryId": "q6"})
    with pytest.raises(FanoutError) as caught:
        run(client, [])
    message = str(caught.value)
    assert "q6" in message and "AccessDeniedException: not allowed" in message and "filter event" in message


class Unreachable:
    """A logs client whose endpoint cannot be reached (botocore's own exception)."""

    def __init__(self, fail_on: str):
        self.fail_on, self.stopped = fail_on, []

    def _call(self, name, response):
        if name == self.fail_on:
            raise EndpointConnectionError(endpoint_url="https://logs.us-east-1.amazonaws.com/")
        return response

    def start_query(self, **kwargs):
        return self._call("start_query", {"queryId": "q7"})

    def get_query_results(self, **kwargs):
        return self._call("get_query_results", results("Complete"))

    def stop_query(self, queryId):
        self.stopped.append(queryId)


@pytest.mark.parametrize("fail_on", ["start_query", "get_query_results"])
def test_botocore_errors_become_one_line_errors(fail_on):
    client = Unreachable(fail_on)
    with pytest.raises(FanoutError, match="Could not connect to the endpoint URL") as caught:
        run(client, [])
    assert "filter event = 'download'" in str(caught.value)
    assert client.stopped == (["q7"] if fail_on == "get_query_results" else [])


@pytest.mark.parametrize("status", ["Failed", "Cancelled", "Unknown"])
def test_unsuccessful_final_status_is_a_clear_error(logs, status):
    client, stub = logs
    stub.add_response("start_query", {"queryId": "q3"}, START)
    stub.add_response("get_query_results", results("Running"), {"queryId": "q3"})
    stub.add_response("get_query_results", results(status), {"queryId": "q3"})
    with pytest.raises(FanoutError, match=f"q3\\) ended with status {status}"):
        run(client, [])


def test_aws_timeout_names_the_60_minute_limit_and_suggests_a_narrower_window(logs):
    client, stub = logs
    stub.add_response("start_query", {"queryId": "q8"}, START)
    stub.add_response("get_query_results", results("Timeout"), {"queryId": "q8"})
    with pytest.raises(FanoutError, match="60 minutes; query a narrower time window"):
        run(client, [])


@pytest.mark.parametrize("deadline_s, minutes", [(runner.DEADLINE_S, 60), (600, 10)])
def test_deadline_stops_the_query(logs, deadline_s, minutes):
    assert runner.DEADLINE_S == 60 * 60  # AWS's own limit: waiting longer is pointless
    client, stub = logs
    stub.add_response("start_query", {"queryId": "q4"}, START)
    stub.add_response("get_query_results", results("Running"), {"queryId": "q4"})
    stub.add_response("stop_query", {"success": True}, {"queryId": "q4"})
    ticks = iter([0.0, deadline_s + 1])
    with pytest.raises(FanoutError, match=f"after {minutes} minutes; stopped it .*narrower time window"):
        run(client, [], clock=lambda: next(ticks), deadline_s=deadline_s)


def test_interrupt_stops_the_query(logs):
    client, stub = logs
    stub.add_response("start_query", {"queryId": "q5"}, START)
    stub.add_response("get_query_results", results("Running"), {"queryId": "q5"})
    stub.add_response("stop_query", {"success": True}, {"queryId": "q5"})

    def interrupted(_delay):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        runner.run_query(client, ["/aws/lambda/f"], QUERY, 100, 200, sleep=interrupted)


def test_insights_run_on_aws_queries_the_stack_log_group_in_epoch_seconds(logs, monkeypatch):
    client, stub = logs
    stack = make_stack(endpoint="", log_group="/aws/lambda/s3fanout-fn")
    monkeypatch.setattr(Stack, "client", lambda self, service, **config: client if service == "logs" else None)
    start_ms, end_ms = 1_714_564_800_123, 1_714_568_400_456
    stub.add_response("start_query", {"queryId": "q9"}, {
        "logGroupNames": ["/aws/lambda/s3fanout-fn"], "queryString": QUERY,
        "startTime": int(str(start_ms)[:-3]),  # whole seconds, the partial first one included
        "endTime": int(str(end_ms)[:-3]) + 1,  # the partial last second included too
    })  # fmt: skip
    statistics = {"recordsMatched": 12.0, "recordsScanned": 340.0, "bytesScanned": 56789.0}
    rows = [[("mode", "stream"), ("n", "7"), ("@ptr", "p1")], [("mode", "download_file"), ("n", "5")]]
    stub.add_response("get_query_results", results("Complete", rows, statistics), {"queryId": "q9"})
    result = insights.run(stack, QUERY, start_ms, end_ms)
    assert result.rows == [{"mode": "stream", "n": 7}, {"mode": "download_file", "n": 5}]
    assert result.columns == ["mode", "n"]
    assert result.statistics == statistics
