"""First-byte latency against a slow emulator: the drawn latency counts from the request's
arrival at the proxy, so an answer slower than the emulator's usual but within the latency is
absorbed inside it, and an answer that takes longer than the latency is counted as late
(fanout.local.network.late), for the report to say its estimate is an upper bound."""

import http.client
import statistics
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import pytest

from tests.harness.hosted import Downloader
from fanout.local.network import path, truth
from fanout.local.network.proxy import Shaper

from .conftest import model_of

BODY = b"x" * 1024


class Delayed(BaseHTTPRequestHandler):
    """Answers GET /<ms> after that many milliseconds, other paths (the proxy's own calibration
    of the path's cost goes through here too) after `extra` seconds."""

    protocol_version = "HTTP/1.1"
    extra = 0.0

    def do_GET(self):
        delay = self.path.strip("/")
        time.sleep(int(delay) / 1000 if delay.isdigit() else self.extra)
        self.send_response(200)
        self.send_header("Content-Length", str(len(BODY)))
        self.send_header("Connection", "close")  # as the emulator does: the proxy keeps the function's side alive
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def shaper():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Delayed)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    proxy = Shaper(f"http://127.0.0.1:{server.server_address[1]}", seed=1)
    yield proxy
    proxy.close()
    server.shutdown()


def first_byte_waits(endpoint: str, delays_ms: list[int]) -> list[float]:
    """Seconds from sending each GET (one kept-alive connection) to having its response head."""
    url = urlsplit(endpoint)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    waits = []
    for delay in delays_ms:
        sent = time.monotonic()
        connection.request("GET", f"/{delay}")
        response = connection.getresponse()
        waits.append(time.monotonic() - sent)
        assert response.read() == BODY
    connection.close()
    return waits


@pytest.mark.timing
def test_a_slow_answer_within_the_latency_is_absorbed_not_added(shaper):
    latency, slow = 0.2, 100  # s, ms: the emulator takes half the latency to answer (margins for a busy machine)
    endpoint = shaper.endpoint(model_of("t", first_byte_ms=latency * 1000).at(1024))
    waits = first_byte_waits(endpoint, [slow] * 5)
    # Counted from the answer, the wait would be the latency plus the answer's 100 ms.
    assert latency * 0.9 < statistics.median(waits) < latency + slow / 1000 / 2
    counts = shaper.first_bytes(endpoint)
    assert (counts.requests, counts.late) == (5, 0)


@pytest.mark.timing
def test_answers_slower_than_the_latency_are_counted_late(shaper):
    latency_ms = 80
    delays = [0, 250, 20, 300, 0]  # two answers take longer than the latency
    endpoint = shaper.endpoint(model_of("t", first_byte_ms=latency_ms).at(1024))
    waits = first_byte_waits(endpoint, delays)
    for delay, wait in zip(delays, waits):
        assert wait >= max(delay, latency_ms) / 1000 * 0.9  # the model's latency, or the slower answer
    counts = shaper.first_bytes(endpoint)
    assert (counts.requests, counts.late) == (len(delays), sum(d > latency_ms for d in delays))
    assert shaper.first_bytes(endpoint).requests == 0  # counted once: since the last call


def test_without_a_latency_nothing_is_counted(shaper):
    endpoint = shaper.endpoint(model_of("t", connection_mb_per_s=50).at(1024))
    first_byte_waits(endpoint, [0, 20])
    assert shaper.first_bytes(endpoint).requests == 0


@pytest.mark.slow
@pytest.mark.parametrize("latency_ms", [1, 2000])
def test_the_ground_truth_counts_the_late_answers_of_its_run(emulator, latency_ms):
    """Hosted: the host logs each invocation's counts and the report's ground truth sums them.
    The first GET of the object goes to the emulator, which never answers within 1 ms of the
    request's arrival (the proxy first connects to it), so at least that one is late; the second
    may be answered from the proxy's kept answer in time. None takes 2 s to answer a 64 KiB GET."""
    downloader = Downloader(emulator)
    downloader.put("small", 64 * 1024)
    model = model_of("t", first_byte_ms=latency_ms)
    run = downloader.run("small", "stream", 1, model, messages_per_env=2)
    [row] = [r for r in truth.compare(True, model.describe(), run.records, run.events)
             if r["parameter"] == "first_byte_seconds"]
    gets = sum(r["requests"] for r in run.records)
    assert gets == 2 and row["requests"] == gets
    assert (1 <= row["late"] <= gets) if latency_ms == 1 else row["late"] == 0


@pytest.mark.timing
def test_the_subtracted_path_cost_follows_the_machine(monkeypatch):
    """The path's cost is measured again while the host runs: when answers through the
    calibration endpoint start taking longer (here: an emulator slower than its known wait),
    the cost the proxy subtracts rises by that much within the sampling window."""
    monkeypatch.setattr(path, "SAMPLE_EVERY_S", 0.02)

    class Slower(Delayed):  # its own `extra`: the module's other proxy samples through Delayed
        pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Slower)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    proxy = Shaper(f"http://127.0.0.1:{server.server_address[1]}", seed=1)
    try:
        proxy.endpoint(model_of("t", first_byte_ms=100).at(1024))
        before, extra = proxy.path_seconds, 0.04
        Slower.extra = path.CALIBRATION_WAIT_S + extra
        deadline = time.monotonic() + 10
        while proxy.path_seconds < before + extra * 0.8 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proxy.path_seconds == pytest.approx(before + extra, abs=extra * 0.2)
    finally:
        proxy.close()
        server.shutdown()
