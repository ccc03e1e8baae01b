"""Which path a hosted function's S3 traffic takes: `none` goes straight to the emulator (its
throughput is today's by construction), a model through the environment's shaping endpoint."""

import socket
import time
import uuid
from urllib.parse import urlsplit

import pytest

from fanout.local import network
from tests.harness import host_testing as testing
from fanout.local.network.proxy import ENDPOINT_NAME, HOST

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
        assert s3_endpoint.startswith(f"http://{ENDPOINT_NAME}:")  # the platform resolves it (fanout.local.host.resolver)
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


def test_a_reaped_environment_s_endpoint_is_closed(emulator):
    """While the host still runs: the endpoint of the environment that timed out (and was
    reaped) refuses connections, the one of the environment that took the message over
    answers. Checked from the host's progress report once the message is done, when both
    environments have logged their endpoints and the host has not ended yet."""
    fn = testing.deploy(emulator, testing.create_role(emulator, f"ep-{uuid.uuid4().hex[:8]}"), TIMES_OUT_ONCE,
                        timeout=1, visibility=1, max_receive=3)
    fn.send([{"seq": 0}])
    seen = {}

    def check(summary):
        if summary.messages_deleted == 1 and not seen:
            endpoints = dict(reversed(m.split()[1:]) for stream in fn.streams().values() for _, m in stream
                             if m.startswith("S3 "))
            seen.update(reaped=connects(endpoints["1"], until=False), live=connects(endpoints["2"], until=True))

    summary = fn.host(network=model_of("slow", connection_mb_per_s=5), progress=check)
    assert summary.timeouts == 1 and summary.messages_deleted == 1
    assert seen == {"reaped": False, "live": True}


def connects(endpoint: str, until: bool, seconds: float = 5.0) -> bool:
    """Whether a connection to `endpoint`'s port on loopback is accepted, tried until the answer
    is `until` or `seconds` have passed (the proxy handles a close a moment after the host
    sends it). The host name is the platform's (fanout.local.host.resolver): the port says it all."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            socket.create_connection((HOST, urlsplit(endpoint).port), timeout=5).close()
            accepted = True
        except ConnectionRefusedError:
            accepted = False
        if accepted == until or time.monotonic() > deadline:
            return accepted
        time.sleep(0.1)
