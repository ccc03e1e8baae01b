"""Logs: what the handler prints and logs becomes events as on Lambda; PutLogEvents batching;
events that cannot reach the log group fail the run instead of vanishing."""

import calendar
import re
import time
import uuid

import pytest

from fanout.common import aws
from fanout.common.errors import FanoutError
from fanout.local.host import logs as host_logs
from fanout.local.host.logs import LogWriter
from fanout.local.host.output import PHASE_END, OutputReader, record_frame
from tests.harness.host_testing import REGION, START, allow

from .support import messages


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
        """, allowed=[allow("logs:DeleteLogGroup", "*")])
    fn.send([{"seq": 1}])

    with pytest.raises(FanoutError) as failure:
        fn.host()
    assert fn.log_group in str(failure.value) and "\n" not in str(failure.value)


LOGGING = """
import logging, time

logger = logging.getLogger("app")
logger.warning("at import")

def handler(event, context):
    print("first")
    time.sleep(1.5)
    print("second")
    logger.info("dropped: the root level is WARNING")
    logger.warning("careful")
    logging.getLogger().setLevel(logging.INFO)
    logger.info("now shown")
    try:
        raise ValueError("boom")
    except ValueError:
        logger.exception("it failed")
"""
RECORD = re.compile(r"^\[(\w+)\]\t(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)\t([0-9a-f-]*)\t(.*)$", re.DOTALL)


def test_output_and_logging_records_become_events_as_on_lambda(deploy):
    fn = deploy(LOGGING, visibility=5)  # the handler takes 1.5 s: no second receive meanwhile
    fn.send([{"seq": 1}])

    fn.host()

    (events,) = fn.streams().values()
    request_id = next(START.match(m).group(1) for _, m in events if START.match(m))
    stamps = {m: ts for ts, m in events}
    # Each line is stamped when the host reads it, as Lambda's are when they arrive: 1.5 s apart
    # in the handler, at least 1 s apart however late a busy machine lets the host read the first.
    assert stamps["second\n"] - stamps["first\n"] >= 1000
    records = [(ts, *RECORD.match(m).groups()) for ts, m in events if RECORD.match(m)]
    assert [(level, rid, message) for _, level, _, rid, message in records[:3]] == [
        ("WARNING", "", "at import\n"),  # no request yet during init
        ("WARNING", request_id, "careful\n"),
        ("INFO", request_id, "now shown\n"),
    ]
    _, level, _, rid, message = records[3]  # the traceback is part of the same, single event
    assert (level, rid) == ("ERROR", request_id)
    assert message.startswith("it failed\nTraceback (most recent call last):\n")
    assert message.endswith("ValueError: boom")
    assert len(records) == 4 and not any("dropped" in m for _, m in events)
    for ts, _, stamp, _, _ in records:  # the record's own time, in UTC
        seconds = calendar.timegm(time.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S"))
        assert abs(seconds * 1000 + int(stamp[20:23]) - ts) < 1000


def test_aws_lambda_log_level_sets_the_root_level(deploy):
    fn = deploy("import logging\n\ndef handler(event, context):\n    logging.getLogger().debug('detail')\n",
                environment={"AWS_LAMBDA_LOG_LEVEL": "DEBUG"})
    fn.send([{"seq": 1}])

    fn.host()

    assert [m.split("\t")[0] + m.split("\t")[3] for m in messages(fn) if "detail" in m] == ["[DEBUG]detail\n"]


@pytest.mark.parametrize("chunk_size", [1, 7, 4096])
def test_output_reader_reassembles_lines_records_and_the_phase_end(chunk_size):
    stream = (b"plain\n" + record_frame("one\nrecord\n") + b"partial" + record_frame("two")
              + b"stray \0 byte\r\n" + b"no newline" + PHASE_END + b"next\n")
    reader, phase, ends = OutputReader(), {0: [], 1: []}, 0
    for start in range(0, len(stream), chunk_size):
        events, ended = reader.feed(stream[start:start + chunk_size])
        phase[ends] += events
        ends += ended
    phase[ends] += reader.feed(b"")[0]  # what followed the marker in the same read

    assert ends == 1
    assert phase[0] == ["plain\n", "one\nrecord\n", "partial", "two", "stray \0 byte\r\n", "no newline"]
    assert phase[1] == ["next\n"]


def event(size: int, n: int) -> dict:
    return {"timestamp": n, "message": "x" * size}


def test_put_log_events_batches_keep_order_within_the_count_and_size_limits():
    by_count = [event(1, n) for n in range(host_logs.MAX_EVENTS + 1)]
    assert [len(b) for b in host_logs.batches(by_count)] == [host_logs.MAX_EVENTS, 1]

    size = 100_000  # ten fit in 1 MiB with the per-event overhead, an eleventh does not
    by_size = [event(size, n) for n in range(25)]
    batches = list(host_logs.batches(by_size))
    assert [len(b) for b in batches] == [10, 10, 5]
    assert all(sum(len(e["message"]) + host_logs.EVENT_OVERHEAD for e in b) <= host_logs.MAX_BATCH_BYTES
               for b in batches)
    assert [e for b in batches for e in b] == by_size
