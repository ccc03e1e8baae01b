"""Log events of the shapes the function and Lambda write, for the Insights tests."""

import json
import random

from fanout.workloads.download import strategies
from fanout.cloud.stack import Stack

# Strategies of the sample records: a crt record has no request figures (its client speaks HTTP itself).
SAMPLE_STRATEGIES = ("download_file", "stream", "ranged connections=4", "ranged connections=8", "crt")

# Endpoint addresses of the sample records; most downloads reach one, some several (no endpoint_ip).
ADDRESSES = ("52.216.8.1", "52.216.8.2", "3.5.0.9")

BASE_MS = 1_714_564_800_000  # 2024-05-01 12:00:00 UTC


def event(message: str, timestamp: int = BASE_MS, stream: str = "2024/05/01/[$LATEST]abc", ingestion=None) -> dict:
    """One event as FilterLogEvents returns it."""
    return {"timestamp": timestamp, "message": message, "logStreamName": stream,
            "ingestionTime": timestamp + 500 if ingestion is None else ingestion}  # fmt: skip


def json_event(record: dict, timestamp: int = BASE_MS, **kwargs) -> dict:
    return event(json.dumps(record), timestamp, **kwargs)


def download_record(rng: random.Random, seq: int, **overrides) -> dict:
    """A success record of the function log contract, with the keys Powertools adds."""
    seconds = rng.uniform(0.05, 5.0)
    size = rng.choice((1_048_576, 268_435_456))
    record = {
        "level": "INFO", "location": "record:57", "message": "download", "service": "s3-fanout",
        "timestamp": "2024-05-01 12:00:00,123+0000", "event": "download", "run_id": "run-1", "seq": seq,
        "experiment_tag": rng.choice(("base", "tuned")), "concurrency_limit": rng.choice((10, 500)),
        "memory_size": rng.choice((1024, 2048)), **strategy_fields(rng, size),
        "bytes": size, "seconds": seconds, "ttfb_seconds": seconds / 40, "mbps": size * 8 / seconds / 1e6,
        "mib_per_s": size / 1_048_576 / seconds, "start_ms": BASE_MS + seq, "end_ms": BASE_MS + seq + 1000,
        "cold_start": rng.random() < 0.2, "env_id": f"env-{seq % 7}", "receive_count": rng.choice((1, 1, 2)),
        "message_id": f"msg-{seq}", "request_id": f"req-{seq}", "s3_request_id": f"s3-{seq}",
        "key": f"keys/{seq % 3}/object", "cpu_seconds": seconds * (seq % 5) / 10, "cpu_share": (seq % 5) / 10,
        "boto3_version": "1.44.5" if seq % 4 else "1.40.0", "sdk_source": "bundled" if seq % 4 else "runtime",
    }  # fmt: skip
    if record["requests"] is not None:  # crt counts no retries (drawn without rng: the sample stays as it was)
        record |= {"retries": seq % 3, "slowdowns": seq % 2}
    record.update(overrides)
    return record


def error_record(seq: int, error_type: str, message: str) -> dict:
    return {"level": "ERROR", "event": "error", "error_type": error_type, "error_message": message,
            "run_id": "run-1", "seq": seq, "experiment_tag": "base", "message_id": f"msg-{seq}",
            "receive_count": 1, **strategies.parse("stream").fields(), "memory_size": 1024,
            "concurrency_limit": 10}  # fmt: skip


def strategy_fields(rng: random.Random, size: int) -> dict:
    """A random strategy's record fields, with request figures that fit it."""
    choice = strategies.parse(rng.choice(SAMPLE_STRATEGIES))
    if choice.strategy.aws_only:
        return {**choice.fields(), "request_ttfb_ms": None, "requests": None, "connections": None}
    requests = choice.gets(size) + (choice.name == "download_file")  # its HeadObject
    ttfb = [round(rng.uniform(5, 80), 3) for _ in range(requests)]
    connections = min(requests, choice.value("connections") if choice.name == "ranged" else requests)
    ips = [rng.choice(ADDRESSES)] * requests if rng.random() < 0.8 else [rng.choice(ADDRESSES) for _ in range(requests)]
    one = {"endpoint_ip": ips[0]} if len(set(ips)) == 1 else {}  # absent when several, as Powertools drops null
    return {**choice.fields(), "request_ttfb_ms": ttfb, "requests": requests, "connections": connections,
            "request_ips": " ".join(ips), **one}  # fmt: skip


def report_line(request_id: str, duration: float, billed: int, memory_mb: int, used_mb: int, init=None) -> str:
    """A Lambda REPORT line, tab separated as Lambda writes it."""
    parts = [f"REPORT RequestId: {request_id}", f"Duration: {duration:.2f} ms", f"Billed Duration: {billed} ms",
             f"Memory Size: {memory_mb} MB", f"Max Memory Used: {used_mb} MB"]  # fmt: skip
    if init is not None:
        parts.append(f"Init Duration: {init:.2f} ms")
    return "\t".join(parts) + "\t\n"


def make_stack(**outputs) -> Stack:
    """A Stack whose only meaningful outputs are the given ones (log_group, endpoint...)."""
    values = dict(
        backend="local", stack="t", region="us-east-1", endpoint="", bucket="b", object_key="k", object_size=1,
        queue_url="q", queue_arn="arn:aws:sqs:us-east-1:123456789012:q", dlq_url="d", dlq_arn="d",
        function_name="f", log_group="/aws/lambda/f", concurrency=1, memory=1024, timeout=60,
        batch_size=1, max_receive_count=5, architecture="x86_64", workload_outputs={"default_strategy": "download_file"},
    )  # fmt: skip
    values.update(outputs)
    return Stack(**values)
