"""The function's records of one run, as read from the log group's events: every workload's
records and errors, found by the envelope's run_id (docs/workloads.md), for any report.
"""

import json


def run_records(events: list[dict], run_id: str) -> list[dict]:
    """The function's records of one run (every workload's and errors), in seq order."""
    records = [record for _, record in run_events(events, run_id)]
    return sorted(records, key=lambda r: (r.get("seq", -1), r.get("event", ""), r.get("receive_count", 0)))


def run_events(events: list[dict], run_id: str) -> list[tuple[int, dict]]:
    """(log timestamp in ms, record) of each record the function logged for the run."""
    found = []
    for event in events:
        try:
            record = json.loads(event["message"])
        except (ValueError, TypeError):
            continue  # START/END/REPORT and other plain-text lines
        if isinstance(record, dict) and record.get("run_id") == run_id and isinstance(record.get("event"), str):
            found.append((event["timestamp"], record))
    return found
