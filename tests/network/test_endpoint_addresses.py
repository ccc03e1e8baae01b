"""Several endpoint addresses on the local backend: the model's per-address rate factors, the
platform's rotation of the endpoint name, and the per-address table finding a slower address."""

import json
import socket

import numpy as np
import pytest

from fanout.workloads.download import endpoint_ips
from fanout import insights
from fanout.common.errors import UsageError
from tests.harness import hosted, host_testing as testing
from fanout.local.host import resolver
from fanout.local.network import model, truth
from fanout.local.network.proxy import ENDPOINT_NAME, Shaper

from .conftest import model_of

ADDRESSES = {"127.0.0.2": 1.0, "127.0.0.3": 1.0, "127.0.0.4": 0.5}
MIB = 2**20


@pytest.mark.timing
@pytest.mark.slow
def test_a_run_finds_the_address_that_is_twice_as_slow(emulator):
    """Three environments, one per address (the host's rotation), six stream downloads each,
    one connection at 8 MB/s, at half that on 127.0.0.4: the table flags it, and only it, slower."""
    downloader = hosted.Downloader(emulator)
    downloader.put("object", 2 * MIB)
    network = model_of("three-addresses", connection_mb_per_s=8, addresses=ADDRESSES)
    run = downloader.run("object", "stream", environments=3, network=network, messages_per_env=6)

    rows = insights.evaluate(insights.load_query("endpoint-ips"), run.events).rows
    table = {row["endpoint_ip"]: row for row in endpoint_ips.table(rows, run.records)}
    assert set(table) == set(ADDRESSES)  # every address served downloads
    assert sum(row["downloads"] for row in table.values()) == len(run.records)
    assert {ip: row["flag"] for ip, row in table.items() if row["flag"] == "slower"} == {"127.0.0.4": "slower"}
    fast = np.median([r["bytes"] / r["seconds"] / 1e6 for r in run.records if r["endpoint_ip"] != "127.0.0.4"])
    assert 0.35 < table["127.0.0.4"]["mb_per_s_p50"] / fast < 0.65  # the factor, give or take the latency
    for record in run.records:  # one connection per download, to the environment's first address
        assert record["request_ips"] == record["endpoint_ip"]
    factors = {row["parameter"]: row for row in truth.compare(True, network.describe(), run.records)
               if row["parameter"].startswith("rate")}
    assert set(factors) == {f"rate_factor {ip}" for ip in ADDRESSES}
    assert factors["rate_factor 127.0.0.4"]["injected"] == 0.5
    assert 0.35 < factors["rate_factor 127.0.0.4"]["estimated"] < 0.65
    assert all(row["downloads"] == table[row["parameter"].split()[1]]["downloads"] for row in factors.values())


def test_each_environment_resolves_the_name_to_the_next_address(emulator):
    shaper = Shaper(emulator)
    try:
        shape = model_of("t", addresses=ADDRESSES).at(1024)
        answers = [shaper.named_endpoint(shape) for _ in range(4)]
    finally:
        shaper.close()
    firsts = [spec["addresses"][0] for _, spec in answers]
    assert firsts == [*ADDRESSES, next(iter(ADDRESSES))]
    assert all(sorted(spec["addresses"]) == sorted(ADDRESSES) and spec["name"] == ENDPOINT_NAME
               for _, spec in answers)  # fmt: skip
    assert all(url.startswith(f"http://{ENDPOINT_NAME}:") for url, _ in answers)


def test_the_resolver_answers_for_exactly_the_name(monkeypatch):
    monkeypatch.setattr(socket, "getaddrinfo", socket.getaddrinfo)  # restored after the test
    resolver.install({"name": ENDPOINT_NAME, "addresses": ["127.0.0.3", "127.0.0.2"]})
    found = [info[4][0] for info in socket.getaddrinfo(ENDPOINT_NAME, 80, type=socket.SOCK_STREAM)]
    assert found == ["127.0.0.3", "127.0.0.2"]
    assert socket.getaddrinfo("127.0.0.1", 80, type=socket.SOCK_STREAM)[0][4][0] == "127.0.0.1"
    with pytest.raises(socket.gaierror):
        socket.getaddrinfo(ENDPOINT_NAME + ".invalid", 80)


@pytest.mark.parametrize(("value", "message"), [
    ({"10.0.0.1": 1}, "address '10.0.0.1' is not allowed; expected an IPv4 loopback address"),
    ({"::1": 1}, "address '::1' is not allowed"),
    ({"127.0.0.2": 0}, "address '127.0.0.2' has rate factor 0; expected a number above 0"),
    ({"127.0.0.2": True}, "rate factor True"),
    ({}, "must be a table of 1 to 16 loopback addresses"),
    (["127.0.0.2"], "must be a table of 1 to 16 loopback addresses"),
])  # fmt: skip
def test_bad_addresses_are_refused(value, message):
    with pytest.raises(UsageError, match=message):
        model.parameters({"addresses": value}, "m")


def test_an_address_the_machine_lacks_is_refused_with_the_fix(tmp_path, monkeypatch):
    path = tmp_path / "m.toml"
    path.write_text('connection_mb_per_s = 8\n[addresses]\n"127.0.0.2" = 1\n')
    assert model.load(str(path)).at(1024).addresses == {"127.0.0.2": 1.0}

    class Unbindable(socket.socket):  # as on macOS without the alias
        def bind(self, address):
            raise OSError(49, "Can't assign requested address")

    monkeypatch.setattr(model.socket, "socket", Unbindable)
    with pytest.raises(UsageError, match=r"address 127.0.0.2 is not on this machine's loopback interface .*"
                                         r"sudo ifconfig lo0 alias 127.0.0.2 up"):
        model.load(str(path))


@pytest.mark.slow
@pytest.mark.parametrize("pin", ["127.0.0.4", "auto"])
def test_pinned_messages_reach_their_address_through_the_platform_name(emulator, pin):
    """The function resolves the platform's name itself (auto: all three addresses, in each
    environment's order) and connects where the pin says, whatever its environment's turn."""
    downloader = hosted.Downloader(emulator)
    downloader.put("object", MIB)
    network = model_of("three-addresses", connection_mb_per_s=50, addresses=ADDRESSES)
    fn = testing.deploy(emulator, downloader.role, downloader.zip, handler="handler.lambda_handler", reserved=2,
                        timeout=60, visibility=60, memory=1024, environment={
                            "FANOUT_BUCKET": downloader.bucket, "FANOUT_KEY": "object", "FANOUT_EXPECTED_SIZE": str(MIB),
                            "DOWNLOAD_DEFAULT_STRATEGY": "download_file", "FANOUT_CONCURRENCY_LIMIT": "2"})
    fn.send([{"run_id": "r", "seq": seq, "experiment_tag": "pin", "pin": pin} for seq in range(6)])

    fn.host(network=network)

    records = [json.loads(m) for stream in fn.streams().values() for _, m in stream if m.startswith("{")]
    downloads = sorted((r for r in records if r.get("event") == "download"), key=lambda r: r["seq"])
    assert [r["seq"] for r in downloads] == list(range(6))
    found = sorted(ADDRESSES, key=socket.inet_aton)
    for record in downloads:
        expected = pin if pin != "auto" else found[record["seq"] % len(found)]
        assert (record["pin"], record["pinned_ip"], record["endpoint_ip"]) == (pin, expected, expected)
        assert record["pin_addresses"] == (pin if pin != "auto" else " ".join(found))
        assert set(record["request_ips"].split()) == {expected}  # download_file's HeadObject too


def test_ground_truth_estimates_each_address_factor_from_medians():
    network = model_of("two", connection_mb_per_s=8, addresses={"127.0.0.2": 1.0, "127.0.0.4": 0.5})
    rates = {"127.0.0.2": [9e6, 10e6, 14e6, 11e6], "127.0.0.4": [4e6, 6e6, 5.5e6]}
    downloads = [{"memory_size": 1024, "endpoint_ip": ip, "bytes": 2 * MIB, "seconds": 2 * MIB / rate,
                  "sustained_mb_per_s": rate / 1e6, "burst_excess_bytes": 0, "first_byte_seconds": 0.01,
                  "start_ms": i, "env_id": ip} for ip, values in rates.items() for i, rate in enumerate(values)]  # fmt: skip
    rows = {row["parameter"]: row for row in truth.compare(True, network.describe(), downloads)}
    slow = rows["rate_factor 127.0.0.4"]
    assert slow["estimated"] == pytest.approx(np.median(rates["127.0.0.4"]) / np.median(rates["127.0.0.2"]))
    assert (slow["injected"], slow["downloads"]) == (0.5, 3)
    assert rows["rate_factor 127.0.0.2"]["estimated"] == pytest.approx(1.0)
