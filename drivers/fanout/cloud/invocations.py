"""When the invocations of an abandoned run have ended on AWS, after its queue was purged.

PurgeQueue deletes the messages in flight too, but not the invocations processing them: each
may run until the function timeout, holding a slot of the reserved concurrency a resumed
sweep's next cell counts on. AWS exposes how many run only as the CloudWatch metric
ConcurrentExecutions (namespace AWS/Lambda, by FunctionName, 1-minute points; Lambda developer
guide, "Types of metrics for Lambda functions"), so the wait ends at the function timeout after
the purge, or earlier at a 1-minute point that begins after the purge and shows none running.
Lambda writes a point only for a minute with activity, so an idle function usually shows none
and the wait runs to the timeout. Details: docs/sweep.md (resume).
"""

import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

from botocore.exceptions import BotoCoreError, ClientError

PERIOD_S = 60  # the metric's resolution


def wait_ended(cloudwatch, function_name: str, purged_at: float, timeout_s: float, say: Callable[[str], None],
               least_s: float = 0.0, sleep=time.sleep, clock=time.time) -> float:  # fmt: skip
    """Wait until the invocations running at `purged_at` (epoch s) have ended: `timeout_s` after
    it, or once ConcurrentExecutions shows 0 for a minute that began after it; at least `least_s`
    after it in any case. Says how long it may wait; returns the seconds it waited."""
    started = clock()
    say(f"waiting up to {max(timeout_s, least_s):g} s (the function timeout, at least {least_s:g} s) for the abandoned "
        f"run's invocations to end, less once CloudWatch's ConcurrentExecutions of {function_name} shows 0 after the "
        "purge (1-minute points)")
    deadline, earliest = purged_at + max(timeout_s, least_s), purged_at + least_s
    watching = True  # until the metric cannot be read
    while (now := clock()) < deadline:
        if now >= earliest and watching:
            idle = _idle_since(cloudwatch, function_name, purged_at, now, say)
            if idle:
                say(f"ConcurrentExecutions shows 0: the abandoned invocations ended; waited {clock() - started:.0f} s")
                return clock() - started
            watching = idle is not None
        sleep(min(PERIOD_S, deadline - now) if now >= earliest else earliest - now)
    say(f"the function timeout has passed since the purge; waited {clock() - started:.0f} s")
    return clock() - started


def _idle_since(cloudwatch, function_name: str, since: float, now: float, say: Callable[[str], None]) -> bool | None:
    """Whether a 1-minute point that begins at or after `since` shows no execution running; None
    when the metric cannot be read (said once: the wait runs to the timeout)."""
    try:
        points = cloudwatch.get_metric_statistics(
            Namespace="AWS/Lambda", MetricName="ConcurrentExecutions", Statistics=["Maximum"], Period=PERIOD_S,
            Dimensions=[{"Name": "FunctionName", "Value": function_name}],
            StartTime=datetime.fromtimestamp(since, timezone.utc),
            EndTime=datetime.fromtimestamp(now, timezone.utc) + timedelta(seconds=PERIOD_S),
        )["Datapoints"]  # fmt: skip
    except (ClientError, BotoCoreError) as exc:
        say(f"cannot read ConcurrentExecutions ({exc}); waiting out the function timeout")
        return None
    return any(point["Timestamp"].timestamp() >= since and point.get("Maximum") == 0 for point in points)
