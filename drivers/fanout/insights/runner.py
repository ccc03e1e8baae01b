"""Run a query on CloudWatch Logs Insights: StartQuery, then GetQueryResults until it is final.

boto3 has no waiter for Logs Insights queries, hence this loop. It retries StartQuery while the
account is at its concurrent-query limit, polls with exponential backoff, stops the query if the
caller gives up (deadline or Ctrl-C) so it does not keep scanning, and turns every unsuccessful
final status into a one-line error.
"""

import time

from botocore.exceptions import ClientError

from fanout.errors import FanoutError

FINAL_STATUSES = ("Complete", "Failed", "Cancelled", "Timeout", "Unknown")
START_ATTEMPTS = 8
FIRST_DELAY_S = 0.5
MAX_DELAY_S = 8.0
DEADLINE_S = 15 * 60


def _backoff():
    delay = FIRST_DELAY_S
    while True:
        yield delay
        delay = min(delay * 2, MAX_DELAY_S)


def start_query(client, log_groups, query_text: str, start_s: int, end_s: int, sleep=time.sleep) -> str:
    """The queryId; waits and retries while LimitExceededException says too many queries run."""
    delays = _backoff()
    for attempt in range(1, START_ATTEMPTS + 1):
        try:
            response = client.start_query(
                logGroupNames=list(log_groups), startTime=start_s, endTime=end_s, queryString=query_text
            )
            return response["queryId"]
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "LimitExceededException" or attempt == START_ATTEMPTS:
                raise FanoutError(f"Logs Insights refused the query: {exc.response['Error'].get('Message', exc)}")
            sleep(next(delays))
    raise AssertionError("unreachable")


def wait_for_results(client, query_id: str, sleep=time.sleep, clock=time.monotonic, deadline_s=DEADLINE_S) -> dict:
    """The final GetQueryResults response of a Complete query; FanoutError for any other end."""
    delays, started = _backoff(), clock()
    try:
        while True:
            response = client.get_query_results(queryId=query_id)
            status = response["status"]
            if status == "Complete":
                return response
            if status in FINAL_STATUSES:
                raise FanoutError(f"Logs Insights query {query_id} ended with status {status}")
            if clock() - started > deadline_s:
                _stop(client, query_id)
                raise FanoutError(f"Logs Insights query {query_id} still {status} after {deadline_s:.0f} s; stopped it")
            sleep(next(delays))
    except KeyboardInterrupt:
        _stop(client, query_id)
        raise


def _stop(client, query_id: str) -> None:
    try:
        client.stop_query(queryId=query_id)
    except ClientError:
        pass  # it may have finished meanwhile; nothing is left running either way


def run_query(client, log_groups, query_text: str, start_s: int, end_s: int, sleep=time.sleep,
              clock=time.monotonic) -> dict:
    """StartQuery over `log_groups` for [start_s, end_s] (epoch seconds, inclusive), then its results."""
    query_id = start_query(client, log_groups, query_text, start_s, end_s, sleep=sleep)
    return wait_for_results(client, query_id, sleep=sleep, clock=clock)
