"""The function's records of one run, as read from the log group's events: every workload's
records and errors, found by the envelope's run_id (docs/workloads.md), for any report.
"""

import json
from typing import TYPE_CHECKING, TypeGuard

from fanout.common import function_modules

if TYPE_CHECKING:  # the same type, read by mypy from the function's folder on its path
    from envelope import Record
else:
    Record = function_modules.load("envelope").Record


def run_records(events: list[dict], run_id: str) -> list[dict]:
    """The function's records of one run (every workload's and errors), in seq order; plain
    dicts for the workloads' reports, which read their own keys beside the envelope's."""
    records = [dict(record) for _, record in run_events(events, run_id)]
    return sorted(records, key=lambda r: (r.get("seq", -1), r.get("event", ""), r.get("receive_count", 0)))


def run_events(events: list[dict], run_id: str) -> list[tuple[int, Record]]:
    """(log timestamp in ms, record) of each record the function logged for the run; the
    other lines (the runtime's START/END/REPORT, plain text) are left out."""
    found = []
    for event in events:
        try:
            record = json.loads(event["message"])
        except (ValueError, TypeError):
            continue
        if is_record(record) and record["run_id"] == run_id:
            found.append((event["timestamp"], record))
    return found


def is_record(logged: object) -> TypeGuard[Record]:
    """Whether a logged JSON value is one of the function's records (envelope.Record): an object
    with a run_id and an `event`. Only those two are checked: records from before `workload`
    and `outcome` lack them, and an error record of a message whose seq was invalid lacks its
    seq (hence the .get of run_records)."""
    return isinstance(logged, dict) and isinstance(logged.get("run_id"), str) and isinstance(logged.get("event"), str)
