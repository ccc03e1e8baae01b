"""The Logs Insights language: queries run on AWS, or evaluated locally over the same events with
the same text and the same Result (docs/insights.md)."""

import math
import time
from pathlib import Path

from botocore.exceptions import ClientError

from fanout.common import paths
from fanout.common.errors import FanoutError, UsageError
from fanout.insights import runner, syntax
from fanout.insights.evaluator import Plan
from fanout.insights.lexer import QuerySyntaxError
from fanout.insights.result import Result

__all__ = ["DEFAULT_HOURS", "QuerySyntaxError", "Result", "evaluate", "fetch_events", "load_query",
           "log_identifier", "query_files", "restrict", "run", "saved_queries", "seq_slices", "window"]  # fmt: skip

DEFAULT_HOURS = 24
# A query over a run's seqs asks for at most this many: at two rows per seq it stays under the
# 10,000 rows one Logs Insights query returns by default.
SEQS_PER_QUERY = 4000
QUERY_SUFFIX = ".logsinsights"


def query_files() -> dict[str, Path]:
    """Each saved query's file by name (its file name less the suffix), from paths.QUERY_GLOBS:
    the generic queries/ and the workloads' folders. The name is the query definition's on AWS
    (infra/queries.tf), so two files of one name are refused rather than one hiding the other."""
    found: dict[str, Path] = {}
    for pattern in paths.QUERY_GLOBS:
        for path in sorted(paths.REPO.glob(pattern)):
            name = path.name.removesuffix(QUERY_SUFFIX)
            if name in found:
                raise FanoutError(f"two saved queries are named {name!r}: {found[name].relative_to(paths.REPO)} and "
                                  f"{path.relative_to(paths.REPO)}; rename one (a query's name is its file's)")
            found[name] = path
    return found


def saved_queries() -> list[str]:
    """Names of the saved queries (query_files)."""
    return sorted(query_files())


def load_query(name: str) -> str:
    path = query_files().get(name)
    if path is None:
        raise UsageError(f"no saved query {name!r}; choose one of: {', '.join(saved_queries())}")
    return path.read_text()


def evaluate(query_text: str, events, log: str | None = None) -> Result:
    return Result.from_response(Plan(query_text).run(events, log))


def window(start_ms: int | None = None, end_ms: int | None = None) -> tuple[int, int]:
    """The (start, end) epoch-ms window, defaulting to the DEFAULT_HOURS hours before now."""
    end_ms = int(time.time() * 1000) if end_ms is None else int(end_ms)
    start_ms = end_ms - DEFAULT_HOURS * 3_600_000 if start_ms is None else int(start_ms)
    if start_ms > end_ms:
        raise UsageError(f"the time window starts ({start_ms}) after it ends ({end_ms})")
    return start_ms, end_ms


def fetch_events(stack, start_ms: int, end_ms: int) -> list[dict]:
    client = stack.client("logs")
    events = []
    try:
        for page in client.get_paginator("filter_log_events").paginate(
            logGroupName=stack.log_group, startTime=start_ms, endTime=end_ms
        ):
            events.extend(page.get("events", []))
    except ClientError as exc:
        if exc.response["Error"]["Code"] == "ResourceNotFoundException":
            raise FanoutError(f"log group {stack.log_group} does not exist; has the function run yet?")
        raise
    return events


def log_identifier(stack) -> str:
    """@log of the stack's events: account-id:log-group-name (the account from the queue ARN)."""
    return f"{stack.queue_arn.split(':')[4]}:{stack.log_group}"


def run(stack, query_text: str, start_ms: int | None = None, end_ms: int | None = None) -> Result:
    start_ms, end_ms = window(start_ms, end_ms)
    if stack.endpoint:
        plan = Plan(query_text)  # reject an unsupported query before fetching anything
        return Result.from_response(plan.run(fetch_events(stack, start_ms, end_ms), log_identifier(stack)))
    response = runner.run_query(
        stack.client("logs"), [stack.log_group], query_text, start_ms // 1000, math.ceil(end_ms / 1000)
    )
    return Result.from_response(response)


def run_saved(stack, name: str, filter_expr: str | None, start_ms: int, end_ms: int) -> list[dict]:
    """The rows of the saved query `name` (query_files), restricted by `filter_expr` when given."""
    text = load_query(name)
    if filter_expr:
        text = restrict(text, filter_expr)
    return run(stack, text, start_ms, end_ms).rows


def seq_slices(messages: int) -> list[range]:
    """The seqs 0..messages-1 in slices of SEQS_PER_QUERY: one query each. wait runs one per slice
    at every poll, and the cost estimate counts them from here (fanout.cloud.costs)."""
    return [range(low, min(low + SEQS_PER_QUERY, messages)) for low in range(0, messages, SEQS_PER_QUERY)]


def restrict(query_text: str, filter_expr: str) -> str:
    """`query_text` with `filter <filter_expr>` inserted as its first command."""
    if len(syntax.parse(f"filter {filter_expr}").commands) != 1:
        raise UsageError(f"restrict() takes one filter expression, not {filter_expr!r}")
    lines = query_text.splitlines(keepends=True)
    first = next((i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("#")), None)
    if first is None:
        raise UsageError("the query has no command to restrict")
    lines.insert(first, f"filter {filter_expr}\n| ")
    return "".join(lines)

