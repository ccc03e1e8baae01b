"""`fanout compare`: finds a known change, does not flag two samples of one distribution, matches
cells across sides that differ in tag, and lists cells found on one side only."""

import numpy as np
import pytest

from fanout.stages import report as reporting
from fanout.results import stats
from fanout.workloads.download import compare

from .support import at_target, make_run


def median_mb_per_s(downloads):
    return np.median([d["bytes"] / d["seconds"] / 1e6 for d in downloads])


def test_a_known_change_is_found_and_measured():
    # B's downloads take 0.8 of A's time at the median: throughput x 1.25.
    a, a_downloads = make_run(1, concurrency=8, per_slot=25, median_s=0.5, seed=1, tag="before")
    b, b_downloads = make_run(2, concurrency=8, per_slot=25, median_s=0.4, seed=2, tag="after")
    result = compare.compare([a], [b])
    assert result["match_on"] == [] and result["differ_in"] == ["experiment_tag"]
    (cell,) = result["cells"]
    change = cell["p50"]
    assert change["changed"]
    # over the downloads at target (the slots' tails left out), counted by brute force
    expected = median_mb_per_s(at_target(b_downloads, 8)) - median_mb_per_s(at_target(a_downloads, 8))
    assert change["change"] == pytest.approx(expected)
    true_change = 8_000_000 / 0.4 / 1e6 - 8_000_000 / 0.5 / 1e6  # the distributions' medians
    assert change["ci"][0] <= true_change <= change["ci"][1]


def test_two_samples_of_one_distribution_are_not_flagged():
    a, _ = make_run(1, concurrency=8, per_slot=25, seed=20)
    b, _ = make_run(2, concurrency=8, per_slot=25, seed=21)
    (cell,) = compare.compare([a], [b])["cells"]
    assert not cell["p50"]["changed"] and not cell["p99"]["changed"]
    assert cell["p50"]["ci"][0] < 0 < cell["p50"]["ci"][1]


@pytest.mark.parametrize("percentile", [50, 99])
def test_false_alarms_stay_near_five_percent(percentile):
    """A 95% interval flags one pair in twenty of the same distribution by design: over 30
    fixed pairs, 5 or more flags would have probability ~2% under Binomial(30, 0.05)."""
    flagged = 0
    for seed in range(30):
        a = 8 / np.random.default_rng(seed).lognormal(np.log(0.5), 0.4, 100)
        b = 8 / np.random.default_rng(1000 + seed).lognormal(np.log(0.5), 0.4, 100)
        flagged += stats.excludes_zero(stats.difference_intervals(a, b, [percentile])[0])
    assert flagged <= 4, flagged


def test_cells_match_on_the_axes_and_unmatched_ones_are_listed():
    a = [make_run(n, memory=m, concurrency=4, seed=n)[0] for n, m in ((1, 512), (2, 1024))]
    b = [make_run(n, memory=m, concurrency=4, seed=n, strategy="stream")[0] for n, m in ((3, 1024), (4, 2048))]
    result = compare.compare(a, b)
    assert result["match_on"] == ["memory_size"] and result["differ_in"] == ["strategy"]
    assert [c["memory_size"] for c in result["cells"]] == [1024]
    assert result["only_in_a"] == ["MB 512"] and result["only_in_b"] == ["MB 2048"]


def test_difference_interval_agrees_with_a_plain_numpy_bootstrap():
    a, a_downloads = make_run(1, concurrency=4, per_slot=30, seed=5)
    b, b_downloads = make_run(2, concurrency=4, per_slot=20, seed=6)
    (cell,) = compare.compare([a], [b])["cells"]
    x, y = (np.array([d["bytes"] / d["seconds"] / 1e6 for d in downloads]) for downloads in (a_downloads, b_downloads))
    rng = np.random.default_rng(123)  # each side resampled on its own, 4000 times
    changes = np.median(y[rng.integers(0, y.size, (4000, y.size))], axis=1) - np.median(
        x[rng.integers(0, x.size, (4000, x.size))], axis=1
    )
    expected = np.percentile(changes, [2.5, 97.5])
    width = expected[1] - expected[0]
    assert cell["p50"]["ci"][0] == pytest.approx(expected[0], abs=0.15 * width)
    assert cell["p50"]["ci"][1] == pytest.approx(expected[1], abs=0.15 * width)
    assert reporting.runs_of(a) == [a]


def test_a_side_with_no_download_at_target_is_refused_naming_it():
    a, _ = make_run(1, concurrency=4, per_slot=3, ramp_ms=5000, seed=1)  # the slots never overlap
    b, _ = make_run(2, concurrency=4, per_slot=5, seed=2)
    with pytest.raises(compare.FanoutError, match=f"no download of A \\({a}\\) ran at target \\(90% of its"):
        compare.compare([a], [b])
    assert compare.compare([a], [b], at_target=0.2)["cells"]  # every download of A ran at 1 of 4


def test_each_side_states_the_limits_its_runs_were_held_to():
    """Beside each side's network, the Lambda limits the local host held its runs to (a run
    recorded without them, as on AWS, adds nothing)."""
    held = {"memory (1024 MB)": "enforced by cgroup", "CPU share": "0.579 vCPU, not enforced: no cgroup"}
    a, _ = make_run(1, concurrency=4, per_slot=10, seed=3, limits=held)
    b, _ = make_run(2, concurrency=4, per_slot=10, seed=4)
    shown = [block.text for block in compare.sections(compare.compare([a], [b])).blocks if hasattr(block, "text")]
    side_a = next(line for line in shown if line.startswith("A: "))
    side_b = next(line for line in shown if line.startswith("B: "))
    assert side_a.endswith("; Lambda's limits: CPU share: 0.579 vCPU, not enforced: no cgroup; "
                           "memory (1024 MB): enforced by cgroup")  # fmt: skip
    assert "Lambda's limits" not in side_b
