"""The seqread workload: fio-style sequential reads by JOBS parallel readers, from the stack's
bucket or from a bucket in another region.

Per message, each job reads its own object from start to end, and one record gives binary MiB/s
and block latency percentiles. READ_MODE=fixed: BLOCK sized ranged GETs, DEPTH in flight per job.
READ_MODE=prefetch: the GETs Mountpoint v1.0.0's prefetcher would send (request_sizes), each
split into PART sized ranged GETs over one pool shared by the jobs and sized from TARGET_GBPS. Details:
drivers/fanout/workloads/seqread/README.md. Stdlib plus boto3 only (it runs in the Lambda
runtime); handler.py reaches it through workloads.py.
"""

import itertools
import json
import math
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import boto3

import cputime
import envelope
import invocation
import units

NAME = "seqread"
SOURCES = ("local", "remote")  # FROM: the stack's bucket, or the other region's
MAX_JOBS = 64
MAX_DEPTH = 8
MIN_BLOCK = 64 * units.KiB
MAX_BLOCK = 64 * units.MiB
MAX_FILE_SIZE = 5 * units.GiB  # one object per job, uploaded once by fire; larger would not fit a timeout anyway
DEFAULT_JOBS, DEFAULT_BLOCK, DEFAULT_DEPTH, DEFAULT_FILE_SIZE = 1, 8 * units.MiB, 1, 64 * units.MiB
READ_CHUNK = units.MiB
READ_MODES = ("fixed", "prefetch")  # BLOCK x DEPTH per job, or Mountpoint v1.0.0's prefetcher
# Mountpoint v1.0.0's prefetcher (mountpoint-s3/src/prefetch.rs at tag v1.0.0, its defaults): the
# first GET of a sequential read, the growth of each next one, its cap, and the part boundary a
# grown GET is trimmed to (its part size, the CRT client's 8 MiB default).
FIRST_REQUEST, MULTIPLIER, MAX_REQUEST = units.MiB + 128 * units.KiB, 8, 2 * units.GiB
PART = 8 * units.MiB
# The CRT client (aws-c-s3) sizes its pool from the throughput target: one address per 4 Gbit/s,
# 10 connections per address for a GET (its 2023 constants); Mountpoint's target is 10 Gbit/s
# off EC2 (--maximum-throughput-gbps; main.rs at v1.0.0).
GBPS_PER_ADDRESS, CONNECTIONS_PER_ADDRESS = 4, 10
DEFAULT_TARGET_GBPS, MAX_TARGET_GBPS = 10, 100
CONNECTIONS = MAX_JOBS * MAX_DEPTH  # requests one message may have in flight
PERCENTILES = (50, 90, 99)


class ParamError(ValueError):
    """A seqread parameter that is not valid; the message is one line naming the value."""


class SizeMismatch(Exception):
    """A ranged GET returned a different number of bytes than the range asked for."""


@dataclass(frozen=True)
class Params:
    """What one message reads: JOBS objects of FILE_SIZE bytes, in BLOCK byte ranges, DEPTH in
    flight per job, from the `source` bucket."""

    jobs: int = DEFAULT_JOBS
    block: int = DEFAULT_BLOCK
    depth: int = DEFAULT_DEPTH
    file_size: int = DEFAULT_FILE_SIZE
    source: str = SOURCES[0]
    read_mode: str = READ_MODES[0]
    target_gbps: int = DEFAULT_TARGET_GBPS

    def fields(self) -> dict:
        """The message's parameters as the body carries them."""
        return {"jobs": self.jobs, "block": self.block, "depth": self.depth, "file_size": self.file_size,
                "source": self.source, "read_mode": self.read_mode, "target_gbps": self.target_gbps}  # fmt: skip


def _whole(name: str, text, low: int, high: int) -> int:
    value = units.parse_count(str(text))
    if value is None or not low <= value <= high:
        raise ParamError(f"invalid {name} {text!r}: expected a whole number from {low} to {high}")
    return value


def _size(name: str, text, low: int, high: int) -> int:
    value = units.parse_size(str(text))
    if value is None or not low <= value <= high:
        raise ParamError(f"invalid {name} {text!r}: expected a size from {units.format_size(low)} to "
                         f"{units.format_size(high)} such as 8MiB (units KB MB GB KiB MiB GiB)")  # fmt: skip
    return value


def parse_jobs(text) -> int:
    return _whole("JOBS", text, 1, MAX_JOBS)


def parse_depth(text) -> int:
    return _whole("DEPTH", text, 1, MAX_DEPTH)


def parse_block(text) -> int:
    return _size("BLOCK", text, MIN_BLOCK, MAX_BLOCK)


def parse_file_size(text) -> int:
    return _size("FILE_SIZE", text, 1, MAX_FILE_SIZE)


def parse_source(text) -> str:
    if text not in SOURCES:
        raise ParamError(f"invalid FROM {text!r}: expected {' or '.join(SOURCES)}")
    return text


def parse_read_mode(text) -> str:
    if text not in READ_MODES:
        raise ParamError(f"invalid READ_MODE {text!r}: expected {' or '.join(READ_MODES)}")
    return text


def parse_target_gbps(text) -> int:
    return _whole("TARGET_GBPS", text, 1, MAX_TARGET_GBPS)


def params_from_body(data: dict) -> Params:
    """The parameters of a message body, checked by the same rules as fire's."""
    defaults = Params()
    try:
        for name in ("jobs", "block", "depth", "file_size", "target_gbps"):
            if type(data.get(name, 0)) is not int:
                raise ParamError(f"{name}={data[name]!r} is not a whole number")
        return Params(parse_jobs(data.get("jobs", defaults.jobs)), parse_block(data.get("block", defaults.block)),
                      parse_depth(data.get("depth", defaults.depth)),
                      parse_file_size(data.get("file_size", defaults.file_size)),
                      parse_source(data.get("source", defaults.source)),
                      parse_read_mode(data.get("read_mode", defaults.read_mode)),
                      parse_target_gbps(data.get("target_gbps", defaults.target_gbps)))  # fmt: skip
    except ParamError as exc:
        raise envelope.MalformedMessage(str(exc), {}) from None


def object_key(file_size: int, job: int) -> str:
    """Job `job`'s object of `file_size` bytes, the same key in both buckets."""
    return f"{NAME}/{file_size}-bytes/{job}.bin"


@dataclass(frozen=True)
class Settings:
    """SEQREAD_BUCKETS (JSON: source -> bucket) and SEQREAD_REMOTE_REGION (empty: no remote)."""

    buckets: dict
    remote_region: str

    @classmethod
    def from_env(cls, environ) -> "Settings":
        """Checked per message, not per invocation: a stack deployed before this workload still
        runs the others."""
        return cls(json.loads(environ.get("SEQREAD_BUCKETS") or "{}"), environ.get("SEQREAD_REMOTE_REGION", ""))


_remote_clients: dict = {}  # region -> client, one per execution environment
_lock = threading.Lock()


def remote_client(region: str):
    """A client of `region` (its endpoint on AWS; AWS_ENDPOINT_URL_S3 locally), made once."""
    with _lock:
        if region not in _remote_clients:
            _remote_clients[region] = boto3.client("s3", region_name=region,
                                                   config=invocation.client_config(CONNECTIONS))
        return _remote_clients[region]


_answers = threading.local()  # this thread's count of 503 answers botocore retried


def _count_503(response=None, **_) -> None:
    """botocore's needs-retry event, on the thread of the call: count a 503 (SlowDown) answer."""
    if response is not None and response[0].status_code == 503:
        _answers.throttled = getattr(_answers, "throttled", 0) + 1


def count_throttles(client):
    """`client`, its 503 answers counted per thread (idempotent)."""
    client.meta.events.register("needs-retry.s3.GetObject", _count_503, unique_id=f"{NAME}-503")
    return client


def measure_message(s3, environ, body: str, context: dict) -> list[dict]:
    """The message's one event="seqread" record, or an event="error" record (envelope.records)."""

    def reads(params: Params, known: dict, emit) -> None:
        settings = Settings.from_env(environ)
        bucket = settings.buckets.get(params.source)
        if not bucket:
            raise ValueError(f"FROM={params.source} is not deployed on this stack (SEQREAD_BUCKETS has "
                             f"{', '.join(settings.buckets) or 'nothing'}; REMOTE_REGION at deploy)")  # fmt: skip
        client = remote_client(settings.remote_region) if params.source == "remote" else s3
        region = settings.remote_region if params.source == "remote" else client.meta.region_name
        emit({"event": NAME, "bucket_region": region, **read_all(count_throttles(client), bucket, params)})

    return envelope.records(body, context, params_from_body, reads)


def next_request_size(offset: int, size: int) -> int:
    """The prefetcher's next GET after one of `size` bytes (before the file's end cut it) that
    ended at `offset`: MULTIPLIER times larger, at most MAX_REQUEST, ending at a PART boundary
    (only the rest of the part when `offset` is inside one)."""
    grown = min(size * MULTIPLIER, MAX_REQUEST)
    into_part = offset % PART
    if into_part:
        return min(grown, PART - into_part)
    if grown < PART:
        return grown
    return grown - (offset + grown) % PART


def request_sizes(file_size: int) -> list[int]:
    """The GETs, in bytes, of the prefetcher reading `file_size` bytes from the start."""
    sizes: list[int] = []
    offset, size = 0, FIRST_REQUEST
    while offset < file_size:
        sizes.append(min(size, file_size - offset))
        offset += sizes[-1]
        size = next_request_size(offset, size)
    return sizes


def starts_next(remaining: int, total: int) -> bool:
    """The prefetcher starts the next GET once the current one has half its bytes or fewer left."""
    return remaining <= total // 2


def pool_size(target_gbps: int) -> int:
    """Connections of the CRT client's pool at a throughput target (GBPS_PER_ADDRESS)."""
    return math.ceil(target_gbps / GBPS_PER_ADDRESS) * CONNECTIONS_PER_ADDRESS


def parts(first: int, size: int) -> list[tuple[int, int]]:
    """(first, last) byte of each PART of the GET of `size` bytes at `first`."""
    return [(start, min(start + PART, first + size) - 1) for start in range(first, first + size, PART)]


def gets_per_job(fields: dict) -> int:
    """Ranged GETs one job sends (the drivers' cost and demand models)."""
    if fields.get("read_mode", READ_MODES[0]) == "prefetch":
        offsets = itertools.accumulate(request_sizes(fields["file_size"]), initial=0)
        return sum(len(parts(first, size)) for first, size in zip(offsets, request_sizes(fields["file_size"])))
    return -(-fields["file_size"] // fields["block"])


def in_flight(fields: dict) -> int:
    """GETs one message may have in flight at once."""
    if fields.get("read_mode", READ_MODES[0]) == "prefetch":
        return pool_size(fields["target_gbps"])
    return fields["jobs"] * fields["depth"]


def read_all(s3, bucket: str, params: Params) -> dict:
    """Every job's object read by READ_MODE; the message's figures."""
    if params.read_mode == "prefetch":
        return prefetch_all(s3, bucket, params)
    return fixed_all(s3, bucket, params)


def prefetch_all(s3, bucket: str, params: Params) -> dict:
    """Every job's object read as Mountpoint v1.0.0 reads a file sequentially: its GETs
    (request_sizes) one after the other, the next started by starts_next, each GET's PARTs queued
    on one pool of pool_size(TARGET_GBPS) threads that all jobs share (the CRT client's)."""
    timings: list[list[tuple]] = [[] for _ in range(params.jobs)]
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=pool_size(params.target_gbps)) as pool, \
            ThreadPoolExecutor(max_workers=params.jobs) as readers:  # fmt: skip
        futures = [readers.submit(_prefetch_job, pool, s3, bucket, params.file_size, job, timings[job])
                   for job in range(params.jobs)]  # fmt: skip
        for future in futures:
            future.result()
    return summary(params, time.monotonic() - started, started, timings)


def _prefetch_job(pool, s3, bucket: str, file_size: int, job: int, timings: list) -> None:
    """One file read in order: the current GET's parts consumed as they complete, the next GET
    queued once starts_next says so (at most two GETs of a file in flight)."""
    key = object_key(file_size, job)
    sizes = request_sizes(file_size)
    firsts = list(itertools.accumulate(sizes, initial=0))

    def spawn(index: int) -> list:
        return [pool.submit(read_block, s3, bucket, key, first, last) for first, last in parts(firsts[index], sizes[index])]

    current: list = spawn(0)
    following: list = []  # the next GET's parts, once started
    for index, total in enumerate(sizes):
        remaining = total
        for part in current:
            timings.append(part.result())
            remaining -= min(PART, remaining)
            if not following and index + 1 < len(sizes) and starts_next(remaining, total):
                following = spawn(index + 1)
        current, following = following, []


def fixed_all(s3, bucket: str, params: Params) -> dict:
    """Every job's object read in blocks, DEPTH at a time per job; the message's figures."""
    blocks_per_job = -(-params.file_size // params.block)
    counters = [itertools.count() for _ in range(params.jobs)]
    timings: list[list[tuple]] = [[] for _ in range(params.jobs)]  # per job: (start, first byte, end, retries, 503s)

    def worker(job: int) -> None:
        key = object_key(params.file_size, job)
        while (index := next(counters[job])) < blocks_per_job:  # next() on a count is atomic in CPython
            first = index * params.block
            last = min(first + params.block, params.file_size) - 1
            timings[job].append(read_block(s3, bucket, key, first, last))

    started, cpu_started = time.monotonic(), cputime.now()
    with ThreadPoolExecutor(max_workers=params.jobs * params.depth) as pool:
        futures = [pool.submit(worker, job) for job in range(params.jobs) for _ in range(params.depth)]
        for future in futures:
            future.result()
    seconds = time.monotonic() - started
    return {**summary(params, seconds, started, timings), **cputime.fields(cputime.now() - cpu_started, seconds)}


def read_block(s3, bucket: str, key: str, first: int, last: int) -> tuple:
    """(start, first byte, end, retries, 503 answers) of one ranged GET, read to its last byte."""
    throttled_before = getattr(_answers, "throttled", 0)
    start = time.monotonic()
    response = s3.get_object(Bucket=bucket, Key=key, Range=f"bytes={first}-{last}")
    headers_at = time.monotonic()
    received = sum(len(chunk) for chunk in response["Body"].iter_chunks(READ_CHUNK))
    end = time.monotonic()
    if received != last - first + 1:
        raise SizeMismatch(f"GET of {key} bytes {first}-{last} returned {received} bytes")
    throttled = getattr(_answers, "throttled", 0) - throttled_before
    return start, headers_at, end, response["ResponseMetadata"].get("RetryAttempts", 0), throttled


def percentiles(values: list[float]) -> dict:
    """p50, p90, p99 in ms (linear interpolation between closest ranks) and the maximum."""
    if len(values) == 1:
        cuts = values * 99
    else:
        cuts = statistics.quantiles(values, n=100, method="inclusive")
    return {**{f"p{p}": cuts[p - 1] * 1000 for p in PERCENTILES}, "max": max(values) * 1000}


def summary(params: Params, seconds: float, started: float, timings: list[list[tuple]]) -> dict:
    """The record's measured fields."""
    total = params.jobs * params.file_size
    job_seconds = [max(t[2] for t in job) - started for job in timings]
    blocks = [t for job in timings for t in job]
    completion = percentiles([end - start for start, _, end, _, _ in blocks])
    first_byte = percentiles([headers - start for start, headers, _, _, _ in blocks])
    return {
        "bytes": total,
        "seconds": seconds,
        "mib_per_s": total / seconds / units.MiB,
        "job_mib_per_s": [params.file_size / s / units.MiB for s in job_seconds],
        "blocks": len(blocks),
        **{f"clat_{name}_ms": value for name, value in completion.items()},
        **{f"first_byte_{name}_ms": value for name, value in first_byte.items()},
        "retries": sum(t[3] for t in blocks),
        "throttled": sum(t[4] for t in blocks),
    }
