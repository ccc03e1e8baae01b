"""First bytes the model could not hold: the proxy's count, the host's log line, the report's sum.

The proxy holds each response's first byte until the request's drawn first-byte latency has
passed since the request arrived, so the emulator's own time to answer is absorbed inside the
latency; but it cannot release a byte before the emulator sends it. When the emulator's answer
alone takes longer than the drawn latency (its handling of a request on a busy machine), the
function sees the emulator's time instead: the report's first-byte estimate is then an upper bound, and says so with these counts.

The host writes one line per invocation into the environment's log stream (a platform line of
the local backend; AWS writes none), keyed by the invocation's request id, which the function's
records carry: so the report sums exactly the invocations of its run.
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
