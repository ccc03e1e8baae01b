"""The pipe between an environment and the host: what the handler writes, as log events.

Plain output is one event per line, a `logging` record one event even over several lines (as
the Lambda runtime's framed channel makes it), and a marker ends each phase so the host knows it
has read everything before END and REPORT. Details: docs/local-backend.md, *The function host*.
"""

import re

RECORD = b"\0fanout-record:"  # then the message's length in bytes, NUL, the UTF-8 message
PHASE_END = b"\0fanout-phase-end\0\n"
_LINE = re.compile(rb"[^\n]*\n|[^\n]+\Z")


def record_frame(message: str) -> bytes:
    data = message.encode("utf-8", "replace")
    return RECORD + str(len(data)).encode() + b"\0" + data


class OutputReader:
    """Turns what is read from the pipe, in chunks of any size, into log event messages."""

    def __init__(self):
        self._pending = b""

    def feed(self, chunk: bytes) -> tuple[list[str], bool]:
        """The events completed by `chunk`, and whether the phase's end marker was reached (what
        follows the marker is kept for the next call)."""
        data, events = self._pending + chunk, []
        while True:
            at = _first_marker(data)
            if at < 0:  # plain output: complete lines now, the rest when its newline comes
                cut = data.rfind(b"\n") + 1
                events += _lines(data[:cut])
                self._pending = data[cut:]
                return events, False
            events += _lines(data[:at])  # output that did not end with a newline is an event too
            data = data[at:]
            if data.startswith(PHASE_END):
                self._pending = data[len(PHASE_END):]
                return events, True
            record = _record(data)
            if record is None:  # the rest of the frame has not been read yet
                self._pending = data
                return events, False
            message, data = record
            events.append(message)


def _first_marker(data: bytes) -> int:
    found = [i for i in (data.find(RECORD), data.find(PHASE_END)) if i >= 0]
    return min(found) if found else -1


def _record(data: bytes) -> tuple[str, bytes] | None:
    """(message, what follows) for the frame `data` starts with; None while it is incomplete."""
    length_end = data.find(b"\0", len(RECORD))
    if length_end < 0:
        return None
    start = length_end + 1
    end = start + int(data[len(RECORD):length_end])
    if len(data) < end:
        return None
    return data[start:end].decode("utf-8", "replace"), data[end:]


def _lines(data: bytes) -> list[str]:
    """One event per line, each keeping its newline as Lambda's events do. Only a newline ends
    a line: a carriage return stays inside the event, as on Lambda."""
    return [line.decode("utf-8", "replace") for line in _LINE.findall(data)]

