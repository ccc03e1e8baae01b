"""The proxy answers reads of objects itself (fanout.local.network.answers): the same status, headers
and bytes as the emulator, the emulator asked once per distinct read, and written objects asked
again."""

import http.client
import os
import re
import threading
import uuid
from email.utils import parsedate_to_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import pytest
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from fanout.common import aws
from fanout.local.network.proxy import Shaper

from .conftest import model_of

SIZE = 3 * 2**20 + 5  # parts of 1 MiB leave an odd last one
PER_ANSWER = ("date", "x-amzn-requestid")  # made for each answer


@pytest.fixture(scope="module")
def stored(emulator):
    s3 = aws.client("s3", "us-east-1", emulator)
    bucket = f"answers-{uuid.uuid4().hex[:8]}"
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="dir/object", Body=os.urandom(SIZE))
    return bucket


@pytest.fixture(scope="module")
def shaper(emulator):
    proxy = Shaper(emulator, seed=1)
    yield proxy
    proxy.close()


def ask(endpoint: str, method: str, path: str, headers: dict | None = None) -> tuple[int, list, bytes]:
    """Status, headers (name lower-cased, in order) and body of one signed request."""
    url = urlsplit(endpoint)
    request = AWSRequest(method, f"{endpoint}{path}", headers={**(headers or {}), "x-amz-content-sha256": "UNSIGNED-PAYLOAD"})
    S3SigV4Auth(Credentials("test", "test"), "s3", "us-east-1").add_auth(request)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    connection.request(method, path, headers=dict(request.headers.items()))
    response = connection.getresponse()
    answer = response.status, [(k.lower(), v) for k, v in response.getheaders()], response.read()
    connection.close()
    return answer


def comparable(answer: tuple) -> tuple:
    """The answer with the values of the per-answer headers and an error's request id left out
    (their names kept), and without Connection: the proxy keeps the function's connections alive."""
    status, headers, body = answer
    body = re.sub(rb"<RequestId>[^<]*</RequestId>", b"<RequestId/>", body)
    return status, [(k, "" if k in PER_ANSWER else v) for k, v in headers if k != "connection"], body


READS = {
    "whole": ("GET", {}),
    "head": ("HEAD", {}),
    "range": ("GET", {"Range": "bytes=0-1048575"}),
    "last part": ("GET", {"Range": "bytes=3145728-"}),
    "suffix": ("GET", {"Range": "bytes=-10"}),
    "past the end": ("GET", {"Range": f"bytes={SIZE}-"}),
    "head of a range": ("HEAD", {"Range": "bytes=0-9"}),
    "checksum mode": ("GET", {"x-amz-checksum-mode": "ENABLED"}),
    "if-match that fails": ("GET", {"If-Match": '"not-the-etag"', "Range": "bytes=0-9"}),
}


@pytest.mark.parametrize("name", READS)
def test_answers_are_the_emulators(shaper, emulator, stored, name):
    """Asked twice through the proxy (the second from what it kept), as the emulator answers:
    the status, the headers in order (but the per-answer Date and request id) and the bytes."""
    method, headers = READS[name]
    endpoint = shaper.endpoint(model_of("t", connection_mb_per_s=500).at(1024))
    path = f"/{stored}/dir/object"
    expected = comparable(ask(emulator, method, path, headers))
    for _ in range(2):
        answer = ask(endpoint, method, path, headers)
        assert comparable(answer) == expected
        parsedate_to_datetime(dict(answer[1])["date"])  # a valid HTTP date, made for this answer


@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_a_missing_key_is_the_emulators_answer(shaper, emulator, stored, method):
    endpoint = shaper.endpoint(model_of("t", connection_mb_per_s=500).at(1024))
    path = f"/{stored}/dir/missing"
    status, _, body = ask(endpoint, method, path)
    assert status == ask(emulator, method, path)[0] == 404
    assert (b"NoSuchKey" in body) == (method == "GET")


def test_a_write_through_the_proxy_is_read_back(shaper, stored):
    """Read (and kept), written, read again: the new bytes and ETag, not the kept ones."""
    s3 = aws.client("s3", "us-east-1", shaper.endpoint(model_of("t", connection_mb_per_s=500).at(1024)))
    s3.put_object(Bucket=stored, Key="rewritten", Body=b"first")
    assert s3.get_object(Bucket=stored, Key="rewritten")["Body"].read() == b"first"
    etag = s3.head_object(Bucket=stored, Key="rewritten")["ETag"]
    s3.put_object(Bucket=stored, Key="rewritten", Body=b"second")
    assert s3.get_object(Bucket=stored, Key="rewritten")["Body"].read() == b"second"
    assert s3.head_object(Bucket=stored, Key="rewritten")["ETag"] != etag
    s3.delete_object(Bucket=stored, Key="rewritten")
    with pytest.raises(s3.exceptions.NoSuchKey):
        s3.get_object(Bucket=stored, Key="rewritten")


class Counting(BaseHTTPRequestHandler):
    """An upstream that counts what reaches it and answers every request with BODY."""

    protocol_version = "HTTP/1.1"
    seen: list = []

    def _answer(self, body: bytes) -> None:
        self.seen.append(f"{self.command} {self.path}")
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self):
        self._answer(b"x" * 1000)

    do_HEAD = do_GET

    def do_PUT(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self._answer(b"")

    def log_message(self, *args):
        pass


@pytest.fixture
def counted():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Counting)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    proxy = Shaper(f"http://127.0.0.1:{server.server_address[1]}", seed=1)
    Counting.seen = []
    yield proxy.endpoint(model_of("t", connection_mb_per_s=500).at(1024))
    proxy.close()
    server.shutdown()


def plain(endpoint: str, method: str, path: str, headers: dict | None = None, body: bytes | None = None) -> int:
    url = urlsplit(endpoint)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    connection.request(method, path, body=body, headers=headers or {})
    response = connection.getresponse()
    response.read()
    connection.close()
    return response.status


def test_the_emulator_is_asked_once_per_distinct_read(counted):
    for _ in range(3):
        for headers in ({}, {"Range": "bytes=0-9"}):
            plain(counted, "GET", "/bucket/key", headers)
        plain(counted, "HEAD", "/bucket/key")
    assert sorted(Counting.seen) == ["GET /bucket/key", "GET /bucket/key", "HEAD /bucket/key"]


def signed_by(access_key: str) -> dict:
    return {"Authorization": f"AWS4-HMAC-SHA256 Credential={access_key}/20260101/us-east-1/s3/aws4_request, "
                             "SignedHeaders=host, Signature=0"}


def test_an_answer_is_kept_for_the_caller_it_was_given_to(counted):
    """A role's session may be refused what another caller may read: each caller is asked for."""
    for caller in ("test", "ASIAROLE", "test", "ASIAROLE"):
        plain(counted, "GET", "/bucket/key", signed_by(caller))
    assert Counting.seen == ["GET /bucket/key"] * 2


def test_reads_that_may_change_are_asked_every_time(counted):
    """A listing (a query string), a bucket (no key), and an object once written."""
    for _ in range(2):
        plain(counted, "GET", "/bucket?list-type=2")
        plain(counted, "GET", "/bucket")
    plain(counted, "GET", "/bucket/key")
    plain(counted, "PUT", "/bucket/key", body=b"new")
    for _ in range(2):
        plain(counted, "GET", "/bucket/key")
    assert Counting.seen == ["GET /bucket?list-type=2", "GET /bucket"] * 2 + ["GET /bucket/key", "PUT /bucket/key"] + \
        ["GET /bucket/key"] * 2
