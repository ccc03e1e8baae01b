"""fanout.results.stats against independent computations: numpy percentiles, a hand-rolled numpy
bootstrap, and the coverage of known distributions' true quantiles."""

import numpy as np
import pytest

from fanout.results import stats


def test_describe_is_numpy_linear_interpolation():
    values = np.random.default_rng(1).exponential(2.0, 37)
    ordered = np.sort(values)
    result = stats.describe(values)
    for name, p in stats.PERCENTILES.items():
        rank = (len(values) - 1) * p / 100  # linear interpolation between closest ranks, by hand
        low = int(np.floor(rank))
        expected = ordered[low] + (rank - low) * (ordered[min(low + 1, len(values) - 1)] - ordered[low])
        assert result[name] == pytest.approx(expected, rel=1e-12)
    assert (result["n"], result["min"], result["max"]) == (37, ordered[0], ordered[-1])
    assert result["avg"] == pytest.approx(values.mean())


@pytest.mark.parametrize("percentile", [50, 99])
def test_interval_agrees_with_a_plain_numpy_bootstrap(percentile):
    values = np.random.default_rng(2).lognormal(0, 0.6, 400)
    rng = np.random.default_rng(99)  # another seed: the two agree up to resampling noise
    resampled = np.percentile(values[rng.integers(0, values.size, (4000, values.size))], percentile, axis=1)
    expected = np.percentile(resampled, [2.5, 97.5])
    ((low, high),) = stats.intervals(values, [percentile])
    width = expected[1] - expected[0]
    assert low == pytest.approx(expected[0], abs=0.15 * width)
    assert high == pytest.approx(expected[1], abs=0.15 * width)


def test_median_interval_covers_the_true_median_about_95_percent_of_the_time():
    mu, sigma, trials = 1.0, 0.5, 60
    truth = np.exp(mu)  # the median of lognormal(mu, sigma)
    covered = 0
    for seed in range(trials):
        ((low, high),) = stats.intervals(np.random.default_rng(seed).lognormal(mu, sigma, 80), [50])
        covered += low <= truth <= high
    # 95% coverage: 57 of 60 expected; fewer than 52 has probability < 0.1% under Binomial(60, 0.95).
    assert covered >= 52, covered


def test_several_percentiles_share_resamples_and_equal_one_at_a_time():
    values = np.random.default_rng(6).gamma(2.0, 1.0, 300)
    assert stats.intervals(values, [50, 99]) == stats.intervals(values, [50]) + stats.intervals(values, [99])


def test_difference_interval_covers_the_true_shift():
    rng = np.random.default_rng(3)
    a, b = rng.normal(100, 10, 300), rng.normal(108, 10, 300)
    ((low, high),) = stats.difference_intervals(a, b, [50])
    assert low <= 8 <= high and low > 0
    assert stats.excludes_zero((low, high))


def test_fewer_than_two_values_have_no_interval():
    assert stats.intervals([1.0], [50, 99]) == [None, None]
    assert stats.difference_intervals([1.0, 2.0], [3.0], [50]) == [None]
    assert not stats.excludes_zero(None)


def test_interval_is_seeded_and_narrows_with_more_data():
    rng = np.random.default_rng(4)
    small, large = rng.normal(size=50), rng.normal(size=5000)
    assert stats.intervals(small, [99]) == stats.intervals(list(small), [99])
    ((a, b),), ((c, d),) = stats.intervals(small, [50]), stats.intervals(large, [50])
    assert d - c < (b - a) / 4  # width ~ 1/sqrt(n): 10x for 100x the data
