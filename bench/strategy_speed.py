"""The tool's own cost, measured as such: each strategy through the handler's code against the
same SDK calls made bare, with the same connections; both against urllib3 for information.

Ours: measure.measure_message, what the handler calls for each SQS record (parse the body, the
strategy's download with its progress counting, request hooks and record), with a boto3 client
built as the handler builds it, timed from outside the call: all the tool does for a message. Bare: the same boto3 calls on a client of the same config without
the tool's hooks, the bytes dropped: `download_file`, boto3's download_file with the same transfer settings (its file
written, as the handler's is); `stream`, one GetObject read in its chunk size; `ranged`,
its HeadObject, then boto3's own GetObject of each part on as many threads as connections, each
body read in 256 KiB pieces. Target: ours / bare >= 0.95 (the tool costs at most 5%). What is
left between bare boto3 and the wire is the SDK's, not the tool's: urllib3 alone (one GET read
in the same chunk size for `stream`; for `ranged` and `download_file`, as many threads as connections taking ranged
GETs from a shared queue) is printed beside, ours / urllib3 and bare / urllib3, as information.
The urllib3 sockets have the client's timeouts (botocore's 60 s): CPython polls a socket with a
timeout before each recv, which was most of `stream`'s gap while the baseline had none.

All read from one emulator on loopback with no network model: the emulator (one Python process)
and the reader share the machine's cores, so the absolute MB/s say little; the ratios on the same
object in the same run are the figures. Each repeat runs every side, the order rotated, after
one uncounted warm-up run of each; the median of REPEATS ratios is printed, with the ratio of
each side's best run (the least disturbed by other load). The object is uploaded in 8 MiB parts,
as `fanout deploy` uploads it (see measure.CONNECTIONS on checksums). Beside each ratio, the CPU
each side's process spent per download (the emulator's not counted), ours / bare: a figure other
load on a shared machine moves far less than throughput.

ranged used the transfer manager's download_fileobj until its CPU was measured: 0.44-0.64 of
urllib3's throughput and 2.2-2.5x its CPU, because s3transfer turns every 256 KiB read into a task
for its IO thread (strategies._ranged). Read by hand, boto3's GetObject alone reached 0.81-0.85 of
urllib3 at about 100 ms of CPU per 256 MiB, against urllib3's 58 ms: 0.75 ms per request in
botocore's own Python (building, signing, parsing the answer's headers), plus more loopback TCP
and GIL hand-offs in the reading threads; the tool adds about 7 ms (3.4 us per 256 KiB read for
the count, the timeline and the offset writer). The breakdown: docs/strategies.md, "Speed of
the measurement".

The timeline's cost: `stream` through measure_message as above, against the same with the
byte-arrival recording switched off (timeline.Recorder.add doing nothing; the record then
carries an empty series). Target: >= 0.98 (recording costs < 2% of throughput).

Where the time goes (cProfile of three 64 MiB streams, in one quieter run): recv_into of the
socket 74%, the request's send and the emulator's answer most of the rest; Progress (lock,
byte count and timeline) 1%. The stream reads the socket in 256 KiB pieces, as urllib3 does
here, and the object's composite checksum is not validated.
256 MiB by default: a 64 MiB read takes 0.1-0.2 s, shorter than the spikes of other load on a
shared machine, and single ratios then ranged from 0.24 to 2.5 (medians 0.71-1.01 between runs);
at 256 MiB they stayed within 0.94-1.03.
BENCH_STRATEGY_SIZE (default 256MiB) and BENCH_STRATEGY_REPEATS (default 9) change the run.
"""

import io
import json
import os
import queue
import statistics
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import boto3
import urllib3
from boto3.s3.transfer import TransferConfig

from bench._emulator import serve
from bench._ratios import best_of, interleaved, judge, paired_median, verdict
from fanout.common import function_modules
from fanout.common.sizes import format_size, parse_size

SIZE = parse_size(os.environ.get("BENCH_STRATEGY_SIZE", "256MiB"))
REPEATS = int(os.environ.get("BENCH_STRATEGY_REPEATS", "9"))
STRATEGIES = ("download_file", "stream", "ranged connections=4 chunk_size=8MiB")
TARGET = 0.95  # each strategy through the handler / the same SDK calls made bare: within 5%
TIMELINE_TARGET = 0.98
MiB = 2**20
IO_CHUNK = 256 * 1024  # the piece ranged reads (strategies.READ_SIZE, s3transfer's io_chunksize)


def main() -> None:
    sys.path[:0] = [str(folder) for folder in function_modules.folders()]
    import invocation  # the function's own modules, as the zip holds them
    import measure
    import workloads

    config = invocation.client_config(workloads.CONNECTIONS)  # as handler.py builds it
    with serve() as endpoint:
        def client():
            return boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="test",
                                aws_secret_access_key="test", config=config)  # fmt: skip

        s3, bare = client(), client()  # the handler's, instrumented; the bare calls', not
        measure.endpoints.instrument(s3)
        bucket = f"bench-strategy-{uuid.uuid4().hex[:8]}"
        s3.create_bucket(Bucket=bucket)
        # In 8 MiB parts, as `fanout deploy` uploads it: botocore validates no composite checksum.
        parts = TransferConfig(multipart_chunksize=8 * MiB)
        s3.upload_fileobj(io.BytesIO(os.urandom(SIZE)), bucket, "object", Config=parts)
        settings = measure.Settings(bucket=bucket, key="object", expected_size=SIZE,
                                    default_strategy=measure.strategies.parse("stream"))  # fmt: skip
        # Presigned: the emulator checks signatures, and urllib3 alone cannot sign a request.
        url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "object"}, ExpiresIn=3600)
        timeout = urllib3.Timeout(connect=config.connect_timeout, read=config.read_timeout)  # the client's
        print(f"strategy_speed: a {format_size(SIZE)} object from the emulator on loopback, no network model, "
              f"{REPEATS} repeats")  # fmt: skip
        for text in STRATEGIES:
            choice = measure.strategies.parse(text)
            body = json.dumps({"run_id": "bench", "seq": 0, "strategy": text})
            cpu: dict[str, list[float]] = {"handler": [], "bare boto3": [], "urllib3": []}

            def ours():  # timed from outside: the record's building and the rest of the message too
                started = time.perf_counter()
                record = measure.measure_message(s3, settings, body, {})
                assert record["event"] == "download", record
                return SIZE / (time.perf_counter() - started)

            sides = {"handler": _cpu_timed(ours, cpu["handler"]),
                     "bare boto3": _cpu_timed(lambda: _bare_sdk(bare, bucket, choice), cpu["bare boto3"]),
                     "urllib3": _cpu_timed(lambda: _plain_get(url, choice, timeout), cpu["urllib3"])}  # fmt: skip
            _compare(str(choice), sides, cpu)
            if choice.name == "stream":
                _timeline(measure, ours)


def _compare(strategy: str, sides: dict, cpu: dict[str, list[float]]) -> None:
    """The handler against the same SDK calls made bare (judged: within 5%), and both against
    urllib3 (information), each side run once uncounted first: the first request of a client
    pays for its connection and the signer's set-up, which no later download does."""
    for side in sides.values():
        side()
    rates = _rounds(sides, REPEATS)
    handler, bare, plain = rates["handler"], rates["bare boto3"], rates["urllib3"]
    print(
        f"  {strategy}: {verdict(handler, bare, TARGET, name=f'{strategy} / bare boto3, MB/s')}; "
        f"{best_of(handler, bare)}\n"
        f"    medians: handler {statistics.median(handler) / 1e6:,.0f} MB/s, bare boto3 "
        f"{statistics.median(bare) / 1e6:,.0f} MB/s, urllib3 {statistics.median(plain) / 1e6:,.0f} MB/s (decimal)"
    )
    _cpu_ratio(cpu["handler"][1:], cpu["bare boto3"][1:], "handler", "bare boto3")  # without the warm-up runs
    for name, mine in (("handler", handler), ("bare boto3", bare)):
        ratio = judge(f"{strategy}: {name} / urllib3, MB/s", paired_median(mine, plain)).value
        print(f"    {name} / urllib3: median ratio {ratio:.2f} (information); {best_of(mine, plain)}")


def _rounds(sides: dict, repeats: int) -> dict[str, list[float]]:
    """`repeats` results of each side, the order rotated every repeat, so that drift in the
    machine's load hits every side alike."""
    names, rates = list(sides), {name: [] for name in sides}
    for repeat in range(repeats):
        for name in names[repeat % len(names):] + names[:repeat % len(names)]:
            rates[name].append(sides[name]())
    return rates


def _timeline(measure, ours) -> None:
    """`stream` with the byte-arrival timeline recorded against the same with it switched off."""
    ours(), _without_timeline(measure, ours)
    mine, theirs = interleaved(ours, lambda: _without_timeline(measure, ours), REPEATS)
    strategy = f"{measure.strategies.parse('stream')} with the timeline"
    print(f"  {strategy}: {verdict(mine, theirs, TIMELINE_TARGET, name=f'{strategy} / without, MB/s')}; "
          f"{best_of(mine, theirs)}")
    _timeline_share(measure, ours())


def _bare_sdk(s3, bucket: str, choice) -> float:
    """Bytes per second of the SDK calls `choice` makes, made bare on a client without the
    tool's hooks: `download_file`, boto3's own download_file with the strategy's transfer settings
    into a file; `stream`, one GetObject read in its chunk size; `ranged`, boto3's own
    GetObject in ranged parts on as many threads as connections, after the HeadObject the
    strategy sends too. Every byte is dropped."""
    started = time.perf_counter()
    if choice.name == "download_file":
        config = TransferConfig(max_concurrency=choice.value("max_concurrency"),
                                multipart_chunksize=choice.value("chunk_size"), multipart_threshold=choice.value("threshold"))
        with tempfile.TemporaryDirectory() as folder:  # fmt: skip
            s3.download_file(bucket, "object", os.path.join(folder, "object"), Config=config)
            received = os.path.getsize(os.path.join(folder, "object"))
    elif choice.name == "stream":
        body = s3.get_object(Bucket=bucket, Key="object")["Body"]
        received = sum(len(piece) for piece in body.iter_chunks(choice.value("chunk_size")))
    else:
        s3.head_object(Bucket=bucket, Key="object")
        with ThreadPoolExecutor(choice.value("connections")) as pool:
            received = sum(pool.map(lambda byte_range: _read_boto(s3, bucket, byte_range),
                                    _ranges(choice.value("chunk_size"))))  # fmt: skip
    seconds = time.perf_counter() - started
    assert received == SIZE, f"boto3 read {received} of {SIZE} bytes"
    return SIZE / seconds


def _cpu_timed(read, spent: list[float]):
    """`read` (returning bytes per second) with the process CPU of each call appended to `spent`."""

    def timed() -> float:
        started = time.process_time()
        rate = read()
        spent.append(time.process_time() - started)
        return rate

    return timed


def _cpu_ratio(ours: list[float], baseline: list[float], name: str, baseline_name: str) -> None:
    """The median over the repeats of ours / baseline process CPU per download (the same bytes)."""
    ratios = [o / b for o, b in zip(ours, baseline)]
    print(f"    CPU per download: {name} / {baseline_name} median {statistics.median(ratios):.2f}x "
          f"({statistics.median(ours) * 1e3:,.0f} ms against {statistics.median(baseline) * 1e3:,.0f} ms)")


def _timeline_share(measure, rate: float) -> None:
    """The recording's CPU per read over the time one read takes at `rate` bytes/s: a figure the
    load on a shared machine barely moves, next to the throughput ratio it does."""
    reads = 20_000
    recorder = measure.timeline.Recorder(time.monotonic())
    started = time.perf_counter()
    for _ in range(reads):
        now = time.monotonic()
        recorder.add(now, IO_CHUNK, now - IO_CHUNK / rate)  # spread over the read's time at `rate`
    per_read = (time.perf_counter() - started) / reads
    print(f"    timeline recording: {per_read * 1e6:.2f} us per {IO_CHUNK // 1024} KiB read, "
          f"{per_read / (IO_CHUNK / rate):.2%} of the read's time at {rate / 1e6:,.0f} MB/s")


def _without_timeline(measure, download) -> float:
    """`download()` with the timeline's recording switched off."""
    recorder = measure.timeline.Recorder
    add, recorder.add = recorder.add, lambda self, at, count, since=None: None
    try:
        return download()
    finally:
        recorder.add = add


def _plain_get(url: str, choice, timeout: urllib3.Timeout) -> float:
    """Bytes per second of urllib3 alone reading the object as `choice` does, its sockets with
    the client's timeouts: a socket with a timeout polls before every read (see the docstring)."""
    connections = {"ranged": "connections", "download_file": "max_concurrency"}
    connections = choice.value(connections[choice.name]) if choice.name in connections else 1
    pool = urllib3.PoolManager(maxsize=connections, block=True, timeout=timeout)
    received: list[int] = []
    started = time.perf_counter()
    if choice.name == "stream":
        received.append(_read(pool.request("GET", url, preload_content=False), choice.value("chunk_size")))
    else:
        ranges: queue.Queue = queue.Queue()
        for byte_range in _ranges(choice.value("chunk_size")):
            ranges.put(byte_range)
        workers = [threading.Thread(target=_ranged_worker, args=(pool, url, ranges, received))
                   for _ in range(connections)]  # fmt: skip
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    seconds = time.perf_counter() - started
    pool.clear()
    assert sum(received) == SIZE, f"the plain GETs read {sum(received)} of {SIZE} bytes"
    return SIZE / seconds


def _read_boto(s3, bucket: str, byte_range: str) -> int:
    body = s3.get_object(Bucket=bucket, Key="object", Range=byte_range)["Body"]
    return sum(len(piece) for piece in body.iter_chunks(IO_CHUNK))


def _ranges(chunk: int) -> list[str]:
    """The Range headers of the object's parts of `chunk` bytes."""
    return [f"bytes={offset}-{min(offset + chunk, SIZE) - 1}" for offset in range(0, SIZE, chunk)]


def _ranged_worker(pool, url: str, ranges: queue.Queue, received: list[int]) -> None:
    while True:
        try:
            byte_range = ranges.get_nowait()
        except queue.Empty:
            return
        received.append(_read(pool.request("GET", url, headers={"Range": byte_range}, preload_content=False), IO_CHUNK))


def _read(response, chunk: int) -> int:
    """Bytes of a 2xx response, read in pieces of `chunk` and dropped."""
    assert response.status in (200, 206), f"GET answered {response.status}"
    count = sum(len(piece) for piece in response.stream(chunk))
    response.release_conn()
    return count


if __name__ == "__main__":
    main()
