"""The handler end to end against the emulator: records, batch responses, failure paths."""

import json
import threading
import time
from types import SimpleNamespace
from urllib.parse import urlsplit

import boto3
import pytest

from fanout.workloads.download import strategies

from .support import MEMORY_SIZE, lambda_context, log_records, sqs_event

SUCCESS_FIELDS = {
    "event", "run_id", "seq", "experiment_tag", "concurrency_limit", "memory_size", "object_size", "strategy",
    "strategy_name", "bytes", "seconds", "ttfb_seconds", "mbps", "mib_per_s", "requests_per_s", "start_ms", "end_ms",
    "cold_start",
    "env_id", "receive_count", "message_id", "request_id", "s3_request_id", "request_ttfb_ms", "requests",
    "connections", "first_byte_seconds", "timeline_interval_ms", "timeline", "peak_mb_per_s", "sustained_mb_per_s",
    "burst_excess_bytes", "burst_bytes", "request_ips", "endpoint_ip", "workload", "outcome", "retries", "slowdowns",
    "cpu_seconds", "cpu_share", "key", "boto3_version", "botocore_version", "s3transfer_version", "sdk_source",
}  # fmt: skip, plus strategy_<param> for each parameter of the record's strategy; awscrt_version is
# null without awscrt (as in the drivers' venv), and Powertools leaves null fields out
ERROR_CONTEXT_FIELDS = {
    "message_id", "receive_count", "memory_size", "concurrency_limit", "object_size", "request_id", "env_id",
    "cold_start", "boto3_version", "botocore_version", "s3transfer_version", "sdk_source",
}  # fmt: skip
# Added by Powertools to every line; anything else would be a field outside the contract.
POWERTOOLS_FIELDS = {"level", "location", "message", "timestamp", "service", "xray_trace_id"}


def body(seq=1, **extra):
    return {"run_id": "run-1", "seq": seq, "experiment_tag": "tag-a", **extra}


def invoke(handler, event):
    context = lambda_context()
    return handler.lambda_handler(event, context), context


def record_get_object_ids(handler):
    """Request ids of every GetObject the handler's client receives, seen from outside measure.py."""
    seen = []
    handler.s3.meta.events.register(
        "after-call.s3.GetObject", lambda parsed, **_: seen.append(parsed["ResponseMetadata"]["RequestId"])
    )
    return seen


@pytest.mark.parametrize(
    ("env_strategy", "body_strategy", "expected"),
    [
        ("download_file", None, "download_file max_concurrency=10 chunk_size=8MiB threshold=8MiB"),
        ("stream chunk_size=64KiB", None, "stream chunk_size=64KiB"),
        ("download_file", "stream", "stream chunk_size=256KiB"),
        ("stream", "ranged chunk_size=1MiB connections=3", "ranged connections=3 chunk_size=1MiB"),
    ],
)
def test_success_record(load_handler, function_env, test_object, capsys, tmp_path, env_strategy, body_strategy,
                        expected):
    function_env["DOWNLOAD_DEFAULT_STRATEGY"] = env_strategy
    handler = load_handler()
    get_object_ids = record_get_object_ids(handler)
    event = sqs_event(body(seq=42, **({"strategy": body_strategy} if body_strategy else {})), receive_count=3)
    capsys.readouterr()

    before_ms = time.time() * 1000
    response, context = invoke(handler, event)
    after_ms = time.time() * 1000

    assert response == {"batchItemFailures": []}
    [line] = log_records(capsys)
    name, *assignments = expected.split()
    params = {f"strategy_{a.split('=')[0]}" for a in assignments}
    assert set(line) - POWERTOOLS_FIELDS == SUCCESS_FIELDS | params
    assert line["level"] == "INFO"
    assert line["service"] == function_env["POWERTOOLS_SERVICE_NAME"]
    assert (line["event"], line["run_id"], line["seq"], line["experiment_tag"]) == ("download", "run-1", 42, "tag-a")
    assert (line["strategy"], line["strategy_name"]) == (expected, name)
    assert len(line["request_ttfb_ms"]) == line["requests"] >= len(get_object_ids)
    assert all(0 < ms <= line["seconds"] * 1000 for ms in line["request_ttfb_ms"])
    assert 1 <= line["connections"] <= len(get_object_ids)
    assert line["request_ips"].split() == [line["endpoint_ip"]] * line["requests"]  # the emulator's one address
    assert line["endpoint_ip"] == urlsplit(function_env["AWS_ENDPOINT_URL"]).hostname
    assert line["concurrency_limit"] == 7
    assert line["memory_size"] == MEMORY_SIZE
    assert line["bytes"] == line["object_size"] == test_object.size
    assert line["key"] == test_object.key
    assert (line["retries"], line["slowdowns"]) == (0, 0)
    assert 0 < line["ttfb_seconds"] <= line["seconds"]
    assert line["mbps"] == pytest.approx(test_object.size * 8 / line["seconds"] / 1e6)
    assert line["mib_per_s"] == pytest.approx(test_object.size / line["seconds"] / 1024 / 1024)
    assert line["requests_per_s"] == pytest.approx(line["requests"] / line["seconds"])
    assert before_ms - 1 <= line["start_ms"] <= line["end_ms"] <= after_ms + 1
    assert line["cold_start"] is True
    assert line["env_id"] == handler.environment.env_id
    assert line["receive_count"] == 3
    assert line["message_id"] == event["Records"][0]["messageId"]
    assert line["request_id"] == context.aws_request_id
    # The first GetObject's id; requests in parallel reach the two listeners in either order.
    parallel = line["requests"] > 1 and line["connections"] > 1
    assert get_object_ids and line["s3_request_id"] in (get_object_ids if parallel else get_object_ids[:1])
    assert list(tmp_path.iterdir()) == []  # download_file deleted its file


def test_a_body_without_workload_is_a_download_as_one_naming_it(load_handler, test_object, capsys):
    """Bodies sent before fire named the workload in every body still run as downloads: the
    same record, field for field, as a body that says `"workload": "download"`."""
    handler = load_handler()
    capsys.readouterr()
    response, _ = invoke(handler, sqs_event(body(seq=1), body(seq=2, workload=handler.workloads.DEFAULT)))
    assert response == {"batchItemFailures": []}
    old, named = sorted(log_records(capsys), key=lambda line: line["seq"])
    assert set(old) == set(named)
    assert {line["workload"] for line in (old, named)} == {handler.workloads.DEFAULT}
    assert [(line["event"], line["outcome"], line["bytes"]) for line in (old, named)] == \
        [(handler.workloads.DEFAULT, "done", test_object.size)] * 2  # fmt: skip


class SteppingClock:
    """A monotonic clock an hour per reading away from any real one; keeps what it returned."""

    STEP = 3600.0

    def __init__(self):
        self.readings = []
        self._lock = threading.Lock()  # download_file reads it from the transfer threads

    def __call__(self) -> float:
        with self._lock:
            self.readings.append(1e6 + self.STEP * len(self.readings))
            return self.readings[-1]


@pytest.mark.parametrize("strategy", ["download_file", "stream", "ranged"])
def test_seconds_come_from_the_monotonic_clock(load_handler, capsys, strategy):
    """`seconds` from the monotonic clock; start_ms and end_ms from the epoch clock, read just
    before the download starts and just after it ends (each clock here a fake one)."""
    handler = load_handler()
    clock, epoch = SteppingClock(), SteppingClock()
    epoch_ns = lambda: int(epoch() * 1e9)  # noqa: E731 - the epoch clock's nanoseconds
    handler.workloads.measure.time = SimpleNamespace(monotonic=clock, time_ns=epoch_ns, process_time=time.process_time)

    response, _ = invoke(handler, sqs_event(body(strategy=strategy)))

    assert response == {"batchItemFailures": []}
    [line] = log_records(capsys)
    first, *later = clock.readings
    assert line["seconds"] == later[-1] - first  # from before the first request to after the last byte
    assert line["ttfb_seconds"] in [reading - first for reading in later[:-1]]
    assert [line["start_ms"], line["end_ms"]] == [int(reading * 1000) for reading in epoch.readings]


def test_stream_mode_sends_exactly_one_get_object(load_handler, capsys):
    handler = load_handler()
    requests = []  # one entry per HTTP request the client sends, retries included
    handler.s3.meta.events.register("before-send.s3", lambda event_name, **_: requests.append(event_name))

    response, _ = invoke(handler, sqs_event(body(strategy="stream")))

    assert response == {"batchItemFailures": []}
    assert requests == ["before-send.s3.GetObject"]
    [line] = log_records(capsys)
    assert (line["strategy_name"], line["requests"], line["connections"]) == ("stream", 1, 1)


def test_download_file_uses_parallel_ranged_gets(load_handler, capsys):
    handler = load_handler()
    get_object_ids = record_get_object_ids(handler)
    response, _ = invoke(handler, sqs_event(body(strategy="download_file")))
    assert response == {"batchItemFailures": []}
    assert len(get_object_ids) > 1  # the object is over the multipart threshold
    assert log_records(capsys)[0]["s3_request_id"] in get_object_ids


def test_cold_start_only_on_first_invocation_of_an_environment(load_handler, capsys):
    first_env = load_handler()
    invoke(first_env, sqs_event(body(1), body(2)))
    invoke(first_env, sqs_event(body(3)))
    second_env = load_handler()
    invoke(second_env, sqs_event(body(4)))

    lines = {line["seq"]: line for line in log_records(capsys)}
    assert [lines[seq]["cold_start"] for seq in (1, 2, 3, 4)] == [True, True, False, True]
    assert lines[1]["env_id"] == lines[2]["env_id"] == lines[3]["env_id"] != lines[4]["env_id"]
    assert lines[1]["request_id"] == lines[2]["request_id"] != lines[3]["request_id"]


def error_lines(capsys):
    lines = log_records(capsys)
    assert all(line["event"] == "error" and line["level"] == "ERROR" for line in lines)
    return lines


@pytest.mark.parametrize("mode", ["download_file", "stream"])
def test_missing_object_is_an_error_record_and_a_batch_failure(load_handler, function_env, capsys, mode):
    function_env["FANOUT_KEY"] = "no-such-object"
    handler = load_handler()
    event = sqs_event(body(strategy=mode))
    response, context = invoke(handler, event)

    message_id = event["Records"][0]["messageId"]
    assert response == {"batchItemFailures": [{"itemIdentifier": message_id}]}
    [line] = error_lines(capsys)
    # The transfer manager starts with HeadObject (a bare 404); stream's GetObject names the error.
    expected_type, expected_text = {"download_file": ("ClientError", "404"), "stream": ("NoSuchKey", "NoSuchKey")}[mode]
    assert line["error_type"] == expected_type and expected_text in line["error_message"]
    assert (line["run_id"], line["seq"], line["experiment_tag"], line["strategy_name"]) == ("run-1", 1, "tag-a", mode)
    assert ERROR_CONTEXT_FIELDS <= set(line)
    assert line["key"] == "no-such-object"
    assert line["message_id"] == message_id
    assert (line["request_id"], line["memory_size"]) == (context.aws_request_id, MEMORY_SIZE)


@pytest.mark.parametrize("mode", ["download_file", "stream"])
def test_size_mismatch_is_an_error(load_handler, function_env, test_object, capsys, mode):
    function_env["FANOUT_EXPECTED_SIZE"] = str(test_object.size + 1)
    handler = load_handler()
    event = sqs_event(body(strategy=mode))
    response, _ = invoke(handler, event)

    assert response["batchItemFailures"] == [{"itemIdentifier": event["Records"][0]["messageId"]}]
    [line] = error_lines(capsys)
    assert line["error_type"] == "SizeMismatch"
    assert str(test_object.size) in line["error_message"] and str(test_object.size + 1) in line["error_message"]


@pytest.mark.parametrize(
    ("text", "known"),
    [
        ("not json", {}),
        ("[1, 2]", {}),
        ('{"seq": 1}', {"seq": 1}),
        ('{"run_id": "r", "seq": "one"}', {"run_id": "r"}),
        ('{"run_id": "r", "seq": true}', {"run_id": "r"}),
        ('{"run_id": "r", "seq": 5, "strategy": "ftp"}', {"run_id": "r", "seq": 5}),
        ('{"run_id": "r", "seq": 5, "strategy": "ranged connections=0"}', {"run_id": "r", "seq": 5}),
        ('{"run_id": "r", "seq": 5, "strategy": 7}', {"run_id": "r", "seq": 5}),
        ('{"run_id": "r", "seq": 5, "inject_failure": "yes"}', {"run_id": "r", "seq": 5}),
    ],
)
def test_malformed_body_fails_only_its_message(load_handler, capsys, text, known):
    handler = load_handler()
    event = sqs_event(text, body(seq=2))
    response, _ = invoke(handler, event)

    assert response == {"batchItemFailures": [{"itemIdentifier": event["Records"][0]["messageId"]}]}
    bad, good = log_records(capsys)
    assert good["event"] == "download" and good["seq"] == 2
    assert bad["event"] == "error" and bad["error_type"] == "MalformedMessage"
    assert bad["message_id"] == event["Records"][0]["messageId"]
    assert {name: bad[name] for name in known} == known
    for name in {"run_id", "seq"} - set(known):
        assert name not in bad
        if text.startswith("{"):
            assert name in bad["error_message"]  # names the bad or missing field


def test_injected_failure_skips_the_download(load_handler, capsys):
    handler = load_handler()
    get_object_ids = record_get_object_ids(handler)
    event = sqs_event(body(seq=9, inject_failure=True))
    response, _ = invoke(handler, event)

    assert response == {"batchItemFailures": [{"itemIdentifier": event["Records"][0]["messageId"]}]}
    [line] = error_lines(capsys)
    assert (line["error_type"], line["run_id"], line["seq"]) == ("InjectedFailure", "run-1", 9)
    assert get_object_ids == []


def test_a_batch_where_every_message_fails_is_reported_not_raised(load_handler, capsys):
    handler = load_handler()
    event = sqs_event(body(1, inject_failure=True), "garbage", body(3, inject_failure=True))
    response, _ = invoke(handler, event)

    assert response == {"batchItemFailures": [{"itemIdentifier": r["messageId"]} for r in event["Records"]]}
    error_types = [line["error_type"] for line in error_lines(capsys)]
    assert error_types == ["InjectedFailure", "MalformedMessage", "InjectedFailure"]


def test_misconfigured_function_fails_the_invocation(load_handler, function_env):
    function_env["DOWNLOAD_DEFAULT_STRATEGY"] = "carrier-pigeon"
    handler = load_handler()
    with pytest.raises(ValueError, match="DOWNLOAD_DEFAULT_STRATEGY='carrier-pigeon'"):
        invoke(handler, sqs_event(body()))


def test_a_bad_concurrency_limit_fails_the_invocation_whatever_the_workload(load_handler, function_env):
    function_env["FANOUT_CONCURRENCY_LIMIT"] = "many"
    handler = load_handler()
    for workload in handler.workloads.WORKLOADS:
        with pytest.raises(ValueError, match="FANOUT_CONCURRENCY_LIMIT='many'"):
            invoke(handler, sqs_event(body(workload=workload)))


def test_the_client_pools_the_connections_of_the_most_demanding_workload(load_handler):
    """A download's strategies may run MAX_CONNECTIONS parallel GETs: the shared client holds them
    all (with fewer, the extra connections would be opened and dropped on every request)."""
    handler = load_handler()
    registry = handler.workloads
    pool = handler.s3.meta.config.max_pool_connections
    assert pool == max(workload.connections for workload in registry.WORKLOADS.values())
    assert pool >= registry.measure.strategies.MAX_CONNECTIONS


@pytest.mark.parametrize("strategy", ["download_file", "stream", "ranged"])
def test_a_strategy_sends_the_head_requests_the_estimate_prices(load_handler, test_object, strategy):
    handler = load_handler()
    heads = []
    handler.s3.meta.events.register("before-send.s3.HeadObject", lambda **_: heads.append(1))
    response, _ = invoke(handler, sqs_event(body(strategy=strategy)))
    assert response == {"batchItemFailures": []}
    assert len(heads) == strategies.parse(strategy).heads(test_object.size)


def test_keys_spread_the_messages_round_robin_over_the_copies(load_handler, function_env, test_object, emulator,
                                                             capsys):
    """KEYS=2: seq 0 and 2 read the object, seq 1 its copy under another prefix; every record names its key."""
    copy = f"copies/1/{test_object.key}"
    s3 = boto3.client("s3", endpoint_url=emulator, region_name="us-east-1", aws_access_key_id="test",
                      aws_secret_access_key="test")  # fmt: skip
    s3.copy_object(Bucket=test_object.bucket, Key=copy, CopySource={"Bucket": test_object.bucket, "Key": test_object.key})
    function_env["FANOUT_KEYS"] = json.dumps([test_object.key, copy])
    handler = load_handler()
    fetched = []
    handler.s3.meta.events.register("before-call.s3.GetObject", lambda params, **_: fetched.append(params["url_path"]))
    response, _ = invoke(handler, sqs_event(*(body(seq, strategy="stream") for seq in range(3))))
    assert response == {"batchItemFailures": []}
    assert [line["key"] for line in log_records(capsys)] == [test_object.key, copy, test_object.key]
    assert [path.endswith(key) for path, key in zip(fetched, [test_object.key, copy, test_object.key])] == [True] * 3
