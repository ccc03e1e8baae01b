"""The AWS runner against a stubbed CloudWatch Logs client: polling, backoff, retries, errors."""

import boto3
import pytest
from botocore.stub import Stubber

from fanout.errors import FanoutError
from fanout.insights import runner
from fanout.insights.result import Result

QUERY = "filter event = 'download' | stats count(*) as n by mode"
START = {"logGroupNames": ["/aws/lambda/f"], "startTime": 100, "endTime": 200, "queryString": QUERY}


@pytest.fixture
def logs():
    client = boto3.client("logs", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    with Stubber(client) as stub:
        yield client, stub
        stub.assert_no_pending_responses()


def results(status, rows=(), statistics=None):
    return {"status": status, "results": [[{"field": k, "value": v} for k, v in row] for row in rows],
            "statistics": statistics or {"recordsMatched": 3.0, "recordsScanned": 9.0, "bytesScanned": 512.0}}  # fmt: skip


def run(client, sleeps, **kwargs):
    return runner.run_query(client, ["/aws/lambda/f"], QUERY, 100, 200, sleep=sleeps.append, **kwargs)


def test_polls_with_growing_delays_until_complete(logs):
    client, stub = logs
    stub.add_response("start_query", {"queryId": "q1"}, START)
    for status in ("Scheduled", "Running", "Running", "Running"):
        stub.add_response("get_query_results", results(status), {"queryId": "q1"})
    rows = [[("mode", "stream"), ("n", "2"), ("@ptr", "abc")], [("mode", "download_file"), ("n", "1.5e0")]]
    stub.add_response("get_query_results", results("Complete", rows), {"queryId": "q1"})
    sleeps = []
    response = run(client, sleeps)
    assert sleeps == [0.5, 1.0, 2.0, 4.0]
    result = Result.from_response(response)
    assert result.rows == [{"mode": "stream", "n": 2}, {"mode": "download_file", "n": 1.5}]
    assert result.columns == ["mode", "n"] and result.statistics["recordsMatched"] == 3.0


def test_backoff_is_capped(logs):
    client, stub = logs
    stub.add_response("start_query", {"queryId": "q1"}, START)
    for _ in range(7):
        stub.add_response("get_query_results", results("Running"), {"queryId": "q1"})
    stub.add_response("get_query_results", results("Complete"), {"queryId": "q1"})
    sleeps = []
    run(client, sleeps)
    assert max(sleeps) == runner.MAX_DELAY_S and sleeps == sorted(sleeps)


def test_start_query_retries_limit_exceeded(logs):
    client, stub = logs
    for _ in range(2):
        stub.add_client_error("start_query", "LimitExceededException", "too many queries", expected_params=START)
    stub.add_response("start_query", {"queryId": "q2"}, START)
    stub.add_response("get_query_results", results("Complete"), {"queryId": "q2"})
    sleeps = []
    run(client, sleeps)
    assert sleeps == [0.5, 1.0]


def test_start_query_gives_up_after_its_attempts(logs):
    client, stub = logs
    for _ in range(runner.START_ATTEMPTS):
        stub.add_client_error("start_query", "LimitExceededException", "too many queries", expected_params=START)
    with pytest.raises(FanoutError, match="too many queries"):
        run(client, [])


def test_malformed_query_is_not_retried(logs):
    client, stub = logs
    stub.add_client_error("start_query", "MalformedQueryException", "unexpected symbol", expected_params=START)
    with pytest.raises(FanoutError, match="unexpected symbol"):
        run(client, [])


@pytest.mark.parametrize("status", ["Failed", "Cancelled", "Timeout", "Unknown"])
def test_unsuccessful_final_status_is_a_clear_error(logs, status):
    client, stub = logs
    stub.add_response("start_query", {"queryId": "q3"}, START)
    stub.add_response("get_query_results", results("Running"), {"queryId": "q3"})
    stub.add_response("get_query_results", results(status), {"queryId": "q3"})
    with pytest.raises(FanoutError, match=f"q3 ended with status {status}"):
        run(client, [])


def test_deadline_stops_the_query(logs):
    client, stub = logs
    stub.add_response("start_query", {"queryId": "q4"}, START)
    stub.add_response("get_query_results", results("Running"), {"queryId": "q4"})
    stub.add_response("stop_query", {"success": True}, {"queryId": "q4"})
    ticks = iter([0.0, runner.DEADLINE_S + 1])
    with pytest.raises(FanoutError, match="stopped it"):
        run(client, [], clock=lambda: next(ticks))


def test_interrupt_stops_the_query(logs):
    client, stub = logs
    stub.add_response("start_query", {"queryId": "q5"}, START)
    stub.add_response("get_query_results", results("Running"), {"queryId": "q5"})
    stub.add_response("stop_query", {"success": True}, {"queryId": "q5"})

    def interrupted(_delay):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        runner.run_query(client, ["/aws/lambda/f"], QUERY, 100, 200, sleep=interrupted)
