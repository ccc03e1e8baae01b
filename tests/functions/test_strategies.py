"""The strategies: their text (parse, canonical form, errors) and that each reads the exact bytes."""

import hashlib
import io
import math
import threading

import boto3
import pytest
from hypothesis import given
from hypothesis import strategies as st

from .support import load_function_module

SAMPLE = [
    "download_file", "stream", "ranged", "download_file max_concurrency=3 chunk_size=1MiB threshold=2MiB",
    "stream chunk_size=4096", "ranged connections=5 chunk_size=1MiB", "ranged connections=1 chunk_size=300KiB",
    "repeated requests=3 in_flight=2",
]  # fmt: skip


@pytest.fixture(scope="module")
def strategies():
    with pytest.MonkeyPatch.context() as patch:
        yield load_function_module("strategies", patch)


@pytest.fixture(scope="module")
def s3(emulator):
    return boto3.client("s3", endpoint_url=emulator, region_name="us-east-1",
                        aws_access_key_id="test", aws_secret_access_key="test")  # fmt: skip


class Counter:
    def __init__(self):
        self.calls, self.bytes, self.threads = 0, 0, set()

    def __call__(self, n):
        self.calls, self.bytes = self.calls + 1, self.bytes + n
        self.threads.add(threading.get_ident())


@pytest.mark.parametrize("text", SAMPLE)
def test_each_strategy_reads_the_exact_bytes(strategies, s3, test_object, tmp_path, text):
    expected = hashlib.sha256(s3.get_object(Bucket=test_object.bucket, Key=test_object.key)["Body"].read()).digest()
    choice = strategies.parse(text)
    memory, path, progress = io.BytesIO(), tmp_path / "object", Counter()
    target = strategies.Target(fileobj=memory, path=str(path))
    requests, answered = [], set()

    def ranges(request, **_):
        requests.append(request.headers.get("Range"))

    def answer(**_):
        answered.add(threading.get_ident())

    s3.meta.events.register("before-send.s3.GetObject", ranges)
    s3.meta.events.register("response-received.s3.GetObject", answer)
    try:
        choice.download(s3, test_object.bucket, test_object.key, progress, target)
    finally:
        s3.meta.events.unregister("before-send.s3.GetObject", ranges)
        s3.meta.events.unregister("response-received.s3.GetObject", answer)
    got = path.read_bytes() if choice.name == "download_file" else memory.getvalue()
    assert hashlib.sha256(got).digest() == expected and progress.bytes == test_object.size * choice.reads()
    # each body is read on the thread its GET was answered on (measure.Progress relies on it)
    assert progress.threads <= answered
    if choice.name == "repeated":  # the whole object each time, no Range
        assert requests == [None] * 3 and choice.reads() == 3
    elif choice.name == "stream":
        assert requests == [None] and progress.calls == math.ceil(test_object.size / choice.value("chunk_size"))
    else:  # one GET per chunk above the threshold (download_file) or above one chunk (ranged)
        chunk = choice.value("chunk_size")
        threshold = choice.value("threshold") if choice.name == "download_file" else chunk
        assert len(requests) == (math.ceil(test_object.size / chunk) if test_object.size > threshold else 1)
    assert len(requests) == choice.gets(test_object.size)  # what the cost estimate counts


def test_discard_sink_takes_a_ranged_download(strategies, s3, test_object):
    progress = Counter()
    target = strategies.Target(fileobj=strategies.Discard(), path="unused")
    choice = strategies.parse("ranged connections=4 chunk_size=1MiB")
    choice.download(s3, test_object.bucket, test_object.key, progress, target)
    assert progress.bytes == test_object.size


def test_crt_refuses_a_custom_endpoint_before_any_request(strategies, s3, test_object):
    sent = []
    s3.meta.events.register("before-send.s3", lambda **kw: sent.append(kw))
    try:
        with pytest.raises(strategies.CrtUnavailable, match="custom endpoints") as info:
            strategies.parse("crt").download(s3, test_object.bucket, test_object.key, Counter(), None)
    finally:
        s3.meta.events.unregister("before-send.s3")
    assert s3.meta.endpoint_url in str(info.value) and "\n" not in str(info.value) and sent == []


def test_crt_config_carries_the_strategys_parameters(strategies):
    config = strategies.crt_config(dict(strategies.parse("crt connections=12 chunk_size=16MiB").values))
    assert (config.preferred_transfer_client, config.multipart_chunksize, config.max_request_concurrency) == (
        "crt", 16 * 2**20, 12)  # fmt: skip
    unset = strategies.crt_config(dict(strategies.parse("crt connections=0").values))
    assert unset.get_deep_attr("max_request_concurrency") is unset.UNSET_DEFAULT  # CRT sizes them itself


@pytest.mark.parametrize("boto3_gives", ["classic transfer manager", "missing awscrt"])
def test_crt_never_measures_the_classic_client_instead(strategies, monkeypatch, boto3_gives):
    """On AWS's endpoint, what boto3 does when it cannot give the CRT client (another process
    holds it, boto3 < 1.42, no awscrt) is refused before any request. (That boto3 does build it
    from the zip's awscrt: tests/test_package.py.)"""
    from boto3.s3.transfer import TransferConfig, TransferManager
    from botocore.exceptions import MissingDependencyException

    client = boto3.client("s3", region_name="us-east-1", aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key="x")

    def fallback(s3, config):
        if boto3_gives == "missing awscrt":
            raise MissingDependencyException(msg="awscrt is not installed")
        return TransferManager(s3, TransferConfig())

    monkeypatch.setattr(strategies, "create_transfer_manager", fallback)
    sent = []
    client.meta.events.register("before-send.s3", lambda **kw: sent.append(kw))
    with pytest.raises(strategies.CrtUnavailable) as info:
        strategies.parse("crt").download(client, "bucket", "key", Counter(), None)
    assert sent == [] and "\n" not in str(info.value)


def test_canonical_text_fills_defaults_in_table_order(strategies):
    choice = strategies.parse("  ranged   chunk_size=16MiB ")
    assert str(choice) == "ranged connections=8 chunk_size=16MiB"
    assert choice.fields() == {"strategy": str(choice), "strategy_name": "ranged", "strategy_connections": 8,
                               "strategy_chunk_size": 16 * 2**20}  # fmt: skip
    assert str(strategies.parse("stream chunk_size=1000000")) == "stream chunk_size=1000000"
    assert strategies.parse("stream chunk_size=1MB").value("chunk_size") == 10**6
    assert str(strategies.parse("stream chunk_size=1024KiB")) == "stream chunk_size=1MiB"


@given(data=st.data())
def test_canonical_text_parses_back_to_the_same_strategy(strategies, data):
    strategy = data.draw(st.sampled_from(list(strategies.STRATEGIES.values())))
    values = {p.name: data.draw(st.integers(p.low, p.high)) for p in strategy.params}
    text = " ".join([strategy.name, *(f"{k}={v}" for k, v in values.items())])
    choice = strategies.parse(text)
    assert dict(choice.values) == values
    assert strategies.parse(str(choice)) == choice


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("", "expected one of download_file, stream, ranged, crt, repeated"),
        ("ftp", "unknown strategy 'ftp'"),
        ("ranged conections=8", "no parameter 'conections'"),
        ("stream connections=2", "no parameter 'connections'"),
        ("ranged connections", "connections=VALUE"),
        ("ranged connections=", "connections=VALUE"),
        ("ranged connections=0", "connections='0' is out of range: expected a whole number from 1 to 64"),
        ("ranged connections=65", "connections='65' is out of range"),
        ("ranged connections=eight", "connections='eight' is not a whole number"),
        ("ranged connections=-1", "connections='-1' is not a whole number"),
        ("ranged chunk_size=8XB", "chunk_size='8XB' is not a size from 256KiB to 1GiB"),
        ("ranged chunk_size=2GiB", "chunk_size='2GiB' is out of range"),
        ("ranged connections=2 connections=3", "connections is given twice"),
        ("crt chunk_size=1MiB", "chunk_size='1MiB' is out of range: expected a size from 5MiB to 1GiB"),
        ("repeated requests=0", "requests='0' is out of range: expected a whole number from 1 to 100000"),
        ("repeated requests=1e4", "requests='1e4' is not a whole number from 1 to 100000"),
        ("repeated in_flight=65", "in_flight='65' is out of range: expected a whole number from 1 to 64"),
        ("repeated chunk_size=1MiB", "repeated has no parameter 'chunk_size': its parameters are requests, in_flight"),
    ],
)
def test_bad_strategy_text_is_a_one_line_error_naming_it(strategies, text, named):
    with pytest.raises(strategies.StrategyError) as info:
        strategies.parse(text)
    message = str(info.value)
    assert named in message and "\n" not in message


def test_parse_list(strategies):
    texts = ["stream", "ranged connections=4", "ranged connections=16", "download_file"]
    choices = strategies.parse_list(" ; ".join(texts))
    assert [str(c) for c in choices] == [str(strategies.parse(t)) for t in texts]
    with pytest.raises(strategies.StrategyError, match="listed twice"):
        strategies.parse_list("ranged; ranged connections=8")  # the same strategy once defaults are filled
    with pytest.raises(strategies.StrategyError, match="empty strategy"):
        strategies.parse_list("stream;;ranged")
