"""The cost model's log bytes hold real records: what the handler prints for one message, with the
platform lines Lambda adds per invocation, stays within the bytes the estimate charges for."""

import json
import uuid

import boto3

from fanout.cloud import costs
from fanout.local.host import logs
from fanout.workloads.latency import costs as latency_costs

from .support import lambda_context, load_function_module, sqs_event

KiB = 1024


def platform_bytes() -> int:
    """START, END and a cold start's REPORT line (the longest) of one invocation."""
    request_id = str(uuid.uuid4())
    lines = (logs.start_line(request_id, "$LATEST"), logs.end_line(request_id),
             logs.report_line(request_id, 899_999.99, 10240, 10240, 9999.99))  # fmt: skip
    return sum(len(line.encode()) for line in lines)


def printed(handler, body: dict, capsys) -> list[str]:
    """The JSON lines the handler prints for one message."""
    capsys.readouterr()
    handler.lambda_handler(sqs_event({"run_id": "run-1", "seq": 1, "experiment_tag": "t" * 64, **body}), lambda_context())
    return [line for line in capsys.readouterr().out.splitlines() if line.strip()]


def test_a_download_record_with_its_request_lists_full_fits_the_estimate(emulator, function_env, load_handler, capsys,
                                                                        monkeypatch):  # fmt: skip
    measure = load_function_module("measure", monkeypatch)
    size = (measure.REQUESTS_KEPT + 20) * 256 * KiB  # more parts than a record lists
    s3 = boto3.client("s3", endpoint_url=emulator, region_name="us-east-1", aws_access_key_id="test",
                      aws_secret_access_key="test")  # fmt: skip
    s3.put_object(Bucket=function_env["FANOUT_BUCKET"], Key="many-parts", Body=bytes(size))
    function_env.update(FANOUT_KEY="many-parts", FANOUT_EXPECTED_SIZE=str(size))
    [line] = printed(load_handler(), {"strategy": "ranged connections=4 chunk_size=256KiB"}, capsys)
    record = json.loads(line)
    assert record["requests"] > measure.REQUESTS_KEPT == len(record["request_ttfb_ms"])
    assert len(line.encode()) + 1 + platform_bytes() <= costs.LOG_BYTES_PER_MESSAGE


def test_a_latency_record_fits_the_estimate(emulator, function_env, load_handler, capsys):
    s3 = boto3.client("s3", endpoint_url=emulator, region_name="us-east-1", aws_access_key_id="test",
                      aws_secret_access_key="test")  # fmt: skip
    bucket = f"lat-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=bucket)
    function_env["LATENCY_BUCKETS"] = json.dumps({"standard": bucket})
    lines = printed(load_handler(), {"workload": "latency", "sizes": [1_000_000], "reps": 1}, capsys)
    records = [json.loads(line) for line in lines]
    assert sorted(r["operation"] for r in records if r["event"] == "latency") == ["get", "put"]
    # Each record's bytes, the message's platform lines shared out over its records.
    assert max(len(line.encode()) + 1 for line in lines) + platform_bytes() / len(lines) <= latency_costs.LOG_BYTES_PER_RECORD
