"""Where one HTTP response ends, so that the function's connection can outlive the emulator's.

The emulator closes every connection after one answer; Lambda's stay alive. An `Exchange` reads
a response's head, drops the emulator's `Connection` header when the body's end is known and
counts the body down to it, unless the request asked for the close itself (`Connection: close`,
which S3 honours as HTTP/1.1 requires): then the close stays (docs/network-model.md, *Connections
stay alive*). Written by hand: HTTP parsers (h11, httptools) parse whole messages; the proxy
needs only the head's framing fields on a byte stream it otherwise relays untouched.
"""

HEAD_END = b"\r\n\r\n"
NO_BODY_STATUS = (204, 304)


class Exchange:
    """One request on a function's connection and the emulator's response to it."""

    def __init__(self, request_start: bytes, closing: bool = False):
        self.head_only = request_start.startswith(b"HEAD ")
        self.closing = closing  # the request asked the server to close the connection after its answer
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
        self.keep_alive = not self.closing
        return with_connection(head, self.closing) + self.received(rest)


def with_connection(head: bytes, close: bool) -> bytes:
    """A response `head` without its `Connection` header, and with `Connection: close` if `close`."""
    lines = [line for line in head[:-len(HEAD_END)].split(b"\r\n") if not line.lower().startswith(b"connection:")]
    return b"\r\n".join([*lines, *([b"Connection: close"] if close else [])]) + HEAD_END


def _parse(head: bytes) -> tuple[int, list[bytes]]:
    status_line, *lines = head.split(b"\r\n")
    return int(status_line.split()[1]), lines


def _header(lines: list[bytes], name: bytes) -> bytes | None:
    for line in lines:
        key, _, value = line.partition(b":")
        if key.strip().lower() == name:
            return value.strip()
    return None
