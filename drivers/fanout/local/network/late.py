"""First bytes the model could not hold: the proxy's count, the host's log line, the report's sum.

When the emulator's answer takes longer than the drawn first-byte latency, the function sees the
emulator's time: the report's first-byte estimate is then an upper bound, and says so with these
counts. Details: docs/network-model.md, *When the emulator is slower than the latency*.
"""

import json
from collections.abc import Iterable
from dataclasses import dataclass

EVENT = "network-first-bytes"


@dataclass
class FirstBytes:
    """Of the responses an endpoint held for a first-byte latency (`requests`), those whose
    emulator answer came after the drawn latency had passed (`late`)."""

    requests: int = 0
    late: int = 0


def line(request_id: str, counts: FirstBytes) -> str:
    """The host's log line for one invocation's requests."""
    return json.dumps({"event": EVENT, "request_id": request_id, "requests": counts.requests,
                       "late": counts.late}) + "\n"


def totals(events: Iterable[dict], request_ids: set[str]) -> FirstBytes:
    """The counts of the invocations `request_ids` in log events ({"message": ...})."""
    total = FirstBytes()
    for event in events:
        if EVENT not in event["message"]:
            continue
        try:
            fields = json.loads(event["message"])
        except ValueError:  # the function's own text that names it
            continue
        if isinstance(fields, dict) and fields.get("event") == EVENT and fields.get("request_id") in request_ids:
            total.requests += fields["requests"]
            total.late += fields["late"]
    return total
