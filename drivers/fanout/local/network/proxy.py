"""The shaping proxy: each execution environment's S3 traffic passes through it, shaped by the model.

`Shaper` (used by the function host) starts one proxy process per host and asks it for one
loopback endpoint per environment; the environment's AWS_ENDPOINT_URL_S3 names it. Every TCP
connection to that endpoint is relayed to the emulator, and what comes back is released chunk by
chunk when the connection's cap, the environment's token bucket and the aggregate cap all allow
(fanout.local.network.limits). The first chunk of each response also waits until the request's
first-byte latency, less what the path itself adds (below), has passed since the request
arrived. So a function that opens several
connections (the transfer manager does) gets several connections' worth of per-connection rate
and one environment's bucket, and neither the handler nor its zip changes. Requests (uploads)
are relayed unshaped: the experiment measures downloads. The host's own SQS and Logs traffic
does not pass here.

A model with `addresses` (fanout.local.network.model) makes each environment's endpoint listen on every
one of those loopback addresses, at one port, behind the host name ENDPOINT_NAME: the host
resolves that name for each environment in rotation (`Shaper.named_endpoint`), and a connection that
arrived on an address of rate factor f is charged 1/f bytes per byte by every limit, so it runs
at f times the rates the model gives it: a known answer for the per-address analysis.

Why its own process: the host process runs a thread per invocation in flight plus pollers and
the log writer; relaying hundreds of MB/s there would compete with them for one GIL. One
asyncio loop in a separate process relays every environment's connections with no threads;
shaped bytes go out in pieces of about 10 ms at the connection's rate (16-256 KiB), so the loop
wakes at most about a hundred times per second per connection. The loop is uvloop's (libuv):
unshaped, it relayed about 10% more than asyncio's own loop on the development machine. Its
control channel is a pipe of JSON lines: {"shape": ..., "calibration": bool} opens an endpoint
(one line back: its port); {"close": port} closes one (its environment was reaped);
{"path_seconds": s} sets the path's cost subtracted from every latency; {"first_bytes": port}
answers with that endpoint's FirstBytes since the last ask (fanout.local.network.late). It exits when
the pipe closes, so a crashed host never leaves it behind.

First-byte latency: the model's figure is what the function sees, from sending a request to
having its response headers (the published ~20 ms p90 is such a client-side figure). The drawn
latency counts from the request's arrival here (a connection's first request: from the accept),
before the emulator is even asked, so the emulator's own time to answer is absorbed inside it;
the first byte is held only for what remains. The path adds to that wait what the proxy cannot
see: the function's botocore sending and parsing, the relay, the loop's millisecond timers; so
the proxy subtracts that addition, which the host keeps measuring while it runs
(fanout.local.network.path). What the proxy cannot do is release a first byte before the emulator
sends it: an answer slower than the drawn latency (the emulator's handling of a request on a
busy machine) is counted late per environment, and the host logs the counts for the report
(fanout.local.network.late).
"""

import asyncio
import json
import math
import random
import subprocess
import sys
import threading
from collections import deque
from dataclasses import asdict, dataclass
from urllib.parse import urlsplit

import uvloop

from fanout.common.errors import FanoutError
from fanout.local.network.exchange import Exchange
from fanout.local.network.late import FirstBytes
from fanout.local.network.limits import RateLimit, TokenBucket, release
from fanout.local.network.model import Shape
from fanout.local.network.path import CALIBRATION_WAIT_S, PathCost

HOST = "127.0.0.1"
ENDPOINT_NAME = "s3-fanout-local"  # no dot: moto then reads the bucket from the path, not the name
BIND_ATTEMPTS = 20  # another process may hold the first address's port on the others
CHUNK_SECONDS = 0.01
CHUNK_RANGE = (16 * 1024, 256 * 1024)
Z90 = 1.2815515655446004  # the standard normal's 90th percentile


class Shaper:
    """The host's handle on the proxy process."""

    def __init__(self, upstream: str, seed: int | None = None):
        url = urlsplit(upstream)
        command = [sys.executable, "-m", "fanout.local.network.proxy", url.hostname, str(url.port)]
        if seed is not None:
            command.append(str(seed))
        # Its own session: a Ctrl-C in the terminal stops the host gracefully, and the invocations
        # in flight still need the proxy until they end.
        self._process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                         start_new_session=True)
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
            self._send({"close": urlsplit(url).port})

    def first_bytes(self, url: str) -> FirstBytes:
        """The first bytes an environment's endpoint held since the last call (fanout.local.network.late)."""
        with self._lock:
            self._send({"first_bytes": urlsplit(url).port})
            reply = self._process.stdout.readline()
        if not reply.startswith("{"):
            raise self._stopped()
        return FirstBytes(**json.loads(reply))

    def _open(self, shape: Shape, calibration: bool = False) -> str:
        """The port of a new endpoint the proxy opened for `shape` (`calibration`: its latency
        is waited in full, the path's cost not subtracted)."""
        self._send({"shape": asdict(shape), "calibration": calibration})
        port = self._process.stdout.readline().strip()
        if not port.isdigit():
            raise self._stopped()
        return port

    def _send(self, command: dict) -> None:
        try:
            self._process.stdin.write(json.dumps(command) + "\n")
            self._process.stdin.flush()
        except OSError:  # its end of the pipe is gone
            raise self._stopped() from None

    def _stopped(self) -> FanoutError:
        return FanoutError(f"the network shaping proxy stopped (exit status {self._process.poll()})")

    def _measure_path(self) -> PathCost:
        """The path's cost, measured through a calibration endpoint that waits a known time and
        then kept current (fanout.local.network.path), each change sent to the proxy."""
        fixed = Shape(None, None, None, None, None, CALIBRATION_WAIT_S, None)
        path = PathCost(f"http://{HOST}:{self._open(fixed, calibration=True)}", self._publish_path)
        self._send({"path_seconds": path.measure()})
        return path

    def _publish_path(self, seconds: float) -> None:
        with self._lock:
            self._send({"path_seconds": seconds})

    def close(self) -> None:
        if self._path:
            self._path.stop()
        self._process.stdin.close()
        try:
            self._process.wait(5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


@dataclass
class Subtracted:
    """The path's cost the proxy subtracts from drawn latencies: one for all environments, kept
    current by the host (fanout.local.network.path); the calibration endpoint's own stays 0."""

    seconds: float = 0.0


class Environment:
    """One environment's endpoint: its bucket, and the shape its connections follow."""

    def __init__(self, shape: Shape, upstream: tuple[str, int], aggregate: RateLimit | None, rng: random.Random,
                 path: Subtracted):
        self.shape, self.upstream, self.rng, self.path = shape, upstream, rng, path
        self.first_bytes = FirstBytes()  # since the host last asked
        now = asyncio.get_running_loop().time()
        self.limits = [aggregate] if aggregate else []
        if shape.burst_bytes:
            self.limits.append(TokenBucket(shape.burst_bytes, shape.sustained_rate, shape.peak_rate, now))
        else:
            rate = shape.sustained_rate or shape.peak_rate
            self.limits += [RateLimit(rate)] if rate else []
        slowest = min(r for r in (shape.connection_rate, shape.peak_rate, shape.sustained_rate, math.inf) if r)
        self.chunk = int(min(max(slowest * CHUNK_SECONDS, CHUNK_RANGE[0]), CHUNK_RANGE[1]))

    def first_byte_delay(self) -> float:
        """How long the proxy holds one request's first byte: its latency (fixed, or lognormal
        with the model's median and p90) less what the path adds (see the module docstring)."""
        median, p90 = self.shape.first_byte_s, self.shape.first_byte_p90_s
        if not median:
            return 0.0
        if not p90 or p90 == median:
            return max(0.0, median - self.path.seconds)
        return max(0.0, self.rng.lognormvariate(math.log(median), math.log(p90 / median) / Z90) - self.path.seconds)


class ClientSide(asyncio.Protocol):
    """A connection from the function, relayed to the emulator; the response comes back shaped.

    Protocols rather than streams: data goes from one transport to the other without the copies
    of a StreamReader's buffer, which matters at hundreds of MB/s on two cores. Response bytes
    are cut into pieces of the environment's chunk size, each written when the limits allow
    (loop.call_at), with the emulator's side paused until the last is out; the function's side
    pausing (its receive buffer full) pauses the emulator's side too. Unshaped bytes (no limit,
    no latency pending) are written as they come.

    Each request gets an emulator connection of its own and the function's connection stays
    alive across them (fanout.local.network.exchange: the emulator closes every connection, Lambda's
    stay alive). A request's latency counts from its arrival (a connection's first request:
    from the moment the connection was accepted), before the proxy connects to the emulator:
    that connection is the proxy's cost, not the model's."""

    def __init__(self, env: Environment):
        self.env = env
        self.loop = asyncio.get_running_loop()
        cap = env.shape.connection_rate
        self.cap = RateLimit(cap) if cap else None  # this connection's own; env.limits are shared
        self.limits = [self.cap, *env.limits] if cap else env.limits
        self.address_cost = 1.0  # limit bytes charged per byte: 1 / the rate factor of the address reached
        self.cost = 1.0  # the same for the request in progress, its region's factor included
        self.first_byte_due: float | None = None  # set while a request waits for its response
        self._accepted: float | None = self.loop.time()
        self.transport = self.upstream = None
        self._exchange: Exchange | None = None  # the request in progress and its response
        self._pending: list[bytes] = []  # request bytes that came before the emulator connection
        self._queue: deque = deque()  # response pieces not yet written
        self._scheduled = 0  # 1 while the head of the queue waits for its release time
        self._blocked = False  # the function's side asked us to stop writing
        self._upstream_done = False  # the last response ends with the emulator's close

    # -- the function's side
    def connection_made(self, transport) -> None:
        self.transport = transport
        factors = self.env.shape.addresses or {}
        self.address_cost = self.cost = 1.0 / factors.get(transport.get_extra_info("sockname")[0], 1.0)
        transport.set_write_buffer_limits(high=max(self.env.chunk, 64 * 1024))

    async def _connect(self, exchange: Exchange) -> None:
        try:
            await self.loop.create_connection(lambda: UpstreamSide(self, exchange), *self.env.upstream)
        except OSError:
            self.transport.close()

    def upstream_made(self, upstream) -> None:
        self.upstream = upstream
        for data in self._pending:
            upstream.write(data)
        self._pending = []

    def data_received(self, data: bytes) -> None:
        if self.first_byte_due is None:
            arrived, self._accepted = self._accepted or self.loop.time(), None
            self.first_byte_due = arrived + self._first_byte_delay(data)
        if self._exchange is None or self._exchange.done:  # a new request
            self._exchange, self.upstream = Exchange(data), None
            self.loop.create_task(self._connect(self._exchange))
        if self.upstream:
            self.upstream.write(data)
        else:
            self._pending.append(data)

    def _first_byte_delay(self, request_start: bytes) -> float:
        """The model's draw, or the path of the request's region (model.REGIONS), whose rate
        factor then applies to this request's bytes too."""
        path = self.env.shape.region_path(request_start)
        self.cost = self.address_cost / path[1] if path else self.address_cost
        return max(0.0, path[0] - self.env.path.seconds) if path else self.env.first_byte_delay()

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
        self._blocked = True
        self._pause_upstream()

    def resume_writing(self) -> None:
        self._blocked = False
        self._resume_upstream()

    # -- the emulator's side
    def response(self, exchange: Exchange, data: bytes) -> None:
        data = exchange.received(data)
        if exchange.done and self.upstream:
            self.upstream.close()  # the response is complete: its emulator connection is done
        if not data:
            return
        if not self.limits and self.first_byte_due is None and not self._queue:
            self.transport.write(data)
            return
        view = memoryview(data)
        self._queue.extend(view[offset:offset + self.env.chunk] for offset in range(0, len(view), self.env.chunk))
        self._pause_upstream()
        if not self._scheduled:
            self._schedule_next()

    def _schedule_next(self) -> None:
        """Reserve the next piece only when the previous one is out, and book the environment's
        shared limits only once this connection's own wait (its first-byte latency, its cap) is
        over. The shared limits are booked in time order (a booking is never earlier than the
        one before it), so a piece booked ahead of time would hold back every other connection's
        piece due before it: reserving ahead lost 10-15% of the rate of 2-4 parallel connections."""
        now = self.loop.time()
        due = now
        if self.first_byte_due is not None:
            self._count_first_byte(now)
            due, self.first_byte_due = max(due, self.first_byte_due), None
        if self.cap:
            due = self.cap.earliest(len(self._queue[0]) * self.cost, due)
        self._scheduled = 1
        if due > now:
            self.loop.call_at(due, self._book, due, True)
        else:
            self._book(now)

    def _count_first_byte(self, answered: float) -> None:
        """Count a response held for its latency, and whether the emulator's answer (`answered`,
        its first bytes' arrival: a response's first piece is scheduled as they come) came after
        the first byte was due: then the function sees the emulator's time, not the model's."""
        if self.env.shape.first_byte_s:
            self.env.first_bytes.requests += 1
            self.env.first_bytes.late += answered > self.first_byte_due

    def _book(self, since: float, timer: bool = False) -> None:
        """Charge the next piece to every limit from `since` (the end of the connection's own
        wait: a timer firing late must not push its cap back by the delay, piece after piece),
        and write it when they allow: at once when the timer already got there, so the first
        byte is not a loop iteration later than its latency."""
        at = release(self.limits, len(self._queue[0]) * self.cost, since)
        if timer and at <= self.loop.time():
            self._deliver()
        else:
            self.loop.call_at(at, self._deliver)

    def _deliver(self) -> None:
        self._scheduled = 0
        piece = self._queue.popleft()
        if not self.transport.is_closing():
            self.transport.write(piece)
        if self._queue:
            self._schedule_next()
        else:
            self._resume_upstream()

    def response_ended(self, exchange: Exchange) -> None:
        """The emulator closed its side: the function's side closes too, once every piece is
        out, unless the response was complete and its connection is kept alive."""
        if not (exchange.done and exchange.keep_alive):
            self._upstream_done = True
            self._close_when_delivered()

    def _pause_upstream(self) -> None:
        if self.upstream and not self.upstream.is_closing():
            self.upstream.pause_reading()

    def _resume_upstream(self) -> None:
        if self._scheduled or self._blocked:
            return
        if self.upstream and not self.upstream.is_closing():
            self.upstream.resume_reading()
        self._close_when_delivered()

    def _close_when_delivered(self) -> None:
        if self._upstream_done and not self._queue:
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


async def _serve(upstream: tuple[str, int], rng: random.Random) -> None:
    loop = asyncio.get_running_loop()
    control = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(control), sys.stdin)
    aggregates: dict[float, RateLimit] = {}
    servers: dict[int, list[asyncio.Server]] = {}  # by port: one server per address
    environments: dict[int, Environment] = {}
    path = Subtracted()
    while line := await control.readline():
        command = json.loads(line)
        if "close" in command:
            environments.pop(command["close"])
            for server in servers.pop(command["close"]):
                server.close()
            continue
        if "path_seconds" in command:
            path.seconds = command["path_seconds"]
            continue
        if "first_bytes" in command:
            env = environments[command["first_bytes"]]
            _reply(json.dumps(asdict(env.first_bytes)))
            env.first_bytes = FirstBytes()
            continue
        shape = Shape(**command["shape"])
        rate = shape.aggregate_rate
        aggregate = aggregates.setdefault(rate, RateLimit(rate)) if rate else None
        env = Environment(shape, upstream, aggregate, rng, Subtracted() if command["calibration"] else path)
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
