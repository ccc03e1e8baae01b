"""The model's prediction of a download's seconds (fanout.local.network.truth.predicted_seconds), the
yardstick of tests/network/test_truth.py, against a token bucket stepped 0.1 ms at a time."""

import pytest

from fanout.workloads.download import prediction, strategies
from fanout.local.network import truth

from .conftest import model_of

MIB = 2**20
MODEL = {"burst": "4MiB", "peak_mb_per_s": 50, "sustained_mb_per_s": 20, "connection_mb_per_s": 8}


def stepped_seconds(shape, size: int, connections: int, step: float = 1e-4) -> float:
    """A bucket that starts full, refilled at the sustained rate up to its size; each step the
    connections draw what the caps and (with credit left) the peak or (without) the refill allow."""
    tokens, received, elapsed = shape.burst_bytes, 0.0, 0.0
    while received < size:
        tokens = min(shape.burst_bytes, tokens + shape.sustained_rate * step)
        rate = min(shape.connection_rate * connections, shape.peak_rate)
        drawn = min(rate * step, tokens, size - received)
        tokens, received, elapsed = tokens - drawn, received + drawn, elapsed + step
    return elapsed


@pytest.mark.parametrize("connections", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("size", [2 * MIB, 24 * MIB])
def test_prediction_is_the_token_bucket(connections, size):
    shape = model_of("p", **MODEL).at(1024)
    assert truth.predicted_seconds(shape, size, connections) == pytest.approx(
        stepped_seconds(shape, size, connections), abs=2e-4)  # the stepping ends within a step or two


def test_ranking_counts_parts_and_connections():
    """Two parts cannot use four connections; a stream is one."""
    shape = model_of("p", **MODEL).at(1024)
    choices = [strategies.definition.parse(t) for t in ("stream", "ranged connections=4 chunk_size=1MiB",
                                                       "ranged connections=4 chunk_size=12MiB")]
    ranked = prediction.predicted_ranking(shape, 24 * MIB, choices)
    assert [text for text, _ in ranked] == [str(choices[1]), str(choices[2]), str(choices[0])]
    assert ranked[1][1] == pytest.approx(truth.predicted_seconds(shape, 24 * MIB, 2))


def test_a_head_before_the_gets_waits_its_own_first_byte():
    """download_file and ranged send a HeadObject first, which the proxy holds as long as any
    request: it adds one wait before the GETs start."""
    shape = model_of("p", first_byte_ms=20, **MODEL).at(1024)
    assert truth.predicted_seconds(shape, 24 * MIB, 2, 2, heads=1) == pytest.approx(
        truth.predicted_seconds(shape, 24 * MIB, 2, 2) + 0.020)
    download_file = strategies.definition.parse("download_file")
    assert download_file.heads(24 * MIB) == 1
    assert truth.predicted_median(shape, 24 * MIB, download_file, 1, 1) == pytest.approx(
        truth.predicted_seconds(shape, 24 * MIB, 3, 3) + 0.020)  # three 8 MiB parts, a connection each, after the HEAD


def stepped_parts_seconds(shape, size: int, connections: int, gets: int, wait: float, step: float = 1e-3) -> float:
    """As stepped_seconds, with the download in `gets` equal parts that the connections take in
    turn (the transfer manager's queue), each part first waiting `wait` on its connection;
    the environment's draw is shared equally by the connections transferring."""
    part = size / gets
    queued, tokens, elapsed = gets, shape.burst_bytes, 0.0
    connections = [{"left": 0.0, "waiting": 0.0} for _ in range(connections)]
    while True:
        for c in connections:
            if c["left"] <= 0 and c["waiting"] <= 0 and queued:
                queued, c["left"], c["waiting"] = queued - 1, part, wait
        busy = [c for c in connections if c["left"] > 0 and c["waiting"] <= 0]
        if not busy and not queued and all(c["left"] <= 0 for c in connections):
            return elapsed
        tokens = min(shape.burst_bytes, tokens + shape.sustained_rate * step)
        allowed = min(shape.connection_rate * len(busy), shape.peak_rate) * step
        share = min(allowed, tokens) / len(busy) if busy else 0.0
        for c in connections:
            if c["waiting"] > 0:
                c["waiting"] -= step
            elif c in busy:
                drawn = min(share, c["left"])
                c["left"], tokens = c["left"] - drawn, tokens - drawn
        elapsed += step


@pytest.mark.parametrize("connections", [1, 2, 4, 8])
@pytest.mark.parametrize("wait", [0.05, 0.2])
def test_prediction_counts_each_parts_first_byte_wait(connections, wait):
    """A connection reading parts one after another waits once per part: connection-bound, the
    waits add up; environment-bound, the other connections' transfers cover them. Within 5% of
    the stepped parts (the prediction averages a connection's waits over its download)."""
    shape = model_of("p", **MODEL).at(1024)
    size, gets = 24 * MIB, 12
    predicted = truth.predicted_seconds(shape, size, connections, gets, wait)
    assert predicted == pytest.approx(stepped_parts_seconds(shape, size, connections, gets, wait), rel=0.05)
    assert predicted > truth.predicted_seconds(shape, size, connections, gets, wait=0) + wait * 0.99


def test_a_cells_median_follows_the_bucket_from_download_to_download():
    """Worked by hand: a 10 MB bucket spent at 50 MB/s and refilled at 10 MB/s, one connection.
    A 5 MB object: the first download takes 0.1 s at 50 MB/s and leaves 10 + 10 x 0.1 - 5 = 6 MB;
    the second, within those 6 MB (they last 6 / 40 = 0.15 s, 7.5 MB), 0.1 s and leaves 2 MB; the
    third spends them in 2 / 40 = 0.05 s (2.5 MB) and draws the other 2.5 MB at 10 MB/s in
    0.25 s: 0.3 s, leaving nothing; the fourth takes 0.5 s. Eight downloads over two
    environments: four each, median (0.1 + 0.3) / 2 = 0.2 s."""
    shape = model_of("p", burst=10e6, peak_mb_per_s=50, sustained_mb_per_s=10, connection_mb_per_s=100).at(1024)
    stream = strategies.definition.parse("stream")
    assert truth.predicted_median(shape, 5_000_000, stream, 8, 2) == pytest.approx(0.2)
    assert truth.predicted_median(shape, 5_000_000, stream, 6, 2) == pytest.approx(0.1)  # three each
    # A 20 MB object: 0.25 s at 50 MB/s (12.5 MB), 7.5 MB at 10 MB/s: 1 s, leaving 0; then 2 s each.
    assert truth.predicted_median(shape, 20_000_000, stream, 3, 1) == pytest.approx(2.0)
    assert truth.predicted_median(shape, 20_000_000, stream, 2, 1) == pytest.approx(1.5)


def test_an_aggregate_cap_is_shared_by_the_environments():
    """Four environments under a 20 MB/s cap draw 5 MB/s each: 1 MB in 0.2 s (not 0.1 s at the
    10 MB/s one connection carries)."""
    shape = model_of("p", connection_mb_per_s=10, aggregate_mb_per_s=20).at(1024)
    assert truth.predicted_median(shape, 1_000_000, strategies.definition.parse("stream"), 4, 4) == pytest.approx(0.2)


def test_a_cell_has_a_prediction_only_on_the_local_backend_under_a_model():
    cell = {"memory_size": 1024, "concurrency_limit": 2, "object_size": 1_000_000, "strategy": "stream"}
    network = model_of("p", connection_mb_per_s=10).describe()
    assert prediction.cell_prediction("local", network, cell, 4) == 0.1
    assert prediction.cell_prediction("aws", network, cell, 4) is None
    assert prediction.cell_prediction("local", None, cell, 4) is None
    assert prediction.cell_prediction("local", model_of("u").describe(), cell, 4) is None  # no rate
