"""Log delivery: events that cannot reach the log group fail the run instead of vanishing."""

import time
import uuid

import pytest

from fanout import aws
from fanout.errors import FanoutError
from fanout.host.logs import LogWriter

from .support import REGION


def test_undelivered_events_are_counted_and_reported(emulator):
    logs = aws.client("logs", REGION, emulator)
    group = f"/test/{uuid.uuid4().hex[:8]}"
    writer = LogWriter(logs, group, interval=0.05)
    writer.put("stream", "delivered\n")
    deadline = time.monotonic() + 10
    while not logs.filter_log_events(logGroupName=group)["events"] and time.monotonic() < deadline:
        time.sleep(0.05)
    writer.check()  # nothing lost so far

    logs.delete_log_group(logGroupName=group)
    lost = 3
    for n in range(lost):
        writer.put("stream", f"lost {n}\n")
    writer.close()

    with pytest.raises(FanoutError) as failure:
        writer.check()
    message = str(failure.value)
    assert group in message and "ResourceNotFoundException" in message and f"{lost} log events" in message


def test_a_run_whose_logs_cannot_be_written_fails(deploy):
    fn = deploy("""
        import boto3

        def handler(event, context):
            boto3.client("logs").delete_log_group(logGroupName=context.log_group_name)
            print("this line has nowhere to go")
        """)
    fn.send([{"seq": 1}])

    with pytest.raises(FanoutError) as failure:
        fn.host()
    assert fn.log_group in str(failure.value) and "\n" not in str(failure.value)
