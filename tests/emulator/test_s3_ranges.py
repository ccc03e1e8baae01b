"""Ranged GetObject through the emulator: exactly the requested bytes and moto's headers, read
without reading the whole object (patches.gets_send_the_key_as_read).

The expected bytes and headers are computed from the uploaded data alone (a slice, its MD5,
its SHA-256); the in-process tests compare the patched answers with stock moto's and count the
bytes read from the key's buffer, which no timing could show reliably on a shared machine.
"""

import base64
import hashlib
import random
from concurrent.futures import ThreadPoolExecutor

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws
from moto.core import DEFAULT_ACCOUNT_ID
from moto.s3.models import s3_backends


MIB = 2**20
SIZE = 6 * MIB + 7  # above moto's 5 MB in-memory limit: the key's buffer is a file on disk
DATA = random.Random(0).randbytes(SIZE)
# Range header -> (first, last) byte it asks for, per RFC 9110's rules, written out per case.
RANGES = {
    "bytes=0-0": (0, 0),
    f"bytes={2 * MIB}-{4 * MIB + 11}": (2 * MIB, 4 * MIB + 11),
    f"bytes={SIZE - 1}-{SIZE - 1}": (SIZE - 1, SIZE - 1),
    f"bytes={SIZE - 100}-{SIZE + 100}": (SIZE - 100, SIZE - 1),
    "bytes=-1000": (SIZE - 1000, SIZE - 1),
    f"bytes={5 * MIB}-": (5 * MIB, SIZE - 1),
    "bytes=0-": (0, SIZE - 1),
}
# Answers compared with stock moto: the above, and those it answers another way.
OTHER_RANGES = [f"bytes={SIZE}-", "bytes=0-0,5-9", "bytes=x-y", "bytes=9-5", "bytes=-0", ""]
# Response headers that differ between two answers: the request id, and the clock (error
# answers carry a date).
PER_ANSWER = {"x-amzn-requestid", "date"}


@pytest.fixture(scope="module")
def uploaded(client):
    s3 = client("s3")
    s3.create_bucket(Bucket="ranges")
    s3.put_object(Bucket="ranges", Key="object", Body=DATA, ChecksumAlgorithm="SHA256")
    return s3


def sha256(data: bytes) -> str:
    return base64.b64encode(hashlib.sha256(data).digest()).decode()


@pytest.mark.parametrize("header", RANGES)
def test_a_range_is_the_slice_with_its_headers(uploaded, header):
    first, last = RANGES[header]
    answer = uploaded.get_object(Bucket="ranges", Key="object", Range=header, ChecksumMode="ENABLED")
    assert answer["Body"].read() == DATA[first : last + 1]
    assert answer["ResponseMetadata"]["HTTPStatusCode"] == 206
    assert answer["ContentRange"] == f"bytes {first}-{last}/{SIZE}"
    assert answer["ContentLength"] == last + 1 - first
    assert answer["ETag"] == f'"{hashlib.md5(DATA).hexdigest()}"'
    whole = (first, last) == (0, SIZE - 1)
    assert answer.get("ChecksumSHA256") == (sha256(DATA) if whole else None)


def test_parallel_ranges_each_get_their_own_bytes(uploaded):
    """Ranged GETs of one key at once, as the transfer manager sends them: each seek and read of
    the key's one buffer must not interleave with another's."""
    parts = [(first, min(first + MIB // 2, SIZE) - 1) for first in range(0, SIZE, MIB // 2)]

    def get(part):
        first, last = part
        return uploaded.get_object(Bucket="ranges", Key="object", Range=f"bytes={first}-{last}")["Body"].read()

    with ThreadPoolExecutor(max_workers=8) as pool:
        bodies = list(pool.map(get, parts * 2))
    assert bodies == [DATA[first : last + 1] for first, last in parts * 2]


def test_a_range_past_the_end_is_refused(uploaded):
    with pytest.raises(ClientError) as error:
        uploaded.get_object(Bucket="ranges", Key="object", Range=f"bytes={SIZE}-")
    assert error.value.response["Error"]["Code"] == "InvalidRange"
    assert error.value.response["ResponseMetadata"]["HTTPStatusCode"] == 416


def test_the_whole_object_is_unchanged(uploaded):
    answer = uploaded.get_object(Bucket="ranges", Key="object", ChecksumMode="ENABLED")
    assert answer["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert answer["Body"].read() == DATA
    assert (answer["ContentLength"], answer["ChecksumSHA256"]) == (SIZE, sha256(DATA))
    assert "ContentRange" not in answer


@pytest.fixture
def in_process():
    """A boto3 client of moto in this process, holding the object."""
    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket="ranges")
        s3.put_object(Bucket="ranges", Key="object", Body=DATA, ChecksumAlgorithm="SHA256")
        yield s3


def answer(s3, header: str, **params) -> tuple:
    """(status, headers but the per-answer ones, body) of a GetObject, or of its error."""
    try:
        got = s3.get_object(Bucket="ranges", Key="object", Range=header, ChecksumMode="ENABLED", **params)
        body = got["Body"].read()
    except ClientError as error:
        got, body = error.response, error.response["Error"]
    headers = {k: v for k, v in got["ResponseMetadata"]["HTTPHeaders"].items() if k not in PER_ANSWER}
    return got["ResponseMetadata"]["HTTPStatusCode"], headers, body


def test_answers_are_stock_moto_answers(in_process, get_patch):
    requests = [(header, {}) for header in [*RANGES, *OTHER_RANGES]] + [("bytes=0-9", {"PartNumber": 1})]
    stock = [answer(in_process, header, **params) for header, params in requests]
    get_patch()
    assert [answer(in_process, header, **params) for header, params in requests] == stock
    assert {status for status, _, _ in stock} == {200, 206, 416}


class CountingBuffer:
    """A key's buffer that counts the bytes read from it."""

    def __init__(self, buffer):
        self.buffer, self.read_bytes = buffer, 0

    def read(self, *size) -> bytes:
        data = self.buffer.read(*size)
        self.read_bytes += len(data)
        return data

    def __getattr__(self, name):
        return getattr(self.buffer, name)


@pytest.fixture
def counted(in_process):
    key = s3_backends[DEFAULT_ACCOUNT_ID]["aws"].buckets["ranges"].keys["object"]
    key.etag  # computed once at upload; read here so that the count holds only GetObject's reads
    key._value_buffer = CountingBuffer(key._value_buffer)
    return key._value_buffer


@pytest.mark.parametrize("header", RANGES)
def test_a_range_reads_only_its_bytes(in_process, get_patch, counted, header):
    get_patch()
    first, last = RANGES[header]
    in_process.get_object(Bucket="ranges", Key="object", Range=header)["Body"].read()
    assert counted.read_bytes == last + 1 - first


@pytest.mark.parametrize("header", [None, "bytes=0-0,5-9"])
def test_the_whole_object_is_read_whole(in_process, get_patch, counted, header):
    """The counting buffer sees moto's whole reads too: an answer of the whole object reads it."""
    get_patch()
    in_process.get_object(Bucket="ranges", Key="object", **({"Range": header} if header else {}))
    assert counted.read_bytes == SIZE
