"""Run a query on CloudWatch Logs Insights: StartQuery, then GetQueryResults until it is final.

boto3 has no waiter for Logs Insights queries, hence this loop. It retries StartQuery while the
account is at its concurrent-query limit, polls with exponential backoff (jittered, so that
several callers do not poll in step), stops the query if the caller gives up (deadline or
Ctrl-C) so it does not keep scanning, and turns every failure, from an unsuccessful final status
to a botocore error, into a one-line error naming the query.
"""

import random
import time

from botocore.exceptions import BotoCoreError, ClientError

from fanout.errors import FanoutError

FINAL_STATUSES = ("Complete", "Failed", "Cancelled", "Timeout", "Unknown")
START_ATTEMPTS = 8
FIRST_DELAY_S = 0.5
MAX_DELAY_S = 8.0
DEADLINE_S = 60 * 60  # Logs Insights stops a query after 60 minutes itself: waiting longer is pointless
NARROWER = "the longest Logs Insights runs a query is 60 minutes; query a narrower time window"
LABEL_CHARS = 60


def label(query_text: str) -> str:
    """A short name for a query in messages: its first line (a saved query's is its question)."""
    first = next((line.strip() for line in query_text.splitlines() if line.strip()), "")
    first = first.lstrip("#").strip()
    return repr(first if len(first) <= LABEL_CHARS else first[: LABEL_CHARS - 3] + "...")


def _backoff(rng: random.Random):
    """Delays doubling from FIRST_DELAY_S up to MAX_DELAY_S, each drawn from its upper half."""
    delay = FIRST_DELAY_S
    while True:
        yield delay * rng.uniform(0.5, 1.0)
        delay = min(delay * 2, MAX_DELAY_S)


def _detail(exc: Exception) -> str:
    if isinstance(exc, ClientError):
        error = exc.response["Error"]
        return f"{error.get('Code', 'error')}: {error.get('Message', exc)}"
    return str(exc)


def start_query(client, log_groups, query_text: str, start_s: int, end_s: int, sleep=time.sleep,
                rng=random) -> str:
    """The queryId; waits and retries while LimitExceededException says too many queries run."""
    delays = _backoff(rng)
    for attempt in range(1, START_ATTEMPTS + 1):
        try:
            response = client.start_query(
                logGroupNames=list(log_groups), startTime=start_s, endTime=end_s, queryString=query_text
            )
            return response["queryId"]
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "LimitExceededException" or attempt == START_ATTEMPTS:
                raise FanoutError(f"Logs Insights refused query {label(query_text)}: {_detail(exc)}") from None
        except BotoCoreError as exc:
            raise FanoutError(f"could not start Logs Insights query {label(query_text)}: {_detail(exc)}") from None
        sleep(next(delays))
    raise AssertionError("unreachable")


def wait_for_results(client, query_id: str, query_text: str, sleep=time.sleep, clock=time.monotonic,
                     deadline_s=DEADLINE_S, rng=random) -> dict:
    """The final GetQueryResults response of a Complete query; FanoutError for any other end."""
    delays, started, name = _backoff(rng), clock(), f"{label(query_text)} ({query_id})"
    try:
        while True:
            response = _poll(client, query_id, name)
            status = response["status"]
            if status == "Complete":
                return response
            if status == "Timeout":
                raise FanoutError(f"Logs Insights query {name} timed out: {NARROWER}")
            if status in FINAL_STATUSES:
                raise FanoutError(f"Logs Insights query {name} ended with status {status}")
            if clock() - started > deadline_s:
                _stop(client, query_id)
                raise FanoutError(f"Logs Insights query {name} still {status} after {deadline_s / 60:.0f} "
                                  f"minutes; stopped it ({NARROWER})")
            sleep(next(delays))
    except KeyboardInterrupt:
        _stop(client, query_id)
        raise


def _poll(client, query_id: str, name: str) -> dict:
    try:
        return client.get_query_results(queryId=query_id)
    except (ClientError, BotoCoreError) as exc:
        _stop(client, query_id)
        raise FanoutError(f"could not read the results of Logs Insights query {name}: {_detail(exc)}") from None


def _stop(client, query_id: str) -> None:
    try:
        client.stop_query(queryId=query_id)
    except (ClientError, BotoCoreError):
        pass  # it may have finished meanwhile, or AWS is unreachable; nothing more can be done


def run_query(client, log_groups, query_text: str, start_s: int, end_s: int, sleep=time.sleep,
              clock=time.monotonic, deadline_s=DEADLINE_S, rng=random) -> dict:
    """StartQuery over `log_groups` for [start_s, end_s] (epoch seconds, inclusive), then its results."""
    query_id = start_query(client, log_groups, query_text, start_s, end_s, sleep=sleep, rng=rng)
    return wait_for_results(client, query_id, query_text, sleep=sleep, clock=clock, deadline_s=deadline_s, rng=rng)
