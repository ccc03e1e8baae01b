"""Run a query on CloudWatch Logs Insights: StartQuery, then GetQueryResults until it is final.

boto3 has no waiter for Logs Insights queries, hence this loop: jittered backoff, the query
stopped when the caller gives up, every page of results read, AWS's limits waited out, and every
failure one line naming the query. Delays, limits and their sources: docs/insights.md (the
paragraphs before *Saved queries*).
"""

import random
import time

from botocore.exceptions import BotoCoreError, ClientError

from fanout.common.errors import FanoutError

FINAL_STATUSES = ("Complete", "Failed", "Cancelled", "Timeout", "Unknown")
FIRST_DELAY_S = 0.5
MAX_DELAY_S = 8.0
DEADLINE_S = 60 * 60  # Logs Insights stops a query after 60 minutes itself: waiting longer is pointless
NARROWER = "the longest Logs Insights runs a query is 60 minutes; query a narrower time window"
LABEL_CHARS = 60
# Backing off from an AWS limit: delays doubling from LIMIT_FIRST_DELAY_S to LIMIT_MAX_DELAY_S,
# for up to LIMIT_BUDGET_S of waiting in all.
LIMIT_FIRST_DELAY_S = 2.0
LIMIT_MAX_DELAY_S = 60.0
LIMIT_BUDGET_S = 15 * 60
THROTTLING_CODES = ("ThrottlingException", "Throttling", "TooManyRequestsException")


def label(query_text: str) -> str:
    """A short name for a query in messages: its first line (a saved query's is its question)."""
    first = next((line.strip() for line in query_text.splitlines() if line.strip()), "")
    first = first.lstrip("#").strip()
    return repr(first if len(first) <= LABEL_CHARS else first[: LABEL_CHARS - 3] + "...")


def _backoff(rng: random.Random, first: float = FIRST_DELAY_S, most: float = MAX_DELAY_S):
    """Delays doubling from `first` up to `most`, each drawn from its upper half."""
    delay = first
    while True:
        yield delay * rng.uniform(0.5, 1.0)
        delay = min(delay * 2, most)


def _limit(exc: ClientError, operation: str) -> str | None:
    """Which AWS limit refused `operation`, in words; None for any other error."""
    code = exc.response["Error"].get("Code")
    if code == "LimitExceededException" and operation == "StartQuery":
        return "the account's limit of concurrent Logs Insights queries"
    if code in THROTTLING_CODES:
        return f"the account's requests-per-second quota of {operation}"
    return None


def _within_limits(operation: str, call, name: str, sleep, rng):
    """call(), retried with backoff while an AWS limit refuses it, for up to LIMIT_BUDGET_S; then
    a FanoutError naming the limit. Other errors pass through."""
    delays, waited = _backoff(rng, LIMIT_FIRST_DELAY_S, LIMIT_MAX_DELAY_S), 0.0
    while True:
        try:
            return call()
        except ClientError as exc:
            limit = _limit(exc, operation)
            if limit is None:
                raise
            if waited >= LIMIT_BUDGET_S:
                raise FanoutError(
                    f"Logs Insights query {name}: {operation} still refused by {limit} after {waited / 60:.0f} "
                    f"minutes of retrying ({_detail(exc)}); wait for other queries to end or ask for a higher quota "
                    "(CloudWatch Logs quotas in the Service Quotas console)"
                ) from None
        delay = next(delays)
        sleep(delay)
        waited += delay


def _detail(exc: Exception) -> str:
    if isinstance(exc, ClientError):
        error = exc.response["Error"]
        return f"{error.get('Code', 'error')}: {error.get('Message', exc)}"
    return str(exc)


def start_query(client, log_groups, query_text: str, start_s: int, end_s: int, sleep=time.sleep,
                rng=random) -> str:
    """The queryId; waits and retries while an AWS limit refuses it (module docstring)."""
    request = {"logGroupNames": list(log_groups), "startTime": start_s, "endTime": end_s, "queryString": query_text}
    try:
        return _within_limits("StartQuery", lambda: client.start_query(**request), label(query_text), sleep,
                              rng)["queryId"]  # fmt: skip
    except ClientError as exc:
        raise FanoutError(f"Logs Insights refused query {label(query_text)}: {_detail(exc)}") from None
    except BotoCoreError as exc:
        raise FanoutError(f"could not start Logs Insights query {label(query_text)}: {_detail(exc)}") from None


def wait_for_results(client, query_id: str, query_text: str, sleep=time.sleep, clock=time.monotonic,
                     deadline_s=DEADLINE_S, rng=random) -> dict:
    """The final GetQueryResults response of a Complete query, every page of its results in
    `results`; FanoutError for any other end."""
    delays, started, name = _backoff(rng), clock(), f"{label(query_text)} ({query_id})"
    try:
        while True:
            response = _poll(client, query_id, name, sleep, rng)
            status = response["status"]
            if status == "Complete":
                return _all_pages(client, response, query_id, name, sleep, rng)
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


def _all_pages(client, response: dict, query_id: str, name: str, sleep, rng) -> dict:
    """`response` with the results of every further page (nextToken) appended."""
    results, token = list(response["results"]), response.get("nextToken")
    while token:
        page = _poll(client, query_id, name, sleep, rng, nextToken=token)
        results += page["results"]
        token = page.get("nextToken")
    return {**response, "results": results}


def _poll(client, query_id: str, name: str, sleep, rng, **page) -> dict:
    try:
        return _within_limits("GetQueryResults", lambda: client.get_query_results(queryId=query_id, **page), name,
                              sleep, rng)  # fmt: skip
    except (ClientError, BotoCoreError, FanoutError) as exc:
        _stop(client, query_id)
        if isinstance(exc, FanoutError):
            raise
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
