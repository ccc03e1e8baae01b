"""How an SQS event source mapping scales out: the one definition of its ramp.

AWS Lambda developer guide, "Configuring scaling behavior for SQS event source mappings": on a
standard queue the mapping starts with INITIAL_CONCURRENCY concurrent invocations and adds up to
SCALE_PER_MINUTE more each minute while messages wait, up to the function's limit (here the
mapping's maximum concurrency, the stack's CONCURRENCY). Reaching 500 takes about 100 s, so a
run's first downloads run at lower concurrency than its target: the estimates of how long a run
takes include this ramp. Written by hand: no library models it.
"""

INITIAL_CONCURRENCY = 5
SCALE_PER_MINUTE = 300


def seconds_to_reach(target: int) -> float:
    """Seconds from the first poll until the mapping can run `target` invocations at once."""
    return max(0, target - INITIAL_CONCURRENCY) * 60 / SCALE_PER_MINUTE


def concurrency_at(seconds: float, target: int) -> float:
    """The most invocations the mapping runs at once `seconds` after it started polling."""
    return min(target, INITIAL_CONCURRENCY + SCALE_PER_MINUTE * seconds / 60)


def run_seconds(work_seconds: float, target: int) -> float:
    """Wall time to get through `work_seconds` of invocations (messages x seconds each) when the
    mapping ramps up to `target` at once and every slot stays busy: the ramp's area first, then
    the rest at the target."""
    if work_seconds <= 0:
        return 0.0
    target = max(1, target)  # a function runs at least one invocation at a time
    ramp = seconds_to_reach(target)
    start = min(target, INITIAL_CONCURRENCY)
    ramp_work = ramp * (start + target) / 2  # the area under the linear ramp
    if work_seconds >= ramp_work:
        return ramp + (work_seconds - ramp_work) / target
    # Done during the ramp: solve start*t + (rate/2)*t^2 = work for t.
    rate = SCALE_PER_MINUTE / 60
    return (-start + (start**2 + 2 * rate * work_seconds) ** 0.5) / rate
