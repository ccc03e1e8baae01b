"""Crashes, timeouts and init failures are logged as Lambda logs them, and the saved query
platform-errors (which wait and report run) counts each kind as often as the host saw it."""

import pytest

from fanout import insights
from fanout.common.errors import FanoutError

FAULTY = """
import json, os, time

def handler(event, context):
    for record in event["Records"]:
        kind = json.loads(record["body"])["kind"]
        if kind == "crash":
            os._exit(9)
        if kind == "hang":
            time.sleep(30)
        print(json.dumps({"done": kind}))
"""


def platform_errors(fn) -> dict[str, int]:
    events = [{"timestamp": ts, "message": m, "logStreamName": stream}
              for stream, stream_events in fn.streams().items() for ts, m in stream_events]
    rows = insights.evaluate(insights.load_query("platform-errors"), events).rows
    return {row["error_type"]: row["errors"] for row in rows}


def test_crashes_and_timeouts_are_counted_by_kind(deploy):
    kinds = ["ok"] * 5 + ["crash"] * 3 + ["hang"] * 2
    fn = deploy(FAULTY, timeout=1, reserved=4, visibility=1, max_receive=1)
    fn.send([{"kind": kind} for kind in kinds])
    summary = fn.host()
    assert summary.timeouts == kinds.count("hang")
    assert summary.errors == kinds.count("crash")
    assert platform_errors(fn) == {"Runtime.ExitError": kinds.count("crash"), "Task timed out": kinds.count("hang")}


def test_an_init_failure_is_counted(deploy):
    fn = deploy("import no_such_module\n")
    fn.send([{"kind": "ok"}])
    with pytest.raises(FanoutError, match="failed to initialise"):
        fn.host()
    # One init failure; on a machine loaded enough to exceed the init timeout, as that kind.
    assert platform_errors(fn) in ({"Runtime.ImportModuleError": 1}, {"Runtime.InitTimeout": 1})
