"""Which path a hosted function's S3 traffic takes: `none` goes straight to the emulator (its
throughput is today's by construction), a model through the environment's shaping endpoint."""

import uuid

import pytest

from fanout import network
from fanout.host import testing

from .conftest import model_of

REPORTS_ENDPOINT = """
import os

def handler(event, context):
    print("S3", os.environ.get("AWS_ENDPOINT_URL_S3", "-"), os.environ["AWS_ENDPOINT_URL"])
"""


@pytest.mark.parametrize("model", [network.load("none"), model_of("slow", connection_mb_per_s=5)])
def test_only_a_model_puts_a_proxy_on_the_s3_path(emulator, model):
    fn = testing.deploy(emulator, testing.create_role(emulator, f"ep-{uuid.uuid4().hex[:8]}"), REPORTS_ENDPOINT)
    fn.send([{"seq": 0}])
    summary = fn.host(network=model)
    [line] = [m for stream in fn.streams().values() for _, m in stream if m.startswith("S3 ")]
    _, s3_endpoint, endpoint = line.split()
    assert summary.messages_deleted == 1 and endpoint == emulator
    if model.shaped:
        assert s3_endpoint.startswith("http://127.0.0.1:") and s3_endpoint != emulator
    else:
        assert s3_endpoint == "-"
