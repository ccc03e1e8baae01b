"""Every record the function logs has the keys its type (envelope.Logged, envelope.Record)
requires, whatever the workload and however the message ends: the type the drivers read the
records with is the function's own, so a key dropped on the function's side fails here."""

import json
import uuid

import pytest

from .support import MEMORY_SIZE, lambda_context, load_function_module, log_records, sqs_event

KiB = 1024
RUN = "run-typed"


@pytest.fixture
def envelope(monkeypatch):
    return load_function_module("envelope", monkeypatch)


@pytest.fixture
def bucket(s3):
    name = f"typed-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=name)
    return name


@pytest.fixture
def handler(load_handler, function_env, bucket, s3, monkeypatch):
    """Loads the handler with every workload's settings: latency's and seqread's buckets
    (seqread's one object of 64 KiB in place); download reads, and transfer writes, the test object's. Called in the
    test: Powertools binds to the sys.stdout of that moment, capsys's."""
    seqread = load_function_module("seqread", monkeypatch)
    s3.put_object(Bucket=bucket, Key=seqread.object_key(64 * KiB, 0), Body=b"s" * 64 * KiB)
    function_env["LATENCY_BUCKETS"] = json.dumps({"standard": bucket})
    function_env["SEQREAD_BUCKETS"] = json.dumps({"local": bucket})
    return load_handler


def body(seq: int, **fields) -> dict:
    return {"run_id": RUN, "seq": seq, "experiment_tag": "typed", **fields}


BODIES = [
    body(0),  # a download: the bodies sent before `workload` existed
    body(1, workload="latency", sizes=[1], reps=1),
    body(2, workload="seqread", jobs=1, block=64 * KiB, file_size=64 * KiB),
    body(3, workload="transfer", operation="upload", size=KiB, threads=1),
    body(4, workload="transfer", operation="upload", size=KiB, inject_failure=True),
]
MALFORMED = ["not json", json.dumps(body(5, workload="nothing-such"))]
ERROR_KEYS = {"error_type", "error_message"}  # an event="error" record's (envelope.error_record)


def missing(record: dict, typed) -> set:
    return set(typed.__required_keys__) - set(record)


def check_error(record: dict, envelope) -> None:
    """An error record has the keys Logged declares for errors (optional there: other records
    lack them)."""
    assert ERROR_KEYS <= envelope.Logged.__optional_keys__
    assert ERROR_KEYS <= set(record), record


def test_every_record_of_every_workload_has_the_keys_of_its_type(handler, envelope, capsys):
    handler().lambda_handler(sqs_event(*BODIES), lambda_context())
    records = [line for line in log_records(capsys) if "event" in line]
    assert {r["workload"] for r in records} == {r["event"] for r in records} - {"error"} == {
        "download", "latency", "seqread", "transfer"}  # each measured, none failed but the injected failure
    assert {r["seq"] for r in records} == set(range(len(BODIES)))
    assert [r["event"] for r in records if r["seq"] == 4] == ["error"]  # the injected failure's record
    for record in records:
        assert missing(record, envelope.Record) == set(), record
        assert record["memory_size"] == MEMORY_SIZE and record["run_id"] == RUN
    for seq in range(len(BODIES)):  # the delivery's last record says how it ended
        assert [r.get("outcome") for r in records if r["seq"] == seq][-1] == ("error" if seq == 4 else "done")
    check_error(next(r for r in records if r["event"] == "error"), envelope)


def test_a_malformed_message_is_logged_with_the_keys_every_record_has(handler, envelope, capsys):
    handler().lambda_handler(sqs_event(*MALFORMED), lambda_context())
    records = [line for line in log_records(capsys) if "event" in line]
    assert [r["event"] for r in records] == ["error", "error"]
    for record in records:
        assert missing(record, envelope.Logged) == set(), record
        check_error(record, envelope)
        assert "seq" not in record  # not a Record: the envelope was not read
