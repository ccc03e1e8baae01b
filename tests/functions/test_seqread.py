"""The seqread workload's core against the emulator: every byte read once in block ranges, the
figures of its record, the remote bucket through a client of its region, bad parameters."""

import json
import os
import threading
import uuid

import boto3
import pytest

from fanout.local.host import faults

from .support import lambda_context, load_function_module, log_records, sqs_event

KiB, MiB = 1024, 1024**2
REMOTE_REGION = "us-west-2"


@pytest.fixture
def seqread(monkeypatch, emulator):
    # The remote client reads the endpoint and credentials from the environment, as on Lambda.
    for name, value in {"AWS_ENDPOINT_URL": emulator, "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
                        "AWS_DEFAULT_REGION": "us-east-1"}.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    return load_function_module("seqread", monkeypatch)


@pytest.fixture
def s3(emulator):
    return boto3.client("s3", endpoint_url=emulator, region_name="us-east-1", aws_access_key_id="test",
                        aws_secret_access_key="test")  # fmt: skip


def make_bucket(s3, region: str | None = None) -> str:
    name = f"seq-{uuid.uuid4().hex[:12]}"
    extra = {"CreateBucketConfiguration": {"LocationConstraint": region}} if region else {}
    s3.create_bucket(Bucket=name, **extra)
    return name


def put_objects(seqread, s3, bucket: str, size: int, jobs: int) -> dict:
    contents = {}
    for job in range(jobs):
        key = seqread.object_key(size, job)
        contents[key] = os.urandom(size)
        s3.put_object(Bucket=bucket, Key=key, Body=contents[key])
    return contents


def body(**fields) -> str:
    return json.dumps({"run_id": "run-s", "seq": 2, "experiment_tag": "seq", "workload": "seqread", **fields})


class Spy:
    """The client, with the ranges each GetObject asked for and the most calls in flight per key."""

    def __init__(self, client):
        self.client, self.meta = client, client.meta
        self.ranges: dict[str, list[str]] = {}
        self.in_flight: dict[str, int] = {}
        self.most: dict[str, int] = {}
        self._lock = threading.Lock()

    def get_object(self, **kwargs):
        key = kwargs["Key"]
        with self._lock:
            self.ranges.setdefault(key, []).append(kwargs["Range"])
            self.in_flight[key] = self.in_flight.get(key, 0) + 1
            self.most[key] = max(self.most.get(key, 0), self.in_flight[key])
        try:
            return self.client.get_object(**kwargs)
        finally:
            with self._lock:
                self.in_flight[key] -= 1


def covered(ranges: list[str]) -> list[tuple[int, int]]:
    return sorted(tuple(map(int, r.removeprefix("bytes=").split("-"))) for r in ranges)


def test_every_job_reads_its_object_once_in_block_ranges(seqread, s3):
    bucket = make_bucket(s3)
    size, block, jobs = 300 * KiB + 7, 64 * KiB, 3  # a last block shorter than the others
    put_objects(seqread, s3, bucket, size, jobs)
    spy = Spy(s3)
    environ = {"SEQREAD_BUCKETS": json.dumps({"local": bucket})}

    [record] = seqread.measure_message(spy, environ, body(jobs=jobs, block=block, file_size=size), {"memory_size": 1024})

    assert record["event"] == "seqread", record
    assert set(spy.ranges) == {seqread.object_key(size, job) for job in range(jobs)}
    for ranges in spy.ranges.values():
        assert ranges == [f"bytes={i * block}-{min((i + 1) * block, size) - 1}" for i in range(5)]  # in order, DEPTH 1
    assert (record["bytes"], record["blocks"], record["jobs"], record["source"]) == (jobs * size, 15, jobs, "local")
    assert record["mib_per_s"] == pytest.approx(jobs * size / record["seconds"] / MiB)
    assert record["cpu_seconds"] > 0 and record["cpu_share"] == pytest.approx(record["cpu_seconds"] / record["seconds"])
    assert len(record["job_mib_per_s"]) == jobs
    assert all(j >= record["mib_per_s"] / jobs * 0.999 for j in record["job_mib_per_s"])  # each job ended by the group's end
    assert 0 < record["clat_p50_ms"] <= record["clat_p90_ms"] <= record["clat_p99_ms"] <= record["clat_max_ms"]
    assert 0 < record["first_byte_p50_ms"] <= record["clat_max_ms"]
    assert (record["retries"], record["throttled"], record["memory_size"]) == (0, 0, 1024)
    assert record["bucket_region"] == "us-east-1"


def test_depth_keeps_at_most_that_many_requests_in_flight_per_job(seqread, s3):
    bucket = make_bucket(s3)
    size, block = 512 * KiB, 64 * KiB
    put_objects(seqread, s3, bucket, size, 2)
    spy = Spy(s3)
    environ = {"SEQREAD_BUCKETS": json.dumps({"local": bucket})}
    [record] = seqread.measure_message(spy, environ, body(jobs=2, block=block, depth=3, file_size=size), {})
    assert record["event"] == "seqread", record
    for ranges in spy.ranges.values():
        assert covered(ranges) == [(i * block, (i + 1) * block - 1) for i in range(8)]  # each block once
    assert all(1 <= most <= 3 for most in spy.most.values())


def test_remote_reads_the_other_regions_bucket_with_a_client_of_that_region(seqread, s3):
    local, remote = make_bucket(s3), make_bucket(s3, REMOTE_REGION)
    put_objects(seqread, s3, remote, 128 * KiB, 2)  # only the remote bucket has them
    environ = {"SEQREAD_BUCKETS": json.dumps({"local": local, "remote": remote}), "SEQREAD_REMOTE_REGION": REMOTE_REGION}
    [record] = seqread.measure_message(s3, environ, body(jobs=2, block=64 * KiB, file_size=128 * KiB, source="remote"), {})
    assert (record["event"], record["source"], record["bucket_region"]) == ("seqread", "remote", REMOTE_REGION)
    assert seqread.remote_client(REMOTE_REGION).meta.region_name == REMOTE_REGION


def test_remote_on_a_stack_without_it_is_an_error_record(seqread, s3):
    environ = {"SEQREAD_BUCKETS": json.dumps({"local": make_bucket(s3)})}
    [record] = seqread.measure_message(s3, environ, body(source="remote"), {})
    assert record["event"] == "error" and "REMOTE_REGION" in record["error_message"]


def test_slow_down_answers_are_counted_and_retried(seqread, s3):
    bucket = make_bucket(s3)
    put_objects(seqread, s3, bucket, 128 * KiB, 1)
    attempts = []

    def inject(request, **_):
        attempts.append(request)
        return faults._error_response(request, *faults.S3_ERRORS["s3_503"]) if len(attempts) <= 2 else None

    s3.meta.events.register("before-send.s3.GetObject", inject)
    environ = {"SEQREAD_BUCKETS": json.dumps({"local": bucket})}
    [record] = seqread.measure_message(s3, environ, body(block=64 * KiB, file_size=128 * KiB), {})
    assert (record["retries"], record["throttled"], record["blocks"]) == (2, 2, 2)


@pytest.mark.parametrize(
    ("fields", "named"),
    [({"jobs": 0}, "JOBS 0"), ({"jobs": 65}, "JOBS 65"), ({"jobs": "3"}, "jobs='3'"),
     ({"block": 65535}, "BLOCK 65535"), ({"depth": 9}, "DEPTH 9"), ({"source": "tokyo"}, "FROM 'tokyo'"),
     ({"file_size": 0}, "FILE_SIZE 0"), ({"read_mode": "mountpoint"}, "READ_MODE 'mountpoint'"),
     ({"target_gbps": 0}, "TARGET_GBPS 0"), ({"target_gbps": 101}, "TARGET_GBPS 101")],
)  # fmt: skip
def test_bad_parameters_are_a_malformed_message(seqread, s3, fields, named):
    [record] = seqread.measure_message(s3, {}, body(**fields), {})
    assert record["error_type"] == "MalformedMessage" and named in record["error_message"]


def test_the_handler_dispatches_to_it(load_handler, function_env, s3, capsys):
    bucket = make_bucket(s3)
    function_env["SEQREAD_BUCKETS"] = json.dumps({"local": bucket})
    handler = load_handler()
    put_objects(handler.workloads.seqread, s3, bucket, 64 * KiB, 1)
    capsys.readouterr()
    fields = json.loads(body(block=64 * KiB, file_size=64 * KiB))
    assert handler.lambda_handler(sqs_event(fields), lambda_context()) == {"batchItemFailures": []}
    [line] = log_records(capsys)
    assert (line["workload"], line["event"], line["outcome"], line["bytes"]) == ("seqread", "seqread", "done", 64 * KiB)


# Mountpoint v1.0.0's prefetcher (mountpoint-s3/src/prefetch.rs at v1.0.0), worked by hand from its
# defaults: first GET 1 MiB + 128 KiB, each next 8x the last, at most 2 GiB, trimmed to end on an
# 8 MiB part boundary (only the rest of the part when a GET ends inside one). The second GET is
# min(9 MiB, 8 - 1.125) = 6.875 MiB; the third 6.875 x 8 = 55, trimmed from 63 to 56 MiB: 48 MiB;
# the fourth 384 MiB (ends at 440, a boundary); then 2 GiB each; the last cut by the file's end.
MOUNTPOINT_GETS_MIB = {
    500: [1.125, 6.875, 48, 384, 60],  # the study's 500 MiB files: 440 MiB, then the 60 left
    1024: [1.125, 6.875, 48, 384, 584],
    3072: [1.125, 6.875, 48, 384, 2048, 584],
}


@pytest.mark.parametrize("file_mib", sorted(MOUNTPOINT_GETS_MIB))
def test_prefetch_requests_grow_as_mountpoint_v1_0_0s(seqread, file_mib):
    assert seqread.request_sizes(file_mib * MiB) == [int(mib * MiB) for mib in MOUNTPOINT_GETS_MIB[file_mib]]


def test_prefetch_starts_the_next_get_when_half_the_current_is_left(seqread):
    assert seqread.starts_next(24 * MiB, 48 * MiB) and not seqread.starts_next(24 * MiB + 1, 48 * MiB)
    first = MiB + 128 * KiB  # odd halves round down, as Rust's integer division
    assert seqread.starts_next(first // 2, first) and not seqread.starts_next(first // 2 + 1, first)


def test_prefetch_pool_and_gets_follow_the_throughput_target_and_8_mib_parts(seqread):
    # aws-c-s3: one address per 4 Gbit/s, 10 connections each; 10 Gbit/s (Mountpoint off EC2): 3 x 10.
    assert (seqread.pool_size(10), seqread.pool_size(4), seqread.pool_size(5)) == (30, 10, 20)
    fields = {"read_mode": "prefetch", "file_size": 500 * MiB, "target_gbps": 10, "jobs": 1}
    assert seqread.gets_per_job(fields) == 1 + 1 + 6 + 48 + 8  # 60 MiB: 7 parts of 8 and one of 4


def test_prefetch_reads_each_object_in_the_prefetchers_gets_split_in_parts(seqread, s3):
    bucket = make_bucket(s3)
    size, jobs = 20 * MiB, 2  # GETs 1.125, 6.875 and the 12 MiB left, in parts of 8 and 4 MiB
    put_objects(seqread, s3, bucket, size, jobs)
    spy = Spy(s3)
    environ = {"SEQREAD_BUCKETS": json.dumps({"local": bucket})}
    fields = {"jobs": jobs, "file_size": size, "read_mode": "prefetch", "target_gbps": 4}
    [record] = seqread.measure_message(spy, environ, body(**fields), {})
    assert record["event"] == "seqread", record
    assert (record["read_mode"], record["bytes"], record["blocks"]) == ("prefetch", jobs * size, jobs * 4)
    second_ends, part_ends = MiB + 128 * KiB, 8 * MiB
    for ranges in spy.ranges.values():
        # the second GET waits for the first to be half read, which is all of its one part
        assert ranges[:2] == [f"bytes=0-{second_ends - 1}", f"bytes={second_ends}-{part_ends - 1}"]
        assert covered(ranges[2:]) == [(8 * MiB, 16 * MiB - 1), (16 * MiB, size - 1)]
