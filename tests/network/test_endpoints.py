"""Which path a hosted function's S3 traffic takes: `none` goes straight to the emulator (its
throughput is today's by construction), a model through the environment's shaping endpoint."""

import uuid

import pytest

from fanout import network
from fanout.host import testing
from fanout.network.proxy import ENDPOINT_NAME, Shaper

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
        assert s3_endpoint.startswith(f"http://{ENDPOINT_NAME}:")  # the platform resolves it (fanout.host.resolver)
    else:
        assert s3_endpoint == "-"


TIMES_OUT_ONCE = """
import os, time

def handler(event, context):
    [record] = event["Records"]
    print("S3", os.environ["AWS_ENDPOINT_URL_S3"], record["attributes"]["ApproximateReceiveCount"])
    if record["attributes"]["ApproximateReceiveCount"] == "1":
        time.sleep(5)  # beyond the 1 s timeout: the host reaps this environment
"""


def test_a_reaped_environment_s_endpoint_is_closed(emulator, monkeypatch):
    """The environment that timed out has its endpoint closed when the host discards it; the
    one that took the message over keeps its own until the host ends."""
    closed = []
    close_endpoint = Shaper.close_endpoint

    def recording(shaper, url):
        closed.append(url)
        close_endpoint(shaper, url)

    monkeypatch.setattr(Shaper, "close_endpoint", recording)
    fn = testing.deploy(emulator, testing.create_role(emulator, f"ep-{uuid.uuid4().hex[:8]}"), TIMES_OUT_ONCE,
                        timeout=1, visibility=1, max_receive=3)
    fn.send([{"seq": 0}])
    summary = fn.host(network=model_of("slow", connection_mb_per_s=5))
    endpoints = dict(reversed(m.split()[1:]) for stream in fn.streams().values() for _, m in stream
                     if m.startswith("S3 "))
    assert summary.timeouts == 1 and summary.messages_deleted == 1
    assert endpoints["1"] != endpoints["2"] and closed == [endpoints["1"]]
