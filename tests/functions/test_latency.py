"""The latency workload's core and its path through the handler, against the emulator."""

import json
import uuid

import pytest

from .support import lambda_context, load_function_module, log_records, sqs_event


@pytest.fixture
def latency(monkeypatch):
    return load_function_module("latency", monkeypatch)


@pytest.fixture
def buckets(s3):
    """Two buckets standing in for two storage classes."""
    names = {"standard": f"lat-{uuid.uuid4().hex[:12]}", "express": f"lat-{uuid.uuid4().hex[:12]}"}
    for name in names.values():
        s3.create_bucket(Bucket=name)
    return names


def keys(s3, bucket):
    return [o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])]


def body(**extra):
    return json.dumps({"run_id": "run-9", "seq": 3, "experiment_tag": "lat", "workload": "latency", **extra})


def test_one_record_per_call_and_nothing_left(latency, s3, buckets):
    sizes, reps = [1, 1000, 70_000], 3
    environ = {"LATENCY_BUCKETS": json.dumps(buckets)}
    records = latency.measure_message(s3, environ, body(sizes=sizes, reps=reps), {"memory_size": 512})

    assert {r["event"] for r in records} == {"latency"}
    assert len(records) == len(sizes) * reps * len(buckets) * 2
    for storage in buckets:
        for size in sizes:
            for operation in ("put", "get"):
                mine = [r for r in records if (r["storage"], r["size"], r["operation"]) == (storage, size, operation)]
                assert sorted(r["rep"] for r in mine) == list(range(reps))
    for r in records:
        assert (r["run_id"], r["seq"], r["experiment_tag"], r["memory_size"]) == ("run-9", 3, "lat", 512)
        assert r["seconds"] > 0 and 0 < r["cpu_seconds"] and r["cpu_share"] == pytest.approx(r["cpu_seconds"] / r["seconds"])
        if r["operation"] == "get":
            assert 0 < r["first_byte_seconds"] <= r["seconds"]
        else:
            assert r["first_byte_seconds"] is None
    assert all(keys(s3, bucket) == [] for bucket in buckets.values())


def test_a_message_may_name_its_storage_classes(latency, s3, buckets):
    environ = {"LATENCY_BUCKETS": json.dumps(buckets)}
    records = latency.measure_message(s3, environ, body(sizes=[10], reps=1, storage=["express"]), {})
    assert [(r["storage"], r["operation"]) for r in records] == [("express", "put"), ("express", "get")]


def test_a_failure_midway_still_deletes_what_was_written(latency, s3, buckets, monkeypatch):
    environ = {"LATENCY_BUCKETS": json.dumps({"standard": buckets["standard"]})}
    real_get = latency.get
    calls = []

    def get_then_fail(*args):
        calls.append(args)
        if len(calls) == 2:
            raise RuntimeError("connection reset")
        return real_get(*args)

    monkeypatch.setattr(latency, "get", get_then_fail)
    records = latency.measure_message(s3, environ, body(sizes=[100, 200], reps=2), {})

    assert [r["event"] for r in records] == ["latency"] * 3 + ["error"]
    assert (records[-1]["error_type"], records[-1]["run_id"]) == ("RuntimeError", "run-9")
    assert keys(s3, buckets["standard"]) == []


def test_by_class_runs_every_repetition_of_a_class_before_the_next(latency, s3, buckets):
    environ = {"LATENCY_BUCKETS": json.dumps(buckets)}
    records = latency.measure_message(s3, environ, body(sizes=[10, 20], reps=3, order="by-class"), {})
    for size in (10, 20):
        puts = [(r["storage"], r["rep"]) for r in records if r["size"] == size and r["operation"] == "put"]
        assert puts == [("standard", 0), ("standard", 1), ("standard", 2), ("express", 0), ("express", 1), ("express", 2)]
    interleaved = latency.measure_message(s3, environ, body(sizes=[10], reps=2), {})
    assert [(r["storage"], r["rep"]) for r in interleaved if r["operation"] == "put"] == [
        ("standard", 0), ("express", 0), ("standard", 1), ("express", 1)]


def test_per_call_builds_a_new_client_before_each_timer_and_the_record_says_so(latency, s3, buckets, monkeypatch):
    for name, value in (("AWS_ACCESS_KEY_ID", "test"), ("AWS_SECRET_ACCESS_KEY", "test")):
        monkeypatch.setenv(name, value)  # a new client's credentials, as Lambda's environment has them
    environ = {"LATENCY_BUCKETS": json.dumps({"standard": buckets["standard"]})}
    made, timed = [], []
    real_new, real_put, real_get = latency.new_client, latency.put, latency.get

    def new_client(pooled):
        made.append(real_new(pooled))
        return made[-1]

    def spy(real):
        def call(client, *args):
            timed.append(client)
            return real(client, *args)
        return call

    monkeypatch.setattr(latency, "new_client", new_client)
    monkeypatch.setattr(latency, "put", spy(real_put))
    monkeypatch.setattr(latency, "get", spy(real_get))
    records = latency.measure_message(s3, environ, body(sizes=[10, 1000], reps=2, client="per-call"), {})
    assert len(records) == 8 and {r["client"] for r in records} == {"per-call"}
    assert timed == made and len({id(c) for c in made}) == 8 and s3 not in made  # each call its own, built first
    assert made[0].meta.endpoint_url == s3.meta.endpoint_url and keys(s3, buckets["standard"]) == []
    timed.clear()
    pooled = latency.measure_message(s3, environ, body(sizes=[10], reps=2), {})
    assert {r["client"] for r in pooled} == {"pooled"} and timed == [s3] * 4 and len(made) == 8


def test_a_storage_class_not_deployed_is_an_error_record(latency, s3, buckets):
    environ = {"LATENCY_BUCKETS": json.dumps({"standard": buckets["standard"]})}
    [record] = latency.measure_message(s3, environ, body(sizes=[1], reps=1, storage=["express"]), {})
    assert record["event"] == "error" and "express" in record["error_message"]


@pytest.mark.parametrize(
    ("fields", "named"),
    [({"sizes": [0]}, "'0'"), ({"sizes": [100_000_001]}, "100000001"), ({"reps": 0}, "'0'"),
     ({"reps": "3"}, "'3'"), ({"storage": ["glacier"]}, "glacier"), ({"sizes": "1KB"}, "1KB"),
     ({"order": "random"}, "'random'"), ({"client": "shared"}, "'shared'")],
)  # fmt: skip
def test_bad_parameters_are_a_malformed_message(latency, s3, buckets, fields, named):
    [record] = latency.measure_message(s3, {"LATENCY_BUCKETS": json.dumps(buckets)}, body(**fields), {})
    assert record["error_type"] == "MalformedMessage" and named in record["error_message"]


@pytest.mark.parametrize(
    ("text", "expected"), [("1 1KB 1MB 100MB", (1, 1000, 10**6, 10**8)), ("1KiB 10", (1024, 10))]
)
def test_sizes_take_decimal_and_binary_units(latency, text, expected):
    assert latency.parse_sizes(text) == expected


def test_the_handler_logs_every_record_and_one_outcome(load_handler, function_env, buckets, s3, capsys):
    function_env["LATENCY_BUCKETS"] = json.dumps(buckets)
    handler = load_handler()
    capsys.readouterr()
    response = handler.lambda_handler(sqs_event(json.loads(body(sizes=[5], reps=2))), lambda_context())

    assert response == {"batchItemFailures": []}
    lines = log_records(capsys)
    assert len(lines) == 2 * 2 * len(buckets)
    assert {line["workload"] for line in lines} == {"latency"}
    assert [line.get("outcome") for line in lines] == [None] * (len(lines) - 1) + ["done"]
    assert all(line["env_id"] and line["memory_size"] for line in lines)  # the environment fields


def test_an_unknown_workload_fails_the_message(load_handler, capsys):
    handler = load_handler()
    capsys.readouterr()
    event = sqs_event(json.loads(body(workload="upload")))
    response = handler.lambda_handler(event, lambda_context())
    [line] = log_records(capsys)
    assert response == {"batchItemFailures": [{"itemIdentifier": event["Records"][0]["messageId"]}]}
    assert (line["outcome"], line["error_type"]) == ("error", "UnknownWorkload")
