"""CloudWatch Logs through the emulator: the local host writes with PutLogEvents and the
Insights evaluator reads back with paginated FilterLogEvents."""

import json
import time

STREAMS = 4
EVENTS_PER_STREAM = 3000
BATCH = 500
PAGE = 5000


def test_filter_pages_return_every_event_exactly_once(client, unique):
    logs = client("logs")
    group = f"/aws/lambda/{unique}"
    logs.create_log_group(logGroupName=group)
    start = int(time.time() * 1000)
    for stream in range(STREAMS):
        logs.create_log_stream(logGroupName=group, logStreamName=f"s{stream}")
        for first in range(0, EVENTS_PER_STREAM, BATCH):
            events = [
                {"timestamp": start + seq, "message": json.dumps({"stream": stream, "seq": seq})}
                for seq in range(first, first + BATCH)
            ]
            logs.put_log_events(logGroupName=group, logStreamName=f"s{stream}", logEvents=events)

    seen, pages, token = [], 0, {}
    while True:
        page = logs.filter_log_events(
            logGroupName=group, startTime=start, endTime=start + EVENTS_PER_STREAM, limit=PAGE, **token
        )
        seen += [json.loads(event["message"]) for event in page["events"]]
        pages += 1
        if "nextToken" not in page:
            break
        token = {"nextToken": page["nextToken"]}

    expected = {(stream, seq) for stream in range(STREAMS) for seq in range(EVENTS_PER_STREAM)}
    assert len(seen) == len(expected)
    assert {(event["stream"], event["seq"]) for event in seen} == expected
    assert pages == -(-len(expected) // PAGE)
