"""How soon the emulator sends the first byte of a GetObject of a 16 MiB object, and its last:
the patched emulator (ours) against stock moto (`--stock`, the baseline), both serving at once
on loopback, with no network model. Two GETs: the whole object, and its first 8 MiB (a part
of download_file, which `make demo` runs).

Time to first byte: from the request's send (one small write) to the response's first byte received
(its status line) on a fresh connection, as the shaping proxy sees it; time to last byte: to the
response's end (its Content-Length). Idle: one GET at a time. Loaded: LOADED GETs of the object
sent at once, each timed (the median of them is the repeat's figure). Each repeat measures both
servers, alternating which goes first. Printed: the median over repeats in ms of each side and
the paired ratio baseline / ours (above 1: ours answers sooner).
BENCH_FIRST_BYTE_REPEATS (default 9). Measured on a shared 2-core machine: other work adds noise.
"""

import os
import socket
import statistics
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from itertools import product
from urllib.parse import urlsplit

from bench._emulator import serve
from bench._ratios import best_of, interleaved, verdict
from fanout.common import aws

SIZE = 16 * 2**20
PART = 8 * 2**20
# GET -> (Range header, the answer's status line and length)
GETS = {"whole": ("", b"HTTP/1.1 200", SIZE), "8 MiB range": (f"bytes=0-{PART - 1}", b"HTTP/1.1 206", PART)}
LOADED = 8
REPEATS = int(os.environ.get("BENCH_FIRST_BYTE_REPEATS", "9"))
TARGET = 1.5  # baseline first byte / ours, idle and loaded


def main() -> None:
    with serve() as patched, serve("--stock") as stock:
        ours, baseline = upload(patched), upload(stock)
        loads = (("idle", 1), (f"{LOADED} at once", LOADED))
        for (get_name, get), (label, parallel) in product(GETS.items(), loads):
            mine, theirs = interleaved(partial(timed, ours, get, parallel), partial(timed, baseline, get, parallel), REPEATS)
            for name, index in (("first byte", 0), ("last byte", 1)):
                # Speeds (1/s), so that a ratio above 1 means ours is sooner.
                faster = [1 / m[index] for m in mine], [1 / t[index] for t in theirs]
                print(f"emulator {name}, GetObject {get_name} of {SIZE // 2**20} MiB, {label}: "
                      f"ours {statistics.median(m[index] for m in mine) * 1000:.1f} ms, "
                      f"stock {statistics.median(t[index] for t in theirs) * 1000:.1f} ms; "
                      f"stock / ours {verdict(*faster, TARGET if index == 0 else 0.95, 'x', name=f'{name}, {get_name}, {label}: stock / ours')}; "
                      f"{best_of(*faster, 'x')}")


def upload(endpoint: str) -> str:
    """A pre-signed URL of a fresh SIZE-byte object in the emulator at `endpoint`: a plain GET of
    it is authorized as the SDK's would be, with no client library between the clock and the socket."""
    s3 = aws.client("s3", "us-east-1", endpoint)
    bucket = f"bench-first-byte-{uuid.uuid4().hex[:8]}"
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="object", Body=os.urandom(SIZE))
    return s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "object"})


def timed(url: str, get: tuple, parallel: int) -> tuple[float, float]:
    """Median (first byte, last byte) seconds of `parallel` GETs (a GETS value) of `url` sent at once."""
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        results = list(pool.map(lambda _: first_and_last(url, *get), range(parallel)))
    return statistics.median(r[0] for r in results), statistics.median(r[1] for r in results)


def first_and_last(url: str, header: str, status: bytes, length: int) -> tuple[float, float]:
    """(first byte, last byte) seconds of one GET of `url` with Range `header` (if any), from
    the request sent; checks the answer's `status` and `length`."""
    parts = urlsplit(url)
    ranged = f"Range: {header}\r\n" if header else ""
    request = (f"GET {parts.path}?{parts.query} HTTP/1.1\r\nHost: {parts.netloc}\r\n{ranged}"
               "Connection: close\r\n\r\n").encode()  # fmt: skip
    with socket.create_connection((parts.hostname, parts.port)) as connection:
        sent = time.perf_counter()  # before the send: the server may answer before it returns
        connection.sendall(request)
        chunks = [connection.recv(65536)]
        first = time.perf_counter() - sent
        while chunks[-1]:
            chunks.append(connection.recv(1 << 20))
        last = time.perf_counter() - sent
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    if not head.startswith(status) or len(body) != length:
        raise RuntimeError(f"GET answered {head.splitlines()[0]!r} with {len(body)} of {length} bytes")
    return first, last


if __name__ == "__main__":
    main()
