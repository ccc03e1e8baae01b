"""The project's own function, packaged as for deployment, hosted end to end in the emulator."""

import json
import os
import uuid

import pytest

from fanout.cloud import package
from fanout.workloads.download import strategies
from tests.harness.host_testing import REPORT, START, allow

OBJECT_SIZE = 300 * 1024 + 7  # over one 256 KiB read chunk, not a multiple of it
CONCURRENCY_LIMIT = 2


@pytest.fixture(scope="module")
def downloader_zip(emulator) -> bytes:
    return package.build("runner").read_bytes()


def test_downloader_records_every_message_and_retries_the_failure(deploy, downloader_zip, emulator):
    """Each message downloads once: at 1024 MB the environment's CPU share (0.58 vCPU) finishes a
    download well within the 4 s visibility, so only the injected failure is delivered again."""
    bucket = f"downloader-{uuid.uuid4().hex[:8]}"
    fn = deploy(downloader_zip, handler="handler.lambda_handler", batch_size=3, report_failures=True,
                reserved=CONCURRENCY_LIMIT, timeout=10, visibility=4, max_receive=2, memory=1024, environment={
                    "FANOUT_BUCKET": bucket, "FANOUT_KEY": "object", "FANOUT_EXPECTED_SIZE": str(OBJECT_SIZE),
                    "DOWNLOAD_DEFAULT_STRATEGY": "download_file", "FANOUT_CONCURRENCY_LIMIT": str(CONCURRENCY_LIMIT),
                    "POWERTOOLS_SERVICE_NAME": "s3-fanout", "POWERTOOLS_LOG_LEVEL": "INFO"},
                allowed=[allow("s3:GetObject", f"arn:aws:s3:::{bucket}/object")])
    s3 = fn.client("s3")
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="object", Body=os.urandom(OBJECT_SIZE))
    run_id = uuid.uuid4().hex
    bodies = [{"run_id": run_id, "seq": seq, "experiment_tag": "host", "strategy": strategy}
              for seq, strategy in enumerate(["download_file", "stream", "ranged connections=2 chunk_size=256KiB"] * 2)]
    failing = {"run_id": run_id, "seq": len(bodies), "experiment_tag": "host", "inject_failure": True}
    fn.send([*bodies, failing])

    summary = fn.host()

    events = [m for stream in fn.streams().values() for _, m in stream]
    records = [json.loads(m) for m in events if m.startswith("{")]
    downloads = sorted((r for r in records if r.get("event") == "download"), key=lambda r: r["seq"])
    errors = [r for r in records if r.get("event") == "error"]
    request_ids = {START.match(m).group(1) for m in events if START.match(m)}
    cold_requests = {REPORT.match(m)["id"] for m in events if REPORT.match(m) and REPORT.match(m)["init"]}

    assert [(r["seq"], r["strategy"]) for r in downloads] == [(b["seq"], str(strategies.parse(b["strategy"])))
                                                               for b in bodies]  # fmt: skip
    for record in downloads:
        assert (record["run_id"], record["experiment_tag"], record["bytes"]) == (run_id, "host", OBJECT_SIZE)
        assert (record["memory_size"], record["concurrency_limit"]) == (1024, CONCURRENCY_LIMIT)
        assert record["request_id"] in request_ids and record["receive_count"] == 1
        assert record["service"] == "s3-fanout" and record["level"] == "INFO"
    assert len({r["env_id"] for r in downloads}) <= CONCURRENCY_LIMIT
    # The function's cold_start agrees with the platform's Init Duration, invocation by invocation.
    assert {r["request_id"] for r in records if r["cold_start"]} == cold_requests
    # The injected failure is reported per item, retried, then dead-lettered after max_receive.
    assert sorted(r["receive_count"] for r in errors) == [1, 2]
    assert all((r["seq"], r["error_type"], r["level"]) == (failing["seq"], "InjectedFailure", "ERROR")
               for r in errors)
    assert fn.drain(fn.dlq_url) == [failing] and fn.drain(fn.queue_url) == []
    assert summary.messages_deleted == len(bodies) and summary.errors == 0
