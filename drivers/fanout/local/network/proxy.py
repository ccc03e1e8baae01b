"""The shaping proxy: each execution environment's S3 traffic passes through it, shaped by the model.

`Shaper` (used by the function host) runs one proxy process per host and opens one loopback
endpoint per environment; reads of objects are answered from kept answers, everything else is
relayed to the emulator, and bytes are released under the model's limits. How and why, with the
measurements: docs/network-model.md, *How traffic is shaped* and *Endpoint addresses*.
"""

import asyncio
import json
import math
import random
import subprocess
import sys
import threading
from dataclasses import asdict, dataclass
from urllib.parse import urlsplit

import uvloop

from fanout.common.errors import FanoutError
from fanout.local.network import answers
from fanout.local.network.answers import HEAD_END, Answers
from fanout.local.network.commands import AskFirstBytes, Close, Command, Open, SetPathCost, decode, encode
from fanout.local.network.exchange import Exchange
from fanout.local.network.late import FirstBytes
from fanout.local.network.limits import RateLimit, TokenBucket
from fanout.local.network.model import Shape
from fanout.local.network.pacer import Pacer, chunk_size
from fanout.local.network.path import CALIBRATION_WAIT_S, PathCost

HOST = "127.0.0.1"
ENDPOINT_NAME = "s3-fanout-local"  # no dot: moto then reads the bucket from the path, not the name
BIND_ATTEMPTS = 20  # another process may hold the first address's port on the others
Z90 = 1.2815515655446004  # the standard normal's 90th percentile


class Shaper:
    """The host's handle on the proxy process."""

    def __init__(self, upstream: str, seed: int | None = None):
        url = urlsplit(upstream)
        command = [sys.executable, "-m", "fanout.local.network.proxy", str(url.hostname), str(url.port)]
        if seed is not None:
            command.append(str(seed))
        # Its own session: a Ctrl-C in the terminal stops the host gracefully, and the invocations
        # in flight still need the proxy until they end.
        self._process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                         start_new_session=True)
        assert self._process.stdin and self._process.stdout  # both piped
        self._commands, self._replies = self._process.stdin, self._process.stdout
        self._lock = threading.Lock()
        self._path: PathCost | None = None  # what the path adds to a first-byte wait; measured on first need
        self._named = 0  # endpoints handed out by name, for the rotation

    def endpoint(self, shape: Shape) -> str:
        """A new loopback endpoint shaped by `shape`, by the address of its first listener."""
        port, addresses = self._new(shape)
        return f"http://{addresses[0]}:{port}"

    def named_endpoint(self, shape: Shape) -> tuple[str, dict]:
        """A new endpoint shaped by `shape` for one execution environment: its URL, by
        ENDPOINT_NAME, and how the environment resolves that name (fanout.local.host.resolver): the
        model's addresses, the list turned by one more for each new environment, as a
        round-robin DNS answers, so that the n-th environment connects to the n-th address."""
        port, addresses = self._new(shape)
        with self._lock:
            turn, self._named = self._named % len(addresses), self._named + 1
        rotated = addresses[turn:] + addresses[:turn]
        return f"http://{ENDPOINT_NAME}:{port}", {"name": ENDPOINT_NAME, "addresses": rotated}

    @property
    def path_seconds(self) -> float | None:
        """What the proxy now subtracts from each drawn latency (fanout.local.network.path); None
        until an endpoint with a latency opened."""
        return self._path.seconds if self._path else None

    def _new(self, shape: Shape) -> tuple[str, list[str]]:
        """A new endpoint for `shape` (the path's cost measured first, when it has a latency):
        its port, and the addresses it listens on."""
        with self._lock:
            if shape.first_byte_s and self._path is None:
                self._path = self._measure_path()
            return self._open(shape), list(shape.addresses or [HOST])

    def close_endpoint(self, url: str) -> None:
        """Stop listening on an environment's endpoint (the environment was reaped)."""
        with self._lock:
            self._send(Close(_port(url)))

    def first_bytes(self, url: str) -> FirstBytes:
        """The first bytes an environment's endpoint held since the last call (fanout.local.network.late)."""
        with self._lock:
            self._send(AskFirstBytes(_port(url)))
            reply = self._replies.readline()
        if not reply.startswith("{"):
            raise self._stopped()
        return FirstBytes(**json.loads(reply))

    def _open(self, shape: Shape, calibration: bool = False) -> str:
        """The port of a new endpoint the proxy opened for `shape` (`calibration`: its latency
        is waited in full, the path's cost not subtracted)."""
        self._send(Open(shape, calibration))
        port = self._replies.readline().strip()
        if not port.isdigit():
            raise self._stopped()
        return port

    def _send(self, command: Command) -> None:
        try:
            self._commands.write(encode(command) + "\n")
            self._commands.flush()
        except OSError:  # its end of the pipe is gone
            raise self._stopped() from None

    def _stopped(self) -> FanoutError:
        return FanoutError(f"the network shaping proxy stopped (exit status {self._process.poll()})")

    def _measure_path(self) -> PathCost:
        """The path's cost, measured through a calibration endpoint that waits a known time and
        then kept current (fanout.local.network.path), each change sent to the proxy."""
        fixed = Shape(None, None, None, None, None, CALIBRATION_WAIT_S, None)
        path = PathCost(f"http://{HOST}:{self._open(fixed, calibration=True)}", self._publish_path)
        self._send(SetPathCost(path.measure()))
        return path

    def _publish_path(self, seconds: float) -> None:
        with self._lock:
            self._send(SetPathCost(seconds))

    def close(self) -> None:
        if self._path:
            self._path.stop()
        self._commands.close()
        try:
            self._process.wait(5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


def _port(url: str) -> int:
    port = urlsplit(url).port
    if port is None:
        raise ValueError(f"not a proxy endpoint: {url} names no port")
    return port


@dataclass
class Subtracted:
    """The path's cost the proxy subtracts from drawn latencies: one for all environments, kept
    current by the host (fanout.local.network.path); the calibration endpoint's own stays 0."""

    seconds: float = 0.0


class Environment:
    """One environment's endpoint: its limits in each direction, and the shape its connections follow."""

    def __init__(self, shape: Shape, upstream: tuple[str, int], aggregate: RateLimit | None, rng: random.Random,
                 path: Subtracted, kept: Answers | None):
        self.shape, self.upstream, self.rng, self.path, self.kept = shape, upstream, rng, path, kept
        self.first_bytes = FirstBytes()  # since the host last asked
        now = asyncio.get_running_loop().time()
        self.limits = [aggregate] if aggregate else []
        self.limits += _environment_limits(shape.burst_bytes, shape.peak_rate, shape.sustained_rate, now)
        self.upload_limits = _environment_limits(shape.upload_burst_bytes, shape.upload_peak_rate,
                                                 shape.upload_sustained_rate, now)
        self.chunk = chunk_size(shape.connection_rate, shape.peak_rate, shape.sustained_rate)
        self.upload_chunk = chunk_size(shape.upload_connection_rate, shape.upload_peak_rate,
                                       shape.upload_sustained_rate)

    def first_byte_delay(self) -> float:
        """How long the proxy holds one request's first byte: its latency (fixed, or lognormal
        with the model's median and p90) less what the path adds (docs/network-model.md)."""
        median, p90 = self.shape.first_byte_s, self.shape.first_byte_p90_s
        if not median:
            return 0.0
        if not p90 or p90 == median:
            return max(0.0, median - self.path.seconds)
        return max(0.0, self.rng.lognormvariate(math.log(median), math.log(p90 / median) / Z90) - self.path.seconds)


def _environment_limits(burst: float | None, peak: float | None, sustained: float | None, now: float) -> list:
    """One direction's limits shared by an environment's connections: a token bucket, or a rate."""
    if burst:
        assert sustained, "a model with a burst has its refill rate (model.parameters checks)"
        return [TokenBucket(burst, sustained, peak, now)]
    rate = sustained or peak
    return [RateLimit(rate)] if rate else []


class ClientSide(asyncio.Protocol):
    """A connection from the function: each request answered from the kept answers
    (fanout.local.network.answers) or relayed to the emulator, the response shaped on its way back
    and a request's body on its way out (fanout.local.network.pacer).

    Protocols rather than streams: data goes from one transport to the other without the copies
    of a StreamReader's buffer, which matters at hundreds of MB/s on two cores. A pacer holding
    bytes pauses their source (the emulator's side for a response, the function's for a body).

    Each relayed request gets an emulator connection of its own and the function's connection
    stays alive across them (fanout.local.network.exchange: the emulator closes every connection,
    Lambda's stay alive), unless a request asks for the close (`Connection: close`): its answer
    then says so and the connection closes once the answer is delivered, as S3's does. A
    request's latency counts from the moment it was sent in full: its head's arrival (a
    connection's first request: from the moment the connection was accepted) or its body's last
    byte released to the emulator; so the proxy's connection to the emulator and the emulator's
    answer fall inside the latency, not on top of it."""

    def __init__(self, env: Environment):
        self.env = env
        self.loop = asyncio.get_running_loop()
        self.first_byte_due: float | None = None  # set once a request is sent, until its response starts
        self.address_cost = 1.0  # limit bytes charged per byte: 1 / the rate factor of the address reached
        self._request_head = b""  # the relayed request's head, for its region's path
        self._accepted: float | None = self.loop.time()
        # Set by connection_made, which asyncio calls before any other method.
        self.transport: asyncio.Transport
        self.down: Pacer
        self.up: Pacer
        self.upstream: asyncio.Transport | None = None
        self._exchange: Exchange | None = None  # the relayed request in progress and its response
        self._head = b""  # the next request's head so far
        self._collecting = False  # a request head is arriving
        self._answering = False  # a kept answer is being looked up
        self._body_left: int | None = 0  # body bytes of the relayed request still to come; None: unknown
        self._pending: list[bytes] = []  # request bytes that came before the emulator connection
        self._reading_paused = False
        self._upstream_done = False  # the last response: the emulator closed, or the request asked to close

    # -- the function's side
    def connection_made(self, transport) -> None:
        self.transport = transport
        factors = self.env.shape.addresses or {}
        cost = self.address_cost = 1.0 / factors.get(transport.get_extra_info("sockname")[0], 1.0)
        shape = self.env.shape
        self.down = Pacer(shape.connection_rate, self.env.limits, self.env.chunk, transport.write,
                          self._upstream_paused, cost)
        self.up = Pacer(shape.upload_connection_rate, self.env.upload_limits, self.env.upload_chunk,
                        self._to_upstream, self._body_paused, cost)
        transport.set_write_buffer_limits(high=max(self.env.chunk, 64 * 1024))

    def data_received(self, data: bytes) -> None:
        between = not self._answering and (self._exchange is None or self._exchange.done)
        if not (self._collecting or between):
            self._body(data)
            return
        self._collecting, self._head = True, self._head + data
        end = self._head.find(HEAD_END)
        if end < 0:
            return
        head, rest = self._head[:end + len(HEAD_END)], self._head[end + len(HEAD_END):]
        self._collecting, self._head = False, b""
        arrived, self._accepted = self._accepted or self.loop.time(), None
        request = answers.parse(head)
        kept = self.env.kept
        if kept and not rest and kept.servable(request):
            self._answering = True
            self.loop.create_task(self._answer(kept, request, head, arrived))
            return
        if kept and request.method not in answers.READS:
            kept.wrote(request)
        self._relay(request, head, arrived)
        self._body(rest)

    async def _answer(self, kept: Answers, request: answers.Request, head: bytes, arrived: float) -> None:
        """Answer a read from the kept answers, or relay it when its answer is not one to keep."""
        answer = await kept.answer(request, head)
        self._answering = False
        if self.transport.is_closing():
            return
        if answer is None:
            self._relay(request, head, arrived)
            return
        self.first_byte_due = arrived + self._first_byte_delay(head)
        self._start_response()
        self.down.push(answer.head(close=request.closes))
        self.down.push(answer.body)
        if request.closes:
            self._upstream_done = True
            self._close_when_delivered()

    def _relay(self, request: answers.Request, head: bytes, arrived: float) -> None:
        self._exchange, self.upstream, self._pending = Exchange(head, request.closes), None, [head]
        self._body_left, self._request_head = request.body, head
        if not request.body:  # no body, or one of unknown length: its latency counts from the head
            self.first_byte_due = arrived + self._first_byte_delay(head)
        self.loop.create_task(self._connect(self._exchange))

    def _body(self, data: bytes) -> None:
        if self._body_left:
            self._body_left -= len(data)
        self.up.push(data)

    def _body_paused(self, paused: bool) -> None:
        """The upload pacer holds body bytes (pause the function's side) or has sent them all:
        once the body's last byte is out, the request's latency starts."""
        if paused != self._reading_paused and not self.transport.is_closing():
            self._reading_paused = paused
            (self.transport.pause_reading if paused else self.transport.resume_reading)()
        if not paused and self._body_left is not None and self._body_left <= 0 and self._exchange \
                and not self._exchange.done and self.first_byte_due is None:
            self._body_left = 0
            self.first_byte_due = self.loop.time() + self._first_byte_delay(self._request_head)

    def _first_byte_delay(self, head: bytes) -> float:
        """The model's draw, or the path of the region the request is signed for (model.REGIONS),
        whose rate factor then applies to this request's bytes in both directions."""
        path = self.env.shape.region_path(head)
        self.down.cost = self.up.cost = self.address_cost / path[1] if path else self.address_cost
        return max(0.0, path[0] - self.env.path.seconds) if path else self.env.first_byte_delay()

    async def _connect(self, exchange: Exchange) -> None:
        try:
            await self.loop.create_connection(lambda: UpstreamSide(self, exchange), *self.env.upstream)
        except OSError:
            self.transport.close()

    def upstream_made(self, upstream: asyncio.Transport) -> None:
        self.upstream = upstream
        for data in self._pending:
            upstream.write(data)
        self._pending = []

    def _to_upstream(self, piece: memoryview) -> None:
        if self.upstream:
            self.upstream.write(piece)
        else:
            self._pending.append(bytes(piece))

    def eof_received(self):
        if self._exchange is None or self._exchange.done:
            return False  # between requests: nothing more to relay
        if self.upstream and self.upstream.can_write_eof():
            self.upstream.write_eof()
        return True  # keep the function's side open for the rest of the response

    def connection_lost(self, exc) -> None:
        if self.upstream:
            self.upstream.close()

    def pause_writing(self) -> None:
        self.down.pause()

    def resume_writing(self) -> None:
        self.down.resume()

    # -- the emulator's side
    def response(self, exchange: Exchange, data: bytes) -> None:
        data = exchange.received(data)
        if exchange.done and self.upstream:
            self.upstream.close()  # the response is complete: its emulator connection is done
        if data:
            self._start_response()
            self.down.push(data)

    def _start_response(self) -> None:
        """A response's first bytes are here: hold them until its first byte is due, and count
        whether they came after that (then the function sees the emulator's time, not the model's)."""
        if self.first_byte_due is None:
            return
        if self.env.shape.first_byte_s:
            self.env.first_bytes.requests += 1
            self.env.first_bytes.late += self.loop.time() > self.first_byte_due
        self.down.hold, self.first_byte_due = self.first_byte_due, None

    def response_ended(self, exchange: Exchange) -> None:
        """The emulator closed its side: the function's side closes too, once every piece is
        out, unless the response was complete and its connection is kept alive."""
        if not (exchange.done and exchange.keep_alive):
            self._upstream_done = True
            self._close_when_delivered()

    def _upstream_paused(self, paused: bool) -> None:
        """The response pacer holds bytes (pause the emulator's side) or has written them all."""
        if self.upstream and not self.upstream.is_closing():
            (self.upstream.pause_reading if paused else self.upstream.resume_reading)()
        if not paused:
            self._close_when_delivered()

    def _close_when_delivered(self) -> None:
        if self._upstream_done and self.down.idle:
            self.transport.close()  # after the bytes buffered in it are sent


class UpstreamSide(asyncio.Protocol):
    """The proxy's connection to the emulator for one exchange, handing what comes back to its
    ClientSide."""

    def __init__(self, client: ClientSide, exchange: Exchange):
        self.client, self.exchange = client, exchange

    def connection_made(self, transport) -> None:
        self.client.upstream_made(transport)

    def data_received(self, data: bytes) -> None:
        self.client.response(self.exchange, data)

    def eof_received(self):
        return False  # close this side; the client side closes once every piece is out

    def connection_lost(self, exc) -> None:
        self.client.response_ended(self.exchange)

    def pause_writing(self) -> None:
        self.client.up.pause()

    def resume_writing(self) -> None:
        self.client.up.resume()


async def _serve(upstream: tuple[str, int], rng: random.Random) -> None:
    loop = asyncio.get_running_loop()
    control = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(control), sys.stdin)
    aggregates: dict[float, RateLimit] = {}
    servers: dict[int, list[asyncio.Server]] = {}  # by port: one server per address
    environments: dict[int, Environment] = {}
    path = Subtracted()
    kept = Answers(upstream)
    while line := await control.readline():
        match decode(line):
            case Close(port):
                environments.pop(port)
                for server in servers.pop(port):
                    server.close()
            case SetPathCost(seconds):
                path.seconds = seconds
            case AskFirstBytes(port):
                env = environments[port]
                _reply(json.dumps(asdict(env.first_bytes)))
                env.first_bytes = FirstBytes()
            case Open(shape, calibration):
                # A calibration endpoint has its own: a known wait, the emulator's error answer every time.
                rate = shape.aggregate_rate
                aggregate = aggregates.setdefault(rate, RateLimit(rate)) if rate else None
                env = Environment(shape, upstream, aggregate, rng, Subtracted() if calibration else path,
                                  None if calibration else kept)
                bound = await _listen(lambda env=env: ClientSide(env), list(shape.addresses or [HOST]))
                port = bound[0].sockets[0].getsockname()[1]
                servers[port], environments[port] = bound, env
                _reply(str(port))
    for bound in servers.values():
        for server in bound:
            server.close()


def _reply(line: str) -> None:
    sys.stdout.write(f"{line}\n")
    sys.stdout.flush()


async def _listen(factory, addresses: list[str]) -> list:
    """Servers on every one of `addresses` at one port: the first picks a free port, the others
    take it, again from the start when another process holds it on one of them."""
    loop = asyncio.get_running_loop()
    for _ in range(BIND_ATTEMPTS):
        first = await loop.create_server(factory, addresses[0], 0)
        servers = [first]
        try:
            for address in addresses[1:]:
                servers.append(await loop.create_server(factory, address, first.sockets[0].getsockname()[1]))
            return servers
        except OSError:
            for server in servers:
                server.close()
    raise OSError(f"no port free on all of {', '.join(addresses)} after {BIND_ATTEMPTS} attempts")


def main(argv=None) -> None:
    host, port, *seed = argv or sys.argv[1:]
    uvloop.run(_serve((host, int(port)), random.Random(int(seed[0]) if seed else None)))


if __name__ == "__main__":
    main()
