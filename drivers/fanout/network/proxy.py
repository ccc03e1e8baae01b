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

Why its own process: the host process runs a thread per invocation in flight plus pollers and
the log writer; relaying hundreds of MB/s there would compete with them for one GIL. One
asyncio loop in a separate process relays every environment's connections with no threads;
chunks are read in pieces of about 10 ms at the connection's rate (16-256 KiB), so the loop
wakes at most a few hundred times per second per connection. Its control channel is a pipe:
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
from dataclasses import asdict
from urllib.parse import urlsplit

from fanout.errors import FanoutError
from fanout.network.limits import RateLimit, TokenBucket, release
from fanout.network.model import Shape

HOST = "127.0.0.1"
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

    def endpoint(self, shape: Shape) -> str:
        """A new loopback endpoint shaped by `shape` (one per execution environment)."""
        with self._lock:
            self._process.stdin.write(json.dumps(asdict(shape)) + "\n")
            self._process.stdin.flush()
            port = self._process.stdout.readline().strip()
        if not port.isdigit():
            raise FanoutError(f"the network shaping proxy stopped (exit status {self._process.poll()})")
        return f"http://{HOST}:{port}"

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

    async def serve(self, client_reader, client_writer) -> None:
        connection = Connection(self)
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            client_writer.close()
            return
        try:
            await asyncio.gather(connection.requests(client_reader, up_writer),
                                 connection.responses(up_reader, client_writer))
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            for writer in (up_writer, client_writer):
                writer.close()


class Connection:
    """One relayed TCP connection: its own rate cap and the request waiting for its first byte.

    The first request's latency counts from the moment the connection was accepted, before the
    proxy connects to the emulator: that connection is the proxy's cost, not the model's."""

    def __init__(self, env: Environment):
        self.env = env
        self.loop = asyncio.get_running_loop()
        cap = env.shape.connection_rate
        self.limits = [RateLimit(cap), *env.limits] if cap else env.limits
        self.first_byte_due: float | None = None  # set while a request waits for its response
        self._accepted: float | None = self.loop.time()

    async def requests(self, reader, writer) -> None:
        while data := await reader.read(CHUNK_RANGE[1]):
            if self.first_byte_due is None:
                arrived, self._accepted = self._accepted or self.loop.time(), None
                self.first_byte_due = arrived + self.env.first_byte_delay()
            writer.write(data)
            await writer.drain()
        writer.write_eof()

    async def responses(self, reader, writer) -> None:
        writer.transport.set_write_buffer_limits(high=self.env.chunk)
        while data := await reader.read(self.env.chunk):
            at = self.loop.time()
            if self.first_byte_due is not None:
                at, self.first_byte_due = max(at, self.first_byte_due), None
            at = release(self.limits, len(data), at)
            delay = at - self.loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            writer.write(data)
            await writer.drain()
        writer.close()


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
        server = await asyncio.start_server(env.serve, HOST, 0, limit=CHUNK_RANGE[1])
        servers.append(server)
        sys.stdout.write(f"{server.sockets[0].getsockname()[1]}\n")
        sys.stdout.flush()
    for server in servers:
        server.close()


def main(argv=None) -> None:
    host, port, *seed = argv or sys.argv[1:]
    asyncio.run(_serve((host, int(port)), random.Random(int(seed[0]) if seed else None)))


if __name__ == "__main__":
    main()
