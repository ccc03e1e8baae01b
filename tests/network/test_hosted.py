"""The project's function, hosted under a small network model: its records show the model."""

import json
import os
import uuid

import pytest

from fanout.cloud import package
from tests.harness import host_testing as testing

from .conftest import BURST_MODEL as MODEL
from .conftest import BURST_OBJECT_SIZE as OBJECT_SIZE
from .conftest import model_of

pytestmark = pytest.mark.slow



@pytest.mark.timing
def test_stream_downloads_show_the_burst_and_the_sustained_rate(emulator):
    model = model_of("small", **MODEL)
    bucket = f"hosted-{uuid.uuid4().hex[:8]}"
    fn = testing.deploy(emulator, testing.create_role(emulator, f"{bucket}-role", [
                            testing.allow("s3:GetObject", f"arn:aws:s3:::{bucket}/object")]),
                        package.build("runner").read_bytes(), handler="handler.lambda_handler",
                        reserved=2, timeout=30, visibility=60, memory=1024, environment={
                            "FANOUT_BUCKET": bucket, "FANOUT_KEY": "object", "FANOUT_EXPECTED_SIZE": str(OBJECT_SIZE),
                            "DOWNLOAD_DEFAULT_STRATEGY": "stream", "FANOUT_CONCURRENCY_LIMIT": "2"})
    s3 = fn.client("s3")
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="object", Body=os.urandom(OBJECT_SIZE))
    fn.send([{"run_id": "r", "seq": seq, "experiment_tag": "net"} for seq in range(2)])

    summary = fn.host(network=model)

    records = [json.loads(m) for stream in fn.streams().values() for _, m in stream if m.startswith("{")]
    downloads = [r for r in records if r.get("event") == "download"]
    assert summary.messages_deleted == 2 and len(downloads) == 2
    shape = model.at(1024)
    first = min(downloads, key=lambda r: r["start_ms"])  # the first download starts with a full bucket
    assert first["burst_excess_bytes"] == pytest.approx(shape.burst_bytes, rel=0.1)
    # The best 1 s window: the whole burst at the connection's cap, the rest at the sustained rate.
    burst_seconds = shape.burst_bytes / (shape.connection_rate - shape.sustained_rate)
    best_second = shape.connection_rate * burst_seconds + shape.sustained_rate * (1 - burst_seconds)
    assert first["peak_mb_per_s"] == pytest.approx(best_second / 1e6, rel=0.1)
    assert first["burst_bytes"] == pytest.approx(shape.connection_rate * burst_seconds, rel=0.1)
    for record in downloads:
        assert record["sustained_mb_per_s"] == pytest.approx(shape.sustained_rate / 1e6, rel=0.1)
        # the latency less the path's measured cost is a floor; 5% for that measurement's noise
        assert record["first_byte_seconds"] >= shape.first_byte_s * 0.95
        # slower than one connection at the cap, faster than the sustained rate alone: a burst
        assert shape.sustained_rate < record["bytes"] / record["seconds"] < shape.connection_rate
