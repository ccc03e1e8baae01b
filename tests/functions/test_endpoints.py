"""Endpoint addresses: every request records the address its socket reached, and a pin sends a
message's requests to one address while TLS still verifies, and sends as SNI, the real name.

A stand-in S3 with a self-signed certificate for `s3.fanout.test` (a name no DNS serves) listens
on loopback addresses other than 127.0.0.1; the client trusts that certificate and nothing else.
"""

import socket

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import EndpointConnectionError, SSLError

from .support import load_function_module
from .tls_server import FakeS3, self_signed

NAME = "s3.fanout.test"
BODY = b"x" * 600_000  # over two 256 KiB parts


@pytest.fixture
def modules(monkeypatch):
    measure = load_function_module("measure", monkeypatch)
    return measure, measure.endpoints, measure.strategies


@pytest.fixture
def servers(tmp_path, request):
    """Stand-ins on 127.0.0.3 and 127.0.0.4, one port, certificate for NAME; and its file.
    Parametrize indirectly with True to make them close every connection after one response."""
    cert = self_signed(NAME, tmp_path)
    close_each = getattr(request, "param", False)
    first = FakeS3("127.0.0.3", 0, cert, BODY, close_each)
    second = FakeS3("127.0.0.4", first.port, cert, BODY, close_each)
    yield first, second, cert[0]
    first.close()
    second.close()


def client(endpoints, port: int, ca_file: str):
    s3 = boto3.client("s3", endpoint_url=f"https://{NAME}:{port}", region_name="us-east-1", verify=ca_file,
                      aws_access_key_id="test", aws_secret_access_key="test",
                      config=Config(retries={"max_attempts": 1}))  # fmt: skip
    endpoints.instrument(s3)
    return s3


def fake_dns(monkeypatch, answers: list[str]):
    """The system resolver answers NAME with `answers`, in that order (others as before)."""
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if host != NAME:
            return real(host, port, *args, **kwargs)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in answers]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


@pytest.mark.parametrize("strategy", ["stream", "download_file chunk_size=256KiB threshold=1KiB"])
def test_records_the_socket_peer_not_the_dns_answer(modules, servers, monkeypatch, tmp_path, strategy):
    measure, endpoints, strategies = modules
    first, _, ca_file = servers
    fake_dns(monkeypatch, ["127.0.0.9", "127.0.0.3"])  # nothing listens on the first answer
    result = measure.download(client(endpoints, first.port, ca_file), "bucket", "key", strategies.parse(strategy),
                              str(tmp_path))  # fmt: skip

    assert result.bytes == len(BODY)
    ips = result.requests["request_ips"].split()
    assert len(ips) == result.requests["requests"] >= 1  # download_file: its HeadObject too
    assert set(ips) == {"127.0.0.3"} and result.requests["endpoint_ip"] == "127.0.0.3"
    assert {address for _, address in first.connections} == {"127.0.0.3"}


@pytest.mark.parametrize("servers", [True], indirect=True)  # each request connects anew: rotation shows
def test_endpoint_ip_is_null_when_requests_reached_several_addresses(modules, servers, monkeypatch, tmp_path):
    measure, endpoints, strategies = modules
    first, second, ca_file = servers
    answers = ["127.0.0.3", "127.0.0.4"]
    real = socket.getaddrinfo

    def rotating(host, port, *args, **kwargs):  # round-robin DNS: each answer starts elsewhere
        if host != NAME:
            return real(host, port, *args, **kwargs)
        answers.append(answers.pop(0))
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in answers]

    monkeypatch.setattr(socket, "getaddrinfo", rotating)
    s3 = client(endpoints, first.port, ca_file)
    choice = strategies.parse("ranged connections=2 chunk_size=256KiB")
    result = measure.download(s3, "bucket", "key", choice, str(tmp_path))

    ips = result.requests["request_ips"].split()
    assert set(ips) == {"127.0.0.3", "127.0.0.4"}
    assert result.requests["endpoint_ip"] is None
    assert result.bytes == len(BODY)


def test_pin_connects_to_the_address_and_keeps_tls_on_the_name(modules, servers, tmp_path):
    measure, endpoints, strategies = modules
    first, second, ca_file = servers
    s3 = client(endpoints, first.port, ca_file)
    with pytest.raises(EndpointConnectionError):  # no DNS knows the name: only the pin reaches it
        s3.head_object(Bucket="bucket", Key="key")

    result = measure.download(s3, "bucket", "key", strategies.parse("stream"), str(tmp_path), pin="127.0.0.4")

    assert result.pin == {"pinned_ip": "127.0.0.4", "pin_addresses": "127.0.0.4"}
    assert result.requests["endpoint_ip"] == "127.0.0.4"
    assert second.connections == [(NAME, "127.0.0.4")] and first.connections == []  # SNI: the name
    with pytest.raises(EndpointConnectionError):  # the override ended with the download
        s3.head_object(Bucket="bucket", Key="key")


def test_repeated_gets_each_on_a_new_connection_to_the_pinned_address(modules, servers):
    """ab without keep-alive: 12 GETs, 3 at a time; the server sees 12 TLS handshakes, every one
    on the pinned address with the name as SNI; the record counts them and their rate."""
    measure, endpoints, strategies = modules
    first, second, ca_file = servers
    s3 = client(endpoints, first.port, ca_file)
    settings = measure.Settings("bucket", "key", len(BODY), strategies.parse("stream"))
    body = '{"run_id": "r", "seq": 0, "experiment_tag": "t", "strategy": "repeated requests=12 in_flight=3", ' \
           '"pin": "127.0.0.4"}'

    record = measure.measure_message(s3, settings, body, {})

    assert record["event"] == "download", record.get("error_message")
    assert second.connections == [(NAME, "127.0.0.4")] * 12 and first.connections == []
    assert (record["requests"], record["connections"], record["endpoint_ip"]) == (12, 12, "127.0.0.4")
    assert record["bytes"] == 12 * len(BODY)
    assert record["requests_per_s"] == pytest.approx(12 / record["seconds"])
    assert (record["strategy_requests"], record["strategy_in_flight"]) == (12, 3)


def test_pin_keeps_certificate_verification(modules, tmp_path):
    measure, endpoints, strategies = modules
    other = FakeS3("127.0.0.3", 0, self_signed("other.fanout.test", tmp_path), BODY)
    try:
        s3 = client(endpoints, other.port, str(tmp_path / "other.fanout.test.pem"))
        with pytest.raises(SSLError, match="(?i)hostname|match"):
            measure.download(s3, "bucket", "key", strategies.parse("stream"), str(tmp_path), pin="127.0.0.3")
    finally:
        other.close()


def test_auto_spreads_messages_over_the_addresses_found(modules, servers, monkeypatch, tmp_path):
    measure, endpoints, strategies = modules
    first, second, ca_file = servers
    fake_dns(monkeypatch, ["127.0.0.4", "127.0.0.3", "127.0.0.4"])
    s3 = client(endpoints, first.port, ca_file)
    pinned = [measure.download(s3, "bucket", "key", strategies.parse("stream"), str(tmp_path), pin="auto", seq=seq)
              for seq in range(4)]  # fmt: skip

    found = sorted({"127.0.0.3", "127.0.0.4"}, key=lambda a: socket.inet_aton(a))
    assert [r.pin["pinned_ip"] for r in pinned] == [found[seq % 2] for seq in range(4)]
    assert all(r.pin["pin_addresses"] == " ".join(found) for r in pinned)
    assert [r.requests["endpoint_ip"] for r in pinned] == [r.pin["pinned_ip"] for r in pinned]
    assert len(first.connections) == len(second.connections) == 2


def test_auto_on_a_name_that_does_not_resolve_fails_in_one_line(modules, tmp_path):
    measure, endpoints, strategies = modules
    s3 = client(endpoints, 443, "/nonexistent")
    with pytest.raises(endpoints.PinError, match=f"pin=auto: {NAME} does not resolve"):
        measure.download(s3, "bucket", "key", strategies.parse("stream"), str(tmp_path), pin="auto")


@pytest.mark.parametrize("text", ["", "autox", "127.0.0.256", "1.2.3", "example.com", "１２７.0.0.1", 5, None,
                                  "None", "NONE", " none"])
def test_bad_pins_are_refused(modules, text):
    _, endpoints, _ = modules
    with pytest.raises(endpoints.PinError, match=r"pin=.* is not allowed: expected none, auto or an IPv4/IPv6 address"):
        endpoints.parse_pin(text)


def test_pins_are_canonical(modules):
    _, endpoints, _ = modules
    assert [endpoints.parse_pin(t) for t in ("none", "auto", "127.0.0.3", "2001:db8:0:0::1")] == [
        "none", "auto", "127.0.0.3", "2001:db8::1"]


def test_message_pin_is_parsed_and_recorded(modules):
    measure, _, strategies = modules
    default = strategies.parse("stream")
    body = '{"run_id": "r", "seq": 1, "experiment_tag": "t", "pin": "10.0.0.1"}'
    assert measure.parse_body(body, default).fields()["pin"] == "10.0.0.1"
    with pytest.raises(measure.MalformedMessage, match="pin='nope' is not allowed"):
        measure.parse_body('{"run_id": "r", "seq": 1, "pin": "nope"}', default)
    unpinned = '{"run_id": "r", "seq": 1, "experiment_tag": "t", "pin": "none"}'
    assert measure.parse_body(unpinned, default).fields()["pin"] == "none"  # the record says it was chosen


@pytest.mark.parametrize("strategy", ["stream", "download_file chunk_size=256KiB threshold=1KiB"])
def test_none_connects_where_the_resolver_says(modules, servers, monkeypatch, tmp_path, strategy):
    """pin none pins nothing: the connections follow DNS's first answer, as without a pin."""
    measure, endpoints, strategies = modules
    first, second, ca_file = servers
    fake_dns(monkeypatch, ["127.0.0.4", "127.0.0.3"])
    s3 = client(endpoints, first.port, ca_file)
    results = [measure.download(s3, "bucket", "key", strategies.parse(strategy), str(tmp_path), pin=pin, seq=seq)
               for seq, pin in enumerate([endpoints.NONE, None, endpoints.NONE])]  # fmt: skip

    assert all(r.pin == endpoints.UNPINNED and r.bytes == len(BODY) for r in results)
    assert {r.requests["endpoint_ip"] for r in results} == {"127.0.0.4"}  # DNS's first answer, every time
    assert not first.connections and second.connections


def test_crt_refuses_a_pin(modules, tmp_path):
    measure, endpoints, strategies = modules
    s3 = boto3.client("s3", region_name="us-east-1", aws_access_key_id="a", aws_secret_access_key="b")
    with pytest.raises(endpoints.PinError, match="cannot steer this strategy"):
        measure.download(s3, "bucket", "key", strategies.parse("crt"), str(tmp_path), pin="auto")
    with endpoints.pinned_download(s3, "bucket", "key", endpoints.NONE, 0, own_http=True) as where:
        assert where == endpoints.UNPINNED  # none steers nothing, so crt takes it


def test_a_client_of_an_unknown_http_layer_is_left_alone(modules):
    _, endpoints, _ = modules
    s3 = boto3.client("s3", region_name="us-east-1", aws_access_key_id="a", aws_secret_access_key="b")
    session = s3._endpoint.http_session
    classes = dict(session._pool_classes_by_scheme)
    del session._pool_classes_by_scheme  # as a botocore that keeps them elsewhere
    assert endpoints.instrument(s3) is False
    session._pool_classes_by_scheme = classes
    assert endpoints.instrument(s3) is True and all(c.notes_peers for c in classes.values())
    assert endpoints.take_peer() is None


@pytest.mark.parametrize("connections", [4, 8])
def test_ranged_opens_no_more_connections_than_it_asks_for(modules, monkeypatch, tmp_path, connections):
    """On a server that keeps connections alive, as S3 does, 24 parts on `connections` threads
    of the handler's client open `connections` TLS connections at most (the server counts its
    handshakes): none per part, none for the HeadObject, none dropped by the pool."""
    measure, endpoints, strategies = modules
    invocation = load_function_module("invocation", monkeypatch)
    cert = self_signed(NAME, tmp_path)
    server = FakeS3("127.0.0.3", 0, cert, bytes(24 * 256 * 1024))
    try:
        fake_dns(monkeypatch, ["127.0.0.3"])
        s3 = boto3.client("s3", endpoint_url=f"https://{NAME}:{server.port}", region_name="us-east-1",
                          verify=cert[0], aws_access_key_id="test", aws_secret_access_key="test",
                          config=invocation.client_config(measure.CONNECTIONS))  # as handler.py builds it
        endpoints.instrument(s3)
        choice = strategies.parse(f"ranged connections={connections} chunk_size=256KiB")
        records = [measure.download(s3, "bucket", "key", choice, str(tmp_path)) for _ in range(2)]
    finally:
        server.close()
    assert [r.requests["requests"] for r in records] == [25, 25]  # a HeadObject and 24 GETs each
    assert 1 < len(server.connections) <= connections  # the second download reused the first's
    assert all(1 < r.requests["connections"] <= connections for r in records)
