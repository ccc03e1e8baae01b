"""Where one HTTP response ends, so that the function's connection can outlive the emulator's.

The emulator (werkzeug) answers every request with `Connection: close` and closes its side:
werkzeug cannot drain an unread request body before the next request line, so it never keeps a
connection alive. Lambda's connections to S3 stay alive between requests (botocore's pool
reuses them), and the records count them (`connections`): relayed as they came, `ranged
connections=4` over 24 parts showed 24 connections. So the shaping proxy keeps the function's
side alive and opens a new emulator connection per request: an `Exchange` reads the response's
head, drops the emulator's `Connection` header when the body's end is known (a Content-Length,
or no body: HEAD, 1xx, 204, 304) and counts the body down to that end. A response whose end is
not known that way (chunked, or ended by the close) is relayed as it came, close included.

Written by hand: HTTP parsers (h11, httptools) parse whole messages for a server or a client;
the proxy needs only the head's framing fields on a byte stream it relays untouched otherwise,
with no copy of the body.
"""

HEAD_END = b"\r\n\r\n"
NO_BODY_STATUS = (204, 304)


class Exchange:
    """One request on a function's connection and the emulator's response to it."""

    def __init__(self, request_start: bytes):
        self.head_only = request_start.startswith(b"HEAD ")
        self.keep_alive = False  # the function's connection outlives this response
        self.done = False  # the whole response has been received
        self._head: bytes | None = b""  # the response head read so far; None once it is complete
        self._remaining: int | None = None  # body bytes still to come; None: unknown, up to the close

    def received(self, data: bytes) -> bytes:
        """What to relay to the function of `data`, the next bytes from the emulator."""
        if self._head is None:
            if self._remaining is not None:
                self._remaining -= len(data)
                self.done = self._remaining <= 0
            return data
        self._head += data
        end = self._head.find(HEAD_END)
        if end < 0:
            return b""
        head, rest = self._head[:end + len(HEAD_END)], self._head[end + len(HEAD_END):]
        status, lines = _parse(head)
        if 100 <= status < 200 and status != 101:  # an interim answer (100 Continue): a head follows
            self._head = b""
            return head + self.received(rest)
        self._head = None
        length = _header(lines, b"content-length")
        if self.head_only or status in NO_BODY_STATUS:
            self._remaining = 0
        elif length is not None and _header(lines, b"transfer-encoding") is None:
            self._remaining = int(length)
        if self._remaining is None:
            return head + rest
        self.keep_alive = True
        head = b"\r\n".join(line for line in head.split(b"\r\n") if not line.lower().startswith(b"connection:"))
        return head + self.received(rest)


def _parse(head: bytes) -> tuple[int, list[bytes]]:
    status_line, *lines = head.split(b"\r\n")
    return int(status_line.split()[1]), lines


def _header(lines: list[bytes], name: bytes) -> bytes | None:
    for line in lines:
        key, _, value = line.partition(b":")
        if key.strip().lower() == name:
            return value.strip()
    return None
