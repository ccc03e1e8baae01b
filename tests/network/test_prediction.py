"""The model's prediction of a download's seconds (fanout.network.truth.predicted_seconds), the
yardstick of tests/network/test_truth.py, against a token bucket stepped 0.1 ms at a time."""

import pytest

from fanout import strategies
from fanout.network import truth

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
    ranked = truth.predicted_ranking(shape, 24 * MIB, choices)
    assert [text for text, _ in ranked] == [str(choices[1]), str(choices[2]), str(choices[0])]
    assert ranked[1][1] == pytest.approx(truth.predicted_seconds(shape, 24 * MIB, 2))
