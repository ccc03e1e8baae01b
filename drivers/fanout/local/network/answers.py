"""The emulator's answers to reads of objects, kept by the shaping proxy and given again.

Under load the emulator's handling of each request, not the model, was what the functions
measured; the objects they read do not change while they read them, so the proxy asks the
emulator once per distinct read (keyed by everything in the request that can change the answer)
and gives every identical one the emulator's own answer, byte for byte. A request that may
write drops what is kept of its object. What is kept, what is not, and why by hand:
docs/network-model.md, *Reads answered by the proxy*.
"""

import asyncio
import random
import string
from collections import OrderedDict
from dataclasses import dataclass, field
from email.utils import formatdate

HEAD_END = b"\r\n\r\n"
KEPT_BYTES = 1 << 30
READS = (b"GET", b"HEAD")
KEPT_STATUS = (200, 206)
# Request headers that differ from one request to the next without changing the answer.
PER_REQUEST = (b"authorization", b"x-amz-date", b"amz-sdk-invocation-id", b"amz-sdk-request", b"user-agent",
               b"host", b"connection", b"x-amz-security-token")
DATE, REQUEST_ID = b"date", b"x-amzn-requestid"  # the answer's own per-answer headers
REQUEST_ID_CHARACTERS = string.ascii_letters + string.digits  # moto's request ids: 52 of these


@dataclass(frozen=True)
class Request:
    """A request head, parsed as far as the proxy needs."""

    method: bytes
    host: bytes  # without the port: the endpoints differ only by port
    path: bytes
    query: bytes
    headers: tuple  # (lower-case name, value) in order
    body: int | None  # bytes of body: 0 none, None unknown (chunked)

    @property
    def bucket(self) -> bytes:
        return self.path.lstrip(b"/").split(b"/", 1)[0]

    @property
    def names_object(self) -> bool:
        return b"/" in self.path.lstrip(b"/").rstrip(b"/")

    @property
    def readable(self) -> bool:
        """A read the kept answers may serve: GET or HEAD of an object, no query, no body."""
        return self.method in READS and not self.query and self.names_object and self.body == 0

    @property
    def closes(self) -> bool:
        """It asks the server to close the connection after the answer (`Connection: close`)."""
        return b"close" in (v.lower() for n, v in self.headers if n == b"connection")

    @property
    def caller(self) -> bytes:
        """The access key id that signed it (none unsigned): who asks, which the answer depends
        on once the emulator holds a role's session to its policies (docs/emulator.md, IAM)."""
        authorization = dict(self.headers).get(b"authorization", b"")
        return authorization.partition(b"Credential=")[2].partition(b"/")[0]

    @property
    def key(self) -> tuple:
        """What identifies its answer: method, host name, path, caller and every header but
        PER_REQUEST's."""
        headers = tuple(sorted((n, v) for n, v in self.headers if n not in PER_REQUEST))
        return self.method, self.host, self.path, self.caller, headers


def parse(head: bytes) -> Request:
    """The request in `head` (its request line and headers, up to the blank line)."""
    request_line, *lines = head[:-len(HEAD_END)].split(b"\r\n")
    method, target, _ = request_line.split(b" ", 2)
    path, _, query = target.partition(b"?")
    headers = tuple((name.strip().lower(), value.strip()) for name, _, value in (line.partition(b":") for line in lines))
    fields = dict(headers)
    length = fields.get(b"content-length")
    body = None if b"transfer-encoding" in fields else int(length) if length else 0
    return Request(method, fields.get(b"host", b"").rsplit(b":", 1)[0], path, query, headers, body)


@dataclass
class Answer:
    """One kept answer: its head's lines (the per-answer ones made again each time) and body."""

    lines: list[bytes]
    body: bytes

    def head(self, close: bool = False) -> bytes:
        """The head as the emulator would send it now, with a fresh Date and request id, and
        `Connection: close` when the request asked for the close (`close`)."""
        fresh = []
        for line in self.lines:
            name = line.partition(b":")[0].strip().lower()
            if name == DATE:
                line = b"Date: " + formatdate(usegmt=True).encode()
            elif name == REQUEST_ID:
                line = line.partition(b":")[0] + b": " + "".join(random.choices(REQUEST_ID_CHARACTERS, k=52)).encode()
            fresh.append(line)
        return b"\r\n".join([*fresh, *([b"Connection: close"] if close else [])]) + HEAD_END


@dataclass
class Answers:
    """The kept answers of one proxy, shared by every endpoint (they reach one emulator)."""

    upstream: tuple[str, int]
    budget: int = KEPT_BYTES
    _kept: OrderedDict = field(default_factory=OrderedDict)  # Request.key -> Answer, least recent first
    _size: int = 0
    _asking: dict = field(default_factory=dict)  # Request.key -> the Future of the emulator's answer
    _written: set = field(default_factory=set)  # (host, path) of written objects, (host, bucket) of buckets

    def wrote(self, request: Request) -> None:
        """`request` may write (any method but GET and HEAD): forget its object, or its bucket when
        it names no key or has a query string."""
        if request.names_object and not request.query:
            self._written.add((request.host, request.path))
        else:
            self._written.add((request.host, request.bucket))
        for key in [k for k in self._kept if self._is_written(k[1], k[2])]:
            self._size -= len(self._kept.pop(key).body)

    def servable(self, request: Request) -> bool:
        return request.readable and not self._is_written(request.host, request.path)

    async def answer(self, request: Request, head: bytes) -> Answer | None:
        """The kept answer to `request` (its `head` as the function sent it), asking the emulator
        once for all identical requests; None when the emulator's answer is not one to keep."""
        key = request.key
        if key in self._kept:
            self._kept.move_to_end(key)
            return self._kept[key]
        if key not in self._asking:
            self._asking[key] = asyncio.ensure_future(self._ask(request, head))
        return await asyncio.shield(self._asking[key])

    async def _ask(self, request: Request, head: bytes) -> Answer | None:
        try:
            answer = await fetch(self.upstream, head, request.method == b"HEAD", self.budget)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            answer = None  # the request goes to the emulator itself, which answers or fails as it does
        finally:
            del self._asking[request.key]
        if answer and not self._is_written(request.host, request.path):
            self._keep(request.key, answer)
        return answer

    def _keep(self, key: tuple, answer: Answer) -> None:
        self._kept[key] = answer
        self._size += len(answer.body)
        while self._size > self.budget:
            self._size -= len(self._kept.popitem(last=False)[1].body)

    def _is_written(self, host: bytes, path: bytes) -> bool:
        bucket = path.lstrip(b"/").split(b"/", 1)[0]
        return (host, path) in self._written or (host, bucket) in self._written


async def fetch(upstream: tuple[str, int], head: bytes, head_only: bool, limit: int) -> Answer | None:
    """The emulator's answer to the request `head`, read whole, if it is one to keep: status 200
    or 206 with a Content-Length of at most `limit` bytes; otherwise None."""
    reader, writer = await asyncio.open_connection(*upstream)
    try:
        writer.write(head)
        response = await reader.readuntil(HEAD_END)
        status_line, *lines = response[:-len(HEAD_END)].split(b"\r\n")
        fields = {name.strip().lower(): value.strip() for name, _, value in (line.partition(b":") for line in lines)}
        length = fields.get(b"content-length")
        if int(status_line.split()[1]) not in KEPT_STATUS or length is None or b"transfer-encoding" in fields:
            return None
        size = 0 if head_only else int(length)
        if size > limit:
            return None
        body = await reader.readexactly(size)
        kept = [status_line, *(line for line in lines if line.partition(b":")[0].strip().lower() != b"connection")]
        return Answer(kept, body)
    finally:
        writer.close()
