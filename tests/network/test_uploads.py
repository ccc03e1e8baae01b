"""Uploads under the model: request bodies pass the connection's upload cap and the
environment's upload bucket, and take the seconds the model predicts (known truth; the model
and why its rates are low: fanout.local.network.upload_truth)."""

import uuid

import pytest

from fanout.common import aws, function_modules
from fanout.local.network import truth
from fanout.local.network.proxy import Shaper
from fanout.local.network.upload_truth import MODEL, SIZE, timed_puts

from .conftest import model_of

pytestmark = [pytest.mark.timing,  # the seconds are wall-clock: a loaded machine stretches them
              pytest.mark.slow]  # about half a minute of shaped transfers

TOLERANCE = 0.10


@pytest.fixture(scope="module")
def shaper(emulator):
    proxy = Shaper(emulator, seed=1)
    yield proxy
    proxy.close()


@pytest.fixture(scope="module")
def bucket(emulator):
    name = f"uploads-{uuid.uuid4().hex[:8]}"
    aws.client("s3", "us-east-1", emulator).create_bucket(Bucket=name)
    return name


@pytest.mark.parametrize("connections", [1, 2, 4])
def test_uploads_take_the_seconds_the_model_predicts(shaper, bucket, connections):
    shape = model_of("uploads", **MODEL).at(1024)
    seconds = timed_puts(shaper.endpoint(shape), bucket, connections)
    predicted = truth.predicted_seconds(shape.uploads(), connections * SIZE, connections)
    assert seconds == pytest.approx(predicted, rel=TOLERANCE)


def test_uploads_are_not_limited_by_the_download_model(shaper, bucket):
    """A model without upload limits leaves request bodies alone, however slow its downloads:
    a quarter of the seconds its download rate would take."""
    shape = model_of("downloads", connection_mb_per_s=1, sustained_mb_per_s=1).at(1024)
    assert timed_puts(shaper.endpoint(shape), bucket, 1) < SIZE / shape.sustained_rate / 4


def test_transfer_threads_put_parts_on_as_many_connections(shaper, bucket):
    """The transfer workload's upload, its core as the function runs it, through one environment
    whose only limit is a per-connection upload cap: THREADS=4 sends four 5 MiB parts on four
    connections at once, so it is 4x as fast as THREADS=1 (the requests that start and complete
    the multipart upload take a few percent at this rate)."""
    # 2 MB/s a connection: the parts take 2.6 s each, so the fixed requests and the CPU a loaded
    # machine lends the four threads late stay a few percent (at 4 MB/s, 3.54x in a full suite)
    endpoint = shaper.endpoint(model_of("capped", upload_connection_mb_per_s=2).at(1024))
    seconds = {threads: _transfer_upload_seconds(endpoint, bucket, threads) for threads in (1, 4)}
    assert seconds[1] / seconds[4] == pytest.approx(4, rel=TOLERANCE)


def _transfer_upload_seconds(endpoint: str, bucket: str, threads: int) -> float:
    definition, operations = function_modules.load("transfer"), function_modules.load("transfer_ops")
    params = definition.parse({"operation": "upload", "size": "20MiB", "part_size": "5MiB", "threads": str(threads)})
    fields = operations.run(aws.client("s3", "us-east-1", endpoint), params, operations.Place(bucket, f"threads-{threads}"))
    return fields["seconds"]
