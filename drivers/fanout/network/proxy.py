"""The shaping proxy: each execution environment's S3 traffic passes through it, shaped by the model.

`Shaper` (used by the function host) starts one proxy process per host and asks it for one
loopback endpoint per environment; the environment's AWS_ENDPOINT_URL_S3 names it. Every TCP
connection to that endpoint is relayed to the emulator, and what comes back is released chunk by
chunk when the connection's cap, the environment's token bucket and the aggregate cap all allow
(fanout.network.limits). The first chunk of each response also waits until the request's
first-byte latency has passed since the request arrived. So a function that opens several
connections (the transfer manager does) gets several connections' worth of per-connection rate
and one environment's bucket, and neither the handler nor its zip changes. Requests (uploads)
are relayed unshaped: the experiment measures downloads. The host's own SQS and Logs traffic
does not pass here.

A model with `addresses` (fanout.network.model) makes each environment's endpoint listen on every
one of those loopback addresses, at one port, behind the host name ENDPOINT_NAME: the host
resolves that name for each environment in rotation (`Shaper.named_endpoint`), and a connection that
arrived on an address of rate factor f is charged 1/f bytes per byte by every limit, so it runs
at f times the rates the model gives it: a known answer for the per-address analysis.

Why its own process: the host process runs a thread per invocation in flight plus pollers and
the log writer; relaying hundreds of MB/s there would compete with them for one GIL. One
asyncio loop in a separate process relays every environment's connections with no threads;
shaped bytes go out in pieces of about 10 ms at the connection's rate (16-256 KiB), so the loop
wakes at most about a hundred times per second per connection. The loop is uvloop's (libuv):
unshaped, it relayed about 10% more than asyncio's own loop on the development machine. Its control channel is a pipe:
one JSON line in (the environment's Shape), one line out (the endpoint's port); it exits when
the pipe closes, so a crashed host never leaves it behind.
"""

import asyncio
import json
import math
import random
import subprocess
import sys
import threading
from collections import deque
from dataclasses import asdict
from urllib.parse import urlsplit

import uvloop

from fanout.errors import FanoutError
from fanout.network.limits import RateLimit, TokenBucket, release
from fanout.network.model import Shape

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
        command = [sys.executable, "-m", "fanout.network.proxy", url.hostname, str(url.port)]
        if seed is not None:
            command.append(str(seed))
        # Its own session: a Ctrl-C in the terminal stops the host gracefully, and the invocations
        # in flight still need the proxy until they end.
        self._process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                         start_new_session=True)
        self._lock = threading.Lock()
        self._named = 0  # endpoints handed out by name, for the rotation

    def endpoint(self, shape: Shape) -> str:
        """A new loopback endpoint shaped by `shape`, by the address of its first listener."""
        port, addresses = self._open(shape)
        return f"http://{addresses[0]}:{port}"

    def named_endpoint(self, shape: Shape) -> tuple[str, dict]:
        """A new endpoint shaped by `shape` for one execution environment: its URL, by
        ENDPOINT_NAME, and how the environment resolves that name (fanout.host.resolver): the
        model's addresses, the list turned by one more for each new environment, as a
        round-robin DNS answers, so that the n-th environment connects to the n-th address."""
        port, addresses = self._open(shape)
        with self._lock:
            turn, self._named = self._named % len(addresses), self._named + 1
        rotated = addresses[turn:] + addresses[:turn]
        return f"http://{ENDPOINT_NAME}:{port}", {"name": ENDPOINT_NAME, "addresses": rotated}

    def _open(self, shape: Shape) -> tuple[str, list[str]]:
        """Ask the proxy for an endpoint: its port, and the addresses it listens on."""
        with self._lock:
            self._process.stdin.write(json.dumps(asdict(shape)) + "\n")
            self._process.stdin.flush()
            port = self._process.stdout.readline().strip()
        if not port.isdigit():
            raise FanoutError(f"the network shaping proxy stopped (exit status {self._process.poll()})")
        return port, list(shape.addresses or [HOST])

    def close(self) -> None:
        self._process.stdin.close()
        try:
            self._process.wait(5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


class Environment:
    """One environment's endpoint: its bucket, and the shape its connections follow."""

    def __init__(self, shape: Shape, upstream: tuple[str, int], aggregate: RateLimit | None, rng: random.Random):
        self.shape, self.upstream, self.rng = shape, upstream, rng
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
        """One request's first-byte latency: fixed, or lognormal with the model's median and p90."""
        median, p90 = self.shape.first_byte_s, self.shape.first_byte_p90_s
        if not median:
            return 0.0
        if not p90 or p90 == median:
            return median
        return self.rng.lognormvariate(math.log(median), math.log(p90 / median) / Z90)


class ClientSide(asyncio.Protocol):
    """A connection from the function, relayed to the emulator; the response comes back shaped.

    Protocols rather than streams: data goes from one transport to the other without the copies
    of a StreamReader's buffer, which matters at hundreds of MB/s on two cores. Response bytes
    are cut into pieces of the environment's chunk size, each written when the limits allow
    (loop.call_at), with the emulator's side paused until the last is out; the function's side
    pausing (its receive buffer full) pauses the emulator's side too. Unshaped bytes (no limit,
    no latency pending) are written as they come.

    The first request's latency counts from the moment the connection was accepted, before the
    proxy connects to the emulator: that connection is the proxy's cost, not the model's."""

    def __init__(self, env: Environment):
        self.env = env
        self.loop = asyncio.get_running_loop()
        cap = env.shape.connection_rate
        self.limits = [RateLimit(cap), *env.limits] if cap else env.limits
        self.cost = 1.0  # limit bytes charged per byte: 1 / the rate factor of the address reached
        self.first_byte_due: float | None = None  # set while a request waits for its response
        self._accepted: float | None = self.loop.time()
        self.transport = self.upstream = None
        self._pending: list[bytes] = []  # request bytes that came before the emulator connection
        self._queue: deque = deque()  # response pieces not yet written
        self._scheduled = 0  # 1 while the head of the queue waits for its release time
        self._blocked = False  # the function's side asked us to stop writing
        self._upstream_done = False

    # -- the function's side
    def connection_made(self, transport) -> None:
        self.transport = transport
        factors = self.env.shape.addresses or {}
        self.cost = 1.0 / factors.get(transport.get_extra_info("sockname")[0], 1.0)
        transport.set_write_buffer_limits(high=max(self.env.chunk, 64 * 1024))
        self.loop.create_task(self._connect())

    async def _connect(self) -> None:
        try:
            await self.loop.create_connection(lambda: UpstreamSide(self), *self.env.upstream)
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
            self.first_byte_due = arrived + self.env.first_byte_delay()
        if self.upstream:
            self.upstream.write(data)
        else:
            self._pending.append(data)

    def eof_received(self):
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
    def response(self, data: bytes) -> None:
        if not self.limits and self.first_byte_due is None and not self._queue:
            self.transport.write(data)
            return
        view = memoryview(data)
        self._queue.extend(view[offset:offset + self.env.chunk] for offset in range(0, len(view), self.env.chunk))
        self._pause_upstream()
        if not self._scheduled:
            self._schedule_next()

    def _schedule_next(self) -> None:
        """Reserve the next piece only when the previous one is out: reserving a whole read ahead
        would book the environment's limits far into the future, and its other connections would
        then wait for all of it instead of sharing the rate piece by piece."""
        at = self.loop.time()
        if self.first_byte_due is not None:
            at, self.first_byte_due = max(at, self.first_byte_due), None
        at = release(self.limits, len(self._queue[0]) * self.cost, at)
        self._scheduled = 1
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

    def response_ended(self) -> None:
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
    """The proxy's connection to the emulator, handing what comes back to its ClientSide."""

    def __init__(self, client: ClientSide):
        self.client = client

    def connection_made(self, transport) -> None:
        self.client.upstream_made(transport)

    def data_received(self, data: bytes) -> None:
        self.client.response(data)

    def eof_received(self):
        return False  # close this side; the client side closes once every piece is out

    def connection_lost(self, exc) -> None:
        self.client.response_ended()


async def _serve(upstream: tuple[str, int], rng: random.Random) -> None:
    loop = asyncio.get_running_loop()
    control = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(control), sys.stdin)
    aggregates: dict[float, RateLimit] = {}
    servers = []
    while line := await control.readline():
        shape = Shape(**json.loads(line))
        rate = shape.aggregate_rate
        aggregate = aggregates.setdefault(rate, RateLimit(rate)) if rate else None
        env = Environment(shape, upstream, aggregate, rng)
        bound = await _listen(lambda env=env: ClientSide(env), list(shape.addresses or [HOST]))
        servers += bound
        sys.stdout.write(f"{bound[0].sockets[0].getsockname()[1]}\n")
        sys.stdout.flush()
    for server in servers:
        server.close()


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
