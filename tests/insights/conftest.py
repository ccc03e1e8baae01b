import random

import pytest

from .support import BASE_MS, download_record, error_record, event, json_event, report_line


@pytest.fixture(scope="session")
def sample():
    """A run's worth of log events: START/END/REPORT lines, download and error records.

    Returns (events, downloads, reports): the records and REPORT values the events were made from,
    so tests compute expectations from them independently of the evaluator.
    """
    rng = random.Random(20240501)
    events, downloads, reports = [], [], []
    for seq in range(400):
        ts = BASE_MS + seq * 37
        request = f"req-{seq}"
        events.append(event(f"START RequestId: {request} Version: $LATEST\n", ts))
        if seq % 40 == 39:
            events.append(json_event(error_record(seq, rng.choice(("ClientError", "InjectedFailure")), f"boom {seq}"), ts + 1))
        else:
            record = download_record(rng, seq)
            downloads.append((ts + 1, record))
            events.append(json_event(record, ts + 1))
        events.append(event(f"END RequestId: {request}\n", ts + 2))
        report = dict(request=request, duration=rng.uniform(50, 5000), billed=0, memory=rng.choice((1024, 2048)),
                      used=rng.randint(60, 300), init=rng.uniform(100, 400) if seq % 9 == 0 else None)  # fmt: skip
        report["duration"] = round(report["duration"], 2)
        report["billed"] = int(report["duration"]) + 1
        reports.append(report)
        events.append(event(report_line(request, report["duration"], report["billed"], report["memory"],
                                        report["used"], report["init"]), ts + 3))  # fmt: skip
    return events, downloads, reports
