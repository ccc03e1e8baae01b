"""GetObject sent as the key's buffer is read (patches.gets_send_the_key_as_read): stock moto's
status, headers and bytes, the first bytes of a whole object or a range sent before the rest is
read, and one key version per answer.

moto serves in this process (its WSGI app on a werkzeug server in a thread, as the emulator
serves it) so that the patch can be applied and undone between requests and the key's buffer
watched; requests are plain HTTP on a fresh connection, so framing (Content-Length, no chunked
encoding) is compared too, not only what an SDK makes of it.
"""

import hashlib
import http.client
import logging
import random
import re
import socket
import threading
from urllib.parse import urlsplit

import boto3
import pytest
from moto.core import DEFAULT_ACCOUNT_ID
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from moto.s3.models import s3_backends
from werkzeug.serving import make_server

from fanout.local.emulator import patches

CHUNK = patches.CHUNK
# Sizes around the chunk, and one above moto's 5 MB in-memory limit (a buffer on disk).
SIZES = [0, 1, CHUNK, 3 * CHUNK + 5, 6 * 2**20 + 7]
# What differs between two answers: the request id and the clock in headers, the ids in errors.
PER_ANSWER = {"x-amzn-requestid", "date"}
ERROR_IDS = re.compile(rb"<(RequestId|HostId)>[^<]*</\1>")
BUCKET = "stream"


@pytest.fixture(scope="module")
def server():
    """(endpoint, boto3 client) of moto served over HTTP in this process."""
    log = logging.getLogger("werkzeug")
    level = log.level
    log.setLevel(logging.WARNING)  # as the emulator: no access log
    httpd = make_server("127.0.0.1", 0, DomainDispatcherApplication(create_backend_app), threaded=True,
                        request_handler=MotoRequestHandler)  # fmt: skip
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    endpoint = f"http://127.0.0.1:{httpd.server_port}"
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="test",
                      aws_secret_access_key="test")  # fmt: skip
    s3.create_bucket(Bucket=BUCKET)
    s3.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
    yield endpoint, s3
    httpd.shutdown()
    httpd.server_close()
    log.setLevel(level)


def put(s3, key: str, data: bytes) -> str:
    """Stores `data` at `key` with a SHA-256 checksum; its version id."""
    return s3.put_object(Bucket=BUCKET, Key=key, Body=data, ChecksumAlgorithm="SHA256")["VersionId"]


def raw(s3, method: str, key: str, headers: dict | None = None, **params) -> tuple:
    """(status, headers but the per-answer ones, in order, body) of a plain HTTP request."""
    operation = "head_object" if method == "HEAD" else "get_object"
    url = urlsplit(s3.generate_presigned_url(operation, Params={"Bucket": BUCKET, "Key": key, **params}))
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        connection.request(method, f"{url.path}?{url.query}", headers=headers or {})
        answer = connection.getresponse()
        body = answer.read()
    finally:
        connection.close()
    kept = [(name.lower(), value) for name, value in answer.getheaders() if name.lower() not in PER_ANSWER]
    return answer.status, kept, ERROR_IDS.sub(rb"<\1/>", body)


def requests_of(s3, key: str, data: bytes, version: str) -> list[tuple]:
    """Every kind of GetObject the patch may answer, or must leave alone, and a HEAD."""
    etag = f'"{hashlib.md5(data).hexdigest()}"'
    size = len(data)
    ranges = ["bytes=0-0", f"bytes=1-{CHUNK + 1}", "bytes=-3", f"bytes={size}-", "bytes=0-0,2-3", "bytes=x-y"]
    return [
        ("GET", key, None, {}),
        ("GET", key, {"x-amz-checksum-mode": "ENABLED"}, {}),
        ("GET", key, {"Range": ""}, {}),
        ("GET", key, {"If-None-Match": etag}, {}),
        ("GET", key, {"If-Match": '"0"'}, {}),
        ("GET", key, None, {"VersionId": version}),
        ("GET", key, None, {"PartNumber": 1}),
        ("GET", key, None, {"ResponseContentType": "text/plain", "ResponseCacheControl": "no-cache"}),
        ("GET", "missing", None, {}),
        ("HEAD", key, None, {}),
        *[("GET", key, {"Range": header}, {}) for header in ranges],
    ]


@pytest.mark.parametrize("size", SIZES)
def test_answers_are_stock_moto_answers(server, get_patch, size):
    _, s3 = server
    data = random.Random(size).randbytes(size)
    key = f"object-{size}"
    version = put(s3, key, data)
    requests = requests_of(s3, key, data, version)
    stock = [raw(s3, method, name, headers, **params) for method, name, headers, params in requests]
    get_patch()
    assert [raw(s3, method, name, headers, **params) for method, name, headers, params in requests] == stock
    assert stock[0][0] == 200 and stock[0][2] == data
    assert ("content-length", str(size)) in stock[0][1]
    assert {status for status, _, _ in stock} == {200, 206, 304, 404, 412, 416}


class GatedBuffer:
    """A key's buffer on which any read but a first one of at most CHUNK bytes waits for
    `release`: what the client has received before then was sent before the rest was read."""

    def __init__(self, buffer):
        self.buffer, self.release, self.read_bytes = buffer, threading.Event(), 0

    def read(self, size: int = -1) -> bytes:
        if size < 0 or self.read_bytes + size > CHUNK:
            assert self.release.wait(30), "the gate was never released"
        data = self.buffer.read(size)
        self.read_bytes += len(data)
        return data

    def __getattr__(self, name):
        return getattr(self.buffer, name)


def gate(key_name: str) -> GatedBuffer:
    key = s3_backends[DEFAULT_ACCOUNT_ID]["aws"].buckets[BUCKET].keys[key_name]
    key.etag  # computed once at upload; read here, before the gate
    key._value_buffer = GatedBuffer(key._value_buffer)
    return key._value_buffer


def open_get(endpoint: str, key: str, header: str = "") -> socket.socket:
    """A connection on which a GET of `key` (with Range `header`, if any) has been sent."""
    address = urlsplit(endpoint)
    connection = socket.create_connection((address.hostname, address.port), timeout=5)
    ranged = f"Range: {header}\r\n" if header else ""
    connection.sendall(f"GET /{BUCKET}/{key} HTTP/1.1\r\nHost: {address.netloc}\r\n{ranged}"
                       "Authorization: AWS4-HMAC-SHA256 Credential=test/20250101/us-east-1/s3/aws4_request\r\n"
                       "\r\n".encode())  # fmt: skip
    return connection


def receive_head_and_some(connection: socket.socket) -> tuple[bytes, bytes]:
    """The response's head and the body bytes received with it (at least one)."""
    received = b""
    while b"\r\n\r\n" not in received or received.endswith(b"\r\n\r\n"):
        chunk = connection.recv(65536)
        assert chunk, "the connection closed before any body byte"
        received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    return head, body


def receive_rest(connection: socket.socket, body: bytes) -> bytes:
    while chunk := connection.recv(1 << 20):
        body += chunk
    return body


# Range header -> (status, first byte, stop) of the answer: each more than a CHUNK.
GATED = {"": (200, 0, 4 * CHUNK), f"bytes=0-{3 * CHUNK}": (206, 0, 3 * CHUNK + 1),
         f"bytes={CHUNK // 2}-": (206, CHUNK // 2, 4 * CHUNK)}  # fmt: skip


@pytest.mark.parametrize("header", GATED)
def test_the_first_bytes_are_sent_before_the_rest_is_read(server, get_patch, unique, header):
    endpoint, s3 = server
    data = random.Random(1).randbytes(4 * CHUNK)
    put(s3, unique, data)
    get_patch()
    buffer = gate(unique)
    status, first, stop = GATED[header]
    with open_get(endpoint, unique, header) as connection:
        head, body = receive_head_and_some(connection)
        assert head.startswith(f"HTTP/1.1 {status}".encode()) and data[first:stop].startswith(body)
        buffer.release.set()
        assert receive_rest(connection, body) == data[first:stop]


def test_an_overwrite_while_sending_leaves_the_answer_one_version(server, get_patch):
    """The answer holds the bytes of the version whose headers it sent, though a new version
    is stored (and a fresh GET answers it) while it is being sent."""
    endpoint, s3 = server
    old, new = random.Random(2).randbytes(4 * CHUNK), random.Random(3).randbytes(4 * CHUNK)
    put(s3, "overwritten", old)
    get_patch()
    buffer = gate("overwritten")
    with open_get(endpoint, "overwritten") as connection:
        head, body = receive_head_and_some(connection)
        put(s3, "overwritten", new)
        assert s3.get_object(Bucket=BUCKET, Key="overwritten")["Body"].read() == new
        buffer.release.set()
        assert receive_rest(connection, body) == old
    assert f'etag: "{hashlib.md5(old).hexdigest()}"'.encode() in head.lower()


def test_in_process_mock_reads_the_object_whole(get_patch):
    """moto's in-process mock hands the body to botocore's stubber, which wants bytes."""
    from moto import mock_aws

    get_patch()
    data = random.Random(4).randbytes(3 * CHUNK + 5)
    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket=BUCKET)
        s3.put_object(Bucket=BUCKET, Key="object", Body=data)
        answer = s3.get_object(Bucket=BUCKET, Key="object")
        assert (answer["Body"].read(), answer["ContentLength"]) == (data, len(data))
