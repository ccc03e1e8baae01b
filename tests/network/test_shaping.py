"""The shaping proxy between a client and the emulator: per-connection caps, one bucket per
environment, first-byte latency; and the function host giving each environment its endpoint."""

import http.client
import socket
import statistics
import time
from urllib.parse import urlsplit

import pytest
from boto3.s3.transfer import TransferConfig

from fanout.common import aws
from fanout.local.network.path import first_byte_wait
from fanout.local.network.proxy import Shaper

from tests.functions.support import load_function_module

from .conftest import model_of


@pytest.fixture
def shaper(emulator):
    proxy = Shaper(emulator, seed=1)
    yield proxy
    proxy.close()


class Sink:
    def __init__(self):
        self.bytes = 0

    def write(self, data):
        self.bytes += len(data)


def timed_download(client, obj, **transfer) -> float:
    """MB/s of one transfer-manager download of `obj` into a discarding sink."""
    sink = Sink()
    started = time.monotonic()
    client.download_fileobj(obj.bucket, obj.key, sink, Config=TransferConfig(**transfer))
    seconds = time.monotonic() - started
    assert sink.bytes == obj.size
    return obj.size / seconds / 1e6


@pytest.mark.timing
def test_two_connections_exceed_the_connection_cap_but_not_the_environment(shaper, big_object):
    cap, environment = 3.0, 5.0  # MB/s
    shape = model_of("t", connection_mb_per_s=cap, sustained_mb_per_s=environment).at(1024)
    client = aws.client("s3", "us-east-1", shaper.endpoint(shape))
    rate = timed_download(client, big_object, max_concurrency=2, multipart_chunksize=8 * 2**20)
    assert cap * 1.2 < rate <= environment * 1.02


@pytest.mark.timing
def test_one_connection_is_held_to_its_cap(shaper, big_object):
    cap = 8.0
    shape = model_of("t", connection_mb_per_s=cap).at(1024)
    client = aws.client("s3", "us-east-1", shaper.endpoint(shape))
    rate = timed_download(client, big_object, max_concurrency=1, multipart_threshold=2 * big_object.size)
    assert cap * 0.9 < rate <= cap * 1.02


@pytest.mark.timing
def test_environments_have_their_own_buckets(shaper, big_object):
    """An environment whose bucket is spent gets the sustained rate; a fresh one next to it
    still bursts."""
    shape = model_of("t", burst="4MiB", peak_mb_per_s=40, sustained_mb_per_s=4).at(1024)
    spent, fresh = (aws.client("s3", "us-east-1", shaper.endpoint(shape)) for _ in range(2))

    def read(client, size) -> float:
        started = time.monotonic()
        client.get_object(Bucket=big_object.bucket, Key=big_object.key, Range=f"bytes=0-{size - 1}")["Body"].read()
        return time.monotonic() - started

    read(spent, 6 * 2**20)
    burst, sustained = read(fresh, 3 * 2**20), read(spent, 3 * 2**20)
    assert sustained > 4 * burst


@pytest.mark.timing
def test_the_function_sees_the_first_byte_latency(shaper, big_object):
    """The injected latency is what botocore times from sending a GetObject to parsing its
    answer (the function's request_ttfb_ms), the path's own cost included: within 5%."""
    latency = 0.1
    client = aws.client("s3", "us-east-1", shaper.endpoint(model_of("t", first_byte_ms=latency * 1000).at(1024)))
    waits = [first_byte_wait(client) for _ in range(7)]
    assert 0 < shaper.path_seconds < latency
    assert statistics.median(waits) == pytest.approx(latency, rel=0.05)


def test_a_closed_endpoint_refuses_connections(shaper):
    endpoint = shaper.endpoint(model_of("t", connection_mb_per_s=1).at(1024))
    port = urlsplit(endpoint).port
    socket.create_connection(("127.0.0.1", port), timeout=5).close()
    shaper.close_endpoint(endpoint)
    shaper.endpoint(model_of("t", connection_mb_per_s=1).at(1024))  # answered: the close was handled before it
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5)


def test_the_functions_connection_outlives_the_emulators(shaper, emulator, big_object):
    """The emulator closes every connection after one answer; through the proxy one connection
    carries them all, as Lambda's connections to S3 do (http.client reconnects by itself when
    a server closes: count its connects)."""
    shaped = shaper.endpoint(model_of("t", connection_mb_per_s=50, first_byte_ms=1).at(1024))
    opened = {}
    for name, endpoint in (("emulator", emulator), ("proxy", shaped)):
        s3 = aws.client("s3", "us-east-1", endpoint)
        url = urlsplit(s3.generate_presigned_url("get_object", Params={"Bucket": big_object.bucket,
                                                                        "Key": big_object.key}))
        connection = CountingConnection(url.hostname, url.port, timeout=30)
        for first in range(0, 4 * 2**20, 2**20):
            byte_range = f"bytes={first}-{first + 2**20 - 1}"
            connection.request("GET", f"{url.path}?{url.query}", headers={"Range": byte_range})
            response = connection.getresponse()
            assert response.status == 206 and len(response.read()) == 2**20
        connection.close()
        opened[name] = connection.connects
    assert opened == {"emulator": 4, "proxy": 1}


def test_a_request_that_asks_for_the_close_gets_a_connection_of_its_own(shaper, emulator, big_object):
    """As S3: a request with `Connection: close` is answered so and its connection closed, so
    http.client connects anew for the next (the proxy keeps the others alive: the test above)."""
    endpoint = shaper.endpoint(model_of("t", connection_mb_per_s=50, first_byte_ms=1).at(1024))
    s3 = aws.client("s3", "us-east-1", endpoint)
    url = urlsplit(s3.generate_presigned_url("get_object", Params={"Bucket": big_object.bucket, "Key": big_object.key}))
    connection = CountingConnection(url.hostname, url.port, timeout=30)
    for first in range(0, 3 * 2**20, 2**20):
        headers = {"Range": f"bytes={first}-{first + 2**20 - 1}", "Connection": "close"}
        connection.request("GET", f"{url.path}?{url.query}", headers=headers)
        response = connection.getresponse()
        assert response.getheader("Connection") == "close" and len(response.read()) == 2**20
    assert connection.connects == 3


def test_repeated_gets_each_connect_anew_through_the_proxy(shaper, emulator, monkeypatch):
    """The repeated strategy through the proxy, its reads answered from the kept answers: every
    GET on a connection of its own, as on S3."""
    measure = load_function_module("measure", monkeypatch)
    s3 = aws.client("s3", "us-east-1", emulator)
    s3.create_bucket(Bucket="repeated")
    s3.put_object(Bucket="repeated", Key="small", Body=bytes(100_000))
    shaped = aws.client("s3", "us-east-1", shaper.endpoint(model_of("t", connection_mb_per_s=50).at(1024)))
    measure.endpoints.instrument(shaped)
    choice = measure.strategies.parse("repeated requests=9 in_flight=3")

    result = measure.download(shaped, "repeated", "small", choice, pin="127.0.0.1")

    assert result.bytes == 9 * 100_000
    assert (result.requests["requests"], result.requests["connections"]) == (9, 9)


class CountingConnection(http.client.HTTPConnection):
    connects = 0

    def connect(self):
        self.connects += 1
        super().connect()


def test_uploads_heads_and_errors_pass_on_a_kept_alive_connection(shaper, big_object):
    s3 = aws.client("s3", "us-east-1", shaper.endpoint(model_of("t", connection_mb_per_s=50).at(1024)))
    body = bytes(range(256)) * 8192  # 2 MiB: botocore asks for 100-continue
    s3.put_object(Bucket=big_object.bucket, Key="uploaded", Body=body)
    assert s3.head_object(Bucket=big_object.bucket, Key="uploaded")["ContentLength"] == len(body)
    with pytest.raises(s3.exceptions.ClientError):
        s3.head_object(Bucket=big_object.bucket, Key="missing")
    assert s3.get_object(Bucket=big_object.bucket, Key="uploaded")["Body"].read() == body
