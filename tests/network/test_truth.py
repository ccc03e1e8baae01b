"""Checked against known truth: the packaged function's strategies, hosted under small models
with known parameters, show what the models predict from those parameters alone.

MODEL: one connection carries 16 MB/s, below the environment's sustained 24 MB/s; a 4 MiB
bucket spent at up to 80 MB/s. A 40 MiB object (41.9 MB), one download per strategy, each in a
fresh environment (tests.harness.hosted.each_strategy):
- stream: one connection, 16 MB/s < 24 MB/s, never spends the bucket: about 2.6 s;
- ranged connections=4: 64 MB/s while the bucket lasts (it drains at 64 - 24 = 40 MB/s, for
  0.1 s), then the sustained 24 MB/s for 1.6 s: its last quarter is all tail. 2 MiB parts keep
  four connections busy to the end (20 parts; the transfer manager hands the next part to
  whichever connection is free) and each part's wait for the emulator (4-25 ms here: it reads
  only the part's bytes, fanout.local.emulator.patches) is made up by the bucket's slack (4 x 16 > 24).

The bucket is estimated under the hosted test's model (conftest.BURST_MODEL: an 8 MiB bucket
spent at up to 64 MB/s, one connection 32 MB/s above the sustained 16 MB/s) on its 32 MiB object
by one stream and by 4 and 8 parallel ranged GETs (2 MiB parts: 16 of them, so that all the
connections run at once to the end). Parallel GETs once showed 0.84-1.01 of the bucket and the
test kept the stream: the timeline counted each read's bytes when the read ended, so at the
burst's end every connection held up to one read unseen, and before the first bytes none did;
it now spreads each read over the time it took (docs/network-model.md, "The timeline of one
download").

Tolerances: 5% is the issue's target for the estimates. The shaper counts bytes exactly, and
the sustained rate is a slope over >= 0.35 s of tail (>= 6 MB, so part of a read per connection
at either end is < 5% even before the slope discounts it). The burst estimate is the bytes
above that slope and carries its error times the burst's length: on 8 connections the slope
came out 0.99-1.03 and the bucket 0.957-1.025 in 18 loaded runs (docs/network-model.md, "The
bucket of parallel GETs"). The overall rate of a stream allows 10% below the
cap: it includes the emulator's time to start answering and the function's own CPU on a shared
machine; above the cap only 2% (the shaper releases about 10 ms of credit at a time).
"""

import pytest

from fanout.workloads.download import prediction, strategies
from tests.harness.hosted import Downloader, each_strategy, strategy_order
from fanout.local.network import truth

from .conftest import BURST_MODEL, BURST_OBJECT_SIZE, MIB, model_of

pytestmark = pytest.mark.slow

MODEL = {"burst": "4MiB", "peak_mb_per_s": 80, "sustained_mb_per_s": 24, "connection_mb_per_s": 16}
OBJECT_SIZE = 40 * MIB
STREAM, RANGED_4, RANGED_8 = (str(strategies.definition.parse(text)) for text in (
    "stream", "ranged connections=4 chunk_size=2MiB", "ranged connections=8 chunk_size=2MiB"))
ESTIMATE = 0.05  # the issue's target, see the module docstring
RANKING_MARGIN = 1.3  # neighbouring predictions this far apart: load cannot swap them (see below)


@pytest.fixture(scope="module")
def known():
    return model_of("known", **MODEL)


@pytest.fixture(scope="module")
def shape(known):
    return known.at(1024)


@pytest.fixture(scope="module")
def downloader(emulator):
    downloader = Downloader(emulator)
    downloader.put("object", OBJECT_SIZE)
    downloader.put("burst", BURST_OBJECT_SIZE)
    return downloader


@pytest.fixture(scope="module")
def runs(downloader, known):
    return each_strategy(downloader, "object", [STREAM, RANGED_4], known)


def only(runs, text) -> dict:
    [record] = runs[text].records
    assert record["strategy"] == text and record["bytes"] == OBJECT_SIZE
    return record


def test_the_model_is_the_case_the_issue_names(shape):
    """The points below mean something only if one connection is slower than the environment,
    four are faster (so they spend the bucket), and four connections' burst ends before the last
    quarter of their download, from which the sustained rate is estimated."""
    assert shape.connection_rate < shape.sustained_rate < 4 * shape.connection_rate < shape.peak_rate
    burst_seconds = shape.burst_bytes / (4 * shape.connection_rate - shape.sustained_rate)
    assert burst_seconds < 0.75 * truth.predicted_seconds(shape, OBJECT_SIZE, 4)


@pytest.mark.timing
def test_stream_is_capped_at_the_connection_rate(runs, shape):
    record = only(runs, STREAM)
    cap = shape.connection_rate / 1e6
    assert record["sustained_mb_per_s"] == pytest.approx(cap, rel=ESTIMATE)
    assert cap * 0.9 < record["bytes"] / record["seconds"] / 1e6 <= cap * 1.02


@pytest.mark.timing
def test_four_connections_reach_the_sustained_rate(runs, shape):
    record = only(runs, RANGED_4)
    assert record["sustained_mb_per_s"] == pytest.approx(shape.sustained_rate / 1e6, rel=ESTIMATE)


@pytest.mark.timing
@pytest.mark.parametrize("connections, text", [(1, STREAM), (4, RANGED_4), (8, RANGED_8)], ids=["1", "4", "8"])
def test_estimated_burst_and_sustained_are_the_injected_ones(downloader, connections, text):
    """As the report estimates them (fanout.local.network.truth.compare), on one download that
    starts with a full bucket and reads over `connections` connections at once."""
    burst_model = model_of("burst", **BURST_MODEL)
    [record] = downloader.run("burst", text, 1, burst_model).records
    assert record["connections"] == connections
    rows = {row["parameter"]: row for row in truth.compare(True, burst_model.describe(), [record])}
    for parameter in ("sustained_mb_per_s", "burst_bytes"):
        assert not rows[parameter]["inside_burst"]
        assert rows[parameter]["ratio"] == pytest.approx(1, abs=ESTIMATE), rows[parameter]


@pytest.mark.timing
def test_the_report_ranks_strategies_as_the_model_predicts(runs, shape):
    """The report's strategy table (the saved query over the function's log events), fastest
    first, against the order of predicted seconds. Neighbours are predicted at least
    RANKING_MARGIN apart, more than load on a shared machine has stretched one download against
    another in these tests (the stream's 10% allowance above), so a swap is a real disagreement."""
    choices = [strategies.definition.parse(text) for text in runs]
    predicted = prediction.predicted_ranking(shape, OBJECT_SIZE, choices)
    for (_, faster), (_, slower) in zip(predicted, predicted[1:]):
        assert slower >= faster * RANKING_MARGIN
    assert strategy_order(list(runs.values())) == [text for text, _ in predicted]
