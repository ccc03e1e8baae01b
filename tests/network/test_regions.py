"""The network model's region profiles: a request signed for a profiled region takes that path
(first byte after RTT + that S3's first byte, rates times its factor). Known truth: the seqread
core reading through the shaping proxy from both regions recovers the injected remote/local
ratio of MiB/s within 10%, and one-byte answers recover the round trip on its own (the rate
factor hides it in the ratio)."""

import http.client
import statistics
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import pytest

from fanout.common import aws, function_modules
from fanout.local.network.model import ModelError
from fanout.local.network.proxy import Shaper

from .conftest import MIB, model_of

REMOTE = "us-west-2"
CONNECTION_MB_PER_S, FIRST_BYTE_MS = 16.0, 10.0
PROFILE = {"rtt_ms": 40.0, "first_byte_ms": 10.0, "rate_factor": 0.5}
BLOCK, SIZE, JOBS = 4 * MIB, 8 * MIB, 2  # blocks long against a 10 ms piece of the proxy


def block_seconds(first_byte_ms: float, rate_mb_per_s: float) -> float:
    return first_byte_ms / 1000 + BLOCK / (rate_mb_per_s * 1e6)


@pytest.mark.timing  # measured rates: a loaded machine would decide the ratio
def test_the_injected_remote_to_local_ratio_is_recovered_within_10_percent(emulator):
    seqread = function_modules.load("seqread")
    shape = model_of("regions", connection_mb_per_s=CONNECTION_MB_PER_S, first_byte_ms=FIRST_BYTE_MS,
                     regions={REMOTE: PROFILE}).at(1024)  # fmt: skip
    setup = aws.client("s3", "us-east-1", emulator)
    buckets = {"local": f"rg-{uuid.uuid4().hex[:12]}", "remote": f"rg-{uuid.uuid4().hex[:12]}"}
    setup.create_bucket(Bucket=buckets["local"])
    setup.create_bucket(Bucket=buckets["remote"], CreateBucketConfiguration={"LocationConstraint": REMOTE})
    for bucket in buckets.values():
        for job in range(JOBS):
            setup.put_object(Bucket=bucket, Key=seqread.object_key(SIZE, job), Body=bytes(SIZE))
    shaper = Shaper(emulator, seed=3)
    try:
        endpoint = shaper.endpoint(shape)
        clients = {"local": aws.client("s3", "us-east-1", endpoint), "remote": aws.client("s3", REMOTE, endpoint)}
        params = {source: seqread.Params(jobs=JOBS, block=BLOCK, file_size=SIZE, source=source) for source in buckets}
        rates = {"local": [], "remote": []}
        for _ in range(3):  # interleaved
            for source in ("local", "remote"):
                figures = seqread.read_all(clients[source], buckets[source], params[source])
                rates[source].append(figures["mib_per_s"])
    finally:
        shaper.close()
    # Each job reads its blocks one after another on its own connection: a block takes its first
    # byte plus its bytes at the connection's rate (times the factor on the remote path).
    local = block_seconds(FIRST_BYTE_MS, CONNECTION_MB_PER_S)
    remote = block_seconds(PROFILE["rtt_ms"] + PROFILE["first_byte_ms"], CONNECTION_MB_PER_S * PROFILE["rate_factor"])
    injected = local / remote
    measured = statistics.median(rates["remote"]) / statistics.median(rates["local"])
    assert measured == pytest.approx(injected, rel=0.10), (measured, injected, rates)


class Instant(BaseHTTPRequestHandler):
    """Answers every GET at once with a small body: what the proxy adds is all the wait there is."""

    protocol_version = "HTTP/1.1"

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "1")
        self.end_headers()
        self.wfile.write(b"x")

    def log_message(self, *args):
        pass


def first_byte_waits(endpoint: str, region: str, count: int) -> list[float]:
    """Seconds from sending each GET signed for `region` (its SigV4 credential scope: the header is
    all the proxy reads) to having its response head, on one kept-alive connection."""
    url = urlsplit(endpoint)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    signed = {"Authorization": f"AWS4-HMAC-SHA256 Credential=test/20260101/{region}/s3/aws4_request, SignedHeaders=host"}
    waits = []
    for _ in range(count):
        sent = time.monotonic()
        connection.request("GET", "/b/k", headers=signed)
        response = connection.getresponse()
        waits.append(time.monotonic() - sent)
        response.read()
    connection.close()
    return waits


@pytest.mark.timing
def test_the_remote_round_trip_is_recovered_on_its_own():
    """With the same first byte in both regions and one-byte answers, the remote path's first byte
    comes later by its round trip alone: recovered from the medians within 20 ms (the machine's
    load delays both paths alike)."""
    rtt_ms, first_byte_ms = 150.0, 20.0
    server = ThreadingHTTPServer(("127.0.0.1", 0), Instant)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    shaper = Shaper(f"http://127.0.0.1:{server.server_address[1]}", seed=5)
    try:
        shape = model_of("rtt", first_byte_ms=first_byte_ms,
                         regions={REMOTE: {"rtt_ms": rtt_ms, "first_byte_ms": first_byte_ms, "rate_factor": 1}})
        endpoint = shaper.endpoint(shape.at(1024))
        local, remote = [], []
        for _ in range(3):  # interleaved
            local += first_byte_waits(endpoint, "us-east-1", 3)
            remote += first_byte_waits(endpoint, REMOTE, 3)
    finally:
        shaper.close()
        server.shutdown()
    recovered_ms = (statistics.median(remote) - statistics.median(local)) * 1000
    assert recovered_ms == pytest.approx(rtt_ms, abs=20), (local, remote)


@pytest.mark.parametrize(
    ("regions", "named"),
    [({REMOTE: {"rtt_ms": 40, "first_byte_ms": 10}}, "exactly rtt_ms"),
     ({REMOTE: {**PROFILE, "rate_factor": 0}}, "rate_factor = 0"),
     ({REMOTE: {**PROFILE, "rtt_ms": -1}}, "rtt_ms = -1"), ({}, "'regions' must be a table")],
)  # fmt: skip
def test_a_bad_region_profile_is_one_line_naming_it(regions, named):
    with pytest.raises(ModelError, match=named):
        model_of("bad", regions=regions)


def test_only_a_request_signed_for_a_profiled_region_takes_its_path():
    shape = model_of("r", first_byte_ms=5, regions={REMOTE: PROFILE}).at(1024)
    signed = b"GET /b/k HTTP/1.1\r\nAuthorization: AWS4-HMAC-SHA256 Credential=test/20260101/%s/s3/aws4_request, x\r\n"
    assert shape.region_path(signed % REMOTE.encode()) == (0.05, 0.5)
    assert shape.region_path(signed % b"us-east-1") is None
